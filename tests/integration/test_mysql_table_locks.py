"""The snapshot's table-lock path: when the global read lock cannot be had (another session holds a
lock; RDS forbids FTWRL), the snapshot locks its tables instead, reads them under those locks, and the
connector then streams — including when the captured database holds tables it does not capture.
"""

from __future__ import annotations

import json
import logging
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


def _run(tmp_path: Path, kafka: Any, mysql_db: Any, name: str, extra: dict[str, str]) -> Any:
    from cdc.worker.runtime import build_standalone

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
    prefix = kafka.prefix + name
    runtime.herder.put_connector_config(
        name,
        {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "database.hostname": mysql_db.host,
            "database.port": str(mysql_db.port),
            "database.user": mysql_db.user,
            "database.password": mysql_db.password,
            "database.server.id": str(random.randint(10_000, 90_000)),
            "topic.prefix": prefix,
            "database.include.list": mysql_db.name,
            "schema.history.internal.kafka.topic": prefix + ".history",
            "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
            **extra,
        },
        allow_replace=False,
    )
    return runtime, prefix


def _wait_rows(kafka: Any, topic: str, n: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    events: list[dict[str, Any]] = []
    while time.monotonic() < deadline and len(events) < n:
        if topic in kafka.admin.list_topics(timeout=10).topics:
            events = [json.loads(m.value()) for m in kafka.read_to_end(topic) if m.value()]
        time.sleep(0.5)
    return events


def test_snapshot_records_other_databases(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    """``schema.history.internal.store.only.captured.databases.ddl`` is false by default: the snapshot
    writes the schema of the server's other databases to the history and the schema change topic, as
    Debezium's does (and the table-lock path reads their CREATE TABLE after the data, unlocked)."""
    other = f"{mysql_db.name}_y"
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE captured (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO captured VALUES (1)")
        cur.execute(f"CREATE DATABASE `{other}`")
        cur.execute(f"CREATE TABLE `{other}`.elsewhere (id INT PRIMARY KEY)")
    runtime, prefix = _run(tmp_path, kafka, mysql_db, "everydb", {})
    try:
        assert [e["op"] for e in _wait_rows(kafka, f"{prefix}.{mysql_db.name}.captured", 1)] == ["r"]
        history = [json.loads(m.value()) for m in kafka.read_to_end(prefix + ".history")]
        mine = [h["ddl"].split("(")[0].strip() for h in history if h["databaseName"] == other]
        assert "CREATE TABLE `elsewhere`" in mine, mine
        assert f"DROP DATABASE IF EXISTS `{other}`" in mine, mine
        changes = [json.loads(m.value()) for m in kafka.read_to_end(prefix)]
        assert any(c["databaseName"] == other and "elsewhere" in c["ddl"] for c in changes)
    finally:
        runtime.stop()
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{other}`")


def test_minimal_percona_backup_lock(
    tmp_path: Path, kafka: Any, mysql_db: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """``minimal_percona`` asks for ``LOCK TABLES FOR BACKUP`` (Debezium's MinimalPerconaSnapshotLock), never
    ``FLUSH TABLES WITH READ LOCK``; MariaDB does not know the statement, and the snapshot falls back to
    table locks, as Debezium's does when its lock statement fails."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE captured (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO captured VALUES (1), (2)")
    caplog.set_level(logging.INFO, logger="cdc.mysql.snapshot")
    runtime, prefix = _run(tmp_path, kafka, mysql_db, "percona", {"snapshot.locking.mode": "minimal_percona"})
    try:
        events = _wait_rows(kafka, f"{prefix}.{mysql_db.name}.captured", 2)
        assert [e["after"]["id"] for e in events] == [1, 2]
        fallback = [r.getMessage() for r in caplog.records if "using table locks" in r.getMessage()]
        assert fallback and "FOR BACKUP" in fallback[0], [r.getMessage() for r in caplog.records]
    finally:
        runtime.stop()
