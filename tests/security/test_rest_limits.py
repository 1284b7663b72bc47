"""Issue #24, the REST side, against real worker processes with basic authentication:

* **providers at validate and create**: ``database.password=${file:…}`` is resolved before the connector's
  own validation (as Connect's ``AbstractHerder.validateConnectorConfig`` does), so secrets can stay in
  providers: validate answers 0 errors, ``POST`` creates the connector and it runs; the password never
  comes back in an answer; a placeholder outside ``allowed.paths`` is 400 naming the key, not a 500;
* **a 1 MB config** (one value of a MiB) is answered 413 with Connect's error shape, never 500, and a
  config just under the limit but over ``connector.config.max.bytes`` is 400 naming the limit;
* **slow clients**: a client that sends its request line and then a header a byte at a time (slowloris)
  is cut off after ``rest.request.header.timeout.ms``, and an idle keep-alive connection after the idle
  timeout; the worker keeps answering others meanwhile;
* **a cap on connectors**: ``connectors.max`` refuses the connector past the cap with 400.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
from attack import MB, call, distributed_worker, provider_worker, standalone_worker
from worker_process import WorkerProcess, mysql_source, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def _sql(mysql_db: Any, statement: str) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(statement)


def test_a_provider_password_passes_validate_and_runs(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = provider_worker(tmp_path, kafka, workers)
    (tmp_path / "secrets" / "db.properties").write_text(f"password={mysql_db.password}\n", encoding="utf-8")
    _sql(mysql_db, "CREATE TABLE t (id INT PRIMARY KEY)")
    prefix = kafka.topic("prov")
    config = mysql_source(
        mysql_db,
        prefix,
        kafka.bootstrap_servers,
        5401,
        **{"database.password": f"${{file:{tmp_path}/secrets/db.properties:password}}"},
    )
    answer = call(
        worker, "PUT", "/connector-plugins/MySqlConnector/config/validate", json={**config, "name": "prov"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["error_count"] == 0, answer.text
    created = call(worker, "POST", "/connectors", json={"name": "prov", "config": config})
    assert created.status_code == 201, created.text

    def running() -> bool:
        status = call(worker, "GET", "/connectors/prov/status").json()
        tasks = status.get("tasks") or []
        return bool(tasks) and tasks[0]["state"] == "RUNNING"

    wait_for(running, 60, "the task RUNNING with the provider's password")
    _sql(mysql_db, "INSERT INTO t VALUES (1)")
    wait_for(lambda: kafka.read_to_end(f"{prefix}.{mysql_db.name}.t"), 60, "the change in Kafka")
    for text in (answer.text, call(worker, "GET", "/connectors/prov/config").text):
        assert "${file:" in text or "[hidden]" in text


def test_a_provider_path_outside_allowed_paths_is_400_naming_the_key(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = provider_worker(tmp_path, kafka, workers)
    config = mysql_source(
        mysql_db,
        kafka.topic("steal"),
        kafka.bootstrap_servers,
        5402,
        **{"database.password": "${file:/etc/passwd:root}"},
    )
    answer = call(worker, "PUT", "/connector-plugins/MySqlConnector/config/validate", json=config)
    assert answer.status_code == 200, answer.text
    errors = {c["value"]["name"]: c["value"]["errors"] for c in answer.json()["configs"]}
    assert any("not allowed to be accessed" in e for e in errors["database.password"]), errors
    created = call(worker, "POST", "/connectors", json={"name": "steal", "config": config})
    assert created.status_code == 400, created.text
    assert "database.password" in created.json()["message"]
    assert ":0:0:" not in created.text and ":0:0:" not in answer.text


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_a_config_of_a_megabyte_is_413_not_500(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess], mode: str
) -> None:
    if mode == "standalone":
        worker = standalone_worker(tmp_path, kafka, workers)
    else:
        worker = distributed_worker(tmp_path, kafka, workers)
    config = mysql_source(mysql_db, kafka.topic("big"), kafka.bootstrap_servers, 5403)
    # just under the body limit: before connector.config.max.bytes, the config topic's write failed (500)
    config["snapshot.select.statement.overrides"] = "x" * (MB - 4096)
    answer = call(worker, "POST", "/connectors", json={"name": "big", "config": config})
    assert answer.status_code == 400, (answer.status_code, answer.text[:300])
    assert "connector.config.max.bytes" in answer.json()["message"]
    config["snapshot.select.statement.overrides"] = "x" * MB
    for method, path, body in (
        ("POST", "/connectors", {"name": "big", "config": config}),
        ("PUT", "/connectors/big/config", config),
        ("PUT", "/connector-plugins/MySqlConnector/config/validate", config),
    ):
        answer = call(worker, method, path, json=body)
        assert answer.status_code == 413, (path, answer.status_code, answer.text[:300])
        assert answer.json()["error_code"] == 413
    # under the body limit, over the config limit: 400 naming the limit
    config["snapshot.select.statement.overrides"] = "x" * (600 * 1024)
    answer = call(worker, "POST", "/connectors", json={"name": "big", "config": config})
    assert answer.status_code == 400, answer.text[:300]
    assert "connector.config.max.bytes" in answer.json()["message"]
    assert call(worker, "GET", "/connectors").json() == []


def test_slow_headers_and_idle_connections_are_cut(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(
        tmp_path, kafka, workers, {"rest.request.header.timeout.ms": "2000", "rest.idle.timeout.ms": "3000"}
    )
    port = int(worker.url.rsplit(":", 1)[1])
    slow = socket.create_connection(("127.0.0.1", port), timeout=30)
    idle = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        slow.sendall(b"GET /connectors HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        started = time.monotonic()
        closed_after = None
        while time.monotonic() - started < 20:
            try:
                slow.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                closed_after = time.monotonic() - started
                break
            # the worker keeps answering other clients meanwhile
            assert call(worker, "GET", "/connectors", timeout=5).status_code == 200
            slow.settimeout(0.5)
            try:
                if slow.recv(4096) == b"":
                    closed_after = time.monotonic() - started
                    break
            except TimeoutError:
                pass
        assert closed_after is not None and closed_after < 8, closed_after
        # an idle connection that never sends a byte is closed too
        idle.settimeout(15)
        started = time.monotonic()
        while idle.recv(4096):  # a server may answer 408 first; either way the connection ends
            pass
        assert time.monotonic() - started < 12
    finally:
        slow.close()
        idle.close()


def test_the_connector_cap(tmp_path: Path, kafka: Any, workers: list[WorkerProcess]) -> None:
    worker = standalone_worker(tmp_path, kafka, workers, {"connectors.max": "2"})
    (tmp_path / "in.txt").write_text("", encoding="utf-8")
    for i in range(2):
        config = {
            "connector.class": "FileStreamSource",
            "file": str(tmp_path / "in.txt"),
            "topic": kafka.topic(f"c{i}"),
        }
        assert (
            call(worker, "POST", "/connectors", json={"name": f"c{i}", "config": config}).status_code == 201
        )
    config = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in.txt"),
        "topic": kafka.topic("c2"),
    }
    answer = call(worker, "POST", "/connectors", json={"name": "c2", "config": config})
    assert answer.status_code == 400, answer.text
    assert "connectors.max" in answer.json()["message"]
    # replacing an existing connector's config is not a new connector
    assert call(worker, "PUT", "/connectors/c1/config", json=config).status_code == 200
