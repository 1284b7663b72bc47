"""The Spark session of a run takes its interpreter and network settings as session settings, never from
or into the process's environment (issue #24): a connector's ``spark.pyspark.python`` used to be written to
``os.environ["PYSPARK_PYTHON"]``, the interpreter of every later Spark job of every connector of the worker.

A real local Spark session (the JVM included): with ``spark.pyspark.python`` naming a wrapper script (it
leaves a marker, then runs this interpreter), the executors' Python workers are started through it and
the job's answer comes back; ``PYSPARK_PYTHON`` and ``SPARK_LOCAL_IP`` are what they were before; the
next session of the process, without the setting, runs this interpreter again (the wrapper is not run).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration


def test_the_interpreter_is_the_sessions_and_the_environment_stays(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    from cdc.snapshot.runners import SparkRunner

    marker = tmp_path / "wrapper-ran"
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho ran >> "{marker}"\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    before = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "SPARK_LOCAL_IP")}

    runner = SparkRunner(
        sum, "local[1]", 1, app_name="test-interpreter", conf={"spark.pyspark.python": str(wrapper)}
    )
    try:
        assert runner.sc.parallelize([(1, 2)], 1).map(sum).collect() == [3]
        assert runner.sc.getConf().get("spark.driver.bindAddress") == "127.0.0.1"
    finally:
        runner.close()
    assert marker.exists(), "the executors' Python was not the session's spark.pyspark.python"
    assert {k: os.environ.get(k) for k in before} == before

    marker.unlink()
    runner = SparkRunner(sum, "local[1]", 1, app_name="test-interpreter-2")
    try:
        assert runner.sc.parallelize([(2, 2)], 1).map(sum).collect() == [4]
        assert runner.sc.pythonExec == sys.executable
    finally:
        runner.close()
    assert not marker.exists(), "the previous session's interpreter was used again"
    assert {k: os.environ.get(k) for k in before} == before


def test_the_worker_files_spark_settings_reach_a_connectors_snapshot(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    """A worker file's ``snapshot.spark.conf.*`` (here the executors' interpreter, a wrapper that leaves a
    marker) is the session's of a ``snapshot.engine=spark`` connector, under the connector's allowed sizes;
    the snapshot writes every row."""
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    import requests

    from tests.integration.inprocess import standalone

    marker = tmp_path / "wrapper-ran"
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho ran >> "{marker}"\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    rows = 200
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)")
        cur.execute("INSERT INTO t VALUES " + ",".join(f"({i}, 'n-{i}')" for i in range(rows)))
        conn.commit()
    prefix = kafka.prefix + "wsc"
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "listeners": "http://127.0.0.1:0",
            "snapshot.spark.conf.spark.pyspark.python": str(wrapper),
            "snapshot.spark.conf.spark.sql.shuffle.partitions": "3",
        }
    ) as runtime:
        base = runtime.url.rstrip("/")
        config = {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "tasks.max": "1",
            "database.hostname": mysql_db.host,
            "database.port": str(mysql_db.port),
            "database.user": mysql_db.user,
            "database.password": mysql_db.password,
            "database.server.id": str(4_100_000 + os.getpid() % 100_000),
            "topic.prefix": prefix,
            "database.include.list": mysql_db.name,
            "schema.history.internal.kafka.topic": f"{prefix}.history",
            "snapshot.engine": "spark",
            "snapshot.spark.master": "local[1]",
            "snapshot.spark.encoder": "python",
            "snapshot.spark.state.dir": str(tmp_path / "state"),
            "snapshot.spark.conf.spark.sql.shuffle.partitions": "2",
        }
        response = requests.post(f"{base}/connectors", json={"name": "wsc", "config": config}, timeout=60)
        assert response.status_code == 201, response.text
        topic = f"{prefix}.{mysql_db.name}.t"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            status = requests.get(f"{base}/connectors/wsc/status", timeout=10).json()
            tasks = status.get("tasks", [])
            assert not (tasks and tasks[0]["state"] == "FAILED"), tasks[0].get("trace")
            if len(kafka.read_to_end(topic, timeout=5)) >= rows:
                break
            time.sleep(2)
        assert len(kafka.read_to_end(topic, timeout=10)) == rows
    assert marker.exists(), "the worker file's spark.pyspark.python did not reach the session"
