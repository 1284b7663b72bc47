"""What the binlog streamer lets other parts see and do: the hooks of :class:`StreamHooks`.

The streamer calls them at fixed points: ``on_start`` before it connects, ``on_rows`` with the change
records of each row event (before they are queued), ``on_row_images`` with its row images (the values
the key columns hold, which a converted record no longer shows), ``on_idle`` between transactions (at least
once a second, the binlog heartbeat), and ``decorate`` on every record that carries an offset, so state
kept beside the binlog position (the incremental snapshot's) is committed with it. The base class does
nothing; :class:`cdc.mysql.signals.SignalProcessor` fills the hooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cdc.api.records import SourceRecord
from cdc.history.model import TableId

__all__ = ["NO_HOOKS", "StreamHooks"]


class StreamHooks:
    def on_start(self) -> None:
        """Streaming is about to begin (after any initial snapshot)."""

    def on_rows(self, table_id: TableId, records: list[SourceRecord]) -> None:
        """The change records of one row event of a captured table, before they are emitted."""

    def on_row_images(self, table_id: TableId, images: Sequence[Sequence[Any]]) -> None:
        """The row images of one row event of a captured table, in the table's column order, as the
        snapshot reads them (an update's before and after images in turn)."""

    def on_idle(self) -> None:
        """A point between transactions: work that must not interleave with a transaction's rows."""

    def decorate(self, records: list[SourceRecord]) -> list[SourceRecord]:
        """The records about to be emitted, with whatever the offsets must also carry."""
        return records

    def close(self) -> None:
        """The streamer is done."""


NO_HOOKS = StreamHooks()
