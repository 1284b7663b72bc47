"""The source send loop's byte pass-through and its offset bookkeeping, without Kafka.

With no transform and converters that pass bytes through (``ByteArrayConverter``, as MirrorMaker runs), a
record whose key and value are bytes goes to the producer as it is, without the chain or the converters;
anything else takes the converters as before (and their errors the error handler). Offsets are recorded
once per run of records of one source partition map: what is committed is each partition's latest
offset, whatever the interleaving, with dropped records' offsets counted and records without offsets not.
"""

from __future__ import annotations

from typing import Any

import pytest

from cdc.api.connector import SourceTask
from cdc.api.errors import ConnectError
from cdc.api.records import Headers, SourceRecord
from cdc.api.schema import BYTES_SCHEMA, OPTIONAL_BYTES_SCHEMA, STRING_SCHEMA
from cdc.converters.simple import ByteArrayConverter
from cdc.worker.offsets import OffsetWriter, StoreOffsetReader, decode_offset
from cdc.worker.source_task import IdentityChain, SourceTaskSettings, WorkerSourceTask
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.stores.memory import MemoryOffsetBackingStore
from cdc.worker.tolerance import ErrorHandler


class Recorder:
    """A producer that keeps what it is given, delivering each record at ``poll``."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self._callbacks: list[Any] = []

    def produce(self, topic: str, **kwargs: Any) -> None:
        self.sent.append({"topic": topic, **kwargs})
        self._callbacks.append(kwargs.get("on_delivery"))

    def poll(self, timeout: float = 0) -> int:
        callbacks, self._callbacks = self._callbacks, []
        for i, cb in enumerate(callbacks):
            cb(None, i)
        return len(callbacks)

    def flush(self, timeout: float = 0) -> int:
        self.poll()
        return 0


class CountingBytes(ByteArrayConverter):
    calls = 0

    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = None) -> bytes | None:
        CountingBytes.calls += 1
        return super().from_connect_data(topic, schema, value, headers)


class FailingHeaders(ByteArrayConverter):
    def from_connect_header(self, topic: str, header_key: str, schema: Any, value: Any) -> bytes | None:
        raise ValueError("no header for you")


class Quiet(SourceTask):
    def start(self, props: dict[str, str]) -> None: ...
    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None: ...


class Told(Quiet):
    def __init__(self) -> None:
        self.committed: list[tuple[Any, Any]] = []

    def commit_record(self, record: SourceRecord, metadata: Any | None) -> None:
        self.committed.append((record.source_offset, metadata))


def _worker(
    task: SourceTask | None = None, tolerance: str = "none", header_converter: Any = None, chain: Any = None
) -> tuple[WorkerSourceTask, Recorder]:
    store = MemoryOffsetBackingStore()
    worker = WorkerSourceTask(
        TaskId("c", 0),
        task or Quiet(),
        {},
        None,  # type: ignore[arg-type]  # no listener: the loop is not run
        TargetState.STARTED,
        CountingBytes(),
        CountingBytes(),
        header_converter or ByteArrayConverter(),
        chain or IdentityChain(),
        ErrorHandler("t", tolerance=tolerance),
        StoreOffsetReader("c", store),
        OffsetWriter("c", store),
        SourceTaskSettings(producer={}),
    )
    recorder = Recorder()
    worker.producer = recorder  # type: ignore[assignment]
    return worker, recorder


def _record(value: Any, partition: dict[str, Any] | None, offset: int | None, **kw: Any) -> SourceRecord:
    return SourceRecord(
        kw.pop("topic", "out"),
        kw.pop("kafka_partition", 2),
        OPTIONAL_BYTES_SCHEMA,
        kw.pop("key", b"k"),
        kw.pop("value_schema", BYTES_SCHEMA),
        value,
        kw.pop("timestamp", 1234),
        kw.pop("headers", Headers()),
        partition,
        None if offset is None else {"pos": offset},
    )


def _committed(worker: WorkerSourceTask) -> dict[str, Any]:
    return {key.decode(): decode_offset(value) for key, value in worker.offset_writer.snapshot().items()}


@pytest.fixture(autouse=True)
def _reset() -> None:
    CountingBytes.calls = 0


def test_bytes_go_to_the_producer_as_they_are_without_the_converters() -> None:
    worker, producer = _worker()
    value = b"v" * 1024
    worker._send([_record(value, {"p": 0}, 7), _record(None, {"p": 0}, 8, key=None)])
    assert CountingBytes.calls == 0
    assert producer.sent[0]["value"] is value and producer.sent[0]["key"] == b"k"
    assert producer.sent[0]["partition"] == 2 and producer.sent[0]["timestamp"] == 1234
    assert producer.sent[1]["value"] is None and producer.sent[1]["key"] is None


def test_what_is_not_bytes_takes_the_converters_and_their_errors() -> None:
    worker, producer = _worker()
    with pytest.raises(ConnectError):  # errors.tolerance=none: ByteArrayConverter refuses a str
        worker._send([_record("text", {"p": 0}, 1, value_schema=STRING_SCHEMA)])
    assert CountingBytes.calls >= 1 and not producer.sent

    worker, producer = _worker(tolerance="all")
    worker._send([_record("text", {"p": 0}, 1), _record(b"ok", {"p": 0}, 2)])
    assert [s["value"] for s in producer.sent] == [b"ok"]
    assert list(_committed(worker).values()) == [{"pos": 2}]


def test_a_transform_turns_the_pass_through_off() -> None:
    class Upper:
        def apply(self, record: SourceRecord) -> SourceRecord:
            return record.new_record(value=record.value.upper())

    worker, producer = _worker(chain=Upper())
    worker._send([_record(b"abc", {"p": 0}, 1)])
    assert producer.sent[0]["value"] == b"ABC" and CountingBytes.calls == 2


def test_headers_are_converted_and_a_failing_header_converter_meets_the_error_handler() -> None:
    worker, producer = _worker()
    headers = Headers().add("h", b"1", OPTIONAL_BYTES_SCHEMA).add("n", None, OPTIONAL_BYTES_SCHEMA)
    worker._send([_record(b"v", {"p": 0}, 1, headers=headers)])
    assert producer.sent[0]["headers"] == [("h", b"1"), ("n", None)]

    worker, producer = _worker(tolerance="all", header_converter=FailingHeaders())
    worker._send([_record(b"v", {"p": 0}, 1, headers=headers), _record(b"w", {"p": 0}, 2)])
    assert [s["value"] for s in producer.sent] == [b"w"]  # the first skipped, as the slow path does
    assert list(_committed(worker).values()) == [{"pos": 2}]


def test_each_partition_commits_its_latest_offset_whatever_the_interleaving() -> None:
    worker, _ = _worker()
    a, b, a_again = {"p": "a"}, {"p": "b"}, {"p": "a"}  # a_again: another map, equal to a
    worker._send(
        [
            _record(b"1", a, 1),
            _record(b"2", a, 2),
            _record(b"3", b, 10),
            _record(b"4", a, 3),
            _record(b"5", a_again, 4),
            _record(b"6", b, 11),
            _record(b"7", b, None),  # no offset: the partition's last one stands
            _record(b"8", a, 5),
        ]
    )
    committed = _committed(worker)
    assert sorted(committed.values(), key=lambda o: o["pos"]) == [{"pos": 5}, {"pos": 11}]


def test_offset_only_records_count_and_the_task_is_told() -> None:
    task = Told()
    worker, producer = _worker(task=task)
    worker._send([_record(b"1", {"p": 0}, 1), _record(b"x", {"p": 0}, 2, topic="")])
    assert len(producer.sent) == 1 and list(_committed(worker).values()) == [{"pos": 2}]
    assert task.committed == [({"pos": 2}, None)]  # the offset-only record, at once
    producer.poll()
    assert task.committed[1] == ({"pos": 1}, 0)  # the copied one, with its metadata, on delivery


def test_a_task_that_is_not_told_gets_no_closure_per_record() -> None:
    worker, producer = _worker()
    worker._send([_record(b"1", {"p": 0}, 1), _record(b"2", {"p": 0}, 2)])
    assert all(s["on_delivery"] == worker._on_delivery for s in producer.sent)
