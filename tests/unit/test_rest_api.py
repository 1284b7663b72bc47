"""The REST API against an in-memory herder: routes, status codes, bodies, errors, forwarding."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import requests
from starlette.testclient import TestClient

from cdc.api.errors import AlreadyExistsError, ConfigError, NotFoundError
from cdc.worker.errors import (
    BadRequestError,
    ForbiddenError,
    NotAssignedError,
    NotLeaderError,
    RebalanceNeededError,
)
from cdc.worker.herder import Herder, PutResult
from cdc.worker.rest import OPENAPI, Loggers, RequestSignature, RestServer, RestSettings, create_app, sign
from cdc.worker.rest.errors import RestError
from cdc.worker.rest.forwarding import TargetUnreachable, forward_request
from cdc.worker.stores.base import TargetState, TaskId

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seed-configs"

WORKER_ID = "127.0.1.1:8083"


class FakeHerder(Herder):
    def __init__(self) -> None:
        self.configs: dict[str, dict[str, str]] = {}
        self.states: dict[str, TargetState] = {}
        self.offsets: dict[str, list[dict[str, Any]]] = {}
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        # method name -> exception to raise (once per call while set)
        self.raises: dict[str, BaseException] = {}
        self.health_state = ("healthy", "Worker has completed startup and is ready to handle requests.")

    def _enter(self, method: str, *args: Any) -> None:
        self.calls.append((method, args))
        error = self.raises.get(method)
        if error is not None:
            raise error

    def _need(self, name: str) -> dict[str, str]:
        if name not in self.configs:
            raise NotFoundError(f"Connector {name} not found")
        return self.configs[name]

    def _info(self, name: str) -> dict[str, Any]:
        config = self._need(name)
        tasks = [{"connector": name, "task": i} for i in range(int(config.get("tasks.max", "1")))]
        return {"name": name, "config": dict(config), "tasks": tasks, "type": "source"}

    # -- worker
    def server_info(self) -> dict[str, Any]:
        self._enter("server_info")
        return {"version": "3.9.0", "commit": "abc", "kafka_cluster_id": "cluster"}

    def health(self) -> tuple[str, str]:
        self._enter("health")
        return self.health_state

    # -- connectors
    def connectors(self) -> list[str]:
        self._enter("connectors")
        return sorted(self.configs)

    def connector_info(self, name: str) -> dict[str, Any]:
        self._enter("connector_info", name)
        return self._info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        self._enter("connector_config", name)
        return dict(self._need(name))

    def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> PutResult:
        self._enter("put_connector_config", name, dict(config), allow_replace, initial_state)
        exists = name in self.configs
        if exists and not allow_replace:
            raise AlreadyExistsError(f"Connector {name} already exists")
        if "connector.class" not in config:
            raise BadRequestError(
                "Connector configuration is invalid and contains the following 1 error(s):\n"
                'Missing required configuration "connector.class" which has no default value.'
            )
        self.configs[name] = dict(config)
        self.states.setdefault(name, initial_state or TargetState.STARTED)
        return PutResult(not exists, self._info(name))

    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> dict[str, Any]:
        self._enter("patch_connector_config", name, dict(patch))
        config = self._need(name)
        for key, value in patch.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        return self._info(name)

    def delete_connector(self, name: str) -> None:
        self._enter("delete_connector", name)
        self._need(name)
        del self.configs[name]

    def connector_status(self, name: str) -> dict[str, Any]:
        self._enter("connector_status", name)
        info = self._info(name)
        state = {TargetState.STARTED: "RUNNING"}.get(self.states[name], self.states[name].value)
        return {
            "name": name,
            "connector": {"state": state, "worker_id": WORKER_ID},
            "tasks": [{"id": t["task"], "state": state, "worker_id": WORKER_ID} for t in info["tasks"]],
            "type": "source",
        }

    def task_status(self, task: TaskId) -> dict[str, Any]:
        self._enter("task_status", task)
        status = self.connector_status(task.connector)
        for item in status["tasks"]:
            if item["id"] == task.task:
                return dict(item)
        raise NotFoundError(f"No status found for task {task}")

    def task_configs(self, name: str) -> list[dict[str, Any]]:
        self._enter("task_configs", name)
        info = self._info(name)
        return [{"id": t, "config": {"task.class": "T"}} for t in info["tasks"]]

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        self._enter("tasks_config", name)
        return {f"{name}-{t['task']}": {"task.class": "T"} for t in self._info(name)["tasks"]}

    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> dict[str, Any] | None:
        self._enter("restart_connector", name, include_tasks, only_failed)
        self._need(name)
        if not include_tasks and not only_failed:
            return None
        status = self.connector_status(name)
        status["connector"]["state"] = "RESTARTING"
        return status

    def restart_task(self, task: TaskId) -> None:
        self._enter("restart_task", task)
        self.task_status(task)

    def pause_connector(self, name: str) -> None:
        self._enter("pause_connector", name)
        self._need(name)
        self.states[name] = TargetState.PAUSED

    def resume_connector(self, name: str) -> None:
        self._enter("resume_connector", name)
        self._need(name)
        self.states[name] = TargetState.STARTED

    def stop_connector(self, name: str) -> None:
        self._enter("stop_connector", name)
        self._need(name)
        self.states[name] = TargetState.STOPPED

    def connector_active_topics(self, name: str) -> list[str]:
        self._enter("connector_active_topics", name)
        self._need(name)
        return ["t1", "t2"]

    def reset_connector_active_topics(self, name: str) -> None:
        self._enter("reset_connector_active_topics", name)
        self._need(name)

    # -- offsets
    def connector_offsets(self, name: str) -> dict[str, Any]:
        self._enter("connector_offsets", name)
        self._need(name)
        return {"offsets": self.offsets.get(name, [])}

    def alter_connector_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        self._enter("alter_connector_offsets", name, offsets)
        self._need(name)
        if self.states.get(name) is not TargetState.STOPPED:
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. "
                "This can be done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        self.offsets[name] = offsets
        return "The offsets for this connector have been altered successfully"

    def reset_connector_offsets(self, name: str) -> str:
        self._enter("reset_connector_offsets", name)
        self._need(name)
        self.offsets.pop(name, None)
        return "The offsets for this connector have been reset successfully"

    # -- plugins
    def plugins(self, connectors_only: bool) -> list[dict[str, Any]]:
        self._enter("plugins", connectors_only)
        out = [
            {
                "class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "type": "source",
                "version": "1",
            }
        ]
        if not connectors_only:
            out.append({"class": "org.apache.kafka.connect.transforms.RegexRouter", "type": "transformation"})
        return out

    def plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        self._enter("plugin_config", plugin)
        if "FileStream" not in plugin:
            raise NotFoundError(f"Unknown plugin {plugin}.")
        return [{"name": "file", "type": "STRING", "required": False}]

    def validate_connector_config(self, config: Mapping[str, str]) -> dict[str, Any]:
        self._enter("validate_connector_config", dict(config))
        return {"name": config.get("connector.class"), "error_count": 0, "groups": ["Common"], "configs": []}

    # -- internal
    def put_task_configs(self, name: str, configs: list[dict[str, str]], signature: Any = None) -> None:
        self._enter("put_task_configs", name, configs, signature)

    def fence_zombies(self, name: str, signature: Any = None) -> None:
        self._enter("fence_zombies", name, signature)

    def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        self._enter("set_cluster_logger_level", namespace, level)


# -- fixtures ----------------------------------------------------------------------------------------

FILE_SOURCE = {"connector.class": "FileStreamSource", "tasks.max": "1", "file": "/tmp/in", "topic": "t"}


@pytest.fixture
def herder() -> FakeHerder:
    return FakeHerder()


@pytest.fixture
def client(herder: FakeHerder) -> Iterator[TestClient]:
    app = create_app(herder, RestSettings(request_timeout_s=5.0), loggers=Loggers())
    with TestClient(app, base_url="http://worker:8083") as c:
        yield c


def create(client: TestClient, name: str = "src", config: Mapping[str, Any] = FILE_SOURCE) -> Any:
    response = client.post("/connectors", json={"name": name, "config": dict(config)})
    assert response.status_code == 201, response.text
    return response


def assert_error(response: Any, status: int, message: str | None = None, prefix: str | None = None) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error_code", "message"}
    assert body["error_code"] == status
    if message is not None:
        assert body["message"] == message
    if prefix is not None:
        assert body["message"].startswith(prefix), body["message"]
    assert "Traceback" not in body["message"]


# -- root ----------------------------------------------------------------------------------------------


def test_root(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.json() == {"version": "3.9.0", "commit": "abc", "kafka_cluster_id": "cluster"}
    assert response.headers["content-type"] == "application/json"


@pytest.mark.parametrize(("state", "status"), [("healthy", 200), ("starting", 503), ("unhealthy", 500)])
def test_health(client: TestClient, herder: FakeHerder, state: str, status: int) -> None:
    herder.health_state = (state, "msg")
    response = client.get("/health")
    assert response.status_code == status
    assert response.json() == {"status": state, "message": "msg"}


def test_health_timeout_is_unhealthy(herder: FakeHerder) -> None:
    release = threading.Event()

    class Slow(FakeHerder):
        def health(self) -> tuple[str, str]:
            release.wait(5)
            return ("healthy", "")

    app = create_app(Slow(), RestSettings(health_timeout_s=0.2))
    try:
        response = TestClient(app).get("/health")
    finally:
        release.set()
    assert response.status_code == 500
    assert response.json()["status"] == "unhealthy"


# -- connectors ----------------------------------------------------------------------------------------


def test_list_empty_then_created(client: TestClient) -> None:
    assert client.get("/connectors").json() == []
    create(client, "a")
    create(client, "b")
    assert client.get("/connectors").json() == ["a", "b"]


def test_create_returns_201_location_and_info(client: TestClient, herder: FakeHerder) -> None:
    response = client.post("/connectors", json={"name": "  my conn ", "config": FILE_SOURCE})
    assert response.status_code == 201
    assert response.headers["location"] == "http://worker:8083/connectors/my%20conn"
    body = response.json()
    assert body["name"] == "my conn"
    assert body["config"]["name"] == "my conn"  # trimmed name injected into the config
    assert body["tasks"] == [{"connector": "my conn", "task": 0}]
    assert body["type"] == "source"
    assert herder.calls[-1][1][2] is False  # allow_replace


def test_create_initial_state(client: TestClient, herder: FakeHerder) -> None:
    response = client.post(
        "/connectors", json={"name": "s", "config": FILE_SOURCE, "initial_state": "STOPPED"}
    )
    assert response.status_code == 201
    assert herder.calls[-1][1][3] is TargetState.STOPPED
    response = client.post("/connectors", json={"name": "x", "config": FILE_SOURCE, "initial_state": "NOPE"})
    assert_error(response, 400, prefix="Invalid initial_state NOPE")


def test_create_existing_is_409(client: TestClient) -> None:
    create(client, "a")
    response = client.post("/connectors", json={"name": "a", "config": FILE_SOURCE})
    assert_error(response, 409, "Connector a already exists")


def test_create_name_mismatch(client: TestClient) -> None:
    response = client.post("/connectors", json={"name": "a", "config": {**FILE_SOURCE, "name": "b"}})
    assert_error(
        response, 400, "Connector name configuration (b) doesn't match connector name in the URL (a)"
    )


@pytest.mark.parametrize(
    ("body", "prefix"),
    [
        ({"config": FILE_SOURCE}, "Connector configuration is invalid"),
        ({"name": "   ", "config": FILE_SOURCE}, "Connector configuration is invalid"),
        ({"name": "a"}, "Connector config is missing"),
        ({"name": "a/b", "config": FILE_SOURCE}, "Connector name a/b is invalid"),
        ({"name": "a\u0001b", "config": FILE_SOURCE}, "Connector name"),
        ({"name": "a", "config": ["x"]}, "Cannot deserialize"),
        (
            {"name": "a", "config": {"k": {"nested": 1}}},
            "Cannot deserialize value of type `java.lang.String`",
        ),
        ({"name": "a", "config": {"k": None}}, "Configuration value for 'k' must not be null"),
        (["not", "an", "object"], "Cannot deserialize"),
    ],
)
def test_create_bad_bodies(client: TestClient, body: Any, prefix: str) -> None:
    assert_error(client.post("/connectors", json=body), 400, prefix=prefix)


def test_invalid_config_message_from_herder(client: TestClient) -> None:
    response = client.post("/connectors", json={"name": "a", "config": {"tasks.max": "1"}})
    assert_error(
        response, 400, prefix="Connector configuration is invalid and contains the following 1 error(s)"
    )


def test_seed_ints_are_stringified(client: TestClient, herder: FakeHerder) -> None:
    raw = (SEEDS / "jdbc-incrementing-multitask.json").read_bytes()
    response = client.post("/connectors", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 201, response.text
    config = response.json()["config"]
    assert config["poll.interval.ms"] == "10000"
    assert config["topic.creation.default.replication.factor"] == "1"
    assert config["connecftion.password"] == "connect_dev"  # unknown keys pass through
    assert all(isinstance(v, str) for v in herder.configs["mysql_jdbc_om_source_00"].values())


def test_scalars_stringified_as_jackson_does(client: TestClient) -> None:
    body = b'{"name":"n","config":{"connector.class":"X","a":1,"b":1.50,"c":true,"d":false,"e":-2e3}}'
    response = client.post("/connectors", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 201
    config = response.json()["config"]
    assert (config["a"], config["b"], config["c"], config["d"], config["e"]) == (
        "1",
        "1.50",
        "true",
        "false",
        "-2e3",
    )


def test_malformed_json_is_400(client: TestClient) -> None:
    for body in (b"{not json", b'{"name": "a", ', b"NaN", b"\xff\xfe"):
        response = client.post("/connectors", content=body, headers={"Content-Type": "application/json"})
        assert_error(response, 400)
    response = client.put(
        "/connectors/a/config", content=b"[1,", headers={"Content-Type": "application/json"}
    )
    assert_error(response, 400)


def test_odd_bodies_are_400_or_answered(client: TestClient) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    assert_error(
        client.put("/connectors/a/config", content=deep, headers={"Content-Type": "application/json"}), 400
    )
    # a lone surrogate cannot be encoded (nor stored, nor logged): refused as an invalid name
    body = b'{"name":"\\ud800x","config":{"connector.class":"X"}}'
    response = client.post("/connectors", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert "valid Unicode" in response.json()["message"]


def test_public_surface() -> None:
    import cdc.worker.rest as rest

    assert sorted(rest.__all__) == sorted(
        [
            "OPENAPI",
            "Forwarded",
            "HeaderAction",
            "Listener",
            "Loggers",
            "RequestSignature",
            "RestError",
            "RestServer",
            "RestSettings",
            "SslSettings",
            "create_app",
            "sign",
        ]
    )
    assert all(hasattr(rest, name) for name in rest.__all__)


def test_non_json_content_type_is_415(client: TestClient) -> None:
    response = client.post(
        "/connectors", content=b"name=a", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert_error(response, 415, "HTTP 415 Unsupported Media Type")


def test_missing_body_is_400(client: TestClient) -> None:
    assert_error(client.post("/connectors"), 400)
    assert_error(client.put("/connectors/a/config"), 400)


def test_get_connector_and_config(client: TestClient) -> None:
    create(client, "a")
    info = client.get("/connectors/a")
    assert info.status_code == 200
    assert set(info.json()) == {"name", "config", "tasks", "type"}
    config = client.get("/connectors/a/config")
    assert config.status_code == 200
    assert config.json() == {**FILE_SOURCE, "name": "a"}


def test_unknown_connector_is_404(client: TestClient) -> None:
    for path in (
        "/connectors/nope",
        "/connectors/nope/config",
        "/connectors/nope/status",
        "/connectors/nope/tasks",
    ):
        assert_error(client.get(path), 404, "Connector nope not found")


def test_put_config_created_then_updated(client: TestClient) -> None:
    response = client.put("/connectors/p/config", json=FILE_SOURCE)
    assert response.status_code == 201
    assert response.headers["location"] == "http://worker:8083/connectors/p"
    assert response.json()["config"]["name"] == "p"
    response = client.put("/connectors/p/config", json={**FILE_SOURCE, "tasks.max": 2})
    assert response.status_code == 200
    assert "location" not in response.headers
    assert response.json()["config"]["tasks.max"] == "2"
    assert len(response.json()["tasks"]) == 2


def test_put_config_name_mismatch(client: TestClient) -> None:
    response = client.put("/connectors/p/config", json={**FILE_SOURCE, "name": "q"})
    assert_error(
        response, 400, "Connector name configuration (q) doesn't match connector name in the URL (p)"
    )
    assert_error(client.put("/connectors/p/config", json=["a"]), 400)


def test_patch_config(client: TestClient) -> None:
    create(client, "a", {**FILE_SOURCE, "extra": "x"})
    response = client.patch("/connectors/a/config", json={"tasks.max": 3, "extra": None})
    assert response.status_code == 200
    config = response.json()["config"]
    assert config["tasks.max"] == "3"
    assert "extra" not in config
    assert_error(
        client.patch("/connectors/a/config", json={"name": "b"}), 400, prefix="Connector name configuration"
    )
    assert_error(client.patch("/connectors/zz/config", json={"a": "b"}), 404)


def test_delete(client: TestClient) -> None:
    create(client, "a")
    response = client.delete("/connectors/a")
    assert response.status_code == 204
    assert response.content == b""
    assert_error(client.delete("/connectors/a"), 404)


def test_status_and_task_status(client: TestClient) -> None:
    create(client, "a")
    status = client.get("/connectors/a/status").json()
    assert status["connector"] == {"state": "RUNNING", "worker_id": WORKER_ID}
    assert status["tasks"] == [{"id": 0, "state": "RUNNING", "worker_id": WORKER_ID}]
    task = client.get("/connectors/a/tasks/0/status")
    assert task.status_code == 200
    assert task.json() == {"id": 0, "state": "RUNNING", "worker_id": WORKER_ID}
    assert_error(client.get("/connectors/a/tasks/7/status"), 404, "No status found for task a-7")
    assert_error(client.get("/connectors/a/tasks/x/status"), 404, "HTTP 404 Not Found")


def test_tasks_and_tasks_config(client: TestClient) -> None:
    create(client, "a")
    assert client.get("/connectors/a/tasks").json() == [
        {"id": {"connector": "a", "task": 0}, "config": {"task.class": "T"}}
    ]
    assert client.get("/connectors/a/tasks-config").json() == {"a-0": {"task.class": "T"}}


def test_expand(client: TestClient) -> None:
    create(client, "a")
    both = client.get("/connectors?expand=status&expand=info").json()
    assert set(both) == {"a"}
    assert set(both["a"]) == {"status", "info"}
    assert both["a"]["info"]["name"] == "a"
    assert both["a"]["status"]["connector"]["state"] == "RUNNING"
    assert set(client.get("/connectors?expand=status").json()["a"]) == {"status"}
    assert client.get("/connectors?expand=bogus").json() == {"a": {}}


def test_restart(client: TestClient, herder: FakeHerder) -> None:
    create(client, "a")
    response = client.post("/connectors/a/restart")
    assert response.status_code == 204
    assert response.content == b""
    response = client.post("/connectors/a/restart?includeTasks=true&onlyFailed=false")
    assert response.status_code == 202
    assert response.json()["connector"]["state"] == "RESTARTING"
    assert herder.calls[-2][1] == ("a", True, False) or herder.calls[-1][1] == ("a", True, False)
    assert client.post("/connectors/a/restart?onlyFailed=TRUE").status_code == 202
    assert_error(client.post("/connectors/zz/restart"), 404)


def test_restart_task(client: TestClient) -> None:
    create(client, "a")
    response = client.post("/connectors/a/tasks/0/restart")
    assert response.status_code == 204
    assert_error(client.post("/connectors/a/tasks/5/restart"), 404)


def test_pause_resume_stop(client: TestClient, herder: FakeHerder) -> None:
    create(client, "a")
    response = client.put("/connectors/a/pause")
    assert (response.status_code, response.content) == (202, b"")
    assert herder.states["a"] is TargetState.PAUSED
    response = client.put("/connectors/a/resume")
    assert (response.status_code, response.content) == (202, b"")
    assert herder.states["a"] is TargetState.STARTED
    response = client.put("/connectors/a/stop")
    assert (response.status_code, response.content) == (204, b"")
    assert herder.states["a"] is TargetState.STOPPED
    assert_error(client.put("/connectors/zz/pause"), 404)


def test_topics(client: TestClient, herder: FakeHerder) -> None:
    create(client, "a")
    assert client.get("/connectors/a/topics").json() == {"a": {"topics": ["t1", "t2"]}}
    response = client.put("/connectors/a/topics/reset")
    assert (response.status_code, response.content) == (202, b"")


def test_topic_tracking_disabled() -> None:
    herder = FakeHerder()
    herder.configs["a"] = dict(FILE_SOURCE)
    settings = RestSettings.from_properties({"topic.tracking.enable": "false"})
    client = TestClient(create_app(herder, settings))
    assert_error(client.get("/connectors/a/topics"), 403, "Topic tracking is disabled.")
    settings = RestSettings.from_properties({"topic.tracking.allow.reset": "false"})
    client = TestClient(create_app(herder, settings))
    assert_error(client.put("/connectors/a/topics/reset"), 403, "Topic tracking reset is disabled.")
    herder.raises["connector_active_topics"] = ForbiddenError("Topic tracking is disabled.")
    client = TestClient(create_app(herder, RestSettings()))
    assert_error(client.get("/connectors/a/topics"), 403, "Topic tracking is disabled.")


def test_offsets(client: TestClient) -> None:
    create(client, "a")
    assert client.get("/connectors/a/offsets").json() == {"offsets": []}
    offsets = [{"partition": {"server": "s"}, "offset": {"file": "binlog.000006", "pos": 2030242}}]
    response = client.patch("/connectors/a/offsets", json={"offsets": offsets})
    assert_error(response, 400, prefix="Connectors must be in the STOPPED state")
    client.put("/connectors/a/stop")
    response = client.patch("/connectors/a/offsets", json={"offsets": offsets})
    assert response.status_code == 200
    assert response.json() == {"message": "The offsets for this connector have been altered successfully"}
    assert client.get("/connectors/a/offsets").json() == {"offsets": offsets}  # ints stay ints
    response = client.delete("/connectors/a/offsets")
    assert response.status_code == 200
    assert response.json() == {"message": "The offsets for this connector have been reset successfully"}


@pytest.mark.parametrize("body", [{}, {"offsets": []}, {"offsets": None}])
def test_alter_offsets_needs_offsets(client: TestClient, body: Any) -> None:
    create(client, "a")
    response = client.patch("/connectors/a/offsets", json=body)
    assert_error(response, 400, "Partitions / offsets need to be provided for an alter offsets request")


def test_alter_offsets_bad_shapes(client: TestClient) -> None:
    create(client, "a")
    assert_error(client.patch("/connectors/a/offsets", json={"offsets": [1]}), 400)
    assert_error(client.patch("/connectors/a/offsets", json={"offsets": [{"offset": {}}]}), 400)
    assert_error(client.patch("/connectors/a/offsets", json=[]), 400)


# -- plugins -------------------------------------------------------------------------------------------


def test_plugins(client: TestClient, herder: FakeHerder) -> None:
    response = client.get("/connector-plugins")
    assert response.status_code == 200
    assert len(response.json()) == 1
    assert herder.calls[-1] == ("plugins", (True,))
    assert len(client.get("/connector-plugins?connectorsOnly=false").json()) == 2
    assert client.get("/connector-plugins/FileStreamSource/config").status_code == 200
    assert_error(client.get("/connector-plugins/Nope/config"), 404, "Unknown plugin Nope.")


@pytest.mark.parametrize(
    ("plugin", "connector_class", "ok"),
    [
        ("FileStreamSinkConnector", "org.apache.kafka.connect.file.FileStreamSinkConnector", True),
        ("FileStreamSink", "org.apache.kafka.connect.file.FileStreamSinkConnector", True),
        ("FileStreamSinkConnector", "FileStreamSink", True),
        ("org.apache.kafka.connect.file.FileStreamSinkConnector", "FileStreamSinkConnector", False),
        ("FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSinkConnector", False),
    ],
)
def test_validate(client: TestClient, plugin: str, connector_class: str, ok: bool) -> None:
    body = {"connector.class": connector_class, "tasks.max": 1, "topics": "test-topic"}
    response = client.put(f"/connector-plugins/{plugin}/config/validate", json=body)
    if ok:
        assert response.status_code == 200
        assert response.json()["error_count"] == 0
    else:
        assert_error(
            response, 400, f"Included connector type {connector_class} does not match request type {plugin}"
        )


def test_validate_bad_body(client: TestClient) -> None:
    assert_error(client.put("/connector-plugins/X/config/validate", json=[1]), 400)
    assert_error(
        client.put(
            "/connector-plugins/X/config/validate", content=b"{", headers={"Content-Type": "application/json"}
        ),
        400,
    )


# -- loggers -------------------------------------------------------------------------------------------


@pytest.fixture
def clean_logger() -> Iterator[str]:
    name = "cdc.test.restlogs"
    yield name
    for logger_name in ("cdc.test.restlogs", "cdc.test.restlogs.child"):
        logging.getLogger(logger_name).setLevel(logging.NOTSET)


def test_loggers(client: TestClient, clean_logger: str) -> None:
    logging.getLogger(f"{clean_logger}.child")
    levels = client.get("/admin/loggers").json()
    assert levels["root"]["last_modified"] is None
    assert clean_logger not in levels
    response = client.put(f"/admin/loggers/{clean_logger}", json={"level": "debug"})
    assert response.status_code == 200
    assert response.json() == [clean_logger, f"{clean_logger}.child"]
    assert logging.getLogger(f"{clean_logger}.child").level == logging.DEBUG
    one = client.get(f"/admin/loggers/{clean_logger}").json()
    assert one["level"] == "DEBUG"
    assert isinstance(one["last_modified"], int)
    assert client.get("/admin/loggers").json()[clean_logger]["level"] == "DEBUG"
    client.put(f"/admin/loggers/{clean_logger}", json={"level": "TRACE"})
    assert client.get(f"/admin/loggers/{clean_logger}").json()["level"] == "TRACE"
    client.put(f"/admin/loggers/{clean_logger}", json={"level": "OFF"})
    assert client.get(f"/admin/loggers/{clean_logger}").json()["level"] == "OFF"
    client.put(f"/admin/loggers/{clean_logger}", json={"level": "WARN"})
    assert logging.getLogger(clean_logger).level == logging.WARNING


def test_logger_errors(client: TestClient, clean_logger: str) -> None:
    assert_error(
        client.get("/admin/loggers/no.such.logger.here"), 404, "Logger no.such.logger.here not found."
    )
    assert_error(
        client.put(f"/admin/loggers/{clean_logger}", json={}),
        400,
        "Desired 'level' parameter was not specified in request.",
    )
    assert_error(
        client.put(f"/admin/loggers/{clean_logger}", json={"level": "LOUD"}), 404, "invalid log level 'LOUD'."
    )


def test_logger_cluster_scope(clean_logger: str) -> None:
    herder = FakeHerder()
    client = TestClient(create_app(herder, RestSettings()))
    response = client.put(f"/admin/loggers/{clean_logger}?scope=CLUSTER", json={"level": "ERROR"})
    assert (response.status_code, response.content) == (204, b"")
    assert herder.calls[-1] == ("set_cluster_logger_level", (clean_logger, "ERROR"))


# -- errors --------------------------------------------------------------------------------------------


def test_unknown_route_and_method(client: TestClient) -> None:
    assert_error(client.get("/nope"), 404, "HTTP 404 Not Found")
    assert_error(client.get("/connectors/a/b/c/d"), 404, "HTTP 404 Not Found")
    assert_error(client.delete("/connector-plugins"), 405, "HTTP 405 Method Not Allowed")
    assert_error(client.post("/connectors/a/pause"), 405, "HTTP 405 Method Not Allowed")


def test_trailing_slash_is_the_same_route(client: TestClient) -> None:
    create(client, "a")
    assert client.get("/connectors/").json() == ["a"]
    assert client.get("/connectors/a/status/").status_code == 200


def test_unexpected_error_is_500_without_trace(client: TestClient, herder: FakeHerder, caplog: Any) -> None:
    herder.raises["connectors"] = ValueError("boom")
    with caplog.at_level(logging.ERROR, logger="cdc.worker.rest"):
        assert_error(client.get("/connectors"), 500, "boom")
    assert any(record.exc_info for record in caplog.records)  # the trace is logged server-side


def test_rebalance_needed_read_500_write_409(client: TestClient, herder: FakeHerder) -> None:
    create(client, "a")
    herder.raises["connector_info"] = RebalanceNeededError()
    assert_error(
        client.get("/connectors/a"), 500, "Request cannot be completed because a rebalance is expected"
    )
    herder.raises["put_connector_config"] = RebalanceNeededError()
    assert_error(
        client.put("/connectors/a/config", json=FILE_SOURCE),
        409,
        "Cannot complete request momentarily due to stale configuration "
        "(typically caused by a concurrent config change)",
    )


def test_herder_timeout_is_500() -> None:
    release = threading.Event()

    class Slow(FakeHerder):
        def connectors(self) -> list[str]:
            release.wait(5)
            return []

    client = TestClient(create_app(Slow(), RestSettings(request_timeout_s=0.2)))
    try:
        assert_error(client.get("/connectors"), 500, "Request timed out")
    finally:
        release.set()


def test_no_leader_url_is_409(client: TestClient, herder: FakeHerder) -> None:
    herder.raises["put_connector_config"] = NotLeaderError("not leader", None)
    assert_error(
        client.post("/connectors", json={"name": "a", "config": FILE_SOURCE}),
        409,
        "Cannot complete request momentarily due to no known leader URL, "
        "likely because a rebalance was underway.",
    )


def test_forward_false_that_still_needs_forwarding_is_409(client: TestClient, herder: FakeHerder) -> None:
    herder.raises["delete_connector"] = NotLeaderError("not leader", "http://elsewhere:8083/")
    assert_error(
        client.delete("/connectors/a?forward=false"),
        409,
        "Cannot complete request because of a conflicting operation (e.g. worker rebalance)",
    )


# -- internal endpoints ------------------------------------------------------------------------------


def test_put_task_configs_passes_signature(client: TestClient, herder: FakeHerder) -> None:
    body = json.dumps([{"task.class": "T", "n": "1"}]).encode()
    headers = {"Content-Type": "application/json", **sign(b"secret", body)}
    response = client.post("/connectors/a/tasks", content=body, headers=headers)
    assert (response.status_code, response.content) == (204, b"")
    name, (connector, configs, signature) = herder.calls[-1]
    assert (name, connector, configs) == ("put_task_configs", "a", [{"task.class": "T", "n": "1"}])
    assert isinstance(signature, RequestSignature)
    assert signature.algorithm == "HmacSHA256"
    assert signature.is_valid(b"secret")
    assert not signature.is_valid(b"other")


def test_put_task_configs_without_signature(client: TestClient, herder: FakeHerder) -> None:
    response = client.post("/connectors/a/tasks", json=[{"a": 1}])
    assert response.status_code == 204
    assert herder.calls[-1][1] == ("a", [{"a": "1"}], None)
    assert_error(client.post("/connectors/a/tasks", json={"a": "b"}), 400)
    bad = {"X-Connect-Authorization": "AAAA", "X-Connect-Request-Signature-Algorithm": "HmacMD5"}
    assert_error(client.post("/connectors/a/tasks", json=[], headers=bad), 400)


def test_fence(client: TestClient, herder: FakeHerder) -> None:
    headers = sign(b"k", b"")
    response = client.put("/connectors/a/fence", headers=headers)
    assert (response.status_code, response.content) == (204, b"")
    assert herder.calls[-1][0] == "fence_zombies"
    assert herder.calls[-1][1][1].is_valid(b"k")
    herder.raises["fence_zombies"] = ForbiddenError("Internal request contained invalid signature.")
    assert_error(client.put("/connectors/a/fence", headers=headers), 403)


# -- forwarding between two servers --------------------------------------------------------------------


class RecordQuery:
    """ASGI middleware keeping (method, path, query string) of every request."""

    def __init__(self, app: Any, seen: list[tuple[str, str, str]]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append((scope["method"], scope["path"], scope["query_string"].decode()))
        await self.app(scope, receive, send)


class Node:
    def __init__(self) -> None:
        self.herder = FakeHerder()
        self.seen: list[tuple[str, str, str]] = []
        settings = RestSettings.from_properties({"listeners": "http://127.0.0.1:0"})
        app = create_app(self.herder, settings)
        app.add_middleware(RecordQuery, seen=self.seen)
        self.server = RestServer(self.herder, settings, app=app)

    @property
    def url(self) -> str:
        return self.server.urls[0].rstrip("/")


@pytest.fixture
def nodes() -> Iterator[tuple[Node, Node]]:
    leader, follower = Node(), Node()
    leader.server.start()
    follower.server.start()
    try:
        yield leader, follower
    finally:
        follower.server.stop()
        leader.server.stop()


WRITES = ("put_connector_config", "delete_connector", "restart_connector", "patch_connector_config")


def test_server_reports_bound_port(nodes: tuple[Node, Node]) -> None:
    leader, _ = nodes
    port = leader.server.ports[0]
    assert port > 0
    assert leader.server.advertised_url == f"http://127.0.0.1:{port}/"
    assert leader.server.worker_id == f"127.0.0.1:{port}"
    assert requests.get(leader.url + "/", timeout=5).json()["version"] == "3.9.0"


def test_forwarded_create(nodes: tuple[Node, Node]) -> None:
    leader, follower = nodes
    for method in WRITES:
        follower.herder.raises[method] = NotLeaderError("not the leader", leader.server.advertised_url)
    response = requests.post(
        follower.url + "/connectors", json={"name": "a", "config": FILE_SOURCE}, timeout=10
    )
    assert response.status_code == 201, response.text
    assert response.headers["Location"] == f"{follower.url}/connectors/a"
    assert response.json()["config"]["name"] == "a"
    assert "a" in leader.herder.configs and "a" not in follower.herder.configs
    assert leader.seen[-1] == ("POST", "/connectors", "forward=true")

    # PUT keeps created/updated; errors are relayed with the target's status and message
    response = requests.put(follower.url + "/connectors/a/config", json=FILE_SOURCE, timeout=10)
    assert response.status_code == 200
    response = requests.put(follower.url + "/connectors/b%20c/config", json=FILE_SOURCE, timeout=10)
    assert response.status_code == 201
    assert "b c" in leader.herder.configs
    assert leader.seen[-1] == ("PUT", "/connectors/b c/config", "forward=true")
    response = requests.delete(follower.url + "/connectors/zz", timeout=10)
    assert response.status_code == 404
    assert response.json() == {"error_code": 404, "message": "Connector zz not found"}
    response = requests.delete(follower.url + "/connectors/a", timeout=10)
    assert (response.status_code, response.content) == (204, b"")


def test_forwarded_restart_keeps_query(nodes: tuple[Node, Node]) -> None:
    leader, follower = nodes
    leader.herder.configs["a"] = dict(FILE_SOURCE, name="a")
    leader.herder.states["a"] = TargetState.STARTED
    follower.herder.raises["restart_connector"] = NotLeaderError("no", leader.server.advertised_url)
    response = requests.post(follower.url + "/connectors/a/restart?includeTasks=true", timeout=10)
    assert response.status_code == 202
    assert response.json()["connector"]["state"] == "RESTARTING"
    assert leader.seen[-1] == ("POST", "/connectors/a/restart", "forward=true&includeTasks=true")
    response = requests.post(follower.url + "/connectors/a/restart", timeout=10)
    assert (response.status_code, response.content) == (204, b"")


def test_forwarded_to_owner(nodes: tuple[Node, Node]) -> None:
    owner, follower = nodes
    owner.herder.configs["a"] = dict(FILE_SOURCE, name="a")
    owner.herder.states["a"] = TargetState.STARTED
    follower.herder.raises["restart_task"] = NotAssignedError("not mine", owner.server.advertised_url)
    response = requests.post(follower.url + "/connectors/a/tasks/0/restart", timeout=10)
    assert response.status_code == 204
    assert ("restart_task", (TaskId("a", 0),)) in owner.herder.calls


def test_forwarded_internal_request_keeps_signature(nodes: tuple[Node, Node]) -> None:
    leader, follower = nodes
    follower.herder.raises["put_task_configs"] = NotLeaderError("no", leader.server.advertised_url)
    body = json.dumps([{"k": "v"}]).encode()
    headers = {"Content-Type": "application/json", **sign(b"key", body)}
    response = requests.post(follower.url + "/connectors/a/tasks", data=body, headers=headers, timeout=10)
    assert response.status_code == 204
    signature = leader.herder.calls[-1][1][2]
    assert signature is not None and signature.is_valid(b"key")


def test_two_hops_at_most(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    a.herder.raises["delete_connector"] = NotLeaderError("no", b.server.advertised_url)
    b.herder.raises["delete_connector"] = NotLeaderError("no", a.server.advertised_url)
    response = requests.delete(a.url + "/connectors/x", timeout=10)
    assert response.status_code == 409
    assert response.json() == {
        "error_code": 409,
        "message": "Cannot complete request because of a conflicting operation (e.g. worker rebalance)",
    }
    assert b.seen[-1] == ("DELETE", "/connectors/x", "forward=true")
    assert a.seen[-1] == ("DELETE", "/connectors/x", "forward=false")


DEAD = "http://127.0.0.1:9/"  # nothing listens on the discard port: connection refused


class _Script(dict):  # type: ignore[type-arg]
    """A FakeHerder ``raises`` whose ``method`` raises ``errors`` in turn (None: the call succeeds), the
    last one for good."""

    def __init__(self, method: str, *errors: BaseException | None) -> None:
        super().__init__()
        self.method = method
        self.errors = list(errors)

    def get(self, key: str, default: Any = None) -> Any:
        if key != self.method:
            return default
        return self.errors.pop(0) if len(self.errors) > 1 else self.errors[0]


def _short_budget(node: Node, seconds: float) -> None:
    node.server.app.state.rest.call.timeout_s = seconds


def test_forward_to_dead_worker_is_a_retriable_409(nodes: tuple[Node, Node]) -> None:
    # A leader that just died is a rebalance in the making: the request waits for it within its timeout,
    # asking the herder again and again where to go; still no answer then: 409 (retry), never a 500.
    _, follower = nodes
    _short_budget(follower, 1.5)
    follower.herder.raises["delete_connector"] = NotLeaderError("no", DEAD)
    response = requests.delete(follower.url + "/connectors/x", timeout=10)
    assert response.status_code == 409
    assert response.json()["message"].startswith(
        "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
    )
    assert DEAD in response.json()["message"]
    asked = [c for c in follower.herder.calls if c[0] == "delete_connector"]
    assert len(asked) >= 3, asked


def test_forward_to_dead_leader_goes_to_the_new_one(nodes: tuple[Node, Node]) -> None:
    # The old leader refuses connections, then the group rebalances (no leader known for a while), then
    # the herder names the new leader: the create is sent there and succeeds.
    leader, follower = nodes
    new_leader = NotLeaderError("no", leader.server.advertised_url)
    follower.herder.raises = _Script(
        "put_connector_config",
        NotLeaderError("no", DEAD),
        NotLeaderError("no", DEAD),
        NotLeaderError("no", None),
        new_leader,
    )
    response = requests.post(
        follower.url + "/connectors", json={"name": "a", "config": FILE_SOURCE}, timeout=10
    )
    assert response.status_code == 201, response.text
    assert "a" in leader.herder.configs and "a" not in follower.herder.configs
    assert leader.seen[-1] == ("POST", "/connectors", "forward=true")
    assert [c[0] for c in follower.herder.calls].count("put_connector_config") == 4


def test_forward_to_dead_leader_served_here_once_this_worker_leads(nodes: tuple[Node, Node]) -> None:
    leader, follower = nodes
    follower.herder.raises = _Script("put_connector_config", NotLeaderError("no", DEAD), None)
    response = requests.put(follower.url + "/connectors/a/config", json=FILE_SOURCE, timeout=10)
    assert response.status_code == 201, response.text
    assert "a" in follower.herder.configs and "a" not in leader.herder.configs
    assert not leader.seen


class _FailingClient:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def request(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        raise self.error


@pytest.mark.parametrize(
    ("error", "unreachable"),
    [
        (requests.ConnectionError("refused"), True),
        (requests.ConnectTimeout("no SYN-ACK"), True),
        (requests.ReadTimeout("no answer"), True),
        (requests.exceptions.ChunkedEncodingError("reset mid-body"), True),
        (requests.exceptions.SSLError("certificate verify failed"), False),
        (requests.exceptions.InvalidURL("bad url"), False),
    ],
)
def test_forward_request_silent_target_or_failure(error: BaseException, unreachable: bool) -> None:
    # A target that did not answer is waited for (TargetUnreachable, a 409 at worst); a request that could
    # never succeed there is Connect's 500.
    client: Any = _FailingClient(error)
    with pytest.raises(RestError) as raised:
        forward_request(DEAD, "DELETE", "/connectors/x", [], None, {}, 1.0, client)
    assert isinstance(raised.value, TargetUnreachable) is unreachable
    if unreachable:
        assert raised.value.status == 409
        assert raised.value.message.startswith(
            "Cannot complete request because of a conflicting operation (e.g. worker rebalance): "
            f"the worker at {DEAD} did not answer"
        )
    else:
        assert raised.value.status == 500
        assert raised.value.message.startswith("IO Error trying to forward REST request: ")


def test_forward_relays_the_targets_errors_without_retrying(nodes: tuple[Node, Node]) -> None:
    # Only a target that does not answer is waited for; what it answers, a 500 included, is relayed.
    leader, follower = nodes
    follower.herder.raises["delete_connector"] = NotLeaderError("no", leader.server.advertised_url)
    leader.herder.raises["delete_connector"] = ValueError("boom")
    response = requests.delete(follower.url + "/connectors/x", timeout=10)
    assert response.json() == {"error_code": 500, "message": "boom"}
    assert response.status_code == 500
    assert [c[0] for c in follower.herder.calls] == ["delete_connector"]
    assert leader.seen == [("DELETE", "/connectors/x", "forward=true")]


# -- server, listeners, middleware -----------------------------------------------------------------------


def test_admin_listeners_separate() -> None:
    props = {"listeners": "http://127.0.0.1:0", "admin.listeners": "http://127.0.0.1:0"}
    settings = RestSettings.from_properties(props)
    server = RestServer(FakeHerder(), settings)
    server.start()
    try:
        main = f"http://127.0.0.1:{server.ports[0]}"
        admin = f"http://127.0.0.1:{server.admin_ports[0]}"
        assert requests.get(main + "/connectors", timeout=5).status_code == 200
        assert requests.get(main + "/admin/loggers", timeout=5).status_code == 404
        assert requests.get(admin + "/admin/loggers", timeout=5).status_code == 200
        assert requests.get(admin + "/connectors", timeout=5).status_code == 404
    finally:
        server.stop()


def test_admin_listeners_empty_disables_admin() -> None:
    client = TestClient(create_app(FakeHerder(), RestSettings.from_properties({"admin.listeners": ""})))
    assert_error(client.get("/admin/loggers"), 404)
    assert client.get("/connectors").status_code == 200


def test_response_headers_config() -> None:
    props = {
        "response.http.headers.config": 'set X-Frame-Options: DENY,"add Cache-Control: no-cache, no-store"'
    }
    client = TestClient(create_app(FakeHerder(), RestSettings.from_properties(props)))
    response = client.get("/connectors")
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-cache, no-store"
    assert client.get("/nope").headers["x-frame-options"] == "DENY"


def test_cors() -> None:
    props = {"access.control.allow.origin": "http://ui.example", "access.control.allow.methods": "GET,PUT"}
    client = TestClient(create_app(FakeHerder(), RestSettings.from_properties(props)))
    response = client.get("/connectors", headers={"Origin": "http://ui.example"})
    assert response.headers["access-control-allow-origin"] == "http://ui.example"
    preflight = client.options(
        "/connectors", headers={"Origin": "http://ui.example", "Access-Control-Request-Method": "PUT"}
    )
    assert preflight.status_code == 200
    assert "PUT" in preflight.headers["access-control-allow-methods"]


def test_https_listener(tmp_path: Path) -> None:
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
    command += " -addext subjectAltName=DNS:localhost,IP:127.0.0.1"
    subprocess.run(
        [*command.split(), "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True
    )
    store = tmp_path / "store.pem"
    store.write_text(key.read_text() + cert.read_text())
    props = {"listeners": "HTTPS://127.0.0.1:0", "listeners.https.ssl.keystore.location": str(store)}
    server = RestServer(FakeHerder(), RestSettings.from_properties(props))
    server.start()
    try:
        assert server.advertised_url.startswith("https://127.0.0.1:")
        base = server.urls[0]
        assert requests.get(base + "connectors", verify=str(cert), timeout=5).json() == []
        body = {"name": "a", "config": FILE_SOURCE}
        created = requests.post(base + "connectors", json=body, verify=str(cert), timeout=5)
        assert created.status_code == 201
        assert created.headers["Location"] == base + "connectors/a"
    finally:
        server.stop()


def test_https_listener_with_an_unreadable_key_store_fails_and_frees_its_ports() -> None:
    props = {"listeners": "http://127.0.0.1:0,https://127.0.0.1:0", "ssl.keystore.location": "/x.jks"}
    props["ssl.keystore.type"] = "JKS"
    server = RestServer(FakeHerder(), RestSettings.from_properties(props))
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location.*cannot read the store"):
        server.start()


def test_stop_is_graceful_and_frees_the_port() -> None:
    settings = RestSettings.from_properties({"listeners": "http://127.0.0.1:0"})
    server = RestServer(FakeHerder(), settings)
    server.start()
    url = server.urls[0]
    assert requests.get(url, timeout=5).status_code == 200
    server.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(url, timeout=2)


def test_stop_lets_a_request_in_flight_finish() -> None:
    entered, release = threading.Event(), threading.Event()

    class Slow(FakeHerder):
        def connectors(self) -> list[str]:
            entered.set()
            release.wait(5)
            return ["done"]

    settings = RestSettings.from_properties({"listeners": "http://127.0.0.1:0"})
    server = RestServer(Slow(), settings)
    server.start()
    answers: list[Any] = []
    caller = threading.Thread(
        target=lambda: answers.append(requests.get(server.urls[0] + "connectors", timeout=10))
    )
    caller.start()
    assert entered.wait(5)
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    release.set()
    caller.join(10)
    stopper.join(10)
    assert answers[0].json() == ["done"]


# -- openapi -------------------------------------------------------------------------------------------


def test_openapi_lists_every_route(client: TestClient) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert response.json() == json.loads(json.dumps(OPENAPI))
    from starlette.routing import Route

    app = client.app
    served: set[tuple[str, str]] = set()
    for route in app.routes:  # type: ignore[attr-defined]
        assert isinstance(route, Route)
        for method in route.methods or ():
            if method != "HEAD":
                served.add((route.path.replace("{task}", "{task}"), method.lower()))
    documented = {
        (path, method)
        for path, item in OPENAPI["paths"].items()
        for method in item
        if method in ("get", "put", "post", "patch", "delete")
    }
    assert served == documented
