"""``notification.enabled.channels``: initial and incremental snapshot progress on the sink, log and jmx
channels, in Debezium 3.6's record shape (``io.debezium.pipeline.notification``)."""

from __future__ import annotations

import json
import logging
import random
import time
import uuid
from typing import Any

import pytest

from cdc.api.records import SourceRecord
from cdc.api.struct import Struct
from cdc.metrics import REGISTRY
from cdc.mysql.notifications import hash_set_order
from cdc.mysql.task import MariaDbSourceTask
from tests.integration.inprocess import NoOffsetsContext

pytestmark = pytest.mark.integration


def _poll(task: MariaDbSourceTask, out: list[SourceRecord], until: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not until() and time.monotonic() < deadline:
        out += task.poll() or []
    assert until(), "timed out"


def _notes(records: list[SourceRecord], topic: str, aggregate: str) -> list[Struct]:
    return [r.value for r in records if r.topic == topic and r.value.get("aggregate_type") == aggregate]


@pytest.mark.honours("notification.enabled.channels", "notification.sink.topic.name")
def test_snapshot_notifications_on_sink_log_and_jmx(
    mysql_db: Any, kafka: Any, caplog: pytest.LogCaptureFixture
) -> None:
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE a (id INT PRIMARY KEY)")
        cur.execute("CREATE TABLE b (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO a VALUES (1), (2), (3)")
        cur.execute("INSERT INTO b VALUES (1)")
        cur.execute(
            "CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
            "data VARCHAR(2048) NULL)"
        )
    prefix = kafka.topic("notes")
    topic = kafka.topic("notifications")
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(
        {
            "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
            "database.hostname": mysql_db.host,
            "database.port": str(mysql_db.port),
            "database.user": mysql_db.user,
            "database.password": mysql_db.password,
            "database.server.id": str(random.randint(100_000, 4_000_000)),
            "topic.prefix": prefix,
            "database.include.list": db,
            "table.include.list": f"{db}.a,{db}.b,{db}.debezium_signal",
            "signal.data.collection": f"{db}.debezium_signal",
            "incremental.snapshot.chunk.size": "2",
            "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
            "notification.enabled.channels": "sink,log,jmx",
            "notification.sink.topic.name": topic,
        }
    )
    records: list[SourceRecord] = []
    try:
        with caplog.at_level(logging.INFO, logger="cdc.mysql.notifications"):
            _poll(
                task,
                records,
                lambda: any(n.get("type") == "COMPLETED" for n in _notes(records, topic, "Initial Snapshot")),
            )
            signal = str(uuid.uuid4())
            with mysql_db.connect() as conn, conn.cursor() as cur:
                cur.execute(
                    "INSERT INTO debezium_signal VALUES (%s, 'execute-snapshot', %s)",
                    (signal, json.dumps({"data-collections": [f"{db}.a"], "type": "incremental"})),
                )
            _poll(
                task,
                records,
                lambda: any(
                    n.get("type") == "COMPLETED" for n in _notes(records, topic, "Incremental Snapshot")
                ),
            )
        # the jmx channel, as metrics: read while the task runs
        sent = [
            r.value
            for r in REGISTRY.readings()
            if r.name == "debezium_mysql_notifications_NumberOfNotifications" and r.labels["server"] == prefix
        ]
    finally:
        task.stop()

    initial = _notes(records, topic, "Initial Snapshot")
    tables = [f"{db}.a", f"{db}.b"]  # the signal table's rows are not snapshotted (as in Debezium)
    assert [
        (
            n.get("type"),
            n.get("additional_data").get("current_collection_in_progress")
            or n.get("additional_data").get("scanned_collection"),
        )
        for n in initial
    ] == [
        ("STARTED", None),
        *[x for t in tables for x in (("IN_PROGRESS", t), ("TABLE_SCAN_COMPLETED", t))],
        ("COMPLETED", None),
    ]
    done = initial[2].get("additional_data")
    assert done == {
        **done,
        "connector_name": prefix,
        "scanned_collection": f"{db}.a",
        "data_collections": ",".join([*tables, f"{db}.debezium_signal"]),
        "total_rows_scanned": "3",
        "status": "SUCCEEDED",
    }
    reading = initial[1].get("additional_data")["data_collections"]  # a HashSet's order in Debezium
    assert reading == ",".join(hash_set_order(tables))
    assert len({n.get("id") for n in initial}) == len(initial)  # a UUID each
    sink = next(r for r in records if r.topic == topic)
    assert sink.key_schema.name == "io.debezium.connector.common.NotificationKey"
    assert sink.key.get("id") == sink.value.get("id")
    assert sink.value_schema.name == "io.debezium.connector.common.Notification"
    assert [f.name for f in sink.value_schema.fields] == [
        "id",
        "type",
        "aggregate_type",
        "additional_data",
        "timestamp",
    ]
    assert sink.source_partition == {"server": prefix}
    # As Debezium's: the __debezium.context.* headers are on change records, not on notifications
    assert all(not r.headers.all_with_name("__debezium.context.runId") for r in records if r.topic == topic)
    data = [r for r in records if r.topic == f"{prefix}.{db}.a"]
    assert data and all(r.headers.all_with_name("__debezium.context.runId") for r in data)

    incremental = _notes(records, topic, "Incremental Snapshot")
    kinds = [n.get("type") for n in incremental]
    assert kinds[0] == "STARTED" and kinds[-2:] == ["TABLE_SCAN_COMPLETED", "COMPLETED"], kinds
    assert set(kinds[1:-2]) == {"IN_PROGRESS"} and len(kinds[1:-2]) == 2  # chunks of 2 of 3 rows
    assert {n.get("id") for n in incremental} == {signal}
    progress = incremental[1].get("additional_data")
    assert progress["current_collection_in_progress"] == f"{db}.a"
    assert progress["maximum_key"] == "3" and progress["last_processed_key"] == "2"
    scan = incremental[-2].get("additional_data")
    assert (scan["status"], scan["total_rows_scanned"]) == ("SUCCEEDED", "3")

    assert sent == [len(initial) + len(incremental)]
    lines = [
        r.getMessage() for r in caplog.records if r.getMessage().startswith("[Notification Service]  {id='")
    ]
    assert len(lines) == len(initial) + len(incremental)
    assert "aggregateType='Initial Snapshot', type='STARTED', additionalData={connector_name=" in lines[0]
