"""Kafka's ``OffsetSyncWriter`` for :class:`cdc.mirror.source.MirrorSourceTask`: which copied records'
offsets become offset syncs (the rule in :mod:`cdc.mirror.source`'s docstring) and their writes to the
offset-syncs topic. Split from ``source.py`` to keep it under 25 KB."""

from __future__ import annotations

import logging
import threading
from typing import Any

from confluent_kafka import KafkaError, Producer

from cdc.mirror.protocol import OffsetSync

log = logging.getLogger(__name__)

__all__ = ["OffsetSyncWriter"]


class OffsetSyncWriter:
    """Kafka's OffsetSyncWriter: when a copied record's offsets become an offset sync (module docstring).

    Called once per acknowledged record, so it keeps plain tuples and builds an :class:`OffsetSync` only for
    what it writes. ``maybe_queue`` and ``fire_pending`` run on the task thread (delivery callbacks),
    ``promote_delayed`` on the offset committer's: the lock guards the two maps between them."""

    def __init__(self, producer: Producer | None, topic: str, max_lag: int) -> None:
        self.producer = producer
        self.topic = topic
        self.max_lag = max_lag
        # (topic, partition) → [previous upstream, previous downstream, downstream of the last sync]
        self._state: dict[tuple[str, int], list[int]] = {}
        self._delayed: dict[tuple[str, int], tuple[int, int]] = {}
        self._pending: dict[tuple[str, int], tuple[int, int]] = {}
        self._lock = threading.Lock()
        self.failed: KafkaError | None = None

    def maybe_queue(self, topic: str, partition: int, upstream: int, downstream: int) -> bool:
        """Keep this record's offsets as the partition's next sync (True) or as its delayed one (False)."""
        key = (topic, partition)
        state = self._state.get(key)
        if state is None:
            state = self._state[key] = [-1, -1, -1]
        prev_up, prev_down, last_sync = state
        sync = (
            last_sync == -1
            or downstream - (last_sync + 1) >= self.max_lag
            or upstream - prev_up != 1
            or downstream < prev_down
        )
        state[0] = upstream
        state[1] = downstream
        with self._lock:
            if sync:
                state[2] = downstream
                self._delayed.pop(key, None)
                self._pending[key] = (upstream, downstream)
            else:
                self._delayed[key] = (upstream, downstream)
        return sync

    def promote_delayed(self) -> None:
        with self._lock:
            self._pending.update(self._delayed)
            self._delayed.clear()

    def pending(self) -> list[OffsetSync]:
        with self._lock:
            return [OffsetSync(t, p, up, down) for (t, p), (up, down) in self._pending.items()]

    def delayed(self) -> list[OffsetSync]:
        with self._lock:
            return [OffsetSync(t, p, up, down) for (t, p), (up, down) in self._delayed.items()]

    def fire_pending(self) -> None:
        if not self._pending:  # the common case, per record: nothing to write
            return
        with self._lock:
            pending = self._pending
            self._pending = {}
        if self.producer is None:
            return
        for (topic, partition), (up, down) in pending.items():
            sync = OffsetSync(topic, partition, up, down)
            self.producer.produce(
                self.topic, sync.record_value(), sync.record_key(), 0, on_delivery=self._delivered
            )
        self.producer.poll(0)

    def _delivered(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            log.error("Failure sending offset sync: %s", err)
            self.failed = err

    def close(self) -> None:
        if self.producer is not None:
            self.producer.flush(10)
