"""The Python side of MirrorMaker's copy alone, without Kafka: ``MirrorSourceTask.poll`` over ready-made
messages, the worker's ``_send`` and the delivery callbacks (``commit_record`` and its offset syncs), as the
source task thread runs them. librdkafka's part (fetch, decompression, compression, the C ``Message``
objects) is left out, so the figure is the per-record Python cost that bounds records/s, measured as the
thread's CPU time, the best of ``--repeat`` runs (the least disturbed by other work on a shared machine).

    PYTHONPATH=<checkout> python bench/mirror/send_loop_bench.py [--records 200000] [--repeat 5]

Run it with each checkout's ``PYTHONPATH`` to compare before and after: it imports only what both have.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

from cdc.api.records import SourceRecord
from cdc.converters.simple import ByteArrayConverter
from cdc.mirror.protocol import source_partition
from cdc.mirror.source import MirrorSourceTask, OffsetSyncWriter
from cdc.worker.offsets import OffsetWriter, StoreOffsetReader
from cdc.worker.source_task import SourceTaskSettings, WorkerSourceTask
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.stores.memory import MemoryOffsetBackingStore
from cdc.worker.tolerance import ErrorHandler

try:  # after the pass-through change
    from cdc.worker.source_task import IdentityChain as _Chain
except ImportError:  # before it
    from cdc.worker.worker import _IdentityChain as _Chain  # type: ignore[attr-defined,no-redef]

PARTITIONS = 6


class Message:
    """What the task reads of confluent_kafka's ``Message`` (a Python stand-in: the same for both sides)."""

    __slots__ = ("_offset", "_partition", "_value")

    def __init__(self, partition: int, offset: int, value: bytes) -> None:
        self._partition, self._offset, self._value = partition, offset, value

    def error(self) -> None:
        return None

    def topic(self) -> str:
        return "src"

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> None:
        return None

    def value(self) -> bytes:
        return self._value

    def headers(self) -> None:
        return None

    def timestamp(self) -> tuple[int, int]:
        return 1, 1_700_000_000_000


class Consumer:
    def __init__(self, batches: list[list[Message]]) -> None:
        self.batches = batches

    def consume(self, n: int, timeout: float) -> list[Message]:
        return self.batches.pop() if self.batches else []


class Metadata:
    __slots__ = ("_offset",)

    def __init__(self, offset: int) -> None:
        self._offset = offset

    def offset(self) -> int:
        return self._offset


class Producer:
    """Delivers everything at ``poll``, downstream offsets counted per partition."""

    def __init__(self) -> None:
        self.callbacks: list[tuple[Any, int]] = []
        self.next = [0] * PARTITIONS

    def produce(self, topic: str, *args: Any, **kwargs: Any) -> None:
        partition = kwargs.get("partition", -1)
        self.callbacks.append((kwargs.get("on_delivery"), partition))

    def poll(self, timeout: float = 0) -> int:
        callbacks, self.callbacks = self.callbacks, []
        for cb, partition in callbacks:
            offset = self.next[partition]
            self.next[partition] = offset + 1
            cb(None, Metadata(offset))
        return len(callbacks)

    def flush(self, timeout: float = 0) -> int:
        return self.poll()


def _task(batches: list[list[Message]]) -> tuple[MirrorSourceTask, WorkerSourceTask, Producer]:
    task = MirrorSourceTask()
    task.consumer = Consumer(batches)  # type: ignore[assignment]
    task.syncs = OffsetSyncWriter(None, "mm2-offset-syncs.b.internal", 100)
    task._remote = {"src": "a.src"}
    task._partitions = {("src", p): source_partition("a", "src", p) for p in range(PARTITIONS)}
    task.batch, task.poll_timeout, task._provenance = 2000, 0.0, False
    store = MemoryOffsetBackingStore()
    worker = WorkerSourceTask(
        TaskId("mm2", 0),
        task,
        {},
        None,  # type: ignore[arg-type]
        TargetState.STARTED,
        ByteArrayConverter(),
        ByteArrayConverter(),
        ByteArrayConverter(),
        _Chain(),
        ErrorHandler("bench"),
        StoreOffsetReader("mm2", store),
        OffsetWriter("mm2", store),
        SourceTaskSettings(producer={}),
    )
    producer = Producer()
    worker.producer = producer  # type: ignore[assignment]
    worker._topics_seen.add("a.src")
    return task, worker, producer


def run(records: int) -> float:
    value = b"x" * 1024
    # as librdkafka hands them: batches of one partition's consecutive records, partitions in turn
    per = records // PARTITIONS
    batches: list[list[Message]] = []
    for start in range(0, per, 1000):
        for p in range(PARTITIONS):
            batches.append([Message(p, o, value) for o in range(start, min(per, start + 1000))])
    merged = [batches[i] + batches[i + 1] for i in range(0, len(batches) - 1, 2)]
    merged.reverse()
    task, worker, producer = _task(merged)
    lock = threading.Lock()  # the loop's commit lock, as execute() takes it
    started = time.thread_time()
    copied = 0
    while True:
        polled: list[SourceRecord] | None = task.poll()
        if not polled:
            break
        with lock:
            worker._send(polled)
            producer.poll(0)
        copied += len(polled)
    cpu = time.thread_time() - started
    assert copied == per * PARTITIONS, copied
    return cpu / copied * 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    figures = sorted(run(args.records) for _ in range(args.repeat))
    print(f"µs of CPU per record: best {figures[0]:.2f}, median {figures[len(figures) // 2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
