"""The snapshot's discovery of the server's tables on a server other clients change meanwhile: a database
dropped between ``SHOW DATABASES`` and its ``SHOW FULL TABLES`` is skipped with a warning, as Debezium's
``getAllTableIdsWithReadableDatabases`` skips it, instead of failing the snapshot (error 1049)."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pymysql
import pytest

from cdc.history.store import MemorySchemaHistory
from cdc.mysql.capture import CaptureContext
from cdc.mysql.config import MySqlSettings
from cdc.mysql.connection import connect
from cdc.mysql.guardrail import _all_tables
from cdc.mysql.metrics import SnapshotMetrics
from cdc.mysql.snapshot import Snapshotter
from tests.conftest import MySqlDb


class _DropAfterListing:
    """A real connection whose cursors run ``drop`` once, right after a ``SHOW DATABASES`` result was
    fetched: another client's DROP DATABASE landing between the listing and the tables' reads."""

    def __init__(self, conn: Any, drop: Any) -> None:
        self._conn, self._drop = conn, drop

    def cursor(self, *args: Any) -> Any:
        return _Cursor(self._conn.cursor(*args), self._drop)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class _Cursor:
    def __init__(self, cur: Any, drop: Any) -> None:
        self._cur, self._drop, self._listing = cur, drop, False

    def execute(self, sql: str, args: Any = None) -> Any:
        self._listing = sql.strip().upper() == "SHOW DATABASES"
        return self._cur.execute(sql, args)

    def fetchall(self) -> Any:
        rows = self._cur.fetchall()
        if self._listing:
            self._drop()
        return rows

    def __enter__(self) -> _Cursor:
        return self

    def __exit__(self, *_: object) -> None:
        self._cur.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


@pytest.fixture
def doomed(mysql_db: MySqlDb) -> Any:
    """A second database with a table, and the function that drops it (once) from another connection."""
    name = f"{mysql_db.name[:56]}_gone"
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE kept (id INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("INSERT INTO kept VALUES (1, 'a'), (2, 'b')")
        cur.execute(f"CREATE DATABASE `{name}`")
        cur.execute(f"CREATE TABLE `{name}`.lost (id INT PRIMARY KEY)")
    dropped: list[str] = []

    def drop() -> None:
        if not dropped:
            with mysql_db.connect() as other, other.cursor() as cur:
                cur.execute(f"DROP DATABASE `{name}`")
            dropped.append(name)

    try:
        yield name, drop, dropped
    finally:
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")


def _settings(db: MySqlDb, doomed_db: str) -> MySqlSettings:
    return MySqlSettings.parse(
        {
            "database.hostname": db.host,
            "database.port": str(db.port),
            "database.user": db.user,
            "database.password": db.password,
            "database.server.id": "5402",
            "topic.prefix": "p",
            "database.include.list": f"{db.name},{doomed_db}",
            "schema.history.internal.kafka.topic": "unused",
            # the captured databases' schemas only: every database's would read other tests' tables on the
            # shared server, which they may drop meanwhile (SHOW CREATE TABLE then fails, as Debezium's does)
            "schema.history.internal.store.only.captured.databases.ddl": "true",
            "snapshot.locking.mode": "none",  # nothing holds the table list still (and the server is shared)
        }
    )


def test_a_database_dropped_during_discovery_is_skipped(
    mysql_db: MySqlDb, doomed: Any, caplog: pytest.LogCaptureFixture
) -> None:
    name, drop, dropped = doomed
    settings = _settings(mysql_db, name)
    records: list[Any] = []

    def emit(batch: list[Any]) -> bool:
        records.extend(batch)
        return True

    def connect_dropping(*, streaming: bool = False) -> Any:
        return _DropAfterListing(connect(settings, streaming=streaming), drop)

    ctx = CaptureContext.build(settings, MemorySchemaHistory(), emit, threading.Event(), True)
    with caplog.at_level(logging.WARNING, logger="cdc.mysql.table_list"):
        result = Snapshotter(ctx, SnapshotMetrics(settings.prefix), connect=connect_dropping).run(data=True)
    assert dropped == [name]  # the drop did land between the listing and the tables' reads
    assert [str(t) for t in result.tables] == [f"{mysql_db.name}.kept"]
    afters = [r.value.get("after") for r in records if r.topic == f"p.{mysql_db.name}.kept" and r.value]
    assert [(a.get("id"), a.get("v")) for a in afters] == [(1, "a"), (2, "b")]
    ddl = " ".join(str(r.value.get("ddl")) for r in records if r.topic == "p" and r.value is not None)
    assert "kept" in ddl and name not in ddl
    assert f"skipping database '{name}' due to error reading tables: (1049" in caplog.text


def test_the_guardrail_count_skips_a_database_dropped_after_the_listing(
    mysql_db: MySqlDb, doomed: Any
) -> None:
    name, drop, dropped = doomed
    settings = _settings(mysql_db, name)
    conn = _DropAfterListing(connect(settings), drop)
    try:
        tables = {str(t) for t in _all_tables(conn)}
    finally:
        conn.close()
    assert dropped == [name]
    assert f"{mysql_db.name}.kept" in tables and not any(t.startswith(f"{name}.") for t in tables)


def test_a_lost_connection_still_fails_the_listing(mysql_db: MySqlDb) -> None:
    """Only the server's refusal of one database is skipped: a client error (the connection gone) is not."""
    from cdc.mysql.table_list import tables_in

    conn = connect(_settings(mysql_db, "unused"))
    cur = conn.cursor()
    conn.close()
    with pytest.raises(pymysql.err.Error):
        tables_in(cur, mysql_db.name)
