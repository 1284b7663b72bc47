"""MirrorMaker 2's internal records, byte for byte as Kafka's MM2 writes them.

MM2 encodes its records with the Kafka protocol's ``Schema``/``Struct`` (``org.apache.kafka.common.protocol.
types``): the fields one after the other, no field names, no framing. ``INT16``, ``INT32`` and ``INT64`` are
big-endian two's complement of 2, 4 and 8 bytes; ``STRING`` is an ``INT16`` length then the UTF-8 bytes (a
null is refused, as Java's non-nullable ``Type.STRING`` does; longer than 32767 bytes too).

* ``OffsetSync`` (``mm2-offset-syncs.<alias>.internal``, partition 0): key ``topic STRING, partition INT32``;
  value ``upstreamOffset INT64, offset INT64``, with **no** version header (Kafka's ``OffsetSync`` has none).
* ``Checkpoint`` (``<source>.checkpoints.internal``, partition 0): key ``group STRING, topic STRING,
  partition INT32``; value a header ``version INT16`` (0) then ``upstreamOffset INT64, offset INT64,
  metadata STRING``.
* ``Heartbeat`` (``heartbeats``, partition 0): key ``sourceClusterAlias STRING, targetClusterAlias STRING``;
  value a header ``version INT16`` (0) then ``timestamp INT64``.

Connect source partitions and offsets as MM2's tasks hand them to Connect (the worker stores them as JSON in
the order Java's ``HashMap`` iterates them, so the offsets topic holds the same key bytes):

* MirrorSourceTask: ``{"cluster", "partition", "topic"}`` → ``{"offset": <offset of the last record copied>}``
  (the task resumes at offset + 1).
* MirrorCheckpointTask: ``{"group", "topic", "partition"}`` (the checkpoint's, renamed topic) →
  ``{"offset": 0}``.
* MirrorHeartbeatTask: ``{"sourceClusterAlias", "targetClusterAlias"}`` → ``{"offset": 0}``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import DataError
from cdc.api.offsets import java_hash_map_order

__all__ = [
    "CHECKPOINT_VERSION",
    "HEARTBEAT_VERSION",
    "Checkpoint",
    "Heartbeat",
    "OffsetSync",
    "checkpoint_partition",
    "heartbeat_partition",
    "source_offset",
    "source_partition",
    "unwrap_source_offset",
    "unwrap_source_partition",
]

CHECKPOINT_VERSION = 0
HEARTBEAT_VERSION = 0

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_I64_I64 = struct.Struct(">qq")
_HDR_I64_I64 = struct.Struct(">hqq")
_HDR_I64 = struct.Struct(">hq")


def _string(value: str) -> bytes:
    if value is None:  # Java: SchemaException "… is not nullable"
        raise DataError("Missing value for a non-nullable STRING field")
    data = value.encode("utf-8")
    if len(data) > 32767:
        raise DataError(f"String length {len(data)} is larger than the maximum string length.")
    return _I16.pack(len(data)) + data


class _Reader:
    """Reads Struct fields off a buffer, refusing short or trailing data."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise DataError(
                f"Truncated MirrorMaker record: wanted {n} bytes at {self.pos} of {len(self.data)}"
            )
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return int(_I16.unpack(self.take(2))[0])

    def int32(self) -> int:
        return int(_I32.unpack(self.take(4))[0])

    def int64(self) -> int:
        return int(_I64.unpack(self.take(8))[0])

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise DataError("Non-nullable STRING field holds null")
        return self.take(n).decode("utf-8")

    def version(self, expected: int, what: str) -> None:
        version = self.int16()
        if version != expected:
            raise DataError(f"Unsupported {what} version {version} (this reader knows {expected})")


@dataclass(frozen=True, slots=True)
class OffsetSync:
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int

    def record_key(self) -> bytes:
        return _string(self.topic) + _I32.pack(self.partition)

    def record_value(self) -> bytes:
        return _I64_I64.pack(self.upstream_offset, self.downstream_offset)

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> OffsetSync:
        k, v = _Reader(key), _Reader(value)
        topic, partition = k.string(), k.int32()
        return cls(topic, partition, v.int64(), v.int64())


