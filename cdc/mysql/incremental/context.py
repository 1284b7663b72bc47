"""The incremental snapshot's state, kept in the source offsets exactly as Debezium keeps it.

While a snapshot runs every offset the connector commits carries four more keys:
``incremental_snapshot_collections`` (JSON: the tables still to read, the current one first, each with its
additional condition and surrogate key), ``incremental_snapshot_primary_key`` (the key of the last snapshot
row sent, hex of a Java-serialized ``Object[]``), ``incremental_snapshot_maximum_key`` (the table's largest
key when its snapshot began, same encoding) and ``incremental_snapshot_correlation_id`` (the signal's id).
A restarted task reads them back and resumes after the last row sent; so does a task whose offsets
Debezium wrote.

While the current table is back-filled by Spark (:mod:`cdc.mysql.incremental.spark_backfill`) one key of
cdc's own is added: ``incremental_snapshot_spark_start`` (JSON: the table and the stream position the
back-fill started from), so a restarted task resumes that back-fill. Debezium ignores it (it would read
the table again from its first chunk).
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.history.model import TableId
from cdc.mysql.incremental.javaser import decode_object_array, encode_object_array
from cdc.mysql.offsets import DEBEZIUM_OFFSET_ORDER

__all__ = ["COLLECTIONS_KEY", "SPARK_KEY", "DataCollection", "IncrementalContext", "flag_row"]

PRIMARY_KEY = "incremental_snapshot_primary_key"
NULL_ARRAY = "aced000570"
"""A Java-serialized null (``ObjectOutputStream.writeObject(null)``): what Debezium's offsets hold for a key
not known yet (no row sent)."""
MAXIMUM_KEY = "incremental_snapshot_maximum_key"
COLLECTIONS_KEY = "incremental_snapshot_collections"
CORRELATION_KEY = "incremental_snapshot_correlation_id"
SPARK_KEY = "incremental_snapshot_spark_start"
ROW_SNAPSHOT = "INCREMENTAL"
"""The ``snapshot`` value Debezium 3.x gives an incremental snapshot row's offset (its watermark records'
offsets have none; seen side by side, ``make compat``)."""
_ID = COLLECTIONS_KEY + "_id"
_CONDITION = COLLECTIONS_KEY + "_additional_condition"
_SURROGATE = COLLECTIONS_KEY + "_surrogate_key"


@dataclass(frozen=True)
class DataCollection:
    """One table to snapshot: with the signal's filter for it and the column to chunk by, if any."""

    table: TableId
    condition: str = ""
    surrogate_key: str = ""


