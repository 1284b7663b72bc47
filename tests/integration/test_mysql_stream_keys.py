"""Debezium keys of the binlog stream, each shown acting on the real stack: ``heartbeat.action.query`` (and
heartbeats that follow the binlog while the captured tables are idle), ``streaming.delay.ms``."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from cdc.api.records import SourceRecord
from cdc.mysql.task import MariaDbSourceTask
from tests.integration.inprocess import NoOffsetsContext

pytestmark = pytest.mark.integration


def _config(mysql_db: Any, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(100_000, 4_000_000)),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "snapshot.mode": "no_data",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **extra,
    }


@pytest.mark.honours("heartbeat.action.query", "heartbeat.interval.ms")
def test_heartbeat_action_query_moves_the_offset_of_an_idle_capture(mysql_db: Any, kafka: Any) -> None:
    """The captured table stays idle; the action query writes to a table that is not captured, so the binlog
    moves, and each heartbeat carries the position after those writes (why Debezium users set the key)."""
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE captured (id INT PRIMARY KEY)")
        cur.execute("CREATE TABLE hb (id INT PRIMARY KEY, beats INT)")
        cur.execute("INSERT INTO hb VALUES (1, 0)")
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(
        _config(
            mysql_db,
            kafka.topic("hb"),
            **{
                "table.include.list": f"{db}.captured",
                "heartbeat.interval.ms": "300",
                "heartbeat.action.query": f"UPDATE `{db}`.hb SET beats = beats + 1 WHERE id = 1",
            },
        )
    )
    heartbeats: list[SourceRecord] = []
    data: list[SourceRecord] = []
    try:
        deadline = time.monotonic() + 60
        while len(heartbeats) < 8 and time.monotonic() < deadline:
            for record in task.poll() or []:
                (heartbeats if record.topic.startswith("__debezium-heartbeat") else data).append(record)
    finally:
        task.stop()
    assert len(heartbeats) >= 8
    # Debezium's heartbeats carry no __debezium.context.* headers (its change records do)
    assert [list(r.headers) for r in heartbeats] == [[]] * len(heartbeats)
    assert data and all(any(h.key == "__debezium.context.runId" for h in r.headers) for r in data)
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT beats FROM hb WHERE id = 1")
        assert cur.fetchone()[0] >= 7  # the action ran with the heartbeats
    assert not [r for r in data if r.topic.endswith(".captured")]
    positions = [(r.source_offset["file"], r.source_offset["pos"]) for r in heartbeats[1:]]
    assert positions == sorted(positions) and len(set(positions)) >= len(positions) - 1, positions
    gtids = [r.source_offset.get("gtids") for r in heartbeats[1:]]
    assert len(set(gtids)) >= len(gtids) - 1, gtids  # each beat's update is in the next beat's GTID set


@pytest.mark.honours("streaming.delay.ms")
def test_streaming_delay_ms_waits_after_the_snapshot(mysql_db: Any, kafka: Any) -> None:
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    started = time.monotonic()
    task.start(_config(mysql_db, kafka.topic("delay"), **{"streaming.delay.ms": "4000"}))
    try:
        records: list[SourceRecord] = []
        inserted = None
        deadline = time.monotonic() + 60
        while not any(r.topic.endswith(f"{db}.t") for r in records) and time.monotonic() < deadline:
            records += task.poll() or []
            if inserted is None and records:  # the schema-only snapshot ended: write a row at once
                with mysql_db.connect() as conn, conn.cursor() as cur:
                    cur.execute("INSERT INTO t VALUES (1)")
                inserted = time.monotonic()
        arrived = time.monotonic()
    finally:
        task.stop()
    assert inserted is not None and any(r.topic.endswith(f"{db}.t") for r in records)
    assert arrived - started >= 4.0  # the row waited for streaming to start
    assert arrived - inserted >= 2.5, arrived - inserted
