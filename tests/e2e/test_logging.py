"""A worker's log as users configure and steer it: ``log.format=json``, the ``[name|task-N]`` context on
every line a connector's threads write (the MySQL snapshot's and binlog reader's included), and the Java
logger names of ``PUT /admin/loggers`` changing what is logged."""

from __future__ import annotations

import json
import time
from typing import Any

import requests
from worker_process import WorkerProcess, free_port, seed_properties, wait_for


def lines(worker: WorkerProcess, start: int = 0) -> list[dict[str, Any]]:
    text = worker.log_path.read_text(encoding="utf-8", errors="replace")[start:]
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_java_logger_names_and_json_lines(
    tmp_path: Any, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    port = free_port()
    props = seed_properties(
        "connect-standalone.properties",
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "offset.storage.file.filename": str(tmp_path / "offsets"),
        },
        {"listeners": f"http://127.0.0.1:{port}", "log.format": "json"},
    )
    worker = WorkerProcess(["standalone", str(props)], port, tmp_path / "worker.log")
    workers.append(worker)
    worker.start()
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40))")
        cur.executemany("INSERT INTO items (name) VALUES (%s)", [(f"n{i}",) for i in range(20)])
    prefix = kafka.topic("lg")
    for topic in (f"{prefix}-items", f"{prefix}.history", f"{prefix}.{mysql_db.name}.items"):
        kafka.topic(topic)
    configs = {
        "lg-jdbc": {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}",
            "connection.user": mysql_db.user,
            "connection.password": mysql_db.password,
            "mode": "incrementing",
            "incrementing.column.name": "id",
            "topic.prefix": f"{prefix}-",
            "poll.interval.ms": "200",
        },
        "lg-mysql": {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "database.hostname": mysql_db.host,
            "database.port": str(mysql_db.port),
            "database.user": mysql_db.user,
            "database.password": mysql_db.password,
            "database.server.id": "23457",
            "topic.prefix": prefix,
            "database.include.list": mysql_db.name,
            "schema.history.internal.kafka.topic": prefix + ".history",
            "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
            "include.schema.changes": "false",
        },
    }
    for name, config in configs.items():
        assert (
            requests.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=30).status_code == 201
        )
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
        ("DEBUG", "lg-jdbc", 0, "cdc.jdbc.querier")
    }
    assert (
        requests.get(f"{worker.url}/admin/loggers/io.confluent.connect.jdbc", timeout=30).json()["level"]
        == "DEBUG"
    )
    # Debezium's name was not touched: the MySQL source stays at INFO.
    assert not [
        line for line in lines(worker) if line["level"] == "DEBUG" and line["logger"].startswith("cdc.mysql")
    ]

    r = requests.put(
        f"{worker.url}/admin/loggers/io.confluent.connect.jdbc", json={"level": "ERROR"}, timeout=30
    )
    assert r.status_code == 200
    time.sleep(0.5)
    mark = worker.log_path.stat().st_size
    time.sleep(2)
    assert not [line for line in lines(worker, mark) if line["logger"].startswith("cdc.jdbc")]
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
        line for line in everything if line["logger"].startswith(("cdc.mysql", "cdc.jdbc", "cdc.history"))
    ]
    assert of_connectors and all(line.get("connector") in configs for line in of_connectors), [
        line for line in of_connectors if line.get("connector") not in configs
    ]
    threads = {line["thread"] for line in of_connectors if line.get("connector") == "lg-mysql"}
    assert any(t.startswith("mysql-capture") for t in threads), threads  # the snapshot/binlog thread
