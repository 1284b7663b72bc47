"""Debezium's MySQL source offset, as a value object.

The partition is ``{"server": <topic.prefix>}``. The offset says where to reconnect and how much of what
follows was already emitted: ``file``/``pos`` of the transaction's BEGIN (or after the last standalone
event), ``gtids`` of completed transactions, and ``event``/``row`` counts to skip after reconnecting —
so a restart inside a transaction emits no row twice and skips none. Keys are omitted when zero/unset,
as Debezium writes them.

:class:`StreamPosition` builds every offset cdc writes (a row's, a checkpoint's, a DDL's, a snapshot's):
the skip rules and the key order (:data:`DEBEZIUM_OFFSET_ORDER`) are written there only.
:class:`BinlogOffset` is the value object of a stored offset (what a task resumes from).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple

from cdc.api.errors import ConnectError, InvalidOffsetError
from cdc.api.offsets import JavaHashMapOrder, offset_int, offset_str
from cdc.mysql.gtids import GtidSet

__all__ = ["DEBEZIUM_OFFSET_ORDER", "BinlogOffset", "StreamPosition", "check_offset", "partition_for"]

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


# What an offset holds besides ts_sec/file/pos: a bit each, in StreamPosition.offset's mask.
_OPTIONAL = (
    ("gtids", "gtids"),
    ("event", "event"),
    ("row", "row"),
    ("server_id", "server_id"),
    ("snapshot", "'INITIAL'"),  # Debezium 3.x's SnapshotType name (older versions wrote true)
)

_Builder = Callable[[str, int, "str | None", int, int, int, int], dict[str, Any]]


def _builders() -> tuple[_Builder, ...]:
    """One function per set of present keys, returning the map as one dict display already in
    :data:`DEBEZIUM_OFFSET_ORDER` (every row of every rows event builds one: no reordering per map)."""
    out = []
    for mask in range(1 << len(_OPTIONAL)):
        values = {"ts_sec": "ts_sec", "file": "file", "pos": "pos"}
        values.update(pair for bit, pair in enumerate(_OPTIONAL) if mask >> bit & 1)
        items = ", ".join(f"{key!r}: {values[key]}" for key in DEBEZIUM_OFFSET_ORDER.order(values))
        source = f"def build(file, pos, gtids, server_id, ts_sec, event, row):\n    return {{{items}}}\n"
        namespace: dict[str, Any] = {}
        exec(compile(source, "<offset>", "exec"), namespace)
        out.append(namespace["build"])
    return tuple(out)


class StreamPosition(NamedTuple):
    """A point of the binlog as Debezium's offsets name it, and the one builder of cdc's offset maps.

    ``file``/``pos`` is where a reader resumes (a transaction's BEGIN, or past a standalone event),
    ``gtids`` the set of completed transactions, ``server_id``/``ts_sec`` those of the last event read.
    (A named tuple: one is made per rows event, and a frozen dataclass costs several times more to build.)
    """

    file: str
    pos: int
    gtids: str | None = None
    server_id: int = 0
    ts_sec: int = 0

    def offset(self, event: int = 0, row: int = 0, snapshot: bool = False) -> dict[str, Any]:
        """The offset map, as Debezium writes it: ``event``/``row`` are the counts a restart skips, zero
        and unset keys are left out, keys come in :data:`DEBEZIUM_OFFSET_ORDER`."""
        mask = (
            (1 if self.gtids else 0)
            | (2 if event else 0)
            | (4 if row else 0)
            | (8 if self.server_id else 0)
            | (16 if snapshot else 0)
        )
        return _BUILD[mask](*self, event, row)

    @staticmethod
    def row_offsets(
        file: str, pos: int, gtids: str | None, server_id: int, ts_sec: int, event: int
    ) -> Callable[[int], dict[str, Any]]:
        """``offset(row)`` of the rows of the transaction's ``event``-th event (a rows event) at the
        position these fields name: its rows differ in ``row`` only (1 or more). The streamer's hot path,
        so it takes the fields: no StreamPosition is made per rows event."""
        build = _BUILD[(1 if gtids else 0) | (2 if event else 0) | 4 | (8 if server_id else 0)]
        return partial(build, file, pos, gtids, server_id, ts_sec, event)

    def resume(self, event: int = 0, row: int = 0) -> BinlogOffset:
        """The stored offset that resumes here, ``event`` events and ``row`` rows already emitted."""
        return BinlogOffset(self.file, self.pos, self.gtids, event, row, self.server_id, self.ts_sec)


_BUILD = _builders()


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
        position = StreamPosition(self.file, self.pos, self.gtids, self.server_id, self.ts_sec)
        return position.offset(self.event, self.row, self.snapshot)

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
