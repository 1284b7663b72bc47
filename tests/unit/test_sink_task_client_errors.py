"""The sink task's consumer errors (``error_cb``), without Kafka: refused credentials fail the task naming
authentication; a broker away does not."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaError

from cdc.api.connector import SinkTask
from cdc.worker import sink_task as sink_task_module
from cdc.worker.sink_task import SinkTaskSettings, WorkerSinkTask
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.tolerance import ErrorHandler


class FakeConsumer:
    """Reports ``errors`` to ``error_cb`` from ``consume``, as librdkafka does; never returns messages."""

    instances: list[FakeConsumer] = []

    def __init__(self, config: dict[str, Any]) -> None:
        self.error_cb = config["error_cb"]
        self.errors: list[KafkaError] = []
        FakeConsumer.instances.append(self)

    def subscribe(self, topics: list[str], **_: Any) -> None: ...

    def consume(self, num: int, timeout: float) -> list[Any]:
        errors, self.errors = self.errors, []
        for err in errors:
            self.error_cb(err)
        time.sleep(0.01)
        return []

    def close(self) -> None: ...


class Nothing(SinkTask):
    def start(self, props: dict[str, str]) -> None: ...
    def put(self, records: list[Any]) -> None: ...
    def stop(self) -> None: ...


class Listener:
    def __init__(self) -> None:
        self.failures: list[str] = []

    def on_startup(self, task: TaskId) -> None: ...
    def on_pause(self, task: TaskId) -> None: ...
    def on_resume(self, task: TaskId) -> None: ...
    def on_shutdown(self, task: TaskId) -> None: ...

    def on_failure(self, task: TaskId, trace: str) -> None:
        self.failures.append(trace)


@pytest.fixture(autouse=True)
def fake_consumer(monkeypatch: pytest.MonkeyPatch) -> None:
    FakeConsumer.instances.clear()
    monkeypatch.setattr(sink_task_module, "Consumer", FakeConsumer)


def _start() -> tuple[WorkerSinkTask, Listener, FakeConsumer]:
    listener = Listener()
    task = WorkerSinkTask(
        TaskId("s", 0),
        Nothing(),
        {},
        listener,
        TargetState.STARTED,
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        ErrorHandler("t"),
        SinkTaskSettings(consumer={"group.id": "connect-s"}, topics=["t"]),
    )
    task.start()
    deadline = time.monotonic() + 5
    while not FakeConsumer.instances and time.monotonic() < deadline:
        time.sleep(0.01)
    return task, listener, FakeConsumer.instances[0]


def test_refused_credentials_fail_the_sink_task() -> None:
    task, listener, consumer = _start()
    consumer.errors.append(
        KafkaError(
            KafkaError._AUTHENTICATION,
            "sasl_plaintext://127.0.0.1:1/bootstrap: SASL authentication error: Authentication failed: "
            "Invalid username or password",
        )
    )
    assert task.await_stop(5)
    assert len(listener.failures) == 1
    assert "consumer failed to authenticate" in listener.failures[0]


def test_a_broker_away_does_not_fail_the_sink_task() -> None:
    task, listener, consumer = _start()
    consumer.errors += [
        KafkaError(KafkaError._TRANSPORT, "127.0.0.1:1/1: Disconnected"),
        KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"),
    ]
    time.sleep(0.2)
    assert task.is_alive() and listener.failures == []
    task.stop()
    assert task.await_stop(5) and listener.failures == []
