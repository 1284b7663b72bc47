"""Where a stored binlog offset resumes on a MariaDB server that may not be the one that wrote it.

After a failover the connector's ``database.hostname`` names the promoted replica. The offset's
``file``/``pos`` are coordinates in the old primary's binlog and mean nothing there (the replica's files
often carry the same names, at other positions); its ``gtids``, the set of completed transactions, mean
the same on every server of the replication topology. Debezium reconnects by that set whenever an
offset has one (MariaDB: ``@slave_connect_state``) and skips the offset's ``event``/``row`` counts in
the first transaction it is sent.

Our reader positions by file/pos (the library's MariaDB GTID handshake is broken, see
``reference/libraries.md``), so :func:`resume_position` turns the set into this server's coordinates
instead, with the server's own answers:

1. ``BINLOG_GTID_POS(file, pos)`` equal to the offset's set: the offset was written on this server (or
   on one with the same binlog), and it is used as it is — the usual restart;
2. otherwise the newest binlog whose starting GTID state (``BINLOG_GTID_POS(file, 4)``) is not past the
   set, walked with ``SHOW BINLOG EVENTS`` to the first transaction the set does not contain: the
   transaction the offset was inside (its ``event``/``row`` skips still apply) or the one after it;
3. no such binlog: the set's transactions are purged from this server (:class:`GtidNotFoundError`, as
   Debezium fails on a GTID set the server no longer has).

GTIDs compare per replication domain by sequence number, as ``gtid_strict_mode`` orders them; MySQL
(UUID GTID sets) is not handled here and keeps its file/pos.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from cdc.api.errors import ConnectError
from cdc.mysql.offsets import BinlogOffset

__all__ = ["GtidNotFoundError", "resume_position"]

log = logging.getLogger(__name__)

_GTID = re.compile(r"(\d+)-(\d+)-(\d+)")
_PAGE = 2000


class GtidNotFoundError(ConnectError):
    """The offset's GTID set reaches back beyond this server's oldest binlog."""


def _by_domain(text: str | None) -> dict[int, int]:
    """``domain-server-seq,…`` → domain → its highest sequence number."""
    out: dict[int, int] = {}
    for domain, _server, seq in _GTID.findall(text or ""):
        out[int(domain)] = max(out.get(int(domain), 0), int(seq))
    return out


def _not_past(state: dict[int, int], target: dict[int, int]) -> bool:
    return all(seq <= target.get(domain, 0) for domain, seq in state.items())


def _gtid_pos(cur: Any, file: str, pos: int) -> str | None:
    try:
        cur.execute("SELECT BINLOG_GTID_POS(%s, %s)", (file, pos))
        row = cur.fetchone()
    except Exception:  # a position that is no event boundary on this server
        return None
    return None if row is None or row[0] is None else str(row[0])


def resume_position(conn: Any, offset: BinlogOffset) -> BinlogOffset:
    """``offset`` itself when its file/pos agree with its GTID set on this server, else the same offset
    moved to this server's coordinates of that set (see the module docstring)."""
    if not offset.gtids:
        return offset
    target = _by_domain(offset.gtids)
    with conn.cursor() as cur:
        here = _gtid_pos(cur, offset.file, offset.pos)
        if here is not None and _by_domain(here) == target:
            return offset
        cur.execute("SHOW BINARY LOGS")
        files = [str(r[0]) for r in cur.fetchall()]
        for index in range(len(files) - 1, -1, -1):
            start = _gtid_pos(cur, files[index], 4)
            if start is None or not _not_past(_by_domain(start), target):
                continue
            file, pos = _first_outside(cur, files[index], target)
            if pos is None and index + 1 < len(files):
                file, pos = files[index + 1], 4
            if pos is None:
                cur.execute("SHOW MASTER STATUS")
                row = cur.fetchone()
                file, pos = str(row[0]), int(row[1])
            log.warning(
                "The offset's binlog position %s:%s does not hold GTID set %s on this server (GTID "
                "position there: %s): resuming from %s:%s, this server's position of that set",
                offset.file,
                offset.pos,
                offset.gtids,
                here,
                file,
                pos,
            )
            return offset.with_(file=file, pos=pos)
    raise GtidNotFoundError(
        f"The connector's GTID set {offset.gtids} is not in this server's binlogs ({', '.join(files)}): "
        "its transactions were purged. Reconfigure the connector to take a new snapshot "
        "(snapshot.mode=when_needed), or delete its offsets and restart it."
    )


def _first_outside(cur: Any, file: str, target: dict[int, int]) -> tuple[str, int | None]:
    """The position in ``file`` of the first GTID event whose transaction ``target`` lacks."""
    offset = 0
    while True:
        rows = _binlog_events(cur, file, offset)
        for row in rows:
            if str(row[2]) == "Gtid":
                match = _GTID.search(str(row[5]))
                if match and int(match.group(3)) > target.get(int(match.group(1)), 0):
                    return file, int(row[1])
        if len(rows) < _PAGE:
            return file, None
        offset += _PAGE


def _binlog_events(cur: Any, file: str, offset: int) -> list[Any]:
    """A page of ``SHOW BINLOG EVENTS``, its text read as latin-1: the Info column quotes statements
    byte for byte (a binary literal is not UTF-8), and only the ASCII ``BEGIN GTID d-s-n`` is read here."""
    conn = cur.connection
    encoding = conn.encoding
    conn.encoding = "latin1"
    try:
        cur.execute(f"SHOW BINLOG EVENTS IN %s LIMIT {offset}, {_PAGE}", (file,))
        return list(cur.fetchall())
    finally:
        conn.encoding = encoding
