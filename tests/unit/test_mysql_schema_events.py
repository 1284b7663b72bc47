"""Schema change events of DDL of another database: written under Debezium's default
(``schema.history.internal.store.only.captured.databases.ddl=false``, as the history records them), left out
when that key is on, whether the statement names the database or runs in it."""

from __future__ import annotations

import pytest

from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import EventFactory, SourcePosition
from cdc.mysql.schema_events import SchemaChangeEvents, ddl_database

BASE = {
    "database.hostname": "localhost",
    "database.user": "u",
    "database.password": "p",
    "database.server.id": "1",
    "topic.prefix": "p",
    "database.include.list": "inventory",
}


@pytest.mark.parametrize(
    ("ddl", "database"),
    [
        ("DROP TABLE IF EXISTS bench.x", "bench"),
        ("drop table `my db`.`t`", "my db"),
        ("CREATE DATABASE foo", "foo"),
        ("drop schema if exists z", "z"),
        ("ALTER TABLE a.b ADD c INT", "a"),
        ("CREATE TABLE IF NOT EXISTS s.t (a int)", "s"),
        ("DROP TABLE t", None),
        ("FLUSH PRIVILEGES", None),
    ],
)
def test_ddl_database(ddl: str, database: str | None) -> None:
    assert ddl_database(ddl) == database


def _events(**extra: str) -> SchemaChangeEvents:
    settings = MySqlSettings.parse({**BASE, **extra})
    return SchemaChangeEvents(settings, EventFactory(settings))


def test_a_ddl_of_another_database_is_written_under_debeziums_default() -> None:
    pos = SourcePosition("binlog.000001", 4, 1, 1, None, 0)
    events = _events()
    other = events.records("DROP TABLE IF EXISTS bench.x", None, [], pos, {"pos": 4})
    assert len(other) == 1 and other[0].key.values == ["bench"]
    run_there = events.records("CREATE TABLE t (a INT)", "bench", [], pos, {"pos": 4})
    assert len(run_there) == 1 and run_there[0].key.values == ["bench"]


def test_only_the_captured_databases_ddl_when_the_history_stores_only_theirs() -> None:
    pos = SourcePosition("binlog.000001", 4, 1, 1, None, 0)
    events = _events(**{"schema.history.internal.store.only.captured.databases.ddl": "true"})
    assert events.records("DROP TABLE IF EXISTS bench.x", None, [], pos, {"pos": 4}) == []
    assert events.records("CREATE TABLE t (a INT)", "bench", [], pos, {"pos": 4}) == []
    captured = events.records("DROP TABLE IF EXISTS inventory.x", None, [], pos, {"pos": 4})
    assert len(captured) == 1 and captured[0].key.values == ["inventory"]