@dataclass(frozen=True, slots=True)
class Checkpoint:
    group: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""

    def record_key(self) -> bytes:
        return _string(self.group) + _string(self.topic) + _I32.pack(self.partition)

    def record_value(self) -> bytes:
        head = _HDR_I64_I64.pack(CHECKPOINT_VERSION, self.upstream_offset, self.downstream_offset)
        return head + _string(self.metadata)

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> Checkpoint:
        k, v = _Reader(key), _Reader(value)
        group, topic, partition = k.string(), k.string(), k.int32()
        v.version(CHECKPOINT_VERSION, "checkpoint")
        upstream, downstream = v.int64(), v.int64()
        return cls(group, topic, partition, upstream, downstream, v.string())

    def connect_partition(self) -> dict[str, Any]:
        return checkpoint_partition(self.group, self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class Heartbeat:
    source_cluster_alias: str
    target_cluster_alias: str
    timestamp: int

    def record_key(self) -> bytes:
        return _string(self.source_cluster_alias) + _string(self.target_cluster_alias)

    def record_value(self) -> bytes:
        return _HDR_I64.pack(HEARTBEAT_VERSION, self.timestamp)

    @classmethod
    def decode(cls, key: bytes, value: bytes) -> Heartbeat:
        k, v = _Reader(key), _Reader(value)
        source, target = k.string(), k.string()
        v.version(HEARTBEAT_VERSION, "heartbeat")
        return cls(source, target, v.int64())


# -- Connect partitions and offsets (Java HashMap iteration order, see the module docstring) --------------
def _hash_map(entries: dict[str, Any]) -> dict[str, Any]:
    return {key: entries[key] for key in java_hash_map_order(entries)}


_SOURCE_ORDER = java_hash_map_order(["topic", "partition", "cluster"])
_CHECKPOINT_ORDER = java_hash_map_order(["group", "topic", "partition"])
_HEARTBEAT_ORDER = java_hash_map_order(["sourceClusterAlias", "targetClusterAlias"])


def source_partition(cluster: str, topic: str, partition: int) -> dict[str, Any]:
    """MirrorUtils.wrapPartition: a MirrorSourceTask's Connect source partition."""
    values = {"topic": topic, "partition": partition, "cluster": cluster}
    return {key: values[key] for key in _SOURCE_ORDER}


def source_offset(offset: int) -> dict[str, Any]:
    """MirrorUtils.wrapOffset: the offset of the last record copied (the task resumes after it)."""
    return {"offset": offset}


def unwrap_source_partition(partition: Any) -> tuple[str, int]:
    return str(partition["topic"]), int(partition["partition"])


def unwrap_source_offset(offset: Any) -> int | None:
    """MirrorUtils.unwrapOffset: None when there is no offset (a partition never copied)."""
    if not offset or offset.get("offset") is None:
        return None
    return int(offset["offset"])


def checkpoint_partition(group: str, topic: str, partition: int) -> dict[str, Any]:
    values = {"group": group, "topic": topic, "partition": partition}
    return {key: values[key] for key in _CHECKPOINT_ORDER}


def heartbeat_partition(source: str, target: str) -> dict[str, Any]:
    values = {"sourceClusterAlias": source, "targetClusterAlias": target}
    return {key: values[key] for key in _HEARTBEAT_ORDER}


def check_connect_offset(
    partition: Any, offset: Any, strings: tuple[str, ...], with_partition: bool, only_zero: bool
) -> None:
    """MirrorUtils' checks of an offset altered over REST: ``strings`` must be string keys of the partition,
    ``partition`` (when ``with_partition``) a non-negative int, the offset's ``offset`` a non-negative int
    (0 only, for the checkpoint and heartbeat connectors)."""
    from cdc.api.errors import InvalidOffsetError

    for key in strings:
        if key not in partition:
            raise InvalidOffsetError(key, f"is missing from source partition {partition}, which requires it")
        if not isinstance(partition[key], str):
            raise InvalidOffsetError(key, f"has an invalid value {partition[key]!r}, which must be a string")
    if with_partition:
        value = partition.get("partition")
        if isinstance(value, bool) or not isinstance(value, int) or value > 2**31 - 1:
            raise InvalidOffsetError("partition", f"has an invalid value {value!r}, which must be an integer")
        if value < 0:
            raise InvalidOffsetError("partition", f"has an invalid value {value}, which cannot be negative")
    if offset is None:
        return
    if "offset" not in offset:
        raise InvalidOffsetError("offset", f"is missing from source offset {offset}, which requires it")
    value = offset["offset"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOffsetError("offset", f"has an invalid value {value!r}, which must be an integer")
    if only_zero and value != 0:
        raise InvalidOffsetError("offset", f"has an invalid value {value}; the only accepted value is 0")
    if value < 0:
        raise InvalidOffsetError("offset", f"has an invalid value {value}, which cannot be negative")
