"""The incremental snapshot's chunk window bookkeeping (:mod:`cdc.mysql.incremental.snapshot`): the rows
read between two watermarks by their message key, the watermarks' signal rows, the source block the rows'
records carry, and a chunk's progress as the IN_PROGRESS notification reports it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from cdc.api.records import SourceRecord
from cdc.api.struct import Struct
from cdc.history.model import TableId
from cdc.mysql.events import TableSchema

if TYPE_CHECKING:
    from cdc.mysql.incremental.chunks import ChunkReader

__all__ = [
    "CLOSE_WINDOW",
    "OPEN_WINDOW",
    "chunk_progress",
    "close_watermark",
    "snapshot_source",
    "watermark_time",
    "window_rows",
]

OPEN_WINDOW = "snapshot-window-open"
CLOSE_WINDOW = "snapshot-window-close"


def watermark_time() -> str:
    """Now, as the watermarks' ``openWindowTimestamp``/``closeWindowTimestamp`` spell it."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def close_watermark(
    chunks: ChunkReader, signal_table: TableId, chunk_id: str, open_time: str, insert_delete: bool
) -> None:
    """Close ``chunk_id``'s window: insert its ``-close`` row, or with ``insert_delete`` delete its
    ``-open`` row."""
    if insert_delete:
        chunks.delete_signal(signal_table, chunk_id + "-open")
        return
    chunks.insert_signal(
        signal_table,
        chunk_id + "-close",
        CLOSE_WINDOW,
        {"openWindowTimestamp": open_time, "closeWindowTimestamp": watermark_time()},
    )


def window_rows(
    ts: TableSchema, rows: list[Sequence[Any]]
) -> dict[tuple[Any, ...], tuple[Struct | None, Sequence[Any]]]:
    """The rows by their message key values (what a streamed change of the same row carries as its key),
    each with its key struct, which its record reuses."""
    window: dict[tuple[Any, ...], tuple[Struct | None, Sequence[Any]]] = {}
    key_of = ts.key
    for row in rows:
        key = key_of(row)
        window[tuple(key.values) if key is not None else tuple(row)] = (key, row)
    return window


def snapshot_source(close_record: SourceRecord, table: TableId) -> Struct:
    """The source block of a window's records: the close watermark's, marked ``snapshot=incremental`` and
    naming ``table``, stamped now."""
    value = close_record.value
    assert isinstance(value, Struct)
    source = value.get("source")
    values = list(source.values)
    schema = source.schema
    now_ns = time.time_ns()
    for name, new in (
        ("snapshot", "incremental"),
        ("db", table.database),
        ("table", table.table),
        ("ts_ms", now_ns // 1_000_000),
        ("ts_us", now_ns // 1000),
        ("ts_ns", now_ns),
        ("query", None),
    ):
        field = schema.field(name)
        if field is not None:
            values[field.index] = new
    return Struct(schema, values)


def chunk_progress(
    collections: str, table: str, maximum: Sequence[Any] | None, chunk_end: Sequence[Any] | None
) -> dict[str, str]:
    """IN_PROGRESS's data: the tables, the one being read, its maximum key and the chunk's last key."""
    return {
        "data_collections": collections,
        "current_collection_in_progress": table,
        "maximum_key": ",".join(_text(k) for k in maximum) if maximum is not None else '"<null>"',
        "last_processed_key": ",".join(_text(k) for k in chunk_end or ()),
    }


def _text(value: Any) -> str:
    """``Objects.toString(x, "<null>")`` of a key part."""
    return "<null>" if value is None else str(value)
