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

from cdc.api.errors import ConnectError

__all__ = ["BinlogOffset", "partition_for"]


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
        return out

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
