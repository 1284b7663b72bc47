"""The offset-sync index a checkpoint task translates group offsets with.

Kafka's ``OffsetSyncStore`` keeps 64 syncs per partition at exponentially spaced distances, so a translated
offset can lag far behind the group (up to half the distance to the newest sync). This index keeps every
sync it reads, up to :data:`MAX_SYNCS` per partition; when a partition reaches the cap, every second sync
of its older half is dropped (the newest half is never thinned). So:

* a group offset at or after the oldest of the newest ``MAX_SYNCS // 2`` syncs of its partition translates
  to at most ``offset.lag.max`` records (and what one offset commit interval copies, whichever is smaller
  when the group is ahead of every sync) before its exact position: syncs are never further apart (see
  :class:`cdc.mirror.sync_writer.OffsetSyncWriter`);
* an older one lags by at most the distance between the two retained syncs around it (which doubles with
  each thinning of that region);
* a translated offset is never ahead: the sync used is the newest at or before the group's upstream offset
  and the translation adds at most one (the record after that sync), as Kafka's.
"""

from __future__ import annotations

import bisect
import logging
import threading
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from cdc.api.errors import DataError
from cdc.mirror.protocol import OffsetSync

__all__ = ["MAX_SYNCS", "OffsetSyncIndex", "OffsetSyncReader"]

log = logging.getLogger(__name__)

MAX_SYNCS = 4096


class OffsetSyncIndex:
    """Syncs per source topic-partition, upstream offsets ascending."""

    def __init__(self, max_syncs: int = MAX_SYNCS) -> None:
        self.max_syncs = max_syncs
        self._up: dict[tuple[str, int], list[int]] = {}
        self._down: dict[tuple[str, int], list[int]] = {}
        self._lock = threading.Lock()

    def add(self, sync: OffsetSync) -> None:
        key = (sync.topic, sync.partition)
        with self._lock:
            ups = self._up.setdefault(key, [])
            downs = self._down.setdefault(key, [])
            # a sync at or before older ones means replication restarted earlier (or the target was
            # truncated): the later syncs no longer describe the target, drop them (as Kafka's store does)
            while ups and (ups[-1] >= sync.upstream_offset or downs[-1] >= sync.downstream_offset):
                ups.pop()
                downs.pop()
            ups.append(sync.upstream_offset)
            downs.append(sync.downstream_offset)
            if len(ups) > self.max_syncs:
                half = len(ups) // 2
                self._up[key] = ups[:half:2] + ups[half:]
                self._down[key] = downs[:half:2] + downs[half:]

    def translate(self, topic: str, partition: int, upstream: int) -> int | None:
        """The downstream offset for a group at ``upstream``: None without any sync for the partition, -1 when
        every sync is after it (too old to translate), else never ahead of the exact position."""
        with self._lock:
            ups = self._up.get((topic, partition))
            if not ups:
                return None
            i = bisect.bisect_right(ups, upstream) - 1
            if i < 0:
                return -1
            down = self._down[(topic, partition)][i]
            return down if ups[i] == upstream else down + 1

    def size(self, topic: str, partition: int) -> int:
        with self._lock:
            return len(self._up.get((topic, partition), ()))


class OffsetSyncReader:
    """Reads the offset-syncs topic (partition 0) into an index from a background thread; ``ready`` once it
    has read up to the end it saw at start (Kafka translates nothing before that either)."""

    def __init__(self, config: dict[str, Any], topic: str, index: OffsetSyncIndex) -> None:
        self.topic = topic
        self.index = index
        config = dict(config)
        config.setdefault("group.id", "cdc-mm2-offset-syncs-no-commit")
        config["enable.auto.commit"] = False
        self.consumer = Consumer(config)
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"offset-syncs-{topic}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        consumer = self.consumer
        try:
            _, high = consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=30)
        except Exception as exc:
            log.warning("Could not read the end of %s (%s): translating from what is read", self.topic, exc)
            high = 0
        consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
        if high <= 0:
            self.ready.set()
        while not self._stop.is_set():
            for msg in consumer.consume(1000, 0.5):
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        log.warning("Reading %s: %s", self.topic, err.str())
                    continue
                try:
                    self.index.add(OffsetSync.decode(msg.key() or b"", msg.value() or b""))
                except DataError as exc:
                    log.warning("Skipping an unreadable offset sync at %s: %s", msg.offset(), exc)
                if (msg.offset() or 0) + 1 >= high:
                    self.ready.set()
        consumer.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        else:
            self.consumer.close()
