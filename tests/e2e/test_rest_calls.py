"""Every curl call of the users' rest-calls.md against a ``cdc distributed`` worker process, then the raw
records of its internal topics.

The worker is started from the seed ``worker-distributed.properties`` with only the hosts, the port, the
group and the internal topic names substituted. Requests are made as users make them (JSON bodies as in
their files, ``Content-Type: application/json``), and each answer's status code and body shape is checked
against Kafka Connect's. Afterwards the config topic must hold exactly the records Connect writes for the
same calls (seed README: ``connector-…``, ``task-…-0``, ``commit-…``, ``target-state-…``, tombstones on
delete) and the status topic Connect's status records, each on the partition Java's murmur2 picks.

Where we knowingly differ from Connect: a plain ``POST /connectors/{n}/restart`` (no query parameters) is
written as ``restart-connector-<n>`` ``{"include-tasks":false,"only-failed":false}`` (which a Connect worker
reading the topic applies the same way), where Connect restarts the connector directly on its owner.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

import requests
from kafka.partitioner.default import murmur2
from prometheus_client.parser import text_string_to_metric_families
from worker_process import WorkerProcess, free_port, seed_properties, wait_for

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
STATUS_PARTITIONS = 5  # Connect's default status.storage.partitions; the seed does not set it
OFFSET_PARTITIONS = 25
WORKER_ID = re.compile(r"^[^/:]+:\d+$")
STATE_KEYS = ["state", "trace", "worker_id", "generation"]


def _pairs(raw: bytes | None) -> Any:
    """JSON with the key order of the bytes (Connect's records have a fixed field order)."""
    return None if raw is None else json.loads(raw, object_pairs_hook=OrderedDict)


def java_partition(key: bytes, partitions: int) -> int:
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class Rest:
    """``requests`` as users' curl: every answer is checked to be Connect-shaped before it is returned."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(
        self, method: str, path: str, expect: int, body: Any = None, data: str | None = None, **kwargs: Any
    ) -> requests.Response:
        if body is not None:
            data = json.dumps(body)
        response = requests.request(
            method, self.url + path, data=data, headers=JSON_HEADERS, timeout=60, **kwargs
        )
        text = response.text
        assert response.status_code == expect, f"{method} {path}: {response.status_code} {text}"
        assert "Traceback" not in text and 'File "' not in text, (
            f"{method} {path} leaks a stack trace: {text}"
        )
        if response.status_code >= 400:
            error = response.json()
            assert list(error) == ["error_code", "message"], error
            assert error["error_code"] == response.status_code and isinstance(error["message"], str)
        elif response.status_code == 204:
            assert text == "", f"{method} {path}: 204 with a body {text!r}"
        return response

    def get(self, path: str, expect: int = 200, **kwargs: Any) -> Any:
        response = self.call("GET", path, expect, **kwargs)
        return response.json()

    def status(self, name: str) -> dict[str, Any]:
        result: dict[str, Any] = self.get(f"/connectors/{name}/status")
        return result

    def await_state(
        self, name: str, state: str, tasks: int | None = 1, timeout: float = 30
    ) -> dict[str, Any]:
        def reached() -> dict[str, Any] | None:
            # as in Connect, a connector has no status (404) until it has started somewhere
            if requests.get(f"{self.url}/connectors/{name}/status", timeout=30).status_code == 404:
                return None
            status = self.status(name)
            if status["connector"]["state"] != state:
                return None
            if tasks is not None and (
                len(status["tasks"]) != tasks or any(t["state"] != state for t in status["tasks"])
            ):
                return None
            return status

        result: dict[str, Any] = wait_for(reached, timeout, f"{name} {state} with {tasks} task(s)")
        return result


def start_seed_worker(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> tuple[WorkerProcess, dict[str, str]]:
    port = free_port()
    names = {
        "group.id": kafka.topic("connect"),
        "offset.storage.topic": kafka.topic("connect-offsets"),
        "config.storage.topic": kafka.topic("connect-configs"),
        "status.storage.topic": kafka.topic("connect-status"),
    }
    props = seed_properties(
        "worker-distributed.properties",
        tmp_path / "worker.properties",
        {"bootstrap.servers": kafka.bootstrap_servers, "rest.port": str(port), **names},
        # a distributed worker offers the FileStream connectors only when told to (docs/security.md)
        {"filestream.connectors.enable": "true"},
    )
    worker = WorkerProcess(["distributed", str(props)], port, tmp_path / "worker.log")
    workers.append(worker)
    worker.start()
    return worker, names


def assert_status_shape(status: dict[str, Any], name: str, worker_id: str, tasks: int) -> None:
    assert list(status) == ["name", "connector", "tasks", "type"]
    assert status["name"] == name and status["type"] == "source"
    assert status["connector"] == {"state": status["connector"]["state"], "worker_id": worker_id}
    assert [t["id"] for t in status["tasks"]] == list(range(tasks))
    for task in status["tasks"]:
        assert list(task) == ["id", "state", "worker_id"] and task["worker_id"] == worker_id


def test_rest_calls_and_internal_topics(tmp_path: Path, kafka: Any, workers: list[WorkerProcess]) -> None:
    worker, names = start_seed_worker(tmp_path, kafka, workers)
    rest = Rest(worker.url)
    name = "local-file-source"
    topic = kafka.topic("connect-test")
    source = tmp_path / "test.txt"
    source.write_text("first message\nsecond message\n", encoding="utf-8")
    # the body users keep in a JSON file and POST with curl -d @file.json
    config = {"connector.class": "FileStreamSource", "tasks.max": "1", "file": str(source), "topic": topic}
    expected_records: list[tuple[str, Any]] = []  # the config topic, as Connect writes it for these calls

    # curl localhost:8083
    root = rest.get("/")
    assert list(root) == ["version", "commit", "kafka_cluster_id"]
    cluster_id = kafka.admin.describe_cluster(request_timeout=10).result(15).cluster_id
    assert root["kafka_cluster_id"] == cluster_id and re.match(r"^\d+\.\d+\.\d+", root["version"])

    # the worker joined its group: Connect's rebalance metrics say so (docs/metrics.md)
    def rebalances() -> dict[str, float] | None:
        text = requests.get(worker.url + "/metrics", timeout=30).text
        found = {
            s.name.removeprefix("kafka_connect_connect_worker_rebalance_metrics_"): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
            if s.name.startswith("kafka_connect_connect_worker_rebalance_metrics_")
        }
        return found if found.get("completed_rebalances_total", 0) >= 1 else None

    joined = wait_for(rebalances, 60, "a completed rebalance in /metrics")
    assert joined["epoch"] >= 1 and joined["rebalancing"] == 0 and joined["time_since_last_rebalance_ms"] >= 0

    # curl localhost:8083/connector-plugins
    plugins = rest.get("/connector-plugins")
    assert all(list(p) == ["class", "type", "version"] for p in plugins)
    classes = {p["class"]: p["type"] for p in plugins}
    assert classes["org.apache.kafka.connect.file.FileStreamSourceConnector"] == "source"
    assert classes["org.apache.kafka.connect.file.FileStreamSinkConnector"] == "sink"
    all_plugins = rest.get("/connector-plugins", params={"connectorsOnly": "false"})
    assert {"source", "sink", "converter", "transformation", "predicate"} <= {p["type"] for p in all_plugins}

    # curl localhost:8083/connectors ; curl "localhost:8083/connectors?expand=status&expand=info"
    assert rest.get("/connectors") == []
    assert rest.get("/connectors?expand=status&expand=info") == {}

    # POST /connectors with the body of the user's file
    created = rest.call("POST", "/connectors", 201, body={"name": name, "config": config})
    assert created.headers["Location"].endswith(f"/connectors/{name}")
    info = created.json()
    assert list(info) == ["name", "config", "tasks", "type"]
    assert info["name"] == name and info["config"] == {**config, "name": name} and info["type"] == "source"
    expected_records.append((f"connector-{name}", {"properties": {**config, "name": name}}))

    # curl -s localhost:8083/connectors/NAME/status
    status = rest.await_state(name, "RUNNING")
    worker_id = status["connector"]["worker_id"]
    assert WORKER_ID.match(worker_id) and worker_id.endswith(f":{worker.port}")
    assert_status_shape(status, name, worker_id, 1)

    # curl localhost:8083/connectors/NAME/tasks
    tasks = rest.get(f"/connectors/{name}/tasks")
    task_config = {**config, "name": name, "task.class": "org.apache.kafka.connect.file.FileStreamSourceTask"}
    assert tasks == [{"id": {"connector": name, "task": 0}, "config": task_config}]
    expected_records.append((f"task-{name}-0", {"properties": task_config}))
    expected_records.append((f"commit-{name}", {"tasks": 1}))

    assert rest.get("/connectors") == [name]
    expanded = rest.get("/connectors?expand=status&expand=info")
    assert list(expanded) == [name] and list(expanded[name]) == ["status", "info"]
    assert expanded[name]["status"] == status
    assert expanded[name]["info"] == {
        "name": name,
        "config": {**config, "name": name},
        "tasks": [{"connector": name, "task": 0}],
        "type": "source",
    }
    assert rest.get(f"/connectors/{name}") == expanded[name]["info"]
    assert rest.get("/connectors?expand=status")[name].keys() == {"status"}

    # the lines reach the topic, which becomes the connector's active topic
    wait_for(lambda: len(kafka.read_to_end(topic)) == 2, 30, "2 records in the topic")
    values = [m.value() for m in kafka.read_to_end(topic)]
    assert values == [b'"first message"', b'"second message"']  # seed worker: schemas.enable=false
    assert wait_for(
        lambda: rest.get(f"/connectors/{name}/topics") == {name: {"topics": [topic]}}, 10, "the active topic"
    )

    # curl -X POST .../restart : the connector only, 204 and no body
    rest.call("POST", f"/connectors/{name}/restart", 204)
    expected_records.append((f"restart-connector-{name}", {"include-tasks": False, "only-failed": False}))
    rest.await_state(name, "RUNNING")
    # KIP-745: includeTasks → 202 with the plan
    plan = rest.call("POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=false", 202).json()
    assert_status_shape(plan, name, worker_id, 1)
    assert plan["connector"]["state"] == "RESTARTING" and plan["tasks"][0]["state"] == "RESTARTING"
    expected_records.append((f"restart-connector-{name}", {"include-tasks": True, "only-failed": False}))
    rest.await_state(name, "RUNNING")
    # curl -X POST .../tasks/0/restart : "no output on success"
    rest.call("POST", f"/connectors/{name}/tasks/0/restart", 204)
    rest.await_state(name, "RUNNING")

    # curl -X PUT .../pause : asynchronous
    rest.call("PUT", f"/connectors/{name}/pause", 202)
    expected_records.append((f"target-state-{name}", {"state": "PAUSED", "state.v2": "PAUSED"}))
    assert_status_shape(rest.await_state(name, "PAUSED"), name, worker_id, 1)
    with source.open("a", encoding="utf-8") as fh:
        fh.write("while paused\n")
    # curl -X PUT .../resume
    rest.call("PUT", f"/connectors/{name}/resume", 202)
    expected_records.append((f"target-state-{name}", {"state": "STARTED", "state.v2": "STARTED"}))
    rest.await_state(name, "RUNNING")
    wait_for(lambda: len(kafka.read_to_end(topic)) == 3, 30, "the line written while paused")

    # curl localhost:8083/connectors/NAME/config
    assert rest.get(f"/connectors/{name}/config") == {**config, "name": name}
    # curl -X GET .../tasks/0/status
    assert rest.get(f"/connectors/{name}/tasks/0/status") == {
        "id": 0,
        "state": "RUNNING",
        "worker_id": worker_id,
    }

    # offsets while running: readable; not changeable (400 with Connect's message)
    # (the seed keeps offset.flush.interval.ms at 60 s: what is committed now is what the restarts committed)
    size = source.stat().st_size
    offsets = rest.get(f"/connectors/{name}/offsets")
    line_ends = [len("first message\n"), len("first message\nsecond message\n"), size]
    assert offsets == {
        "offsets": [
            {
                "partition": {"filename": str(source)},
                "offset": {"position": offsets["offsets"][0]["offset"]["position"]},
            }
        ]
    }
    assert offsets["offsets"][0]["offset"]["position"] in line_ends
    stopped_first = (
        "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for "
        f"the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
    )
    for method, body in (("PATCH", offsets), ("DELETE", None)):
        error = rest.call(method, f"/connectors/{name}/offsets", 400, body=body).json()
        assert error == {"error_code": 400, "message": stopped_first}

    # PUT config (update → 200), PATCH config (KIP-477; null removes a key)
    updated = {**config, "batch.size": "100"}
    info = rest.call("PUT", f"/connectors/{name}/config", 200, body=updated).json()
    assert info["name"] == name and info["config"] == {**updated, "name": name}
    expected_records.append((f"connector-{name}", {"properties": {**updated, "name": name}}))
    new_task = {**updated, "name": name, "task.class": task_config["task.class"]}
    wait_for(
        lambda: rest.get(f"/connectors/{name}/tasks")[0]["config"] == new_task, 30, "the new task config"
    )
    expected_records += [(f"task-{name}-0", {"properties": new_task}), (f"commit-{name}", {"tasks": 1})]
    rest.await_state(name, "RUNNING")
    info = rest.call("PATCH", f"/connectors/{name}/config", 200, body={"batch.size": None}).json()
    assert info["config"] == {**config, "name": name}
    expected_records.append((f"connector-{name}", {"properties": {**config, "name": name}}))
    wait_for(lambda: rest.get(f"/connectors/{name}/tasks")[0]["config"] == task_config, 30, "the task config")
    expected_records += [(f"task-{name}-0", {"properties": task_config}), (f"commit-{name}", {"tasks": 1})]
    rest.await_state(name, "RUNNING")

    # curl .../topics ; curl -X PUT .../topics/reset
    assert rest.get(f"/connectors/{name}/topics") == {name: {"topics": [topic]}}
    rest.call("PUT", f"/connectors/{name}/topics/reset", 202)  # 202: applied once read back, as in Connect
    wait_for(lambda: rest.get(f"/connectors/{name}/topics") == {name: {"topics": []}}, 10, "the reset")

    # curl -X PUT .../stop : STOPPED with no tasks (KIP-875)
    rest.call("PUT", f"/connectors/{name}/stop", 204)
    expected_records.append((f"commit-{name}", {"tasks": 0}))
    expected_records.append((f"target-state-{name}", {"state": "PAUSED", "state.v2": "STOPPED"}))
    stopped = rest.await_state(name, "STOPPED", tasks=0)
    assert stopped == {
        "name": name,
        "connector": {"state": "STOPPED", "worker_id": worker_id},
        "tasks": [],
        "type": "source",
    }
    assert rest.get(f"/connectors/{name}/tasks") == []
    assert rest.get(f"/connectors/{name}")["tasks"] == []

    # offsets GET/PATCH/DELETE while STOPPED (the task committed everything when it stopped)
    offsets = {"offsets": [{"partition": {"filename": str(source)}, "offset": {"position": size}}]}
    assert rest.get(f"/connectors/{name}/offsets") == offsets
    altered = {"offsets": [{"partition": {"filename": str(source)}, "offset": {"position": 14}}]}
    answer = rest.call("PATCH", f"/connectors/{name}/offsets", 200, body=altered).json()
    assert answer == {"message": "The offsets for this connector have been altered successfully"}
    assert rest.get(f"/connectors/{name}/offsets") == altered
    # the connector checks offsets (FileStreamSourceConnector.alterOffsets): a bad one is refused, not written
    bad = {"offsets": [{"partition": {"filename": str(source)}, "offset": {"pos": 1}}]}
    error = rest.call("PATCH", f"/connectors/{name}/offsets", 400, body=bad).json()
    assert error["message"] == "Offset objects should either be null or contain the key 'position'"
    assert rest.get(f"/connectors/{name}/offsets") == altered
    answer = rest.call("DELETE", f"/connectors/{name}/offsets", 200).json()
    assert answer == {"message": "The offsets for this connector have been reset successfully"}
    assert rest.get(f"/connectors/{name}/offsets") == {"offsets": []}

    # echo '{...}' | curl -X PUT -d @- .../connector-plugins/FileStreamSinkConnector/config/validate
    seed_body = (
        '{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "tasks.max": "1", '
        '"topics": "test-topic"}'
    )
    infos = rest.call(
        "PUT", "/connector-plugins/FileStreamSinkConnector/config/validate", 200, data=seed_body
    ).json()
    assert list(infos) == ["name", "error_count", "groups", "configs"]
    assert infos["name"] == "org.apache.kafka.connect.file.FileStreamSinkConnector"
    assert all(isinstance(g, str) for g in infos["groups"]) and "Common" in infos["groups"]
    by_name = {}
    for entry in infos["configs"]:
        assert list(entry) == ["definition", "value"]
        assert set(entry["definition"]) == {
            "name",
            "type",
            "required",
            "default_value",
            "importance",
            "documentation",
            "group",
            "width",
            "display_name",
            "dependents",
            "order",
        }
        assert list(entry["value"]) == ["name", "value", "recommended_values", "errors", "visible"]
        by_name[entry["definition"]["name"]] = entry
    assert {"name", "connector.class", "tasks.max", "topics", "file"} <= set(by_name)
    assert by_name["topics"]["value"]["value"] == "test-topic" and by_name["topics"]["value"]["errors"] == []
    # the body has no "name", which is required: Connect counts that one error
    assert infos["error_count"] == 1 and by_name["name"]["value"]["errors"]

    # resume from STOPPED: tasks come back, reading the file from the start again (offsets were reset)
    rest.call("PUT", f"/connectors/{name}/resume", 202)
    expected_records.append((f"target-state-{name}", {"state": "STARTED", "state.v2": "STARTED"}))
    expected_records += [(f"task-{name}-0", {"properties": task_config}), (f"commit-{name}", {"tasks": 1})]
    rest.await_state(name, "RUNNING")
    wait_for(lambda: len(kafka.read_to_end(topic)) == 6, 30, "the file re-read after the offsets reset")

    # curl -X DELETE localhost:8083/connectors/NAME
    rest.call("DELETE", f"/connectors/{name}", 204)
    expected_records += [(f"connector-{name}", None), (f"target-state-{name}", None)]
    assert rest.get("/connectors") == []
    rest.get(f"/connectors/{name}/status", expect=404)
    assert rest.get(f"/connectors/{name}", expect=404) == {
        "error_code": 404,
        "message": f"Connector {name} not found",
    }

    # -- the config topic: exactly Connect's records, in order ------------------------------------------
    config_records = kafka.read_to_end(names["config.storage.topic"])
    assert {m.partition() for m in config_records} == {0}
    seen = [(m.key().decode(), _pairs(m.value())) for m in config_records if m.key() != b"session-key"]
    assert [k for k, _ in seen] == [k for k, _ in expected_records]
    assert seen == expected_records
    for message in config_records:  # key order of the values as Connect's Jackson writes them
        value = _pairs(message.value())
        if message.key().startswith(b"target-state-") and value is not None:
            assert list(value) == ["state", "state.v2"]
        if message.key() == b"session-key":
            assert list(value) == ["key", "algorithm", "creation-timestamp"]

    # -- the status topic ---------------------------------------------------------------------------------
    connector_key, task_key = f"status-connector-{name}", f"status-task-{name}-0"
    topic_key = f"status-topic-{topic}:connector-{name}"

    def read_statuses() -> dict[str, list[Any]]:
        states: dict[str, list[Any]] = {}
        for message in kafka.read_to_end(names["status.storage.topic"]):
            key = message.key()
            assert message.partition() == java_partition(key, STATUS_PARTITIONS), key
            states.setdefault(key.decode(), []).append(_pairs(message.value()))
        return states

    # the deletion is applied by the herder after the 204: wait for its tombstones
    def tombstoned() -> dict[str, list[Any]] | None:
        states = read_statuses()
        return states if states.get(connector_key, [{}])[-1] is None else None

    states = wait_for(tombstoned, 30, "the status tombstones")
    assert set(states) == {connector_key, task_key, topic_key}
    for key in (connector_key, task_key):
        values = states[key]
        assert values[-1] is None, f"{key} must end with a tombstone after the delete: {values[-3:]}"
        for value in values[:-1]:
            if value is None:
                continue
            assert list(value) == STATE_KEYS, value
            assert value["worker_id"] == worker_id and value["trace"] is None
            assert isinstance(value["generation"], int) and value["generation"] >= 1
        seen_states = [v["state"] for v in values if v is not None]
        assert {"RUNNING", "PAUSED"} <= set(seen_states), (key, seen_states)
    assert "STOPPED" in [v["state"] for v in states[connector_key] if v is not None]
    assert "RESTARTING" in [v["state"] for v in states[connector_key] if v is not None]
    # topic tracking: discovered, reset (tombstone), discovered again, and tombstoned on delete
    topic_values = states[topic_key]
    assert topic_values[-1] is None and None in topic_values[:-1]
    first = topic_values[0]
    assert list(first) == ["topic"] and list(first["topic"]) == [
        "name",
        "connector",
        "task",
        "discoverTimestamp",
    ]
    assert (
        first["topic"]["name"] == topic
        and first["topic"]["connector"] == name
        and first["topic"]["task"] == 0
    )

    # -- the offsets topic: Connect's key bytes on the partition Java would choose -----------------------
    offset_records = kafka.read_to_end(names["offset.storage.topic"])
    key = json.dumps([name, {"filename": str(source)}], separators=(",", ":")).encode()
    assert offset_records and {m.key() for m in offset_records} == {key}
    assert {m.partition() for m in offset_records} == {java_partition(key, OFFSET_PARTITIONS)}
    assert b'{"position":14}' in [m.value() for m in offset_records]
    assert None in [m.value() for m in offset_records]  # the reset

    assert "Unexpected error in the herder" not in worker.log()
    assert worker.terminate() == 0


def test_bad_input_never_500(tmp_path: Path, kafka: Any, workers: list[WorkerProcess]) -> None:
    worker, _names = start_seed_worker(tmp_path, kafka, workers)
    rest = Rest(worker.url)
    topic = kafka.topic("bad-input")
    good = {
        "connector.class": "FileStreamSource",
        "tasks.max": "1",
        "file": str(tmp_path / "in.txt"),
        "topic": topic,
    }

    # invalid config: 400 with every error in the message; validate lists them per field
    invalid = {"connector.class": "FileStreamSource", "tasks.max": "x", "file": str(tmp_path / "in.txt")}
    error = rest.call("POST", "/connectors", 400, body={"name": "invalid", "config": invalid}).json()
    assert error["message"].startswith(
        "Connector configuration is invalid and contains the following 2 error(s):"
    )
    assert "tasks.max" in error["message"] and "topic" in error["message"]
    infos = rest.call(
        "PUT",
        "/connector-plugins/FileStreamSourceConnector/config/validate",
        200,
        body={**invalid, "name": "invalid"},
    ).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert infos["error_count"] == 2 and set(errors) == {"tasks.max", "topic"}
    rest.call("PUT", "/connectors/invalid/config", 400, body=invalid)
    assert rest.get("/connectors") == []
    # validate: connector.class must match the plugin in the URL; a body without connector.class
    rest.call("PUT", "/connector-plugins/FileStreamSinkConnector/config/validate", 400, body=good)
    rest.call(
        "PUT", "/connector-plugins/FileStreamSourceConnector/config/validate", 400, body={"tasks.max": "1"}
    )

    # unknown connector: 404 with Connect's messages
    assert rest.get("/connectors/nope", expect=404)["message"] == "Connector nope not found"
    assert rest.get("/connectors/nope/status", expect=404)["message"] == "No status found for connector nope"
    for method, path in (
        ("GET", "/config"),
        ("GET", "/tasks"),
        ("GET", "/topics"),
        ("GET", "/offsets"),
        ("GET", "/tasks/0/status"),
        ("PUT", "/pause"),
        ("PUT", "/resume"),
        ("PUT", "/stop"),
        ("POST", "/restart"),
        ("POST", "/tasks/0/restart"),
        ("DELETE", ""),
    ):
        rest.call(method, f"/connectors/nope{path}", 404)
    rest.call("PATCH", "/connectors/nope/config", 404, body={"tasks.max": "1"})

    # PUT creates (201), then updates (200); a duplicate POST is 409
    assert rest.call("PUT", "/connectors/good/config", 201, body=good).json()["name"] == "good"
    rest.call("PUT", "/connectors/good/config", 200, body=good)
    error = rest.call("POST", "/connectors", 409, body={"name": "good", "config": good}).json()
    assert error["message"] == "Connector good already exists"
    rest.await_state("good", "RUNNING")
    rest.get("/connectors/good/tasks/7/status", expect=404)
    rest.call("POST", "/connectors/good/tasks/7/restart", 404)

    # malformed bodies: 400, never a 500 or a stack trace
    for path, method in (
        ("/connectors", "POST"),
        ("/connectors/good/config", "PUT"),
        ("/connectors/good/config", "PATCH"),
        ("/connectors/good/offsets", "PATCH"),
        ("/connector-plugins/FileStreamSinkConnector/config/validate", "PUT"),
    ):
        for data in ('{"name": "x", "config": {', "not json", "[1, 2]", '"a string"', ""):
            response = requests.request(
                method, worker.url + path, data=data, headers=JSON_HEADERS, timeout=30
            )
            assert 400 <= response.status_code < 500, (
                method,
                path,
                data,
                response.status_code,
                response.text,
            )
            assert "Traceback" not in response.text and 'File "' not in response.text
            assert response.json()["error_code"] == response.status_code
    rest.call("POST", "/connectors", 400, body={"config": good})  # no name
    rest.call("POST", "/connectors", 400, body={"name": "x"})  # no config
    error = rest.call("PUT", "/connectors/good/config", 400, body={**good, "name": "other"}).json()
    assert (
        error["message"]
        == "Connector name configuration (other) doesn't match connector name in the URL (good)"
    )

    # offsets: an empty list and nulls are refused with 400
    rest.call("PUT", "/connectors/good/stop", 204)
    rest.await_state("good", "STOPPED", tasks=0)
    rest.call("PATCH", "/connectors/good/offsets", 400, body={"offsets": []})
    rest.call("PATCH", "/connectors/good/offsets", 400, body={"offsets": [{"partition": None, "offset": {}}]})
    rest.call("PATCH", "/connectors/good/offsets", 400, body={})

    rest.call("DELETE", "/connectors/good", 204)
    assert "Unexpected error in the herder" not in worker.log()
    assert worker.terminate() == 0
