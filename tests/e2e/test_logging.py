"""A worker's log as users configure and steer it: ``log.format=json``, the ``[name|task-N]`` context on
every line a connector's threads write (the MySQL snapshot's and binlog reader's included), and the Java
logger names of ``PUT /admin/loggers`` changing what is logged; each line's logger is the Java class users
route on (``io.debezium.connector.mysql.*``, ``org.apache.kafka.connect.runtime.*``) where cdc's module has
one."""

from __future__ import annotations

import json
import time
from typing import Any

import requests
from worker_process import WorkerProcess, items_sources, standalone_worker, wait_for

from cdc.logs.java_names import java_name


def lines(worker: WorkerProcess, start: int = 0) -> list[dict[str, Any]]:
    text = worker.log_path.read_text(encoding="utf-8", errors="replace")[start:]
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_java_logger_names_and_json_lines(
    tmp_path: Any, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers, **{"log.format": "json"})
    _prefix, configs = items_sources(worker, kafka, mysql_db, "lg", 23457)
    wait_for(
        lambda: any(
            "snapshot" in line["message"].lower() and line.get("task") == 0 for line in lines(worker)
        ),
        60,
        "the MySQL snapshot's log lines",
    )
    # The JDBC querier logs its query at DEBUG: nothing of it at the default INFO.
    time.sleep(1)
    assert not [line for line in lines(worker) if line["message"].startswith("Begin using SQL query")]

    r = requests.put(
        f"{worker.url}/admin/loggers/io.confluent.connect.jdbc", json={"level": "DEBUG"}, timeout=30
    )
    assert r.status_code == 200, r.text
    assert {"io.confluent.connect.jdbc", "cdc.jdbc"} <= set(r.json())
    debug = wait_for(
        lambda: [line for line in lines(worker) if line["message"].startswith("Begin using SQL query")],
        30,
        "the JDBC querier's DEBUG lines",
    )
    assert {(d["level"], d["connector"], d["task"], d["logger"]) for d in debug} == {
        ("DEBUG", "lg-jdbc", 0, "io.confluent.connect.jdbc.source.TableQuerier")
    }
    assert (
        requests.get(f"{worker.url}/admin/loggers/io.confluent.connect.jdbc", timeout=30).json()["level"]
        == "DEBUG"
    )
    # Debezium's name was not touched: the MySQL source stays at INFO.
    assert not [
        line
        for line in lines(worker)
        if line["level"] == "DEBUG" and line["logger"].startswith("io.debezium")
    ]

    r = requests.put(
        f"{worker.url}/admin/loggers/io.confluent.connect.jdbc", json={"level": "ERROR"}, timeout=30
    )
    assert r.status_code == 200
    time.sleep(0.5)
    mark = worker.log_path.stat().st_size
    time.sleep(2)
    assert not [
        line for line in lines(worker, mark) if line["logger"].startswith("io.confluent.connect.jdbc")
    ]
    listed = requests.get(f"{worker.url}/admin/loggers", timeout=30).json()
    assert listed["io.confluent.connect.jdbc"]["level"] == "ERROR"
    assert listed["io.debezium"]["level"] == "INFO"
    r = requests.get(f"{worker.url}/admin/loggers/com.example.Nothing", timeout=30)
    assert r.status_code == 404
    assert r.json() == {"error_code": 404, "message": "Logger com.example.Nothing not found."}

    # Every line a connector's code wrote carries its context; levels are log4j's names.
    everything = lines(worker)
    assert {line["level"] for line in everything} <= {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}
    of_connectors = [
        line for line in everything if line["logger"].startswith(("io.debezium", "io.confluent.connect.jdbc"))
    ]
    assert of_connectors and all(line.get("connector") in configs for line in of_connectors), [
        line for line in of_connectors if line.get("connector") not in configs
    ]
    threads = {line["thread"] for line in of_connectors if line.get("connector") == "lg-mysql"}
    assert any(t.startswith("mysql-capture") for t in threads), threads  # the snapshot/binlog thread

    # The loggers are the Java classes whose work the lines describe; no cdc module that has one shows its
    # Python name.
    loggers = {line["logger"] for line in everything}
    assert {
        "io.debezium.connector.mysql.MySqlConnectorTask",
        "io.debezium.connector.mysql.MySqlSnapshotChangeEventSource",
        "io.confluent.connect.jdbc.source.JdbcSourceTask",
        "org.apache.kafka.connect.runtime.Worker",
        "org.apache.kafka.connect.runtime.rest.RestServer",
        "io.debezium.storage.kafka.history.KafkaSchemaHistory",
    } <= loggers, sorted(loggers)
    assert not [name for name in loggers if name.startswith("cdc.") and java_name(name) != name], loggers
