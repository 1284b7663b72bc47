"""Keys whose effect shows without a server: the filters' database exclude list and built-in databases,
tombstones, and the queue's bounds (what MySqlSourceTask.start builds from max.queue.size and
max.batch.size)."""

from __future__ import annotations

import threading

import pytest

from cdc.history.model import Column, Table, TableId
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import EventFactory, SourcePosition
from cdc.mysql.filters import Filters
from cdc.mysql.queue import ChangeEventQueue

BASE = {
    "database.hostname": "localhost",
    "database.user": "u",
    "database.password": "p",
    "topic.prefix": "p",
    "schema.history.internal.kafka.topic": "h",
}


@pytest.mark.honours("database.exclude.list", "table.ignore.builtin")
def test_excluded_and_builtin_databases_are_not_captured() -> None:
    filters = Filters(MySqlSettings.parse({**BASE, "database.exclude.list": "stag.*,tmp"}))
    assert [filters.database(d) for d in ("shop", "staging", "tmp", "tmp2", "mysql", "sys")] == [
        True,
        False,
        False,
        True,
        False,
        False,
    ]
    builtin = Filters(MySqlSettings.parse({**BASE, "table.ignore.builtin": "false"}))
    assert builtin.database("mysql") and builtin.table(TableId("mysql", "user"))


@pytest.mark.honours("tombstones.on.delete")
def test_a_delete_is_followed_by_a_tombstone_only_when_asked() -> None:
    table = Table(TableId("db", "t"), (Column("id", 1, "INT", "INT", 4, optional=False),), ("id",))
    counts = {}
    for flag in ("true", "false"):
        events = EventFactory(MySqlSettings.parse({**BASE, "tombstones.on.delete": flag}))
        ts = events.schema_for(table)
        source = events.source(SourcePosition("binlog.000001", 4, 1, 1), table.id, 1000, None, "db")
        records = events.delete(ts, [7], source, {})
        counts[flag] = [None if r.value is None else r.value.get("op") for r in records]
    assert counts == {"true": ["d", None], "false": ["d"]}


@pytest.mark.honours("max.queue.size", "max.batch.size")
def test_the_queue_holds_at_most_max_queue_size_and_polls_at_most_max_batch_size() -> None:
    settings = MySqlSettings.parse({**BASE, "max.queue.size": "5", "max.batch.size": "2"})
    queue = ChangeEventQueue(settings.max_queue_size, settings.max_batch_size)
    stopping = threading.Event()
    done = threading.Event()

    def produce() -> None:
        queue.put_all(list(range(8)), stopping)
        done.set()

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    assert not done.wait(0.5) and len(queue) == 5  # blocked: the queue is full
    assert queue.poll(1) == [0, 1] and queue.poll(1) == [2, 3]
    assert done.wait(2)
    assert [queue.poll(1) for _ in range(2)] == [[4, 5], [6, 7]]


@pytest.mark.honours("enable.time.adjuster")
def test_two_digit_years_are_adjusted_only_with_the_time_adjuster() -> None:
    from cdc.mysql.types import TypeMapper

    year = Column("y", 1, "YEAR", "YEAR", 91)
    for flag, expected in (("true", [2069, 1970, 2024]), ("false", [69, 70, 2024])):
        m = TypeMapper(MySqlSettings.parse({**BASE, "enable.time.adjuster": flag})).map(year)
        assert m.convert is not None and [m.convert(v) for v in (69, 70, 2024)] == expected


@pytest.mark.honours("schema.history.internal.store.only.captured.tables.ddl")
def test_the_history_keeps_only_captured_tables_ddl_when_asked() -> None:
    from cdc.history.store import MemorySchemaHistory
    from cdc.mysql.schema import SchemaState

    recorded = {}
    for flag in ("true", "false"):
        settings = MySqlSettings.parse(
            {
                **BASE,
                "table.include.list": r"db\.kept",
                "schema.history.internal.store.only.captured.tables.ddl": flag,
            }
        )
        history = MemorySchemaHistory()
        state = SchemaState(settings, Filters(settings), history)
        for ddl in (
            "CREATE TABLE db.kept (id INT PRIMARY KEY)",
            "CREATE TABLE db.other (id INT PRIMARY KEY)",
        ):
            state.apply_ddl(ddl, "db", {"file": "b.000001", "pos": 4})
        recorded[flag] = len(history._lines)
    assert recorded == {"true": 1, "false": 2}


@pytest.mark.honours("connect.timeout.ms")
def test_a_server_that_never_greets_is_given_up_after_connect_timeout_ms() -> None:
    import socket
    import time

    from cdc.mysql.connection import connect

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel accepts; nothing ever speaks
    try:
        port = silent.getsockname()[1]
        waited = {}
        for ms in ("1000", "2000"):
            settings = MySqlSettings.parse(
                {
                    **BASE,
                    "database.hostname": "127.0.0.1",
                    "database.port": str(port),
                    "connect.timeout.ms": ms,
                }
            )
            started = time.monotonic()
            with pytest.raises(Exception, match="greeting"):
                connect(settings)
            waited[ms] = time.monotonic() - started
        assert 0.9 <= waited["1000"] < 1.9 <= waited["2000"] < 3.5, waited
    finally:
        silent.close()


@pytest.mark.honours("datatype.propagate.source.type")
def test_columns_of_a_matching_type_carry_their_source_type() -> None:
    columns = (
        Column("id", 1, "INT", "INT", 4, optional=False),
        Column("name", 2, "VARCHAR", "VARCHAR(20)", 12, length=20),
    )
    table = Table(TableId("db", "t"), columns, ("id",))
    events = EventFactory(MySqlSettings.parse({**BASE, "datatype.propagate.source.type": r".+\.VARCHAR"}))
    fields = {f.name: f.schema.parameters or {} for f in events.schema_for(table).value_schema.fields}
    assert fields["name"]["__debezium.source.column.type"] == "VARCHAR"
    assert fields["name"]["__debezium.source.column.length"] == "20"
    assert "__debezium.source.column.type" not in fields["id"]
