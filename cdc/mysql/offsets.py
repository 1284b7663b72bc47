"""Debezium's MySQL source offset, as a value object.

The partition is ``{"server": <topic.prefix>}``. The offset says where to reconnect and how much of what
follows was already emitted: ``file``/``pos`` of the transaction's BEGIN (or after the last standalone
event), ``gtids`` of completed transactions, and ``event``/``row`` counts to skip after reconnecting —
so a restart inside a transaction emits no row twice and skips none. Keys are omitted when zero/unset,
as Debezium writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from cdc.api.errors import ConnectError, InvalidOffsetError
from cdc.api.offsets import JavaHashMapOrder, offset_int, offset_str
from cdc.mysql.gtids import GtidSet

__all__ = ["DEBEZIUM_OFFSET_ORDER", "BinlogOffset", "check_offset", "partition_for"]

DEBEZIUM_OFFSET_ORDER = JavaHashMapOrder(
    (
        # BinlogOffsetContext.getOffset's HashMap: the position's keys, the snapshot flags, then what the
        # transaction context and the incremental snapshot context store (in that order). Keys sharing a
        # bucket keep this order: server_id before event; snapshot before the incremental primary key;
        # transaction_id before the correlation id (checked against an offset Debezium 3.5 committed,
        # tests/fixtures/mysql/debezium_incremental_offset.json).
        "ts_sec",
        "file",
        "pos",
        "gtids",
        "server_id",
        "event",
        "row",
        "snapshot",
        "snapshot_completed",
        "transaction_id",
        "incremental_snapshot_primary_key",
        "incremental_snapshot_maximum_key",
        "incremental_snapshot_collections",
        "incremental_snapshot_correlation_id",
    )
)
"""Debezium's key order of a committed MySQL/MariaDB offset (a ``HashMap``'s), so connect-offsets holds
the same bytes whichever of the two wrote it."""


def partition_for(prefix: str) -> dict[str, str]:
    return {"server": prefix}


@dataclass(frozen=True)
class BinlogOffset:
    file: str
    pos: int
    gtids: str | None = None
    event: int = 0
    row: int = 0
    server_id: int = 0
    ts_sec: int = 0
    snapshot: bool = False
    """An initial snapshot is under way (unfinished → redo it)."""
    snapshot_completed: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ts_sec": self.ts_sec, "file": self.file, "pos": self.pos}
        if self.gtids:
            out["gtids"] = self.gtids
        if self.event:
            out["event"] = self.event
        if self.row:
            out["row"] = self.row
        if self.server_id:
            out["server_id"] = self.server_id
        if self.snapshot:
            out["snapshot"] = "INITIAL"  # Debezium 3.x's SnapshotType name (older versions wrote true)
        return DEBEZIUM_OFFSET_ORDER.apply(out)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BinlogOffset:
        if "file" not in d:
            raise ConnectError("Source offset 'file' parameter is missing")
        snapshot = d.get("snapshot")
        completed = d.get("snapshot_completed")
        return cls(
            file=str(d["file"]),
            pos=int(d.get("pos", 4)),
            gtids=(str(d["gtids"]).replace("\n", "") or None) if d.get("gtids") else None,
            event=int(d.get("event", 0) or 0),
            row=int(d.get("row", 0) or 0),
            server_id=int(d.get("server_id", 0) or 0),
            ts_sec=int(d.get("ts_sec", 0) or 0),
            snapshot=snapshot in (True, "true", "INITIAL", "BLOCKING"),
            snapshot_completed=completed in (True, "true"),
        )

    def with_(self, **changes: Any) -> BinlogOffset:
        return replace(self, **changes)

    def position(self) -> dict[str, Any]:
        """The history record ``position`` for this offset."""
        return self.to_dict()


_SNAPSHOT_VALUES = (True, False, "true", "false", "INITIAL", "BLOCKING", "INCREMENTAL", "last", "LAST")


def check_offset(prefix: str, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
    """Refuse an offset given over REST that the task could not resume from (Debezium's loader would fail
    on it, or it would resume somewhere else): :class:`InvalidOffsetError` names the field."""
    server = partition.get("server")
    if server != prefix:
        raise InvalidOffsetError(
            "server", f"of the partition must be the connector's topic.prefix {prefix!r}, not {server!r}"
        )
    offset_str(offset, "file", required=True)
    offset_int(offset, "pos", required=True, minimum=4)  # 4: the first event after the binlog's magic
    for field in ("row", "event", "server_id", "ts_sec"):
        offset_int(offset, field)
    gtids = offset.get("gtids")
    if gtids is not None:
        if not isinstance(gtids, str):
            raise InvalidOffsetError("gtids", f"must be a GTID set in a string, not {gtids!r}")
        try:
            GtidSet(gtids)
        except ValueError as exc:
            raise InvalidOffsetError("gtids", f"is not a GTID set: {exc}") from None
    if "snapshot" in offset and offset["snapshot"] not in _SNAPSHOT_VALUES:
        raise InvalidOffsetError(
            "snapshot", f"must be true, false, INITIAL, BLOCKING or INCREMENTAL, not {offset['snapshot']!r}"
        )
    transaction = offset.get("transaction_id")
    if transaction is not None and not isinstance(transaction, str):
        raise InvalidOffsetError("transaction_id", f"must be a string or null, not {transaction!r}")
