"""What a MirrorMaker 2 flow writes besides the mirrored records, read back byte for byte.

For a flow ``source->target`` with MM2's defaults (``offset-syncs.topic.location=source``):

* ``mm2-offset-syncs.<target>.internal`` on the **source** cluster: OffsetSync records;
* ``<source>.checkpoints.internal`` on the target: Checkpoint records;
* ``heartbeats`` on the target: Heartbeat records;
* ``mm2-offsets.<source>.internal`` on the target: the Connect offsets of the flow's source task, keyed
  ``["MirrorSourceConnector",{"cluster":…,"partition":…,"topic":…}]``.

Nothing is decoded here beyond the Connect offsets' JSON: the records are compared as the bytes that are
on the brokers.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FlowCapture",
    "RawRecord",
    "capture_flow",
    "checkpoints_topic",
    "connect_offsets_topic",
    "offset_syncs_topic",
    "read_topic",
    "source_offsets",
]


@dataclass(frozen=True)
class RawRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def offset_syncs_topic(target: str) -> str:
    return f"mm2-offset-syncs.{target}.internal"


def checkpoints_topic(source: str) -> str:
    return f"{source}.checkpoints.internal"


def connect_offsets_topic(source: str) -> str:
    return f"mm2-offsets.{source}.internal"


def read_topic(
    bootstrap: str,
    topic: str,
    timeout: float = 30.0,
    until: Callable[[list[RawRecord]], bool] | None = None,
) -> list[RawRecord]:
    """Every record of ``topic`` from the beginning to its end offsets as they are now (or, with ``until``,
    re-reading until ``until(records)`` holds or ``timeout`` passes). A topic that does not exist yet is
    empty."""
    from confluent_kafka import Consumer, TopicPartition

    deadline = time.monotonic() + timeout
    while True:
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"capture-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "enable.partition.eof": True,
                "isolation.level": "read_uncommitted",
            }
        )
        try:
            records = _read_all(consumer, TopicPartition, topic, max(1.0, deadline - time.monotonic()))
        finally:
            consumer.close()
        if until is None or until(records) or time.monotonic() >= deadline:
            return records
        time.sleep(0.5)


def _read_all(consumer: Any, topic_partition: Any, topic: str, timeout: float) -> list[RawRecord]:
    metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
    if metadata is None or metadata.error is not None or not metadata.partitions:
        return []
    ends: dict[int, int] = {}
    for partition in metadata.partitions:
        _low, high = consumer.get_watermark_offsets(topic_partition(topic, partition), timeout=10)
        if high > 0:
            ends[partition] = high
    if not ends:
        return []
    consumer.assign([topic_partition(topic, p, 0) for p in ends])
    records: list[RawRecord] = []
    pending = dict(ends)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None or msg.error() is not None:
            continue
        partition, offset = msg.partition(), msg.offset()
        if partition not in pending or offset >= ends[partition]:
            continue
        _kind, ts = msg.timestamp()
        headers = tuple((str(k), v) for k, v in (msg.headers() or []))
        records.append(RawRecord(topic, partition, offset, ts, msg.key(), msg.value(), headers))
        if offset + 1 >= ends[partition]:
            del pending[partition]
    if pending:
        raise TimeoutError(f"{topic}: partitions {sorted(pending)} not read to their end in {timeout:.0f} s")
    return sorted(records, key=lambda r: (r.partition, r.offset))


def source_offsets(records: list[RawRecord], source: str) -> dict[tuple[str, int], int]:
    """The last Connect offset the flow's MirrorSourceConnector committed per source (topic, partition):
    ``{"offset": N}`` is the source offset of the last record it copied."""
    out: dict[tuple[str, int], int] = {}
    for record in records:
        if record.key is None:
            continue
        key = json.loads(record.key)
        if not (isinstance(key, list) and len(key) == 2 and key[0] == "MirrorSourceConnector"):
            continue
        partition = key[1]
        if partition.get("cluster") != source:
            continue
        where = (str(partition["topic"]), int(partition["partition"]))
        if record.value is None:
            out.pop(where, None)
        else:
            out[where] = int(json.loads(record.value)["offset"])
    return out


@dataclass(frozen=True)
class FlowCapture:
    """The internal records one flow wrote, raw."""

    offset_syncs: list[RawRecord]
    checkpoints: list[RawRecord]
    heartbeats: list[RawRecord]
    connect_offsets: list[RawRecord]


def capture_flow(source_bootstrap: str, target_bootstrap: str, source: str, target: str) -> FlowCapture:
    return FlowCapture(
        offset_syncs=read_topic(source_bootstrap, offset_syncs_topic(target)),
        checkpoints=read_topic(target_bootstrap, checkpoints_topic(source)),
        heartbeats=read_topic(target_bootstrap, "heartbeats"),
        connect_offsets=read_topic(target_bootstrap, connect_offsets_topic(source)),
    )
