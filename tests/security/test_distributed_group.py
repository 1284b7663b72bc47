"""Attacks on a distributed group (issue #20, items 1, 3 and 6), against real worker processes:

* a connector name of 200 KB stored in the config topic by an older version no longer wedges the group:
  two workers join, a new connector runs, the bad one is not run, and ``DELETE /connectors/{alias}`` (the
  alias the worker logs) removes it with a tombstone;
* ``PUT /admin/loggers/{ns}?scope=cluster`` on one worker sets the level on every worker, through
  Connect's ``logger-cluster-<ns>`` record;
* the FileStream connectors, which read and write any file the worker may, are not offered by a
  distributed worker unless its configuration enables them (``plugin.path`` naming Kafka's connect-file
  jar, or ``filestream.connectors.enable=true``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attack import call, distributed_worker
from worker_process import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

FILESTREAM = {"filestream.connectors.enable": "true"}


def _running(worker: WorkerProcess, name: str) -> bool:
    response = call(worker, "GET", f"/connectors/{name}/status")
    if response.status_code != 200:
        return False
    status = response.json()
    return status["connector"]["state"] == "RUNNING" and [t["state"] for t in status["tasks"]] == ["RUNNING"]


def test_a_huge_stored_name_no_longer_wedges_the_group_and_cluster_log_levels(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess]
) -> None:
    configs = kafka.create_topic("sec-configs", config={"cleanup.policy": "compact"})
    huge = "x" * 200_000
    stored = {"properties": {"connector.class": "FileStreamSource", "name": huge, "topic": "t", "file": "/f"}}
    producer = kafka.producer(**{"message.max.bytes": 2_000_000})
    producer.produce(configs, key=f"connector-{huge}".encode(), value=json.dumps(stored).encode())
    assert producer.flush(30) == 0

    first = distributed_worker(tmp_path, kafka, workers, add=FILESTREAM)
    second = distributed_worker(tmp_path, kafka, workers, add=FILESTREAM)
    (tmp_path / "in.txt").write_text("one\n", encoding="utf-8")
    source = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_path / "in.txt"),
        "topic": kafka.topic("lines"),
        "tasks.max": "1",
    }
    created = call(second, "POST", "/connectors", json={"name": "after", "config": source})
    assert created.status_code == 201, created.text
    wait_for(lambda: _running(first, "after"), 60, "the new connector running")
    assert call(first, "GET", "/connectors").json() == ["after"]

    # the worker says how to delete it; the alias works (a 600 KB URL would not)
    alias = wait_for(
        lambda: next(
            (w.split()[0] for w in first.log().split("DELETE /connectors/")[1:] if w.startswith("invalid")),
            None,
        ),
        30,
        "the alias in the log",
    )
    assert call(first, "GET", f"/connectors/{alias}").status_code == 404
    deleted = call(second, "DELETE", f"/connectors/{alias}")
    assert deleted.status_code == 204, deleted.text

    def tombstoned() -> bool:
        return any(
            m.key() == f"connector-{huge}".encode() and m.value() is None for m in kafka.read_to_end(configs)
        )

    wait_for(tombstoned, 30, "a tombstone for the huge name")
    assert call(second, "DELETE", f"/connectors/{alias}").status_code == 404
    assert _running(second, "after")

    # -- scope=cluster: set on one worker, applied on both (Connect's logger-cluster-<ns> record)
    namespace = "cdc.security.cluster"
    response = call(first, "PUT", f"/admin/loggers/{namespace}?scope=cluster", json={"level": "DEBUG"})
    assert (response.status_code, response.content) == (204, b"")
    for worker in (first, second):
        wait_for(
            lambda w=worker: call(w, "GET", f"/admin/loggers/{namespace}").json().get("level") == "DEBUG",
            30,
            f"DEBUG on {worker.url}",
        )
    records = [(m.key(), m.value()) for m in kafka.read_to_end(configs)]
    assert (f"logger-cluster-{namespace}".encode(), b'{"level":"DEBUG"}') in records
    # scope=worker stays on one worker
    response = call(second, "PUT", f"/admin/loggers/{namespace}", json={"level": "ERROR"})
    assert response.status_code == 200
    assert call(first, "GET", f"/admin/loggers/{namespace}").json()["level"] == "DEBUG"


@pytest.mark.parametrize(
    ("add", "offered"),
    [
        ({}, False),
        ({"plugin.path": "/opt/kafka/libs/connect-file-3.9.0.jar"}, True),
        (FILESTREAM, True),
    ],
    ids=["default", "plugin-path", "switch"],
)
def test_filestream_connectors_only_where_enabled(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], add: dict[str, str], offered: bool
) -> None:
    worker = distributed_worker(tmp_path, kafka, workers, group=f"fs-{len(add)}-{bool(offered)}", add=add)
    plugins = {p["class"] for p in call(worker, "GET", "/connector-plugins").json()}
    assert ("org.apache.kafka.connect.file.FileStreamSourceConnector" in plugins) is offered
    assert ("org.apache.kafka.connect.file.FileStreamSinkConnector" in plugins) is offered
    key = tmp_path / "worker.key"
    key.write_text("-----BEGIN PRIVATE KEY-----\n", encoding="utf-8")
    steal = {"connector.class": "FileStreamSource", "file": str(key), "topic": kafka.topic("stolen")}
    response = call(worker, "POST", "/connectors", json={"name": "steal", "config": steal})
    if offered:
        assert response.status_code == 201, response.text
    else:
        assert response.status_code == 400
        message = response.json()["message"]
        assert "Failed to find any class that implements Connector" in message
        # ... and says how to enable them
        assert "set filestream.connectors.enable=true" in message and "connect-file jar" in message, message
        assert call(worker, "GET", "/connectors").json() == []
