"""The status page's routes (behind the API's authentication) and what its JSON computes from the metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from test_rest_api import FakeHerder
from test_security_rest import basic

from cdc.metrics import Reading
from cdc.worker.rest import RestSettings, create_app
from cdc.worker.status_view import SAMPLE_EVERY_S, StatusView
from cdc.worker.stores.base import TargetState


def herder_with(**configs: dict[str, str]) -> FakeHerder:
    herder = FakeHerder()
    for name, config in configs.items():
        herder.configs[name] = config
        herder.states[name] = TargetState.STARTED
    return herder


def test_ui_needs_the_same_credentials_as_the_api(tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("alice=wonder land\n", encoding="utf-8")
    settings = RestSettings.from_properties(
        {"listeners": "http://127.0.0.1:0", "rest.basic.auth.credentials.file": str(users)}, environ={}
    )
    client = TestClient(create_app(herder_with(orders={"connector.class": "FileStreamSource"}), settings))
    for path in ("/ui", "/ui/status"):
        assert client.get(path).status_code == 401
        assert client.get(path, headers=basic("alice", "nope")).status_code == 401
    page = client.get("/ui", headers=basic("alice", "wonder land"))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "cdc worker status" in page.text and "ui/status" in page.text
    status = client.get("/ui/status", headers=basic("alice", "wonder land")).json()
    assert [c["name"] for c in status["connectors"]] == ["orders"]
    assert status["connectors"][0]["state"] == "RUNNING"
    assert client.post("/ui", headers=basic("alice", "wonder land")).status_code == 405  # read-only


def test_lag_snapshot_eta_rates_and_history() -> None:
    herder = herder_with(
        shop={"connector.class": "io.debezium.connector.mysql.MySqlConnector", "topic.prefix": "srv"},
        poll={"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector"},
    )
    server = {"server": "srv"}
    readings: list[Reading] = [
        Reading(
            "kafka_connect_source_task_metrics_source_record_write_rate",
            120.0,
            {"connector": "shop", "task": "0"},
        ),
        Reading("debezium_mysql_streaming_MilliSecondsBehindSource", -1, server),
        Reading("debezium_mysql_snapshot_TotalTableCount", 2, server),
        Reading("debezium_mysql_snapshot_RemainingTableCount", 1, server),
        Reading("debezium_mysql_snapshot_SnapshotRunning", 1, server),
        Reading("debezium_mysql_snapshot_SnapshotCompleted", 0, server),
        Reading("debezium_mysql_snapshot_SnapshotDurationInSeconds", 10, server),
        Reading("debezium_mysql_snapshot_RowsScanned", 800, {**server, "table": "db.a"}),
        Reading("debezium_mysql_snapshot_RowsScanned", 200, {**server, "table": "db.b"}),
        Reading("cdc_mysql_snapshot_estimated_rows", 800, {**server, "table": "db.a"}),
        Reading("cdc_mysql_snapshot_estimated_rows", 1200, {**server, "table": "db.b"}),
        Reading("cdc_jdbc_source_poll_age_seconds", 1.5, {"connector": "poll", "task": "0", "table": "db.x"}),
        Reading("cdc_jdbc_source_poll_age_seconds", 4.0, {"connector": "poll", "task": "0", "table": "db.y"}),
    ]
    now = [1000.0]
    view = StatusView(herder, lambda: readings, clock=lambda: now[0])
    first = {c["name"]: c for c in view.status()["connectors"]}
    shop, poll = first["shop"], first["poll"]
    assert shop["events_per_s"] == 120.0 and shop["lag_ms"] is None  # -1: nothing streamed yet
    assert shop["lag_kind"] == "MilliSecondsBehindSource"
    snap: dict[str, Any] = shop["snapshot"]
    assert (snap["rows"], snap["total"], snap["tables_done"], snap["tables"]) == (1000, 2000, 1, 2)
    assert snap["rows_per_s"] == 100.0 and snap["eta_s"] == 10.0 and snap["fraction"] == 0.5
    assert poll["lag_ms"] == 4000.0 and poll["lag_kind"] == "poll age" and poll["snapshot"] is None
    assert poll["events_per_s"] is None
    # history: a point per sample interval, not per request
    view.status()
    now[0] += SAMPLE_EVERY_S
    readings[1] = Reading("debezium_mysql_streaming_MilliSecondsBehindSource", 250, server)
    shop = {c["name"]: c for c in view.status()["connectors"]}["shop"]
    assert shop["history"] == [[1000.0, 120.0, None], [1000.0 + SAMPLE_EVERY_S, 120.0, 250]]


def test_events_per_s_drops_to_0_when_the_totals_stop_moving() -> None:
    herder = herder_with(shop={"connector.class": "io.debezium.connector.mysql.MySqlConnector"})
    task = {"connector": "shop", "task": "0"}
    total = [0.0]

    def readings() -> list[Reading]:  # Connect's minute-long rate still remembers the burst
        return [
            Reading("kafka_connect_source_task_metrics_source_record_write_rate", 50.0, task),
            Reading("kafka_connect_source_task_metrics_source_record_write", total[0], task, counter=True),
        ]

    now = [1000.0]
    view = StatusView(herder, readings, clock=lambda: now[0])
    assert view.status()["connectors"][0]["events_per_s"] == 50.0  # one reading: Connect's rate
    now[0] += 2
    total[0] = 400
    assert view.status()["connectors"][0]["events_per_s"] == 200.0
    for _ in range(6):  # idle for 12 s
        now[0] += 2
        rate = view.status()["connectors"][0]["events_per_s"]
    assert rate == 0.0


def test_incremental_snapshot_total_is_its_tables_rows_not_the_rows_read() -> None:
    """snapshot.mode=no_data: no estimate from an initial snapshot; the incremental one's tables count."""
    herder = herder_with(
        shop={"connector.class": "io.debezium.connector.mysql.MySqlConnector", "topic.prefix": "srv"}
    )
    server = {"server": "srv", "connector": "shop"}
    readings = [
        Reading("debezium_mysql_snapshot_TotalTableCount", 1, server),
        Reading("debezium_mysql_snapshot_RemainingTableCount", 1, server),
        Reading("debezium_mysql_snapshot_SnapshotRunning", 1, server),
        Reading("debezium_mysql_snapshot_SnapshotCompleted", 0, server),
        Reading("debezium_mysql_snapshot_SnapshotDurationInSeconds", 5, server),
        Reading("debezium_mysql_snapshot_CapturedTables", 1, {**server, "table": "db.items"}),
        Reading("debezium_mysql_snapshot_RowsScanned", 250, {**server, "table": "db.items"}),
        Reading("cdc_mysql_snapshot_estimated_rows", 1000, {**server, "table": "db.items"}),
        Reading("cdc_mysql_snapshot_estimated_rows", 9000, {**server, "table": "db.old"}),  # not read now
        Reading("debezium_mysql_streaming_BinlogFilename", 1, {**server, "value": "binlog.000007"}),
        Reading("debezium_mysql_streaming_BinlogPosition", 4242, server),
        Reading("debezium_mysql_streaming_GtidSet", 1, {**server, "value": "0-1-99"}),
    ]
    shop = StatusView(herder, lambda: readings).status()["connectors"][0]
    snap = shop["snapshot"]
    assert (snap["rows"], snap["total"], snap["fraction"]) == (250, 1000, 0.25)
    assert snap["rows_per_s"] == 50.0 and snap["eta_s"] == 15.0
    assert shop["binlog"] == {"file": "binlog.000007", "position": 4242, "gtid_set": "0-1-99"}
    readings[6] = Reading("debezium_mysql_snapshot_RowsScanned", 1200, {**server, "table": "db.items"})
    snap = StatusView(herder, lambda: readings).status()["connectors"][0]["snapshot"]
    assert snap["total"] == 1200 and snap["fraction"] == 0.99  # a low estimate: not "100 %" until done
