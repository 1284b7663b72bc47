"""A rows event read from the binlog, turned into Debezium's change records.

The :class:`~cdc.mysql.streaming.Streamer` decides whether an event is emitted and from which row (its
place in the transaction, the skip counts of a restart), and where it sits (a
:class:`~cdc.mysql.offsets.StreamPosition`, a :class:`~cdc.mysql.events.SourcePosition`);
:class:`RowChanges` reads its rows and builds the records: the row images in the table's column order
(:class:`~cdc.mysql.rowdecoder.RowDecoder` from the event's bytes, or the library's decoded rows), the
placeholder of values a ``NOBLOB`` image left out, then one create, update or delete per row, each with
its own ``row`` in the offset and the ``source`` block. This runs for every row cdc streams: the offset
and the source block are templates made once per event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cdc.api.records import SourceRecord
from cdc.history.model import Table, TableId
from cdc.mysql.binlog_events import Rows
from cdc.mysql.events import EventFactory, SourcePosition, TableSchema
from cdc.mysql.metrics import StreamingMetrics
from cdc.mysql.row_images import ImageCheck, fill_unavailable
from cdc.mysql.rowdecoder import RowDecoder

__all__ = ["RowChanges", "ordered_row"]

Image = list[Any]


class RowChanges:
    """Row images and change records of rows events (see the module docstring)."""

    def __init__(self, events: EventFactory, metrics: StreamingMetrics, placeholder: str) -> None:
        self.events = events
        self.metrics = metrics
        self.placeholder = placeholder
        self._decoder = RowDecoder()

    def images(self, event: Rows, ts: TableSchema, table: Table, partial: ImageCheck | None) -> list[Image]:
        """The event's rows as lists in ``ts``' column order: one image per row, (before, after) for
        updates; with a ``NOBLOB`` ``partial`` check, the left-out BLOB/TEXT values are the placeholder."""
        names = ts.column_names
        update = event.kind == "u"
        # The precompiled decoder reads the event's bytes; None means "use the library's rows" (unusual
        # types or events), which then go through ordered_row.
        images = self._decoder.ordered(event, names)
        if images is None:
            images = []
            for row in event.library_event().rows:
                if update:
                    images.append(ordered_row(row["before_values"], names, row.get("before_none_sources")))
                    images.append(ordered_row(row["after_values"], names, row.get("after_none_sources")))
                else:
                    images.append(ordered_row(row["values"], names, row.get("none_sources")))
        if partial is not None:
            at = {name: i for i, name in enumerate(names)}
            positions = [at.get(c.name) for c in table.columns]
            binary = [c.base_type in _BINARY_BLOBS for c in table.columns]
            filled = fill_unavailable(images, update, partial, positions, binary, self.placeholder)
            self.metrics.unavailable_values += filled
        return images

    def records(
        self,
        event: Rows,
        ts: TableSchema,
        table_id: TableId,
        images: list[Image],
        rows: range,
        offsets: Callable[[int], dict[str, Any]],
        pos: SourcePosition,
    ) -> list[SourceRecord]:
        """The change records of the event's ``rows`` (indexes into its rows), each with ``offsets(n)`` (n:
        the rows done once it is out, Debezium's ``row``) and the source block of ``pos``."""
        kind = event.kind
        ts_ms = event.timestamp * 1000
        sources = self.events.row_sources(pos, table_id, ts_ms)
        events = self.events
        out: list[SourceRecord] = []
        for i in rows:
            offset, source = offsets(i + 1), sources(i)
            if kind == "c":
                out.extend(events.create(ts, images[i], source, offset))
            elif kind == "u":
                out.extend(events.update(ts, images[2 * i], images[2 * i + 1], source, offset))
            else:
                out.extend(events.delete(ts, images[i], source, offset))
        emitted = len(rows)
        if kind == "c":
            self.metrics.creates += emitted
        elif kind == "u":
            self.metrics.updates += emitted
        else:
            self.metrics.deletes += emitted
        if self.metrics.advanced:
            self.metrics.table_events(kind, str(table_id), emitted)
        self.metrics.events(ts_ms, emitted)
        return out


_BINARY_BLOBS = frozenset({"TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})


def ordered_row(
    values: dict[str, Any], names: list[str], none_sources: dict[str, str] | None = None
) -> list[Any]:
    """A row the library decoded (``{column: value}``) as a list in the order of ``names``."""
    row = [values.get(n) for n in names]
    if none_sources:
        # mysql-replication decodes an empty SET as None; the row holds '' (as the snapshot reads it).
        for i, n in enumerate(names):
            if row[i] is None and none_sources.get(n) == "empty set":
                row[i] = ""
    return row
