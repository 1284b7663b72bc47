"""Run-time mistakes on the writer's side that would otherwise corrupt a topic in silence (issue #26).

A standalone worker in the test's process streams a table of the test's own; a second session on the
shared MariaDB then writes with settings a DBA or an application may set for itself:

- ``binlog_row_image=MINIMAL``: an update's images hold only the key (before) and the changed column
  (after). Decoded as full rows they made a delete of the row, its tombstone and a create of id 0. By default
  the task now FAILS with the table, the binlog position and the fix in its trace, and nothing of the event
  reaches the topic (a restart stops at the same event: its offset was never committed); with
  ``event.processing.failure.handling.mode=warn`` the event is skipped with a WARN naming its position and
  counted in ``NumberOfErroneousEvents`` and ``cdc_mysql_streaming_partial_row_images``.
- ``binlog_row_image=NOBLOB``: the unchanged TEXT and BLOB columns are left out; they are emitted as
  Debezium's ``unavailable.value.placeholder``, never as NULL or empty.
- ``binlog_format=STATEMENT``: the update is a statement, not rows: a WARN with the position and
  ``cdc_mysql_streaming_statement_events``; the task keeps running.

Each runs on both reader paths: the fast reader (:mod:`cdc.mysql.binlog`) and mysql-replication's events.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client import generate_latest

from cdc.mysql.binlog import BinlogReader
from cdc.worker.rest.metrics import exposition
from cdc.worker.runtime import ConnectRuntime
from tests.integration.inprocess import standalone

pytestmark = pytest.mark.integration

PLACEHOLDER = "__debezium_unavailable_value"


@pytest.fixture(params=["fast", "library"])
def reader_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "library":
        # Every rows event goes to mysql-replication's own event classes.
        monkeypatch.setattr(BinlogReader, "_rows", lambda self, data, etype: None)
    return str(request.param)


@pytest.fixture
def worker(tmp_path: Path, kafka: Any) -> Iterator[ConnectRuntime]:
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter.schemas.enable": "false",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "300",
            "listeners": "http://127.0.0.1:0",
        }
    ) as runtime:
        yield runtime


def _setup(mysql_db: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, "
            "email VARCHAR(80), notes TEXT, photo BLOB)"
        )
        cur.execute(
            "INSERT INTO customers VALUES (1, 'Ann', 'ann@x', 'n1', 'p1'), (2, 'Bob', 'bob@x', 'n2', 'p2'), "
            "(3, 'Cy', 'cy@x', 'n3', 'p3')"
        )


def _start(worker: ConnectRuntime, mysql_db: Any, prefix: str, **extra: str) -> str:
    name = f"bad-day-{prefix[-12:]}"
    config = {
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "tasks.max": "1",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(100_000, 4_000_000)),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **extra,
    }
    base = worker.url.rstrip("/")
    response = requests.post(f"{base}/connectors", json={"name": name, "config": config}, timeout=60)
    assert response.status_code in (200, 201), response.text
    _wait_state(worker, name, "RUNNING", 60)
    return name


def _status(worker: ConnectRuntime, name: str) -> dict[str, Any]:
    base = worker.url.rstrip("/")
    response = requests.get(f"{base}/connectors/{name}/status", timeout=30)
    return dict(response.json()) if response.ok else {}


def _wait_state(worker: ConnectRuntime, name: str, state: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    task: dict[str, Any] = {}
    while time.monotonic() < deadline:
        tasks = _status(worker, name).get("tasks", [])
        task = tasks[0] if tasks else {}
        if task.get("state") == state:
            return task
        if task.get("state") == "FAILED":
            pytest.fail(f"task of {name} failed: {task.get('trace')}")
        time.sleep(0.3)
    pytest.fail(f"task of {name} not {state} after {timeout} s: {task}")


def _values(kafka: Any, topic: str, count: int, timeout: float = 60) -> list[Any]:
    """At least ``count`` messages' values (None for tombstones)."""
    deadline = time.monotonic() + timeout
    values: list[Any] = []
    while time.monotonic() < deadline:
        messages = kafka.read_to_end(topic, timeout=30)
        values = [None if m.value() is None else json.loads(m.value()) for m in messages]
        if len(values) >= count:
            return values
        time.sleep(0.5)
    pytest.fail(f"{topic}: {len(values)} messages after {timeout} s, expected {count}: {values}")


def _write(mysql_db: Any, session: str, *statements: str) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(session)
        for statement in statements:
            cur.execute(statement)


def _metric(prefix: str, name: str, **labels: str) -> float | None:
    """The value of ``name`` whose labels include ``server=prefix`` and ``labels`` (other labels, such as
    ``connector``, may be there too)."""
    from prometheus_client.parser import text_string_to_metric_families

    wanted = {"server": prefix, **labels}
    rendered = generate_latest(exposition(None)).decode()
    for family in text_string_to_metric_families(rendered):
        for sample in family.samples:
            if sample.name == name and wanted.items() <= sample.labels.items():
                return float(sample.value)
    return None


