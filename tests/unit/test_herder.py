"""The reconciling herder with memory stores and in-process test plugins (no Kafka needed).

Source tasks here return nothing from ``poll``, so their producer never connects anywhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from cdc.api import SchemaAndValue, SourceConnector, SourceRecord, SourceTask
from cdc.api.plugins import Converter, HeaderConverter
from cdc.config import ConfigDef, ConfigType
from cdc.config import validators as v
from cdc.plugins import registry
from cdc.worker.connect_herder import ConnectHerder
from cdc.worker.errors import AlreadyExistsError, BadRequestError, NotFoundError
from cdc.worker.membership import SoloMembership
from cdc.worker.settings import WorkerSettings
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.stores.memory import (
    MemoryConfigBackingStore,
    MemoryOffsetBackingStore,
    MemoryStatusBackingStore,
)
from cdc.worker.worker import Worker


class NullConverter(Converter):
    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        pass

    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = None) -> bytes | None:
        return None if value is None else str(value).encode()

    def to_connect_data(self, topic: str, value: bytes | None, headers: Any = None) -> SchemaAndValue:
        return SchemaAndValue(None, value)


class NullHeaderConverter(HeaderConverter):
    def configure(self, configs: Mapping[str, Any]) -> None:
        pass

    def from_connect_header(self, topic: str, header_key: str, schema: Any, value: Any) -> bytes | None:
        return None

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(None, value)


class IdleTask(SourceTask):
    def __init__(self) -> None:
        self._stop = threading.Event()

    def start(self, props: dict[str, str]) -> None:
        if props.get("fail") == "task":
            raise RuntimeError("boom from task start")
        self.props = props

    def progress(self) -> Mapping[str, Any]:
        if self.props.get("progress") == "broken":
            raise RuntimeError("boom from progress")
        if self.props.get("progress") == "busy":
            # Connect's own keys cannot be overwritten by a task
            return {"busy": {"done": int(self.props["task.index"])}, "state": "HACKED", "id": 9}
        return {}

    def poll(self) -> list[SourceRecord] | None:
        self._stop.wait(0.05)
        return None

    def stop(self) -> None:
        self._stop.set()


class IdleConnector(SourceConnector):
    def config(self) -> ConfigDef:
        return ConfigDef().define("greeting", ConfigType.STRING, "hi", v.one_of("hi", "hello"))

    def start(self, props: dict[str, str]) -> None:
        if props.get("fail") == "connector":
            raise RuntimeError("boom from connector start")
        self.props = props

    def task_class(self) -> type[SourceTask]:
        return IdleTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task.index": str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass


registry.register("test.IdleConnector", IdleConnector)
registry.register("test.NullConverter", NullConverter)
registry.register("test.NullHeaderConverter", NullHeaderConverter)

WORKER_PROPS = {
    "bootstrap.servers": "127.0.0.1:1",
    "key.converter": "test.NullConverter",
    "value.converter": "test.NullConverter",
    "header.converter": "test.NullHeaderConverter",
    "offset.flush.interval.ms": "100",
    "task.shutdown.graceful.timeout.ms": "5000",
}


@pytest.fixture
def herder() -> Iterator[ConnectHerder]:
    from cdc.worker.config import STANDALONE_DEF

    parsed = STANDALONE_DEF.parse({**WORKER_PROPS, "offset.storage.file.filename": "/nonexistent"})
    settings = WorkerSettings.from_parsed(dict(WORKER_PROPS), parsed, "127.0.0.1:8083")
    offsets = MemoryOffsetBackingStore()
    h = ConnectHerder(
        lambda hd: Worker(settings, offsets, hd, hd, hd.on_topic_seen),
        MemoryConfigBackingStore(),
        MemoryStatusBackingStore(),
        offsets,
        SoloMembership("http://127.0.0.1:8083/"),
    )
    h.start()
    assert h.wait_started(10)
    yield h
    h.stop()


def create(h: ConnectHerder, name: str = "c1", **extra: str) -> Any:
    return h.put_connector_config(
        name, {"connector.class": "test.IdleConnector", "tasks.max": "2", **extra}, allow_replace=False
    )


def test_create_runs_connector_and_tasks(herder: ConnectHerder) -> None:
    result = create(herder)
    assert result.created is True
    assert result.info["name"] == "c1" and result.info["type"] == "source"
    status = herder.await_state("c1", "RUNNING", tasks=2)
    assert status["connector"] == {"state": "RUNNING", "worker_id": "127.0.0.1:8083"}
    assert [t["id"] for t in status["tasks"]] == [0, 1]
    configs = herder.task_configs("c1")
    assert configs[1]["id"] == {"connector": "c1", "task": 1}
    assert configs[1]["config"]["task.index"] == "1"
    assert configs[1]["config"]["task.class"].endswith("IdleTask")
    assert herder.connectors() == ["c1"]


def test_duplicate_create_conflicts(herder: ConnectHerder) -> None:
    create(herder)
    with pytest.raises(AlreadyExistsError, match="Connector c1 already exists"):
        create(herder)


def test_invalid_config_is_a_bad_request_with_every_error(herder: ConnectHerder) -> None:
    with pytest.raises(BadRequestError) as info:
        create(herder, greeting="yo", **{"tasks.max": "0"})
    message = str(info.value)
    assert message.startswith("Connector configuration is invalid and contains the following 2 error(s):")
    assert "tasks.max" in message and "greeting" in message
    infos = herder.validate_connector_config(
        {"connector.class": "test.IdleConnector", "name": "x", "greeting": "yo"}
    )
    assert infos["error_count"] == 1
    assert "Common" in infos["groups"]
    by_name = {c["value"]["name"]: c for c in infos["configs"]}
    assert by_name["greeting"]["value"]["errors"] == [
        "Invalid value yo for configuration greeting: String must be one of: hi, hello"
    ]
    assert by_name["tasks.max"]["definition"]["default_value"] == "1"


def test_unknown_connector_class_is_a_bad_request(herder: ConnectHerder) -> None:
    with pytest.raises(BadRequestError, match="Failed to find any class that implements Connector"):
        herder.put_connector_config("x", {"connector.class": "no.such.Connector"}, False)


def test_pause_resume_stop_and_delete(herder: ConnectHerder) -> None:
    create(herder)
    herder.await_state("c1", "RUNNING", tasks=2)
    herder.pause_connector("c1")
    herder.await_state("c1", "PAUSED", tasks=2)
    herder.resume_connector("c1")
    herder.await_state("c1", "RUNNING", tasks=2)
    herder.stop_connector("c1")
    status = herder.await_state("c1", "STOPPED", tasks=0)
    assert status["tasks"] == []
    assert herder.worker.task_ids() == []
    herder.resume_connector("c1")
    herder.await_state("c1", "RUNNING", tasks=2)
    herder.delete_connector("c1")
    with pytest.raises(NotFoundError, match="Connector c1 not found"):
        herder.connector_info("c1")
    deadline = time.monotonic() + 10
    while herder.worker.task_ids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert herder.worker.task_ids() == []


def test_failures_are_reported_with_traces_and_do_not_stop_others(herder: ConnectHerder) -> None:
    create(herder, "bad-task", fail="task")
    create(herder, "good")
    status = herder.await_state("bad-task", "RUNNING")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status = herder.connector_status("bad-task")
        if len(status["tasks"]) == 2 and all(t["state"] == "FAILED" for t in status["tasks"]):
            break
        time.sleep(0.05)
    assert all(t["state"] == "FAILED" for t in status["tasks"])
    assert "boom from task start" in status["tasks"][0]["trace"]
    herder.await_state("good", "RUNNING", tasks=2)
    create(herder, "bad-conn", fail="connector")
    failed = herder.await_state("bad-conn", "FAILED")
    assert "boom from connector start" in failed["connector"]["trace"]


def test_restart_failed_tasks_only(herder: ConnectHerder) -> None:
    create(herder, "bad-task", fail="task")
    herder.await_state("bad-task", "RUNNING")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        tasks = herder.connector_status("bad-task")["tasks"]
        if len(tasks) == 2 and all(t["state"] == "FAILED" for t in tasks):
            break
        time.sleep(0.05)
    plan = herder.restart_connector("bad-task", include_tasks=True, only_failed=True)
    assert plan is not None
    assert plan["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in plan["tasks"]] == ["RESTARTING", "RESTARTING"]
    assert herder.restart_connector("bad-task", include_tasks=False, only_failed=False) is None


def test_initial_state_stopped_and_offsets_only_when_stopped(herder: ConnectHerder) -> None:
    herder.put_connector_config("c2", {"connector.class": "test.IdleConnector"}, False, TargetState.STOPPED)
    herder.await_state("c2", "STOPPED", tasks=0)
    # the connector does not check offsets (alter_offsets returns False): Connect's hedged message
    assert herder.alter_connector_offsets("c2", [{"partition": {"file": "a"}, "offset": {"pos": 3}}]) == (
        "The Connect framework-managed offsets for this connector have been altered successfully. "
        "However, if this connector manages offsets externally, they will need to be manually altered "
        "in the system that the connector uses."
    )
    assert herder.connector_offsets("c2") == {"offsets": [{"partition": {"file": "a"}, "offset": {"pos": 3}}]}
    assert herder.reset_connector_offsets("c2").startswith(
        "The Connect framework-managed offsets for this connector have been reset successfully. However,"
    )
    with pytest.raises(BadRequestError, match="values must be primitive"):
        herder.alter_connector_offsets("c2", [{"partition": {"file": "a"}, "offset": {"pos": [1]}}])
    assert herder.connector_offsets("c2") == {"offsets": []}
    create(herder, "c3")
    with pytest.raises(BadRequestError, match="Connectors must be in the STOPPED state"):
        herder.alter_connector_offsets("c3", [{"partition": {"a": "b"}, "offset": None}])


def test_a_task_reports_its_progress_beside_connects_status(herder: ConnectHerder) -> None:
    create(herder, progress="busy")
    create(herder, "c2", progress="broken")
    status = herder.await_state("c1", "RUNNING", tasks=2)
    worker = "127.0.0.1:8083"
    assert status["tasks"] == [
        {"id": 0, "state": "RUNNING", "worker_id": worker, "busy": {"done": 0}},
        {"id": 1, "state": "RUNNING", "worker_id": worker, "busy": {"done": 1}},
    ]
    assert herder.task_status(TaskId("c1", 1)) == status["tasks"][1]
    # a task that fails to say answers with Connect's entry alone
    broken = herder.await_state("c2", "RUNNING", tasks=2)
    assert broken["tasks"][0] == {"id": 0, "state": "RUNNING", "worker_id": worker}
    assert herder.task_status(TaskId("c2", 0)) == {"id": 0, "state": "RUNNING", "worker_id": worker}


def test_task_status_and_unknown_task(herder: ConnectHerder) -> None:
    create(herder)
    herder.await_state("c1", "RUNNING", tasks=2)
    assert herder.task_status(TaskId("c1", 0))["state"] == "RUNNING"
    with pytest.raises(NotFoundError):
        herder.task_status(TaskId("c1", 7))
    with pytest.raises(NotFoundError, match="No status found for connector nope"):
        herder.connector_status("nope")


class PollRecordingMembership(SoloMembership):
    """A solo member that notes when the herder first polls it (a group member starts joining then)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.first_poll: float | None = None

    def poll(self, timeout: float) -> bool:
        if self.first_poll is None:
            self.first_poll = time.monotonic()
        return super().poll(timeout)


def test_the_herder_polls_its_membership_as_soon_as_it_has_started() -> None:
    """A distributed worker joins its group on the herder's first poll, and a POST /connectors waits for
    the join: that poll must not wait for the herder's 1 s tick (it did, B10 measured 1.2 s to RUNNING)."""
    from cdc.worker.config import STANDALONE_DEF

    parsed = STANDALONE_DEF.parse({**WORKER_PROPS, "offset.storage.file.filename": "/nonexistent"})
    settings = WorkerSettings.from_parsed(dict(WORKER_PROPS), parsed, "127.0.0.1:8083")
    offsets = MemoryOffsetBackingStore()
    membership = PollRecordingMembership("http://127.0.0.1:8083/")
    h = ConnectHerder(
        lambda hd: Worker(settings, offsets, hd, hd, hd.on_topic_seen),
        MemoryConfigBackingStore(),
        MemoryStatusBackingStore(),
        offsets,
        membership,
    )
    h.start()
    try:
        assert h.wait_started(10)
        started = time.monotonic()
        deadline = started + 5
        while membership.first_poll is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert membership.first_poll is not None
        assert membership.first_poll - started < 0.5, "the first poll waited for the herder's tick"
    finally:
        h.stop()
