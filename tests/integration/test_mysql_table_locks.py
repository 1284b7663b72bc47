"""The snapshot's table-lock path: when the global read lock cannot be had (another session holds a
lock; RDS forbids FTWRL), the snapshot locks its tables instead, reads them under those locks, and the
connector then streams — including when the captured database holds tables it does not capture.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest


@pytest.mark.honours("snapshot.lock.timeout.ms")
def test_snapshot_falls_back_to_table_locks(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    from cdc.worker.runtime import build_standalone

    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE captured (id INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("CREATE TABLE other (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO captured VALUES (1, 'a'), (2, 'b')")
        cur.execute(f"CREATE DATABASE `{mysql_db.name}_x`")
        cur.execute(f"CREATE TABLE `{mysql_db.name}_x`.blocker (id INT PRIMARY KEY)")
    # A second session holds a write lock on a table of a database the connector does not capture:
    # FLUSH TABLES WITH READ LOCK waits for it and times out; the table locks do not need it.
    holder = pymysql.connect(
        host=mysql_db.host,
        port=mysql_db.port,
        user=mysql_db.user,
        password=mysql_db.password,
        database=f"{mysql_db.name}_x",
    )
    holder.cursor().execute("LOCK TABLES blocker WRITE")
    prefix = kafka.prefix + "locks"
    runtime = build_standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter.schemas.enable": "false",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
        }
    )
    runtime.start()
    try:
        runtime.herder.put_connector_config(
            "locks",
            {
                "connector.class": "io.debezium.connector.mysql.MySqlConnector",
                "database.hostname": mysql_db.host,
                "database.port": str(mysql_db.port),
                "database.user": mysql_db.user,
                "database.password": mysql_db.password,
                "database.server.id": str(random.randint(10_000, 90_000)),
                "topic.prefix": prefix,
                "database.include.list": mysql_db.name,
                "table.include.list": f"{mysql_db.name}.captured",
                "snapshot.lock.timeout.ms": "1000",
                "schema.history.internal.kafka.topic": prefix + ".history",
                "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
            },
            allow_replace=False,
        )
        topic = f"{prefix}.{mysql_db.name}.captured"
        deadline = time.monotonic() + 60
        events: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            if topic in kafka.admin.list_topics(timeout=10).topics:
                events = [json.loads(m.value()) for m in kafka.read_to_end(topic) if m.value()]
                if len(events) >= 2:
                    break
            time.sleep(0.5)
        assert [(e["op"], e["after"]["id"]) for e in events] == [("r", 1), ("r", 2)]
        status = runtime.herder.connector_status("locks")
        assert status["tasks"][0]["state"] == "RUNNING", status
        holder.cursor().execute("UNLOCK TABLES")
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO captured VALUES (3, 'c')")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(events) < 3:
            events = [json.loads(m.value()) for m in kafka.read_to_end(topic) if m.value()]
            time.sleep(0.5)
        assert [(e["op"], e["after"]["id"]) for e in events][2:] == [("c", 3)]
    finally:
        holder.close()
        runtime.stop()
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{mysql_db.name}_x`")
