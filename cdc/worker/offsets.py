"""Source offsets inside the worker: the task's reader and the buffered writer.

The writer keeps the latest offset per source partition of everything *submitted*, and commits a
snapshot of them only after every record submitted before the snapshot was acknowledged by Kafka —
so a committed offset never runs ahead of the data (at-least-once).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from cdc.api.connector import OffsetStorageReader
from cdc.api.errors import DataError
from cdc.api.offsets import check_offset_map, offset_key, partition_key
from cdc.worker.stores.base import OffsetBackingStore

__all__ = ["OffsetWriter", "StoreOffsetReader", "decode_offset", "encode_offset", "store_offset"]


def encode_offset(offset: Mapping[str, Any] | None) -> bytes | None:
    if offset is None:
        return None
    return json.dumps(dict(offset), separators=(",", ":"), ensure_ascii=False).encode()


def decode_offset(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    value = json.loads(raw)
    if value is not None and not isinstance(value, dict):
        raise DataError(f"Offset value is not a map: {raw!r}")
    return value


class StoreOffsetReader(OffsetStorageReader):
    def __init__(self, connector: str, store: OffsetBackingStore) -> None:
        self.connector = connector
        self.store = store

    def offsets(self, partitions: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        keys = {offset_key(self.connector, p): partition_key(p) for p in partitions}
        raw = self.store.get(list(keys))
        out: dict[str, dict[str, Any]] = {}
        for key, value in raw.items():
            decoded = decode_offset(value)
            if decoded is not None and key in keys:
                out[keys[key]] = decoded
        return out


class OffsetWriter:
    """Latest offsets per partition; ``snapshot`` + ``commit`` as two steps around a producer flush."""

    def __init__(self, connector: str, store: OffsetBackingStore) -> None:
        self.connector = connector
        self.store = store
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[Mapping[str, Any], Mapping[str, Any] | None]] = {}
        self._last: tuple[Mapping[str, Any], dict[str, Any], str] | None = None
        self._last_offset: tuple[Mapping[str, Any], dict[str, Any]] | None = None

    def offset(self, partition: Mapping[str, Any], offset: Mapping[str, Any] | None) -> None:
        # Sources hand the same partition map with every record: its text is computed once per map
        # (and again if the map was changed in place).
        last = self._last
        if last is not None and partition is last[0] and partition == last[1]:
            key = last[2]
        else:
            check_offset_map("Partition", partition)
            key = partition_key(partition)
            self._last = (partition, dict(partition), key)
        # A source may hand one offset map with many records (a snapshot's rows): it is checked once, and
        # again only if it is another map or was changed in place.
        last_offset = self._last_offset
        if not (last_offset is not None and offset is last_offset[0] and offset == last_offset[1]):
            check_offset_map("Offset", offset)
            self._last_offset = (offset, dict(offset)) if offset is not None else None
        with self._lock:
            self._pending[key] = (partition, offset)

    def snapshot(self) -> dict[bytes, bytes | None]:
        """Take (and clear) what is pending, as offsets-topic keys and values."""
        with self._lock:
            pending, self._pending = self._pending, {}
        return {offset_key(self.connector, p): encode_offset(o) for p, o in pending.values()}

    def restore(self, snapshot: Mapping[bytes, bytes | None]) -> None:
        """Put a snapshot back after a failed commit, unless newer offsets replaced it meanwhile."""
        with self._lock:
            for key, value in snapshot.items():
                _, partition = json.loads(key)
                pk = partition_key(partition)
                if pk not in self._pending:
                    self._pending[pk] = (partition, decode_offset(value))

    def commit(self, snapshot: Mapping[bytes, bytes | None], timeout: float) -> None:
        if snapshot:
            self.store.set(snapshot, timeout)


def store_offset(
    worker_props: Mapping[str, Any], name: str, partition: Mapping[str, Any], offset: Mapping[str, Any]
) -> str:
    """Store one offset of connector ``name`` where a worker of ``worker_props`` reads it (its offsets
    file or topic), as a tool outside the worker does (``cdc snapshot``); returns where it went."""
    from cdc.api.errors import ConfigError

    store: OffsetBackingStore
    if worker_props.get("offset.storage.file.filename"):
        from cdc.worker.stores.file import FileOffsetBackingStore

        path = str(worker_props["offset.storage.file.filename"])
        store = FileOffsetBackingStore(path)
        where = f"offsets file {path}"
    elif worker_props.get("offset.storage.topic"):
        from cdc.worker.stores.kafka import create_kafka_stores

        store = create_kafka_stores(worker_props).offsets
        where = f"offsets topic {worker_props['offset.storage.topic']}"
    else:
        raise ConfigError(
            "The worker config names no offsets store (offset.storage.file.filename for a "
            "standalone worker, offset.storage.topic for a distributed one)"
        )
    store.start()
    try:
        store.set({offset_key(name, dict(partition)): encode_offset(offset)})
    finally:
        store.stop()
    return where
