"""Two binlog clients with one ``database.server.id`` (issue #26): refused at validate and create, and a
task whose binlog connection another client keeps taking over FAILS with the server's words.

The server ends the older client's binlog dump when another registers with its server id; two connectors
with one id used to take turns forever, both RUNNING. Now:

- validate and create answer an error on ``database.server.id`` naming the group's other connector on the
  same server with that id; replacing a connector's own config is not refused by itself, nor by its own
  live binlog connection;
- a live replica holding the id (``SHOW SLAVE HOSTS``) is named too;
- at run time, a client that keeps connecting with the running task's id fails the task (after a bounded
  number of tries) with "A slave with the same server_uuid/server_id" in its trace.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysqlreplication.binlogstream as binlogstream
import pytest
import requests
from pymysqlreplication import BinLogStreamReader

from cdc.worker.runtime import ConnectRuntime
from tests.integration.inprocess import standalone

pytestmark = pytest.mark.integration

CLASS = "io.debezium.connector.mysql.MySqlConnector"


@pytest.fixture
def worker(tmp_path: Path, kafka: Any) -> Iterator[ConnectRuntime]:
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "300",
            "listeners": "http://127.0.0.1:0",
        }
    ) as runtime:
        yield runtime


def _config(mysql_db: Any, prefix: str, server_id: int, **extra: str) -> dict[str, str]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
    return {
        "connector.class": CLASS,
        "tasks.max": "1",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(server_id),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **extra,
    }


def _errors(worker: ConnectRuntime, config: dict[str, str]) -> dict[str, list[str]]:
    base = worker.url.rstrip("/")
    response = requests.put(f"{base}/connector-plugins/{CLASS}/config/validate", json=config, timeout=60)
    assert response.status_code == 200, response.text
    return {
        c["value"]["name"]: c["value"]["errors"] for c in response.json()["configs"] if c["value"]["errors"]
    }


def _task(worker: ConnectRuntime, name: str) -> dict[str, Any]:
    base = worker.url.rstrip("/")
    response = requests.get(f"{base}/connectors/{name}/status", timeout=30)
    tasks = response.json().get("tasks", []) if response.ok else []
    return dict(tasks[0]) if tasks else {}


def _wait_task(worker: ConnectRuntime, name: str, state: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = _task(worker, name)
        if task.get("state") == state:
            return task
        time.sleep(0.3)
    pytest.fail(f"task of {name} not {state} after {timeout} s: {_task(worker, name)}")


def _server_id() -> int:
    return random.randint(100_000, 4_000_000)


def test_a_server_id_another_connector_of_the_group_uses_is_refused(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any
) -> None:
    base = worker.url.rstrip("/")
    server_id = _server_id()
    first = _config(mysql_db, kafka.topic("first"), server_id)
    created = requests.post(f"{base}/connectors", json={"name": "first", "config": first}, timeout=60)
    assert created.status_code == 201, created.text
    _wait_task(worker, "first", "RUNNING", 60)
    second = {**_config(mysql_db, kafka.topic("second"), server_id), "name": "second"}
    errors = _errors(worker, second)
    assert list(errors) == ["database.server.id"], errors
    message = errors["database.server.id"][0]
    assert f"database.server.id {server_id} is already used by connector 'first'" in message, message
    refused = requests.post(f"{base}/connectors", json={"name": "second", "config": second}, timeout=60)
    assert refused.status_code == 400 and "database.server.id" in refused.json()["message"], refused.text
    assert "second" not in requests.get(f"{base}/connectors", timeout=30).json()
    # Another id is fine; so is the first connector's own config, replaced while its task streams (its own
    # binlog connection holds the id on the server).
    other = {**second, "database.server.id": str(server_id + 1)}
    assert _errors(worker, other) == {}
    replaced = requests.put(
        f"{base}/connectors/first/config", json={**first, "poll.interval.ms": "400"}, timeout=60
    )
    assert replaced.status_code == 200, replaced.text


def _replica(server_id: int, mysql_db: Any, stop: threading.Event, report: str | None) -> threading.Thread:
    """Another binlog client with ``server_id``, reconnecting whenever the server ends its dump."""
    settings = {
        "host": mysql_db.host,
        "port": mysql_db.port,
        "user": mysql_db.user,
        "passwd": mysql_db.password,
    }

    def run() -> None:
        while not stop.is_set():
            reader = BinLogStreamReader(
                connection_settings=settings,
                server_id=server_id,
                blocking=True,
                resume_stream=True,
                slave_heartbeat=0.5,
                report_slave=report,
            )
            try:
                while not stop.is_set():
                    reader.fetchone()
            except Exception:  # ended by the server (the other client took over): connect again
                time.sleep(0.3)
            finally:
                reader.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def no_library_reconnect(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test's own replica must see the server's disconnect rather than reconnect inside the library.
    monkeypatch.setattr(binlogstream, "MYSQL_EXPECTED_ERROR_CODES", [])


def test_a_server_id_a_live_replica_holds_is_refused(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, no_library_reconnect: None
) -> None:
    server_id = _server_id()
    stop = threading.Event()
    thread = _replica(server_id, mysql_db, stop, "replica-7")
    try:
        time.sleep(1.5)
        errors = _errors(worker, {**_config(mysql_db, kafka.topic("replica"), server_id), "name": "r"})
        assert list(errors) == ["database.server.id"], errors
        message = errors["database.server.id"][0]
        assert f"database.server.id {server_id} is held by a replica" in message, message
        assert "'replica-7'" in message, message
    finally:
        stop.set()
        thread.join(10)


def test_a_client_taking_over_the_server_id_fails_the_task(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, no_library_reconnect: None
) -> None:
    base = worker.url.rstrip("/")
    server_id = _server_id()
    config = _config(mysql_db, kafka.topic("taken"), server_id)
    created = requests.post(f"{base}/connectors", json={"name": "taken", "config": config}, timeout=60)
    assert created.status_code == 201, created.text
    _wait_task(worker, "taken", "RUNNING", 60)
    stop = threading.Event()
    thread = _replica(server_id, mysql_db, stop, None)  # unseen by SHOW SLAVE HOSTS: only run time tells
    try:
        task = _wait_task(worker, "taken", "FAILED", 60)
    finally:
        stop.set()
        thread.join(10)
    trace = task.get("trace", "")
    assert "same server_uuid/server_id" in trace and f"database.server.id {server_id}" in trace, trace
    assert "3 times in a row" in trace, trace
    metrics = requests.get(f"{base}/metrics", timeout=30).text.splitlines()
    assert any(
        line.startswith("kafka_connect_connector_task_status{")
        and 'connector="taken"' in line
        and 'status="failed"' in line
        and line.endswith(" 1.0")
        for line in metrics
    ), [m for m in metrics if "task_status" in m]
