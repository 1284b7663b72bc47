"""``snapshot.engine=auto``, the default: the connector picks its snapshot engine by the server's row
estimate of the captured tables and the cores, in a real worker against the stack.

- the estimate is the server's (``information_schema.tables``) for the captured tables only;
- a connector without ``snapshot.engine`` on a small table reads it with the local reader (the task logs
  the choice and its reason; Spark is not started);
- the same connector, when the break-even is lowered below the table's size, starts Spark: the
  records are written by the Spark engine and its end offset is committed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from cdc.mysql import snapshot_engine
from cdc.mysql.config import MySqlSettings
from cdc.worker.runtime import ConnectRuntime, build_distributed

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException):
            last = predicate()
            if last:
                return last
        time.sleep(1.0)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")


@pytest.fixture
def worker(kafka: Any) -> Iterator[ConnectRuntime]:
    port = _free_port()
    runtime = build_distributed(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": f"{kafka.prefix}connect",
            "config.storage.topic": f"{kafka.prefix}configs",
            "offset.storage.topic": f"{kafka.prefix}offsets",
            "status.storage.topic": f"{kafka.prefix}status",
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "offset.storage.partitions": "1",
            "status.storage.partitions": "1",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter.schemas.enable": "false",
            "offset.flush.interval.ms": "500",
            "task.shutdown.graceful.timeout.ms": "15000",
            "connector.file.allowed.paths": tempfile.gettempdir(),
            "listeners": f"http://127.0.0.1:{port}",
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(port),
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "scheduled.rebalance.max.delay.ms": "0",
        }
    )
    runtime.start()
    try:
        _wait(lambda: requests.get(f"{runtime.url.rstrip('/')}/connectors", timeout=5).ok, 60, "the REST API")
        yield runtime
    finally:
        runtime.stop()


def _table(mysql_db: Any, name: str, rows: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL)")
        for start in range(0, rows, 1000):
            values = ",".join(f"({i}, 'v{i}')" for i in range(start + 1, min(rows, start + 1000) + 1))
            cur.execute(f"INSERT INTO {name} VALUES {values}")
        cur.execute(f"ANALYZE TABLE {name}")
        cur.fetchall()


def _config(mysql_db: Any, prefix: str, **extra: str) -> dict[str, str]:
    """The connector's config without ``snapshot.engine``: its default decides."""
    return {
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "tasks.max": "1",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(100_000, 4_000_000)),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal.kafka.topic": f"{prefix}.history",
        **extra,
    }


def _run(
    worker: ConnectRuntime, kafka: Any, name: str, config: dict[str, str], topic: str, rows: int
) -> None:
    base = worker.url.rstrip("/")
    response = requests.post(f"{base}/connectors", json={"name": name, "config": config}, timeout=30)
    assert response.status_code in (200, 201), response.text

    def written() -> bool:
        status = requests.get(f"{base}/connectors/{name}/status", timeout=10).json()
        tasks = status.get("tasks", [])
        if tasks and tasks[0]["state"] == "FAILED":
            pytest.fail(f"task failed: {tasks[0].get('trace')}")
        return len(list(kafka.read_to_end(topic, timeout=30))) >= rows

    _wait(written, 400, f"{rows} records in {topic}")
    ids = [int(json.loads(m.key())["id"]) for m in kafka.read_to_end(topic, timeout=30)]
    assert sorted(ids) == list(range(1, rows + 1))


def test_the_estimate_is_the_servers_for_the_captured_tables(mysql_db: Any) -> None:
    _table(mysql_db, "big", 3000)
    _table(mysql_db, "small", 10)
    settings = MySqlSettings.parse(_config(mysql_db, "p", **{"table.include.list": f"{mysql_db.name}.big"}))
    estimate = snapshot_engine.estimated_rows(settings)
    assert 1500 <= estimate <= 6000  # InnoDB's estimate of 3000 rows; the other table is not captured
    choice = snapshot_engine.resolve_engine(settings, spark_installed=lambda: True, cpus=2)
    assert choice.engine == "local" and f"about {estimate:,} rows" in choice.reason


def test_the_default_reads_a_small_table_locally(
    mysql_db: Any, kafka: Any, worker: ConnectRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="cdc.mysql.task")
    _table(mysql_db, "t", 500)
    prefix = kafka.prefix + "auto"
    _run(worker, kafka, "auto-local", _config(mysql_db, prefix), f"{prefix}.{mysql_db.name}.t", 500)
    assert "Snapshot engine: local (snapshot.engine=auto: " in caplog.text
    assert "Snapshot on Spark" not in caplog.text


@pytest.mark.timeout(600)  # about a minute; Spark's start-up in the worker is slow on a busy machine
def test_the_default_starts_spark_above_the_break_even(
    mysql_db: Any,
    kafka: Any,
    worker: ConnectRuntime,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A machine on which Spark starts in next to no time: its break-even falls below 2 000 rows, so the
    default engine of a connector on a 2 000-row table is Spark (the same connector config as above)."""
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    monkeypatch.setattr(snapshot_engine, "SPARK_START_S", 0.01)
    worth = snapshot_engine.spark_worth_rows(2)
    assert worth is not None and worth < 2000
    caplog.set_level(logging.INFO, logger="cdc.mysql")
    _table(mysql_db, "t", 2000)
    prefix = kafka.prefix + "autospark"
    config = _config(
        mysql_db,
        prefix,
        **{"snapshot.spark.master": "local[2]", "snapshot.spark.state.dir": str(tmp_path / "state")},
    )
    _run(worker, kafka, "auto-spark", config, f"{prefix}.{mysql_db.name}.t", 2000)
    assert "Snapshot engine: spark (snapshot.engine=auto: about " in caplog.text
    assert "Snapshot on Spark (local[2]" in caplog.text