def _binlog_end(mysql_db: Any) -> tuple[str, int]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
    return str(row[0]), int(row[1])


def test_minimal_row_image_fails_the_task_before_emitting_anything(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, reader_path: str
) -> None:
    _setup(mysql_db)
    prefix = kafka.topic("minimal")
    topic = f"{prefix}.{mysql_db.name}.customers"
    name = _start(worker, mysql_db, prefix)
    assert len(_values(kafka, topic, 3)) == 3  # the snapshot
    _write(mysql_db, "SET SESSION binlog_row_image=FULL", "UPDATE customers SET name='Cyd' WHERE id=3")
    assert _values(kafka, topic, 4)[-1]["after"]["name"] == "Cyd"
    file, pos = _binlog_end(mysql_db)
    _write(mysql_db, "SET SESSION binlog_row_image=MINIMAL", "UPDATE customers SET name='Bo' WHERE id=2")
    task = _wait_state_failed(worker, name)
    trace = task["trace"]
    assert f"{mysql_db.name}.customers" in trace and "binlog_row_image=FULL" in trace, trace
    at = re.search(rf"binlog event at {re.escape(file)}:(\d+) for table", trace)
    assert at is not None and int(at.group(1)) >= pos, trace  # the MINIMAL update's own event
    assert "id, email, notes, photo missing from the after image" in trace, trace
    assert _task_failed_metric(worker, name)
    # Nothing of the event was emitted: no delete of id 2, no tombstone, no create of id 0.
    time.sleep(1.5)
    values = _values(kafka, topic, 4)
    assert len(values) == 4, values
    assert all(v is not None and v["op"] in ("r", "u") for v in values), values
    # Its offset was never committed: the restarted task stops at the same event again.
    base = worker.url.rstrip("/")
    restart = requests.post(f"{base}/connectors/{name}/tasks/0/restart", timeout=30)
    assert restart.status_code in (200, 202, 204), restart.text
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tasks = _status(worker, name).get("tasks", [])
        if tasks and tasks[0]["state"] == "FAILED" and "Partial row image" in tasks[0].get("trace", ""):
            break
        time.sleep(0.3)
    else:
        pytest.fail(f"the restarted task did not fail at the same event: {_status(worker, name)}")
    assert len(_values(kafka, topic, 4)) == 4


def _task_failed_metric(worker: ConnectRuntime, name: str) -> bool:
    """/metrics shows the task FAILED (Connect's task status metric, as Strimzi's rule names it)."""
    text = requests.get(f"{worker.url.rstrip('/')}/metrics", timeout=30).text
    return any(
        line.startswith("kafka_connect_connector_task_status{")
        and f'connector="{name}"' in line
        and 'status="failed"' in line
        and line.endswith(" 1.0")
        for line in text.splitlines()
    )


