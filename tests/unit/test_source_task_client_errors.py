"""The source task's producer errors (``error_cb``), without Kafka: refused credentials fail the task with a
trace naming authentication and no password; a broker away does not (the records go once it is back); a
task whose producer queue stays full still stops when asked."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from confluent_kafka import KafkaError

from cdc.api.connector import SourceTask
from cdc.api.records import SourceRecord
from cdc.worker import source_task as source_task_module
from cdc.worker.offsets import OffsetWriter, StoreOffsetReader
from cdc.worker.source_task import SourceTaskSettings, WorkerSourceTask
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.stores.memory import MemoryOffsetBackingStore
from cdc.worker.tolerance import ErrorHandler

PASSWORD = "pw-s3cret-0815"


class FakeProducer:
    """Holds what it is given until ``reachable``; reports ``errors`` to ``error_cb`` from poll/flush, as
    librdkafka does; ``capacity`` records at most in its queue (BufferError beyond)."""

    instances: list[FakeProducer] = []
    start_reachable = True
    start_capacity = 1_000_000

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.error_cb = config.get("error_cb")
        self.errors: list[KafkaError] = []
        self.reachable = FakeProducer.start_reachable
        self.capacity = FakeProducer.start_capacity
        self.refused = 0  # BufferErrors raised
        self.queue: list[tuple[Any, Any]] = []
        self.delivered: list[Any] = []
        self.lock = threading.Lock()
        FakeProducer.instances.append(self)

    def produce(
        self, topic: str, key: Any = None, value: Any = None, on_delivery: Any = None, **_: Any
    ) -> None:
        with self.lock:
            if len(self.queue) >= self.capacity:
                self.refused += 1
                raise BufferError("Local: Queue full")
            self.queue.append((value, on_delivery))

    def poll(self, timeout: float = 0) -> int:
        with self.lock:
            errors, self.errors = self.errors, []
            done: list[tuple[Any, Any]] = []
            if self.reachable:
                done, self.queue = self.queue, []
        for err in errors:
            if self.error_cb is not None:
                self.error_cb(err)
        for value, cb in done:
            self.delivered.append(value)
            if cb is not None:
                cb(None, object())
        if not done and timeout:
            time.sleep(min(timeout, 0.02))
        return len(done)

    def flush(self, timeout: float = 0) -> int:
        self.poll(timeout)
        with self.lock:
            return len(self.queue)


class Lines(SourceTask):
    """One record a poll, offsets ``{"pos": n}``, until ``limit``; then idle polls."""

    limit = 5

    def start(self, props: dict[str, str]) -> None:
        self.n = 0

    def poll(self) -> list[SourceRecord] | None:
        if self.n >= self.limit:
            time.sleep(0.01)
            return None
        self.n += 1
        return [
            SourceRecord(
                "out",
                None,
                None,
                None,
                None,
                f"v{self.n}",
                source_partition={"f": "x"},
                source_offset={"pos": self.n},
            )
        ]

    def stop(self) -> None:
        pass


class BytesConverter:
    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = None) -> bytes | None:
        return None if value is None else str(value).encode()


class Identity:
    def apply(self, record: Any) -> Any:
        return record


class Listener:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.shutdowns = 0

    def on_startup(self, task: TaskId) -> None: ...
    def on_pause(self, task: TaskId) -> None: ...
    def on_resume(self, task: TaskId) -> None: ...

    def on_shutdown(self, task: TaskId) -> None:
        self.shutdowns += 1

    def on_failure(self, task: TaskId, trace: str) -> None:
        self.failures.append(trace)


@pytest.fixture(autouse=True)
def fake_producer(monkeypatch: pytest.MonkeyPatch) -> None:
    FakeProducer.instances.clear()
    FakeProducer.start_reachable, FakeProducer.start_capacity = True, 1_000_000
    monkeypatch.setattr(source_task_module, "Producer", FakeProducer)


def _task(limit: int = 5) -> tuple[WorkerSourceTask, Listener, MemoryOffsetBackingStore]:
    store = MemoryOffsetBackingStore()
    listener = Listener()
    task = Lines()
    task.limit = limit
    worker_task = WorkerSourceTask(
        TaskId("c", 0),
        task,
        {},
        listener,
        TargetState.STARTED,
        BytesConverter(),
        BytesConverter(),
        None,  # type: ignore[arg-type]
        Identity(),
        ErrorHandler("t"),
        StoreOffsetReader("c", store),
        OffsetWriter("c", store),
        SourceTaskSettings(producer={"sasl.password": PASSWORD}, flush_interval_ms=50, flush_timeout_ms=200),
    )
    return worker_task, listener, store


def _wait(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _producer() -> FakeProducer:
    assert _wait(lambda: FakeProducer.instances)
    return FakeProducer.instances[0]


def test_the_producer_is_given_an_error_cb() -> None:
    worker_task, _, _ = _task()
    worker_task.initialize()
    producer = _producer()
    assert callable(producer.config["error_cb"]) and producer.config["sasl.password"] == PASSWORD


def test_refused_credentials_fail_the_task_naming_authentication() -> None:
    worker_task, listener, store = _task()
    FakeProducer.start_reachable = False  # librdkafka retries the refused handshake: nothing is delivered
    worker_task.start()
    producer = _producer()
    producer.errors.append(
        KafkaError(
            KafkaError._AUTHENTICATION,
            "sasl_plaintext://127.0.0.1:1/bootstrap: SASL authentication error: Authentication failed: "
            "Invalid username or password (after 3ms in state AUTH_REQ)",
        )
    )
    assert _wait(lambda: listener.failures), "the task did not fail"
    assert worker_task.await_stop(5)
    trace = listener.failures[0]
    assert "failed to authenticate" in trace and "Invalid username or password" in trace
    assert PASSWORD not in trace
    assert store.snapshot() == {}  # nothing acknowledged, no offset


def test_a_fatal_producer_error_fails_the_task() -> None:
    worker_task, listener, _ = _task()
    worker_task.start()
    _producer().errors.append(
        KafkaError(KafkaError._FATAL, "Fatal error: Local: Inconsistent state", fatal=True)
    )
    assert _wait(lambda: listener.failures)
    assert "Unrecoverable error from the task's producer" in listener.failures[0]
    assert worker_task.await_stop(5)


def test_a_broker_away_does_not_fail_the_task() -> None:
    worker_task, listener, _ = _task()
    FakeProducer.start_reachable = False
    worker_task.start()
    producer = _producer()
    producer.errors += [
        KafkaError(
            KafkaError._TRANSPORT, "127.0.0.1:1/1: Connect to ipv4#127.0.0.1:1 failed: Connection refused"
        ),
        KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"),
        KafkaError(
            KafkaError._AUTHENTICATION,
            "127.0.0.1:1/1: SASL authentication error: SaslAuthenticateRequest failed: Local: Broker "
            "transport failure (after 1ms in state AUTH_REQ)",
        ),
    ]
    assert _wait(lambda: not producer.errors)
    time.sleep(0.3)  # several scheduled commits wait on the flush meanwhile
    assert listener.failures == [] and worker_task.is_alive()
    producer.reachable = True
    assert _wait(lambda: len(producer.delivered) == 5), producer.delivered
    worker_task.stop()
    assert worker_task.await_stop(5)
    assert listener.failures == [] and listener.shutdowns == 1


def test_a_full_queue_does_not_keep_a_stopping_task_alive() -> None:
    """The send loop waits for room in the producer's queue (the broker away), but not past a stop."""
    worker_task, listener, store = _task(limit=10)
    FakeProducer.start_reachable, FakeProducer.start_capacity = False, 2
    worker_task.start()
    producer = _producer()
    assert _wait(lambda: producer.refused > 3)  # the send loop waits for room
    worker_task.stop()
    assert worker_task.await_stop(5), "the task is stuck on the full queue"
    assert listener.failures == []
    assert store.snapshot() == {}  # nothing was acknowledged: no offset is stored


def test_a_producer_that_delivers_nothing_shows_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """An offset commit waiting on undelivered records warns (then again every ``stall_warning_s``), so a
    stalled producer is not only a task reported RUNNING (docs/reliability.md)."""
    worker_task, listener, _ = _task()
    worker_task.stall_warning_s = 0.1
    FakeProducer.start_reachable = False
    with caplog.at_level("WARNING", logger="cdc.worker.source_task"):
        worker_task.start()
        assert _wait(lambda: "has not delivered" in caplog.text)
        worker_task.stop()
        assert worker_task.await_stop(5)
    warning = next(r.getMessage() for r in caplog.records if "has not delivered" in r.getMessage())
    assert "outstanding records for" in warning and listener.failures == []