class IncrementalContext:
    def __init__(self) -> None:
        self.collections: deque[DataCollection] = deque()
        self.chunk_end: list[Any] | None = None
        """Where the next chunk starts (exclusive): the last key read; None before the first chunk."""
        self.last_sent: list[Any] | None = None
        self.resumed_from: list[Any] | None = None
        """The last row sent before a restart (read back from the offset), until the resumed snapshot sends
        its first row or moves to another table; None when the snapshot did not resume."""
        self._maximum_key: list[Any] | None = None
        self._maximum_hex: str | None = None
        self.correlation_id: str | None = None
        self.chunk_id: str | None = None
        self.window_open = False
        self.paused = False
        self.spark_start: dict[str, Any] | None = None
        """The stream position the current table's Spark back-fill started from (None: no back-fill)."""
        self._json: str | None = None

    # -- state ---------------------------------------------------------------------------------------
    @property
    def maximum_key(self) -> list[Any] | None:
        """The current table's largest key when its snapshot began: where its chunks end."""
        return self._maximum_key

    @maximum_key.setter
    def maximum_key(self, keys: list[Any] | None) -> None:
        self._maximum_key = keys
        # written into every offset while the table is read: encoded once
        self._maximum_hex = encode_object_array(keys) if keys is not None else None

    @property
    def running(self) -> bool:
        return bool(self.collections)

    @property
    def current(self) -> DataCollection | None:
        return self.collections[0] if self.collections else None

    def add(self, collections: list[DataCollection], correlation_id: str | None) -> None:
        self.collections.extend(collections)
        self.correlation_id = correlation_id
        self._json = None

    def next_collection(self) -> None:
        if self.collections:
            self.collections.popleft()
        self.chunk_end = self.last_sent = self.resumed_from = self.maximum_key = None
        self.spark_start = None
        self._json = None
        if not self.collections:
            self.correlation_id = None

    def remove(self, table: TableId) -> bool:
        kept = deque(c for c in self.collections if c.table != table)
        removed = len(kept) != len(self.collections)
        self.collections = kept
        self._json = None
        return removed

    def clear(self) -> None:
        self.collections.clear()
        self.chunk_end = self.last_sent = self.resumed_from = self.maximum_key = None
        self.correlation_id = self.chunk_id = None
        self.window_open = False
        self.spark_start = None
        self._json = None

    def start_chunk(self) -> str:
        self.chunk_id = str(uuid.uuid4())
        return self.chunk_id

    def expects(self, signal_id: str) -> bool:
        """A window signal of the current chunk (after a restart, old chunks' signals are replayed)."""
        return self.chunk_id is not None and signal_id.startswith(self.chunk_id)

    def revert_chunk(self) -> None:
        self.chunk_end = self.last_sent if self.last_sent is not None else self.resumed_from
        self.window_open = False

    def _spark_json(self) -> str:
        current = self.current
        table = str(current.table) if current is not None else ""
        return json.dumps({"table": table, "start": self.spark_start}, separators=(",", ":"))

    # -- offsets ---------------------------------------------------------------------------------------
    def store(self, offset: dict[str, Any]) -> dict[str, Any]:
        """``offset`` with the snapshot's keys added while it runs (as Debezium's ``store``)."""
        if not self.running:
            return offset
        if self.spark_start is not None:
            offset[SPARK_KEY] = self._spark_json()

        # Before a resumed snapshot sends its first row, the resume point stands for the last row sent
        # (Debezium writes null there, so a second restart reads the table again). Never the current chunk's
        # end: the chunk is read before its window's rows are sent, and an offset committed in between that
        # named its end would make a restart skip the chunk (Debezium writes null before a table's first
        # row is sent).
        sent = self.last_sent if self.last_sent is not None else self.resumed_from
        offset[PRIMARY_KEY] = encode_object_array(sent) if sent is not None else NULL_ARRAY
        offset[MAXIMUM_KEY] = self._maximum_hex or NULL_ARRAY
        offset[COLLECTIONS_KEY] = self.collections_json()
        offset[CORRELATION_KEY] = self.correlation_id
        return DEBEZIUM_OFFSET_ORDER.apply(offset)

    def store_row(self, window_offset: dict[str, Any], sent: list[Any]) -> dict[str, Any]:
        """The offset of the snapshot row whose key is ``sent``, which becomes the last row sent: a copy
        of ``window_offset`` (the offset :meth:`store` gave for its window) naming that key, flagged
        as a row's (:func:`flag_row`)."""
        self.last_sent = sent
        offset = window_offset.copy()
        offset[PRIMARY_KEY] = encode_object_array(sent)
        return flag_row(offset)

    def collections_json(self) -> str:
        if self._json is None:
            self._json = json.dumps(
                [
                    {
                        _ID: str(c.table),
                        _CONDITION: c.condition or None,
                        _SURROGATE: c.surrogate_key or None,
                    }
                    for c in self.collections
                ],
                separators=(",", ":"),
            )
        return self._json

    @classmethod
    def from_offset(cls, offset: Mapping[str, Any] | None) -> IncrementalContext:
        context = cls()
        if not offset:
            return context
        primary = offset.get(PRIMARY_KEY)
        # Resume after the last row that was sent (Debezium: chunkEndPosition = lastEventKeySent).
        context.chunk_end = decode_object_array(str(primary)) if primary else None
        context.resumed_from = context.chunk_end
        maximum = offset.get(MAXIMUM_KEY)
        context.maximum_key = decode_object_array(str(maximum)) if maximum else None
        collections = offset.get(COLLECTIONS_KEY)
        if collections:
            context.collections = deque(
                DataCollection(
                    TableId.parse(str(item[_ID])),
                    str(item.get(_CONDITION) or ""),
                    str(item.get(_SURROGATE) or ""),
                )
                for item in json.loads(str(collections))
            )
        context.correlation_id = offset.get(CORRELATION_KEY)
        spark = offset.get(SPARK_KEY)
        if spark and context.current is not None:
            data = json.loads(str(spark))
            if data.get("table") == str(context.current.table) and isinstance(data.get("start"), dict):
                context.spark_start = dict(data["start"])
        return context


def flag_row(offset: dict[str, Any]) -> dict[str, Any]:
    """``offset`` (an incremental snapshot window's, from :meth:`IncrementalContext.store`) marked as the
    offset of one of its ``op=r`` rows: ``snapshot`` = :data:`ROW_SNAPSHOT`."""
    offset["snapshot"] = ROW_SNAPSHOT
    return DEBEZIUM_OFFSET_ORDER.apply(offset)