def _wait_state_failed(worker: ConnectRuntime, name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tasks = _status(worker, name).get("tasks", [])
        if tasks and tasks[0]["state"] == "FAILED":
            return dict(tasks[0])
        time.sleep(0.3)
    pytest.fail(f"task of {name} still not FAILED: {_status(worker, name)}")


@pytest.mark.honours("event.processing.failure.handling.mode")
def test_minimal_row_image_in_warn_mode_skips_the_event_with_its_position(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, reader_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="cdc.mysql.streaming")
    _setup(mysql_db)
    prefix = kafka.topic("warn")
    topic = f"{prefix}.{mysql_db.name}.customers"
    name = _start(worker, mysql_db, prefix, **{"event.processing.failure.handling.mode": "warn"})
    assert len(_values(kafka, topic, 3)) == 3
    file, _ = _binlog_end(mysql_db)
    _write(mysql_db, "SET SESSION binlog_row_image=MINIMAL", "UPDATE customers SET name='Bo' WHERE id=2")
    _write(mysql_db, "SET SESSION binlog_row_image=FULL", "UPDATE customers SET name='Cyd' WHERE id=3")
    values = _values(kafka, topic, 4)
    time.sleep(1.0)
    values = _values(kafka, topic, 4)
    assert len(values) == 4, values  # the MINIMAL update was skipped, the FULL one captured
    assert values[-1]["op"] == "u" and values[-1]["after"]["id"] == 3, values[-1]
    warnings = [r.getMessage() for r in caplog.records if "Partial row image" in r.getMessage()]
    assert warnings and f"Skipping the binlog event at {file}:" in warnings[0], warnings
    assert f"{mysql_db.name}.customers" in warnings[0]
    assert _metric(prefix, "debezium_mysql_streaming_NumberOfErroneousEvents") == 1.0
    table = f"{mysql_db.name}.customers"
    assert _metric(prefix, "cdc_mysql_streaming_partial_row_images_total", table=table) == 1.0
    assert _wait_state(worker, name, "RUNNING", 5)["state"] == "RUNNING"


def test_noblob_row_image_emits_the_unavailable_value_placeholder(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, reader_path: str
) -> None:
    _setup(mysql_db)
    prefix = kafka.topic("noblob")
    topic = f"{prefix}.{mysql_db.name}.customers"
    _start(worker, mysql_db, prefix)
    assert len(_values(kafka, topic, 3)) == 3
    _write(
        mysql_db,
        "SET SESSION binlog_row_image=NOBLOB",
        "UPDATE customers SET name='Bo' WHERE id=2",
        "UPDATE customers SET notes='changed' WHERE id=1",
        "DELETE FROM customers WHERE id=3",
    )
    values = _values(kafka, topic, 7)  # two updates, the delete and its tombstone
    first, second, deleted = values[3], values[4], values[5]
    raw = base64.b64encode(PLACEHOLDER.encode()).decode()  # a BLOB's bytes, base64 in JSON
    assert first["op"] == "u", first
    assert first["before"] == {"id": 2, "name": "Bob", "email": "bob@x", "notes": PLACEHOLDER, "photo": raw}
    assert first["after"] == {"id": 2, "name": "Bo", "email": "bob@x", "notes": PLACEHOLDER, "photo": raw}
    # A changed TEXT column is in the image: its value, not the placeholder.
    assert second["after"] == {"id": 1, "name": "Ann", "email": "ann@x", "notes": "changed", "photo": raw}
    assert deleted["op"] == "d" and values[6] is None, values[5:]
    assert deleted["before"] == {"id": 3, "name": "Cy", "email": "cy@x", "notes": PLACEHOLDER, "photo": raw}
    assert _metric(prefix, "cdc_mysql_streaming_unavailable_values_total") == 9.0


def test_statement_based_dml_on_a_captured_table_warns_with_the_position(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="cdc.mysql.streaming")
    _setup(mysql_db)
    prefix = kafka.topic("statement")
    topic = f"{prefix}.{mysql_db.name}.customers"
    name = _start(worker, mysql_db, prefix)
    assert len(_values(kafka, topic, 3)) == 3
    file, _ = _binlog_end(mysql_db)
    _write(mysql_db, "SET SESSION binlog_format=STATEMENT", "UPDATE customers SET name='Bo' WHERE id=2")
    _write(mysql_db, "SET SESSION binlog_format=ROW", "UPDATE customers SET name='Cyd' WHERE id=3")
    values = _values(kafka, topic, 4)
    assert values[-1]["after"]["id"] == 3
    table = f"{mysql_db.name}.customers"
    warnings = [r.getMessage() for r in caplog.records if "Statement-based DML" in r.getMessage()]
    assert warnings and f"{table} at {file}:" in warnings[0] and "binlog_format=ROW" in warnings[0], warnings
    assert _metric(prefix, "cdc_mysql_streaming_statement_events_total", table=table) == 1.0
    assert _wait_state(worker, name, "RUNNING", 5)["state"] == "RUNNING"


@pytest.mark.honours("post.processors", "unavailable.value.placeholder")
def test_reselect_post_processor_reads_the_columns_noblob_left_out(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any
) -> None:
    """Debezium's ReselectColumnsPostProcessor: the placeholder of a column NOBLOB left out is replaced by
    the row's current value, read again, for the columns its include list selects (photo is not)."""
    _setup(mysql_db)
    prefix = kafka.topic("reselect")
    topic = f"{prefix}.{mysql_db.name}.customers"
    _start(
        worker,
        mysql_db,
        prefix,
        **{
            "post.processors": "reselector",
            "reselector.type": "io.debezium.processors.reselect.ReselectColumnsPostProcessor",
            "reselector.reselect.columns.include.list": f"{mysql_db.name}\\.customers:(notes|email)",
            "reselector.reselect.unavailable.values": "true",
            "reselector.reselect.null.values": "false",
            "unavailable.value.placeholder": "__gone",  # what NOBLOB left out is written as, and reselected
        },
    )
    assert len(_values(kafka, topic, 3)) == 3
    _write(
        mysql_db,
        "SET SESSION binlog_row_image=NOBLOB",
        "UPDATE customers SET name='Bo', email=NULL WHERE id=2",
    )
    (update,) = _values(kafka, topic, 4)[3:]
    raw = base64.b64encode(b"__gone").decode()
    assert update["op"] == "u"
    # notes re-read; photo not selected; email is NULL but null values are not re-selected here
    assert update["after"] == {"id": 2, "name": "Bo", "email": None, "notes": "n2", "photo": raw}
    assert update["before"]["notes"] == "__gone"  # only after is re-selected, as Debezium does
