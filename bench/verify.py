"""Reading a topic back: every record counted by key, first and last Kafka timestamps.

The end-to-end rate is records / (last timestamp - first timestamp) of the records in Kafka (CreateTime,
which the worker's producer stamps when it sends). Keys are the JSON Connect writes without schemas
(``{"id":123}``); the expected keys are the ids 1..n, so a key seen twice is a duplicate and a key never
seen is missing. The reader runs after the contender drained, so it takes no CPU from the measurement.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, Message, TopicPartition

__all__ = ["Readback", "Watermarks", "key_id", "read_back", "records"]

_ID = re.compile(rb"-?\d+")


@dataclass
class Readback:
    records: int
    missing: int
    duplicates: int
    unexpected: int  # keys outside 1..n, or without an id
    first_ts_ms: int
    last_ts_ms: int

    @property
    def span_s(self) -> float:
        return (self.last_ts_ms - self.first_ts_ms) / 1000.0


class Watermarks:
    """Sum of a topic's end offsets, asked often while a contender runs (one consumer kept open)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-wm-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )

    def high(self) -> int:
        meta = self._consumer.list_topics(self.topic, timeout=5).topics.get(self.topic)
        if meta is None or meta.error is not None:
            return 0
        total = 0
        for p in meta.partitions:
            _low, high = self._consumer.get_watermark_offsets(
                TopicPartition(self.topic, p), timeout=5, cached=False
            )
            total += max(high, 0)
        return total

    def close(self) -> None:
        self._consumer.close()


def records(bootstrap: str, topic: str, timeout: float = 600.0) -> Iterator[Message]:
    """Every record of ``topic`` from the beginning to its end offsets as they are now (tombstones too)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-verify-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "fetch.max.bytes": 52428800,
            "max.partition.fetch.bytes": 10485760,
        }
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        ends: dict[int, int] = {}
        for p in meta.partitions:
            _low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)
            ends[p] = high
        consumer.assign([TopicPartition(topic, p, 0) for p in ends])
        remaining = {p for p, end in ends.items() if end > 0}
        deadline = time.monotonic() + timeout
        while remaining and time.monotonic() < deadline:
            for msg in consumer.consume(10000, timeout=1.0):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise RuntimeError(f"reading {topic}: {err}")
                part, offset = msg.partition() or 0, msg.offset() or 0
                if offset >= ends[part]:
                    remaining.discard(part)
                    continue
                if offset == ends[part] - 1:
                    remaining.discard(part)
                yield msg
            # A transactional topic's last offsets are commit markers, never delivered: the position,
            # which moves past them, says when a partition is read to its end.
            for tp in consumer.position([TopicPartition(topic, p) for p in remaining]):
                if tp.offset >= ends[tp.partition]:
                    remaining.discard(tp.partition)
        if remaining:
            raise TimeoutError(f"reading {topic} back did not reach its end offsets within {timeout} s")
    finally:
        consumer.close()


def key_id(key: bytes | None) -> int:
    """The id in a record key written without schemas (``{"id":123}``); -1 when there is none."""
    match = _ID.search(key) if key else None
    return int(match.group()) if match else -1


def readback_timeout(records: int) -> float:
    """How long reading ``records`` back may take: 600 s, or a second per 5 000 records when longer (a
    10 M-row topic parsed record by record in Python takes 6-8 minutes here)."""
    return max(600.0, records / 5000)


def read_back(bootstrap: str, topic: str, expected_ids: int, timeout: float = 600.0) -> Readback:
    """Read ``topic`` from the beginning to its end offsets now; count keys against ids 1..expected_ids."""
    seen = bytearray(expected_ids + 1)
    count = unexpected = duplicates = 0
    first = last = None
    for msg in records(bootstrap, topic, timeout):
        if msg.value() is None:  # a tombstone: not a change event
            continue
        count += 1
        ts = msg.timestamp()[1]
        first = ts if first is None or ts < first else first
        last = ts if last is None or ts > last else last
        ident = key_id(msg.key())
        if 1 <= ident <= expected_ids:
            if seen[ident]:
                duplicates += 1
                if seen[ident] < 255:
                    seen[ident] += 1
            else:
                seen[ident] = 1
        else:
            unexpected += 1
    missing = expected_ids - (expected_ids + 1 - seen.count(0))
    return Readback(count, missing, duplicates, unexpected, first or 0, last or 0)
