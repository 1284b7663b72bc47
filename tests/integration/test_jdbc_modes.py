"""The JDBC source per mode and database (MariaDB, PostgreSQL, SQLite), connector and task driven directly.

Each test gets a database of its own. The scenario per mode: three rows with one timestamp read in
batches of two (an equal-timestamp group across a batch boundary); a row inserted and one updated
between polls; a restart from the last record's offset (as the worker would have committed it) with
one more row and one whose timestamp lies in the future; and, per database, a table created while the
connector runs. Query mode runs the same scenario, incrementing and timestamp+incrementing, over a custom
``query`` (a sub-select, the form Confluent's docs give for appending its WHERE clause): one task, topic
``topic.prefix`` alone, partition ``{"query": "query"}``, an unnamed value struct.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cdc.api.offsets import partition_key
from cdc.jdbc.connector import JdbcSourceConnector
from cdc.jdbc.task import JdbcSourceTask

pytestmark = pytest.mark.integration

PG_HOST, PG_PORT = "127.0.0.1", 5432

DDL = {
    "mysql": "CREATE TABLE {t} (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL, "
    "modified DATETIME(3) NOT NULL)",
    "postgresql": "CREATE TABLE {t} (id SERIAL PRIMARY KEY, name VARCHAR(64) NOT NULL, "
    "modified TIMESTAMP(3) NOT NULL)",
    "sqlite": "CREATE TABLE {t} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, modified TIMESTAMP NOT NULL)",
}


@dataclass
class Db:
    flavour: str
    url: str
    run: Callable[[str], None]


@pytest.fixture(params=["mysql", "postgresql", "sqlite"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    flavour = request.param
    if flavour == "mysql":
        mysql_db = request.getfixturevalue("mysql_db")

        def run_mysql(sql: str) -> None:
            with mysql_db.connect() as conn, conn.cursor() as cur:
                cur.execute(sql)

        yield Db(
            flavour,
            f"jdbc:mariadb://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}?user=cdc&password=cdc",
            run_mysql,
        )
    elif flavour == "postgresql":
        request.getfixturevalue("stack")
        name = f"t_{uuid.uuid4().hex[:12]}"
        admin = dict(host=PG_HOST, port=PG_PORT, user="cdc", password="cdc", autocommit=True)
        with psycopg.connect(dbname="cdc", **admin) as conn:  # type: ignore[arg-type]
            conn.execute(f"CREATE DATABASE {name}")

        def run_pg(sql: str) -> None:
            with psycopg.connect(dbname=name, **admin) as conn:  # type: ignore[arg-type]
                conn.execute(sql)

        try:
            yield Db(flavour, f"jdbc:postgresql://{PG_HOST}:{PG_PORT}/{name}?user=cdc&password=cdc", run_pg)
        finally:
            with psycopg.connect(dbname="cdc", **admin) as conn:  # type: ignore[arg-type]
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    else:
        path = tmp_path / "db.sqlite"

        def run_sqlite(sql: str) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute(sql)

        yield Db(flavour, f"jdbc:sqlite:{path}", run_sqlite)


class _Reader:
    def __init__(self, stored: dict[str, Any]) -> None:
        self.stored = stored

    def offsets(self, partitions: Any) -> dict[str, Any]:
        return {k: v for k, v in self.stored.items() if k in {partition_key(p) for p in partitions}}

    def offset(self, partition: Any) -> Any:
        return self.stored.get(partition_key(partition))


class _Ctx:
    def __init__(self, stored: dict[str, Any] | None = None) -> None:
        self.reader = _Reader(stored or {})
        self.reconfigurations = 0

    def offset_storage_reader(self) -> Any:
        return self.reader

    def task_index(self) -> int:
        return 0

    def configs(self) -> dict[str, str]:
        return {}

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, error: BaseException) -> None:
        raise error


_RUNNING: list[JdbcSourceTask] = []


@pytest.fixture(autouse=True)
def _stop_tasks() -> Iterator[None]:
    """Tasks left running would hold their transactions open and block dropping the database."""
    yield
    while _RUNNING:
        _RUNNING.pop().stop()


def _start_task(config: dict[str, str], stored: dict[str, Any] | None = None) -> JdbcSourceTask:
    task = JdbcSourceTask(max_wait_s=0.3)
    task.initialize(_Ctx(stored))  # type: ignore[arg-type]
    task.start(config)
    _RUNNING.append(task)
    return task


def _poll(task: JdbcSourceTask, expected: int, timeout: float = 20, exact: bool = False) -> list[Any]:
    """What the task returns until ``expected`` records came and three polls brought nothing more
    (``exact``: stop at ``expected``, for bulk mode, which sends the whole table every poll)."""
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < deadline and (len(out) < expected or (quiet < 3 and not exact)):
        batch = task.poll()
        if batch:
            out.extend(batch)
            quiet = 0
        else:
            quiet += 1
    return out


def _names(records: list[Any]) -> list[str]:
    return [r.value.get("name") for r in records]


QUERY = "SELECT * FROM (SELECT id, name, modified FROM items) AS q"


@pytest.mark.parametrize(
    "mode",
    [
        "incrementing",
        "timestamp",
        "timestamp+incrementing",
        "bulk",
        "query:incrementing",
        "query:timestamp+incrementing",
    ],
)
def test_mode(db: Db, mode: str) -> None:
    query = mode.startswith("query:")
    mode = mode.removeprefix("query:")
    db.run(DDL[db.flavour].format(t="items"))
    for name in "abc":
        db.run(f"INSERT INTO items(name, modified) VALUES ('{name}', '2020-01-01 00:00:01.000')")
    props = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": db.url,
        "mode": mode,
        "topic.prefix": "p-",
        "batch.max.rows": "2",
        "poll.interval.ms": "100",
        "tasks.max": "3",
    }
    if mode != "bulk":
        props["incrementing.column.name" if mode == "incrementing" else "timestamp.column.name"] = (
            "id" if mode == "incrementing" else "modified"
        )
    if mode == "timestamp+incrementing":
        props["incrementing.column.name"] = "id"
    if query:
        props["query"] = QUERY
    connector = JdbcSourceConnector()
    connector.initialize(_Ctx())  # type: ignore[arg-type]
    connector.start(props)
    try:
        (config,) = connector.task_configs(3)
    finally:
        connector.stop()
    quote = "`" if db.flavour == "mysql" else '"'
    assert config["tables"] == "" if query else config["tables"].endswith(f"{quote}items{quote}")

    task = _start_task(config)
    first = _poll(task, 3, exact=mode == "bulk")
    if query:
        assert first[0].value_schema.name is None and first[0].topic == "p-"
        assert first[0].source_partition == {"query": "query"}
    else:
        assert first[0].value_schema.name == "items" and first[0].topic == "p-items"
    if mode == "bulk":
        assert sorted(_names(first)) == ["a", "b", "c"]
        assert first[0].source_partition == {"table": "items"} and first[0].source_offset is None
    else:
        assert _names(first) == ["a", "b", "c"]
    if not query and mode != "bulk":
        assert first[0].source_partition["protocol"] == "1"
        assert first[0].source_partition["table"].endswith("items")
    if mode == "timestamp":  # the T1 group completes only with the last row (batch boundary after b)
        assert [r.source_offset["timestamp"] for r in first] == [0, 0, 1577836801000]

    db.run("INSERT INTO items(name, modified) VALUES ('d', '2020-01-01 00:00:02.000')")
    db.run("UPDATE items SET name = 'a2', modified = '2020-01-01 00:00:03.000' WHERE name = 'a'")
    expected = {
        "incrementing": ["d"],
        "timestamp": ["d", "a2"],
        "timestamp+incrementing": ["d", "a2"],
        "bulk": ["a2", "b", "c", "d"],
    }[mode]
    second = _poll(task, len(expected), exact=mode == "bulk")
    assert sorted(_names(second)) == sorted(expected) if mode == "bulk" else _names(second) == expected
    task.stop()

    # a restart: the worker committed the offset of the last record it sent
    last = second[-1]
    stored = {} if mode == "bulk" else {partition_key(last.source_partition): dict(last.source_offset)}
    db.run("INSERT INTO items(name, modified) VALUES ('e', '2020-01-01 00:00:04.000')")
    db.run("INSERT INTO items(name, modified) VALUES ('future', '2999-01-01 00:00:00.000')")
    task = _start_task(config, stored)
    third = _poll(task, 2 if mode == "incrementing" else (6 if mode == "bulk" else 1), exact=mode == "bulk")
    task.stop()
    if mode == "incrementing":
        assert _names(third) == ["e", "future"]  # no time window in incrementing mode
    elif mode == "bulk":
        assert sorted(_names(third)) == ["a2", "b", "c", "d", "e", "future"]
    else:
        assert _names(third) == ["e"]  # no loss, no duplicate, the future row waits for the clock


def test_table_added_while_running(db: Db) -> None:
    db.run(DDL[db.flavour].format(t="first_t"))
    props = {
        "connector.class": "JdbcSourceConnector",
        "connection.url": db.url,
        "mode": "incrementing",
        "topic.prefix": "p-",
        "table.poll.interval.ms": "200",
        "tasks.max": "4",
    }
    ctx = _Ctx()
    connector = JdbcSourceConnector()
    connector.initialize(ctx)  # type: ignore[arg-type]
    connector.start(props)
    try:
        assert len(connector.task_configs(4)) == 1
        db.run(DDL[db.flavour].format(t="second_t"))
        db.run("INSERT INTO second_t(name, modified) VALUES ('x', '2020-01-01 00:00:01')")
        deadline = time.monotonic() + 10
        while ctx.reconfigurations == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ctx.reconfigurations >= 1
        configs = connector.task_configs(4)
        assert len(configs) == 2 and configs[1]["tables"].endswith(
            'second_t"' if db.flavour != "mysql" else "second_t`"
        )
        task = _start_task(configs[1])
        records = _poll(task, 1)
        task.stop()
        assert _names(records) == ["x"] and records[0].topic == "p-second_t"
        db.run("DROP TABLE second_t")
        deadline = time.monotonic() + 10
        while ctx.reconfigurations < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(connector.task_configs(4)) == 1
    finally:
        connector.stop()
