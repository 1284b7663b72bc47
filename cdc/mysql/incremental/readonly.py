"""Watermarks without writing to the source (``read.only=true``): the server's binlog position.

Debezium's read-only incremental snapshot takes the server's executed GTID set right after reading a
chunk (the high watermark) and closes the window once the stream has passed it; nothing is written, so it
runs against a read-only replica. cdc does the same with the GTID set when both the server and the
streamer have one (MySQL ``gtid_executed``, MariaDB ``gtid_binlog_pos``) and with the binlog file and
position otherwise. Streamed changes are de-duplicated from the moment the chunk is read: one older than
the read only drops a row the same change event then carries, so nothing is lost and nothing is stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.mysql.gtids import GtidSet

__all__ = ["Watermark", "read_watermark"]


@dataclass(frozen=True)
class Watermark:
    file: str
    pos: int
    gtids: str | None

    def reached_by(self, offset: Mapping[str, Any]) -> bool:
        """Whether a stream at ``offset`` (between transactions) has streamed everything up to here."""
        theirs = offset.get("gtids")
        if self.gtids and theirs:
            return GtidSet(self.gtids).is_contained_within(GtidSet(str(theirs)))
        return (_index(str(offset.get("file", ""))), int(offset.get("pos", 0))) >= (
            _index(self.file),
            self.pos,
        )


def _index(file: str) -> int:
    suffix = file.rsplit(".", 1)[-1]
    return int(suffix) if suffix.isdigit() else -1


def read_watermark(conn: Any) -> Watermark:
    """The server's current binlog end: file, position and GTID set (None without GTIDs)."""
    with conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
        if row is None:
            raise RuntimeError("SHOW MASTER STATUS returned nothing: is the binary log enabled?")
        gtids = str(row[4]).replace("\n", "") if len(row) > 4 and row[4] else None
        cur.execute("SELECT VERSION()")
        version = cur.fetchone()
        if version is not None and "mariadb" in str(version[0]).lower():
            cur.execute("SELECT @@GLOBAL.gtid_binlog_pos")
            mariadb = cur.fetchone()
            gtids = str(mariadb[0] or "") or None if mariadb is not None else None
    return Watermark(str(row[0]), int(row[1]), gtids)
