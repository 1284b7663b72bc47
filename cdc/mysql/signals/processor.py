"""The signal processor: the streamer's hooks that turn signals into snapshot work.

Signals from the signal table (``source`` channel) are acted on as their row is streamed, in order with
the data; the watermarks of the incremental snapshot arrive the same way. Signals from the file and kafka
channels wait in :class:`ChannelPoller`'s queue until the streamer is between transactions. Every record
emitted while an incremental snapshot runs carries its state in the offset (``decorate``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from cdc.api.records import SourceRecord
from cdc.api.struct import Struct
from cdc.history.model import TableId
from cdc.mysql.incremental import CLOSE_WINDOW, OPEN_WINDOW, IncrementalSnapshot
from cdc.mysql.signals.actions import SignalActions
from cdc.mysql.signals.channels import ChannelPoller
from cdc.mysql.signals.record import SignalRecord
from cdc.mysql.stream_hooks import StreamHooks

__all__ = ["SignalProcessor"]

log = logging.getLogger(__name__)


class SignalProcessor(StreamHooks):
    def __init__(
        self,
        incremental: IncrementalSnapshot,
        actions: SignalActions,
        poller: ChannelPoller,
        signal_table: TableId | None,
        source_channel: bool,
    ) -> None:
        self.incremental = incremental
        self.actions = actions
        self.poller = poller
        self.signal_table = signal_table
        self.source_channel = source_channel

    def on_start(self) -> None:
        self.poller.start()
        self.incremental.resume_on_start()

    def on_rows(self, table_id: TableId, records: list[SourceRecord]) -> None:
        if table_id == self.signal_table:
            for record in records:
                signal = _signal_of(record)
                if signal is None:
                    continue
                if signal.type.startswith("snapshot-window-") or self.source_channel:
                    self.actions.dispatch(signal, record)
            return
        self.incremental.deduplicate(table_id, records)

    def on_row_images(self, table_id: TableId, images: Sequence[Sequence[Any]]) -> None:
        self.incremental.on_row_images(table_id, images)

    def on_idle(self) -> None:
        for signal, channel in self.poller.drain():
            self.actions.dispatch(signal, None)
            channel.acknowledge(signal)
        self.incremental.on_idle()
        self.incremental.close_if_reached(self.actions.position)

    def decorate(self, records: list[SourceRecord]) -> list[SourceRecord]:
        context = self.incremental.context
        if context.running:
            for record in records:
                offset = record.source_offset
                if isinstance(offset, dict):
                    context.store(offset)
        return records

    def close(self) -> None:
        self.poller.close()
        self.incremental.close()


def _signal_of(record: SourceRecord) -> SignalRecord | None:
    """A signal from an inserted row of the signal table: its first three columns are id, type, data. The
    delete of a ``<chunk>-open`` watermark row closes that chunk's window
    (``incremental.snapshot.watermarking.strategy=insert_delete``: no close row is inserted)."""
    value = record.value
    op = value.get("op") if isinstance(value, Struct) else None
    row = value.get("after" if op == "c" else "before") if op in ("c", "d") else None
    if not isinstance(row, Struct) or len(row.values) < 3:
        return None
    signal_id, kind, data = (str(v or "") for v in row.values[:3])
    if op == "d":
        if kind != OPEN_WINDOW or not signal_id.endswith("-open"):
            return None
        signal_id, kind = signal_id[: -len("-open")] + "-close", CLOSE_WINDOW
    return SignalRecord(signal_id, kind, data, "source")
