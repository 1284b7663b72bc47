"""The worker's internal topics (connector configs with their passwords, offsets, statuses) are out of reach
of a connector config given over REST (cdc/worker/internal_topics.py).

Against a real distributed worker with basic authentication on the stack's broker:

* a sink whose ``topics`` names the config topic, or whose ``topics.regex`` matches it, would read every
  connector's config, passwords included: create answers 400 naming the key, validate puts the error there;
* a schema history topic, a dead letter queue or a connector's own offsets topic naming one would write into
  it: 400 naming the key (a connector's offsets topic may still be the worker's offsets topic, as in Connect);
* a transform routing a source's records into the status topic (only the records say where they go): the
  task FAILS on the first such record, naming the topic, and no record of it reaches the topic.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from attack import call, distributed_worker
from faultkit import mysql_connector
from worker_process import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

CANARY = "internal-topic-canary"


def _refused(worker: WorkerProcess, name: str, config: dict[str, str], key: str, topic: str) -> None:
    response = call(worker, "POST", "/connectors", json={"name": name, "config": config})
    assert response.status_code == 400, response.text
    message = response.json()["message"]
    assert f"{key}: " in message and topic in message and "internal topic" in message, message
    plugin = config["connector.class"].rsplit(".", 1)[-1]
    infos = call(worker, "PUT", f"/connector-plugins/{plugin}/config/validate", json={**config, "name": name})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos.json()["configs"]}
    assert any("internal topic" in e for e in errors.get(key, [])), errors.get(key)


def test_connector_configs_cannot_read_or_write_the_workers_internal_topics(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], mysql_db: Any
) -> None:
    worker = distributed_worker(tmp_path, kafka, workers, "internal")
    configs, offsets, status = (kafka.topic(f"internal-{t}") for t in ("configs", "offsets", "status"))
    sink = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "connection.url": "jdbc:postgresql://127.0.0.1:5432/cdc",
        "connection.user": "cdc",
        "connection.password": "cdc",
        "auto.create": "true",
    }
    _refused(worker, "steal-1", {**sink, "topics": f"orders,{configs}"}, "topics", configs)
    _refused(worker, "steal-2", {**sink, "topics.regex": ".*configs"}, "topics.regex", configs)
    dlq = {
        **sink,
        "topics": "orders",
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": status,
    }
    _refused(worker, "forge-1", dlq, "errors.deadletterqueue.topic.name", status)
    prefix = kafka.topic("int")
    source = mysql_connector(mysql_db, prefix, kafka.bootstrap_servers)
    history = {**source, "schema.history.internal.kafka.topic": configs}
    _refused(worker, "forge-2", history, "schema.history.internal.kafka.topic", configs)
    own = {**source, "offsets.storage.topic": status}
    _refused(worker, "forge-3", own, "offsets.storage.topic", status)
    # the worker's offsets topic as a connector's own stays allowed (Connect's exactly-once default)
    infos = call(
        worker,
        "PUT",
        "/connector-plugins/MySqlConnector/config/validate",
        json={**source, "name": "own-offsets", "offsets.storage.topic": offsets},
    ).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert "offsets.storage.topic" not in errors, errors
    assert call(worker, "GET", "/connectors").json() == []

    # a transform routes every record into the status topic: the task fails before producing any
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT PRIMARY KEY, payload VARCHAR(40))")
        cur.executemany("INSERT INTO items VALUES (%s, %s)", [(i, CANARY) for i in range(1, 6)])
    routed = {
        **source,
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": ".*",
        "transforms.route.replacement": status,
    }
    response = call(worker, "POST", "/connectors", json={"name": "routed", "config": routed})
    assert response.status_code == 201, response.text

    def failed() -> dict[str, Any] | None:
        tasks = call(worker, "GET", "/connectors/routed/status").json().get("tasks") or []
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    wait_for(lambda: failed() is not None, 90, "the routed task FAILED")
    trace = (failed() or {}).get("trace", "")
    assert f"bound for {status}" in trace and "internal topics" in trace, trace
    time.sleep(2)
    values = [m.value() or b"" for m in kafka.read_to_end(status)]
    assert values, "the worker wrote no status at all"
    assert not any(CANARY.encode() in v for v in values)
