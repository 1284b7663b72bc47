"""``GET /metrics`` of a worker process running a MySQL (Debezium) and a JDBC source on the same tables.

The exposition must parse with ``prometheus_client``'s parser and pass ``promtool check metrics`` (when
Debian's prometheus package is installed; only its naming lint may speak, the names being the JMX
exporter's and Debezium's), and carry, while both run: Connect's worker, connector and task metrics,
Debezium's snapshot/streaming metrics, and the JDBC source's per-table metrics with the table in a label
(escaped: the table name has a quote and a backslash).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from worker_process import (
    REPO,
    WorkerProcess,
    jdbc_source,
    mysql_source,
    put_connectors,
    standalone_worker,
    wait_for,
)

# A table name Prometheus must escape inside a label value.
ODD_TABLE = 'odd"t\\able'


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(
    parsed: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float | None:
    return parsed.get((name, frozenset(labels.items())))


@pytest.fixture
def worker(tmp_path: Any, kafka: Any, workers: list[WorkerProcess]) -> WorkerProcess:
    return standalone_worker(tmp_path, kafka, workers, **{"offset.flush.interval.ms": "1000"})


def test_metrics_of_mysql_and_jdbc_sources(
    worker: WorkerProcess, mysql_db: Any, kafka: Any, tmp_path: Any
) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40))")
        cur.execute(
            f"CREATE TABLE `{ODD_TABLE.replace('`', '``')}` (id INT AUTO_INCREMENT PRIMARY KEY, v INT)"
        )
        cur.executemany("INSERT INTO items (name) VALUES (%s)", [(f"n{i}",) for i in range(50)])
        cur.execute(f"INSERT INTO `{ODD_TABLE}` (v) VALUES (1), (2)")
    prefix = kafka.topic("mx")
    kafka.topic(prefix + ".history")
    kafka.topic(f"{prefix}.{mysql_db.name}.items")
    kafka.topic(f"{prefix}-jdbc-items")
    kafka.topic(f"{prefix}-jdbc-odd")
    mysql = mysql_source(
        mysql_db, prefix, kafka.bootstrap_servers, 23456, **{"table.include.list": f"{mysql_db.name}.items"}
    )
    jdbc = jdbc_source(
        mysql_db,
        f"{prefix}-jdbc-",
        **{
            "poll.interval.ms": "500",
            "tasks.max": "1",
            # No topic may be named after the odd table: its records go to one of a valid name.
            "transforms": "odd",
            "transforms.odd.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.odd.regex": ".*-jdbc-odd.*",
            "transforms.odd.replacement": f"{prefix}-jdbc-odd",
        },
    )
    sink = {
        "connector.class": "FileStreamSink",
        "file": str(tmp_path / "sink.txt"),
        "topics": f"{prefix}-jdbc-items",
    }
    put_connectors(worker, {"mx-mysql": mysql, "mx-jdbc": jdbc, "mx-sink": sink})

    def ready() -> dict[Any, float] | None:
        r = worker.get("/metrics")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/plain; version=")
        parsed = samples(r.text)
        writes = [
            value(
                parsed, "kafka_connect_source_task_metrics_source_record_write_total", connector=c, task="0"
            )
            for c in ("mx-mysql", "mx-jdbc")
        ]
        jdbc_rows = value(
            parsed,
            "cdc_jdbc_source_rows_total",
            connector="mx-jdbc",
            task="0",
            table=f"{mysql_db.name}.items",
        )
        done = value(parsed, "debezium_mysql_snapshot_SnapshotCompleted", server=prefix, connector="mx-mysql")
        sunk = value(
            parsed, "kafka_connect_sink_task_metrics_sink_record_send_total", connector="mx-sink", task="0"
        )
        if all(writes) and jdbc_rows == 50 and done == 1 and sunk == 50:
            return parsed
        return None

    parsed = wait_for(ready, 120, "both sources' metrics")
    text = worker.get("/metrics").text

    # Connect's worker, connector and task metrics
    assert value(parsed, "kafka_connect_connect_worker_metrics_connector_count") == 3
    assert value(parsed, "kafka_connect_connect_worker_metrics_task_count") == 3
    assert value(parsed, "kafka_connect_connect_worker_metrics_task_startup_success_total") == 3
    assert (
        value(
            parsed, "kafka_connect_connect_worker_metrics_connector_running_task_count", connector="mx-jdbc"
        )
        == 1
    )
    for connector in ("mx-mysql", "mx-jdbc"):
        assert (
            value(
                parsed,
                "kafka_connect_connector_status",
                connector=connector,
                status="running",
                connector_type="source",
            )
            == 1
        )
        task = {"connector": connector, "task": "0"}
        assert value(parsed, "kafka_connect_connector_task_status", status="running", **task) == 1
        assert value(parsed, "kafka_connect_source_task_metrics_source_record_poll_total", **task) >= 50  # type: ignore[operator]
        assert value(parsed, "kafka_connect_source_task_metrics_source_record_poll_rate", **task) > 0  # type: ignore[operator]
    # the sink's: everything read was put, nothing left behind the end
    sink_task = {"connector": "mx-sink", "task": "0"}
    assert value(parsed, "kafka_connect_sink_task_metrics_sink_record_read_total", **sink_task) == 50
    assert value(parsed, "kafka_connect_sink_task_metrics_partition_count", **sink_task) == 1
    assert value(parsed, "kafka_connect_sink_task_metrics_sink_record_lag_max", **sink_task) == 0
    assert (
        value(
            parsed,
            "kafka_connect_connector_status",
            connector="mx-sink",
            status="running",
            connector_type="sink",
        )
        == 1
    )
    # offsets are committed every second: a commit succeeded and none failed
    wait_for(
        lambda: (
            (
                value(
                    samples(worker.get("/metrics").text),
                    "cdc_connector_task_offset_commit_total",
                    connector="mx-jdbc",
                    task="0",
                    outcome="success",
                )
                or 0
            )
            >= 1
        ),
        30,
        "an offset commit",
    )
    assert (
        value(
            parsed,
            "kafka_connect_connector_task_metrics_offset_commit_failure_percentage",
            connector="mx-jdbc",
            task="0",
        )
        == 0
    )
    assert value(parsed, "kafka_connect_connect_worker_rebalance_metrics_completed_rebalances_total") == 0

    # Debezium's, per table with the table in a label, and the connector's name next to the server
    dbz = {"server": prefix, "connector": "mx-mysql"}
    assert value(parsed, "debezium_mysql_snapshot_RowsScanned", table=f"{mysql_db.name}.items", **dbz) == 50
    assert value(parsed, "debezium_mysql_streaming_Connected", **dbz) == 1

    # the JDBC source's, with a table name that must be escaped
    odd = {"connector": "mx-jdbc", "task": "0", "table": f"{mysql_db.name}.{ODD_TABLE}"}
    assert value(parsed, "cdc_jdbc_source_rows_total", **odd) == 2
    assert value(parsed, "cdc_jdbc_source_polls_total", **odd) >= 1  # type: ignore[operator]
    assert 0 <= value(parsed, "cdc_jdbc_source_poll_age_seconds", **odd) < 60  # type: ignore[operator]
    assert 'table="' + f"{mysql_db.name}." + 'odd\\"t\\\\able"' in text
    assert "# TYPE cdc_jdbc_source_rows_total counter" in text

    # a streamed change moves Debezium's counters
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO items (name) VALUES ('late')")
    wait_for(
        lambda: (
            value(
                samples(worker.get("/metrics").text),
                "debezium_mysql_streaming_TotalNumberOfCreateEventsSeen",
                **dbz,
            )
            == 1
        ),
        30,
        "the streamed insert in the metrics",
    )

    # every metric docs/grafana-dashboard.json reads is exported
    dashboard = json.loads((REPO / "docs" / "grafana-dashboard.json").read_text())
    wanted = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\b((?:kafka_connect|debezium_mysql|cdc)_[A-Za-z0-9_]+)", target["expr"])
    }
    exported = {s.name for family in text_string_to_metric_families(text) for s in family.samples}
    assert wanted and wanted - exported == set()

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus); the parser passed")
    check = subprocess.run(
        [promtool, "check", "metrics"], input=text.encode(), capture_output=True, timeout=60
    )
    # Exit 1 is a parse error; 3 only lint findings. The names are the JMX exporter's and Debezium's
    # (camelCase, ``_count`` and ``_ms`` suffixes) on purpose, so only those naming findings may appear.
    allowed = (
        "metric names should be written in 'snake_case' not 'camelCase'",
        'non-histogram and non-summary metrics should not have "_count" suffix',
        "metric names should not contain abbreviated units",
    )
    findings = (check.stdout + check.stderr).decode().splitlines()
    assert check.returncode in (0, 3), findings
    assert [f for f in findings if not f.endswith(allowed)] == []


@pytest.mark.honours("custom.metric.tags")
def test_debezium_series_carry_the_connector_and_go_with_it(
    worker: WorkerProcess, mysql_db: Any, kafka: Any
) -> None:
    """A MySQL connector's Debezium series carry ``connector="<name>"`` (next to the MBean's ``server``),
    also under the JMX exporter's default-rule names; the process' own metrics are there; once the
    connector is stopped its Debezium series are gone, and after DELETE none of its series is left.
    ``custom.metric.tags`` pairs are labels on every one of them (Debezium appends them to the MBean name)."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40))")
        cur.executemany("INSERT INTO items (name) VALUES (%s)", [(f"n{i}",) for i in range(5)])
    prefix = kafka.topic("mxl")
    kafka.topic(prefix + ".history")
    kafka.topic(f"{prefix}.{mysql_db.name}.items")
    name = "mxl-mysql"
    tags = {"custom.metric.tags": "env=prod, team-a=cdc"}
    put_connectors(worker, {name: mysql_source(mysql_db, prefix, kafka.bootstrap_servers, 23462, **tags)})
    mine = {"server": prefix, "connector": name, "env": "prod", "team_a": "cdc"}

    def streaming() -> dict[Any, float] | None:
        parsed = samples(worker.get("/metrics").text)
        done = value(parsed, "debezium_mysql_snapshot_SnapshotCompleted", **mine)
        connected = value(parsed, "debezium_mysql_streaming_Connected", **mine)
        at = [labels for (n, labels) in parsed if n == "debezium_mysql_streaming_BinlogFilename"]
        return parsed if done == 1 and connected == 1 and at else None

    parsed = wait_for(streaming, 120, "the snapshot done and the binlog reader at a file")
    text = worker.get("/metrics").text
    table = f"{mysql_db.name}.items"
    assert value(parsed, "debezium_mysql_snapshot_RowsScanned", table=table, **mine) == 5
    assert value(parsed, "cdc_mysql_snapshot_estimated_rows", table=table, **mine) is not None
    # the JMX exporter's default rule: domain, the first key's value, the attribute; the other keys as labels
    assert value(parsed, "debezium_mysql_connector_metrics_Connected", context="streaming", **mine) == 1
    assert (
        value(parsed, "debezium_mysql_connector_metrics_SnapshotCompleted", context="snapshot", **mine) == 1
    )
    server_series = [(n, dict(labels)) for (n, labels) in parsed if dict(labels).get("server") == prefix]
    assert server_series and all(labels.get("connector") == name for _, labels in server_series)
    assert all(labels.get("env") == "prod" for _, labels in server_series)
    # the process' own, as every Prometheus client library exports them
    assert (value(parsed, "process_cpu_seconds_total") or 0) > 0
    assert (value(parsed, "process_resident_memory_bytes") or 0) > 0
    assert (value(parsed, "process_open_fds") or 0) > 0
    assert "# TYPE process_cpu_seconds_total counter" in text

    # stopped (Connect's PUT /stop: no task runs), the Debezium series go
    r = requests.put(f"{worker.url}/connectors/{name}/stop", auth=worker.auth, timeout=30)
    assert r.status_code == 204, r.text

    def stopped() -> bool:
        parsed = samples(worker.get("/metrics").text)
        return not [n for (n, labels) in parsed if dict(labels).get("server") == prefix]

    wait_for(stopped, 30, f"no Debezium series of {name} left once stopped")

    r = requests.delete(f"{worker.url}/connectors/{name}", auth=worker.auth, timeout=30)
    assert r.status_code == 204, r.text

    def gone() -> bool:
        left = [
            (n, dict(labels))
            for (n, labels) in samples(worker.get("/metrics").text)
            if dict(labels).get("server") == prefix or dict(labels).get("connector") == name
        ]
        return not left

    wait_for(gone, 30, f"no series of {name} left after DELETE")
