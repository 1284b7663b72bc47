"""Exactly-once source tasks without Kafka: a fake transactional producer records what each transaction
held. Records and their offsets must commit together, per ``transaction.boundary``; aborted transactions
drop both; the preflight validation answers Connect's messages; standalone refuses exactly-once."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from cdc.api.connector import (
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    SourceConnector,
    SourceTask,
    Task,
)
from cdc.api.errors import ConfigError, ConnectError
from cdc.api.records import SourceRecord
from cdc.config import ConfigDef
from cdc.kafka.murmur2 import partition_for
from cdc.worker.config import DISTRIBUTED_DEF, STANDALONE_DEF
from cdc.worker.exactly_once import (
    ExactlyOnceSettings,
    ExactlyOnceWorkerSourceTask,
    exactly_once_producer,
    refuse_standalone,
    transactional_id,
    validate_exactly_once,
)
from cdc.worker.offsets import OffsetWriter, StoreOffsetReader
from cdc.worker.settings import WorkerSettings
from cdc.worker.source_task import SourceTaskSettings
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.stores.memory import MemoryOffsetBackingStore
from cdc.worker.tolerance import ErrorHandler

OFFSETS = "connect-offsets"


class FakeProducer:
    """Transactions as lists: ``committed`` holds each committed one's (topic, partition, key, value)."""

    def __init__(self, fail_commit: KafkaError | None = None) -> None:
        self.open: list[tuple[str, int | None, Any, Any]] | None = None
        self.committed: list[list[tuple[str, int | None, Any, Any]]] = []
        self.aborted = 0
        self.initialized = False
        self.fail_commit = fail_commit
        self._callbacks: list[Any] = []

    def init_transactions(self, timeout: float) -> None:
        self.initialized = True

    def begin_transaction(self) -> None:
        assert self.open is None, "a transaction is already open"
        self.open = []

    def produce(
        self,
        topic: str,
        key: Any = None,
        value: Any = None,
        partition: int | None = None,
        on_delivery: Any = None,
        **kwargs: Any,
    ) -> None:
        assert self.open is not None, "produce outside a transaction"
        self.open.append((topic, partition, key, value))
        if on_delivery is not None:
            self._callbacks.append(on_delivery)

    def poll(self, timeout: float = 0) -> int:
        done, self._callbacks = self._callbacks, []
        for cb in done:
            cb(None, object())
        return len(done)

    def flush(self, timeout: float = 0) -> int:
        self.poll()
        return 0

    def commit_transaction(self, timeout: float) -> None:
        assert self.open is not None
        self.poll()
        if self.fail_commit is not None:
            raise KafkaException(self.fail_commit)
        self.committed.append(self.open)
        self.open = None

    def abort_transaction(self, timeout: float) -> None:
        self.open = None
        self.aborted += 1


class ScriptTask(SourceTask):
    """Returns the batches it was given, one per poll, then stops the worker task."""

    batches: list[list[SourceRecord]] = []
    on_poll: Any = None

    def start(self, props: dict[str, str]) -> None:
        self.queue = list(self.batches)
        self.committed: list[Any] = []

    def poll(self) -> list[SourceRecord] | None:
        if not self.queue:
            self.done.set()
            return None
        batch = self.queue.pop(0)
        if self.on_poll is not None:
            self.on_poll(self, batch)
        return batch

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        self.committed.append(record.value)

    def stop(self) -> None:
        pass


class BytesConverter:
    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = None) -> bytes | None:
        return None if value is None else str(value).encode()


class Listener:
    def __init__(self) -> None:
        self.failures: list[str] = []

    def on_startup(self, task: TaskId) -> None: ...
    def on_pause(self, task: TaskId) -> None: ...
    def on_resume(self, task: TaskId) -> None: ...
    def on_shutdown(self, task: TaskId) -> None: ...

    def on_failure(self, task: TaskId, trace: str) -> None:
        self.failures.append(trace)


class Identity:
    def apply(self, record: Any) -> Any:
        return record


def _record(n: int) -> SourceRecord:
    return SourceRecord(
        "out", None, None, None, None, f"v{n}", source_partition={"server": "s"}, source_offset={"pos": n}
    )


def _run(
    batches: list[list[SourceRecord]],
    boundary: str = "poll",
    producer: FakeProducer | None = None,
    on_poll: Any = None,
    interval_ms: int = 60000,
) -> tuple[FakeProducer, ScriptTask, Listener]:
    producer = producer or FakeProducer()
    done = threading.Event()
    task = ScriptTask()
    task.batches, task.on_poll, task.done = batches, on_poll, done  # type: ignore[attr-defined]
    store = MemoryOffsetBackingStore()
    listener = Listener()
    worker_task = ExactlyOnceWorkerSourceTask(
        TaskId("c", 0),
        task,
        {},
        listener,
        TargetState.STARTED,
        BytesConverter(),
        BytesConverter(),
        None,
        Identity(),
        ErrorHandler("t"),
        StoreOffsetReader("c", store),
        OffsetWriter("c", store),
        SourceTaskSettings(producer={}, flush_interval_ms=60000),
        exactly_once=ExactlyOnceSettings(
            "g-c-0", lambda key: (OFFSETS, partition_for(key, 25)), boundary, interval_ms
        ),
    )
    worker_task._new_producer = lambda: (producer.init_transactions(1), producer)[1]  # type: ignore[method-assign]
    worker_task.start()
    for _ in range(500):
        if done.wait(0.01) or not worker_task.is_alive():
            break
    worker_task.stop()
    assert worker_task.await_stop(5)
    return producer, task, listener


def _offsets(txn: list[tuple[str, int | None, Any, Any]]) -> list[dict[str, Any]]:
    return [json.loads(v) for t, _, _, v in txn if t == OFFSETS]


def _records(txn: list[tuple[str, int | None, Any, Any]]) -> list[bytes]:
    return [v for t, _, _, v in txn if t != OFFSETS]


def test_poll_boundary_commits_each_batch_with_its_offsets() -> None:
    producer, task, listener = _run([[_record(1), _record(2)], [_record(3)]])
    assert listener.failures == []
    assert producer.initialized
    assert [_records(t) for t in producer.committed] == [[b"v1", b"v2"], [b"v3"]]
    assert [_offsets(t) for t in producer.committed] == [[{"pos": 2}], [{"pos": 3}]]
    key = b'["c",{"server":"s"}]'
    assert producer.committed[0][-1][:3] == (
        OFFSETS,
        partition_for(key, 25),
        key,
    )  # Connect's bytes and place
    assert task.committed == ["v1", "v2", "v3"]  # commit_record only once committed


def test_interval_boundary_commits_on_stop_when_the_interval_is_long() -> None:
    producer, _, _ = _run([[_record(1)], [_record(2)]], boundary="interval", interval_ms=600000)
    assert [_records(t) for t in producer.committed] == [[b"v1", b"v2"]]
    assert [_offsets(t) for t in producer.committed] == [[{"pos": 2}]]


def test_connector_boundary_cuts_after_the_named_record_and_aborts_the_rest_on_stop() -> None:
    def on_poll(task: ScriptTask, batch: list[SourceRecord]) -> None:
        ctx = task.context.transaction_context()
        assert ctx is not None
        if batch[0].value == "v1":
            ctx.commit_transaction(batch[1])

    producer, _, _ = _run([[_record(1), _record(2), _record(3)]], boundary="connector", on_poll=on_poll)
    assert [_records(t) for t in producer.committed] == [[b"v1", b"v2"]]
    assert [_offsets(t) for t in producer.committed] == [[{"pos": 2}]]
    assert producer.aborted == 1  # v3 was never declared complete


def test_a_failed_commit_aborts_and_fails_the_task() -> None:
    producer = FakeProducer(fail_commit=KafkaError(KafkaError._FENCED, "fenced", fatal=True))
    _, task, listener = _run([[_record(1)]], producer=producer)
    assert producer.committed == []
    assert len(listener.failures) == 1 and "was fenced" in listener.failures[0]
    assert task.committed == []


def test_producer_settings_are_transactional() -> None:
    base = {"acks": "1", "enable.idempotence": False, "delivery.timeout.ms": 2147483647, "linger.ms": 5}
    out = exactly_once_producer(base, transactional_id("grp", "inv", 2))
    assert out == {"acks": "all", "enable.idempotence": True, "linger.ms": 5, "transactional.id": "grp-inv-2"}


class _Src(SourceConnector):
    support: ExactlyOnceSupport | None = None
    boundaries = ConnectorTransactionBoundaries.UNSUPPORTED

    def config(self) -> ConfigDef:
        return ConfigDef()

    def start(self, props: dict[str, str]) -> None: ...
    def stop(self) -> None: ...

    def task_class(self) -> type[Task]:
        return ScriptTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        return self.support

    def can_define_transaction_boundaries(self, props: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        return self.boundaries


def _worker(**props: str) -> WorkerSettings:
    base = {"key.converter": "k", "value.converter": "v"}
    definition = DISTRIBUTED_DEF if "group_id" in props else STANDALONE_DEF
    if "group_id" in props:
        base |= {"config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s"}
    else:
        base["offset.storage.file.filename"] = "/nonexistent"
    return WorkerSettings.parse(definition, {**base, **{k.replace("_", "."): v for k, v in props.items()}})


def test_validation_messages_are_connects() -> None:
    enabled = _worker(group_id="g", exactly_once_source_support="enabled")
    required = {"exactly.once.support": "required"}
    assert validate_exactly_once(_Src(), required, enabled)["exactly.once.support"][0].startswith(
        "The connector does not implement the API required for preflight validation"
    )
    src = _Src()
    src.support = ExactlyOnceSupport.UNSUPPORTED
    assert validate_exactly_once(src, required, enabled) == {
        "exactly.once.support": [
            "The connector does not support exactly-once semantics with the provided configuration."
        ]
    }
    src.support = ExactlyOnceSupport.SUPPORTED
    assert validate_exactly_once(src, required, enabled) == {}
    assert validate_exactly_once(
        src, required, _worker(group_id="g", exactly_once_source_support="preparing")
    ) == {"exactly.once.support": ["This worker does not have exactly-once source support enabled."]}
    standalone = validate_exactly_once(src, required, _worker(exactly_once_source_support="disabled"))
    assert "only on distributed workers" in standalone["exactly.once.support"][0]
    assert validate_exactly_once(src, {"exactly.once.support": "requested"}, _worker()) == {}
    assert validate_exactly_once(src, {"transaction.boundary": "connector"}, enabled) == {
        "transaction.boundary": [
            "The connector does not support connector-defined transaction boundaries with the given "
            "configuration. Please reconfigure it to use a different transaction boundary definition."
        ]
    }


def test_standalone_refuses_exactly_once() -> None:
    refuse_standalone(_worker(exactly_once_source_support="disabled"))
    with pytest.raises(ConfigError, match="not supported in standalone mode"):
        refuse_standalone(_worker(exactly_once_source_support="enabled"))


def test_unknown_boundary_is_rejected() -> None:
    with pytest.raises(ValueError):
        ExactlyOnceSettings("t", lambda k: ("x", 0), "sometimes")
    assert ConnectError  # the module's errors stay importable
