"""JDBC source: SQL per mode, offsets, tables and grouping, config, types, queriers on in-memory SQLite."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from cdc.api.errors import ConfigError, ConnectError
from cdc.api.schema import Type
from cdc.jdbc.config import JDBC_SOURCE_DEF, JdbcSourceSettings, validate_jdbc
from cdc.jdbc.connector import JdbcSourceConnector
from cdc.jdbc.criteria import Criteria
from cdc.jdbc.dialects import MySqlDialect, SqliteDialect
from cdc.jdbc.offsets import TimestampIncrementingOffset
from cdc.jdbc.querier import TableQuerier
from cdc.jdbc.tables import TableFilter, TableId, group_partitions, parse_table_list
from cdc.jdbc.task import JdbcSourceTask
from cdc.jdbc.types import ColumnInfo, field_schema
from cdc.jdbc.url import parse_jdbc_url

UTC = dt.UTC
MYSQL = MySqlDialect(parse_jdbc_url("jdbc:mysql://localhost:3306/kafkadb"), UTC)


def settings(**kw: Any) -> JdbcSourceSettings:
    props = {
        "connection.url": "jdbc:sqlite::memory:",
        "topic.prefix": "t-",
        **{k.replace("_", "."): str(v) for k, v in kw.items()},
    }
    return JdbcSourceSettings.parse(props)


# ------------------------------------------------------------------------------------------------- SQL


def test_sql_per_mode_is_confluents() -> None:
    customers = TableId("kafkadb", None, "customers")
    sql = Criteria(MYSQL, "timestamp+incrementing", customers, "", "id", ["modified"]).sql()
    t = "`kafkadb`.`customers`"
    assert sql == (
        f"SELECT * FROM {t} WHERE {t}.`modified` < %s AND (({t}.`modified` = %s AND {t}.`id` > %s) "
        f"OR {t}.`modified` > %s) ORDER BY {t}.`modified`,{t}.`id` ASC"
    )
    p = "`kafkadb`.`products`"
    sql = Criteria(MYSQL, "timestamp", TableId("kafkadb", None, "products"), "", None, ["modified"]).sql()
    assert (
        sql
        == f"SELECT * FROM {p} WHERE {p}.`modified` > %s AND {p}.`modified` < %s ORDER BY {p}.`modified` ASC"
    )
    o = "`kafkadb`.`orders`"
    sql = Criteria(MYSQL, "incrementing", TableId("kafkadb", None, "orders"), "", "seq").sql()
    assert sql == f"SELECT * FROM {o} WHERE {o}.`seq` > %s ORDER BY {o}.`seq` ASC"
    assert (
        Criteria(MYSQL, "bulk", TableId("kafkadb", None, "bulk_tab")).sql()
        == "SELECT * FROM `kafkadb`.`bulk_tab`"
    )


def test_sql_coalesce_query_mode_suffix_and_lookback() -> None:
    crit = Criteria(
        MYSQL, "timestamp", None, "SELECT * FROM t WHERE a LIKE 'x%'", None, ["a", "b"], "LIMIT 5"
    )
    assert crit.sql() == (
        "SELECT * FROM t WHERE a LIKE 'x%%' WHERE COALESCE(`a`,`b`) > %s AND COALESCE(`a`,`b`) < %s"
        " ORDER BY COALESCE(`a`,`b`) ASC LIMIT 5"
    )
    crit = Criteria(MYSQL, "incrementing", None, "SELECT * FROM t", "id")
    assert crit.sql(gaps=2) == "SELECT * FROM t WHERE (`id` > %s OR `id` IN (%s,%s)) ORDER BY `id` ASC"
    never = MySqlDialect(MYSQL.url, UTC, quote=False)
    assert Criteria(never, "incrementing", TableId("db", None, "t"), "", "id").sql() == (
        "SELECT * FROM db.t WHERE db.t.id > %s ORDER BY db.t.id ASC"
    )
    sqlite = SqliteDialect(parse_jdbc_url("jdbc:sqlite::memory:"), UTC)
    assert Criteria(sqlite, "timestamp", TableId(None, None, "t"), "", None, ["ts"]).sql() == (
        'SELECT * FROM "t" WHERE strftime(\'%Y-%m-%d %H:%M:%f\', "t"."ts") > ? AND '
        'strftime(\'%Y-%m-%d %H:%M:%f\', "t"."ts") < ? ORDER BY strftime(\'%Y-%m-%d %H:%M:%f\', "t"."ts") ASC'
    )


# --------------------------------------------------------------------------------------------- offsets


def test_offset_maps_like_confluent() -> None:
    off = TimestampIncrementingOffset(1642904785_123456789, 8)
    assert list(off.to_dict().items()) == [
        ("timestamp_nanos", 123456789),
        ("incrementing", 8),
        ("timestamp", 1642904785123),
    ]
    assert TimestampIncrementingOffset.from_dict(off.to_dict()) == off
    assert TimestampIncrementingOffset(None, 8).to_dict() == {"incrementing": 8}
    legacy = TimestampIncrementingOffset.from_dict({"timestamp": 1642904785000})
    assert legacy.timestamp_ns == 1642904785_000_000_000
    assert json.dumps(TimestampIncrementingOffset(1642904785_000_000_000).to_dict()) == (
        '{"timestamp_nanos": 0, "timestamp": 1642904785000}'
    )
    gaps = TimestampIncrementingOffset(None, 10, ((7, 100), (9, 200)))
    assert gaps.to_dict() == {"incrementing": 10, "incrementing_gaps": "7@100,9@200"}
    assert TimestampIncrementingOffset.from_dict(gaps.to_dict()) == gaps


# ---------------------------------------------------------------------------------------------- tables


def test_grouping_is_contiguous_and_min_of_tasks_and_tables() -> None:
    t = [TableId("db", None, n) for n in ("a", "b", "c")]
    assert [len(g) for g in group_partitions(t[:2], min(10, 2))] == [1, 1]
    assert [len(g) for g in group_partitions(t, min(4, 3))] == [1, 1, 1]
    assert group_partitions(t, 2) == [[t[0], t[1]], [t[2]]]


def test_table_lists_and_filters() -> None:
    assert parse_table_list("`kafkadb`.`customers`,`kafkadb`.`a,b`", True) == [
        TableId("kafkadb", None, "customers"),
        TableId("kafkadb", None, "a,b"),
    ]
    assert parse_table_list('"public"."t"', False) == [TableId(None, "public", "t")]
    tables = [TableId("om", None, "customers"), TableId("om", None, "orders")]
    assert TableFilter(whitelist=["om.customers"]).select(tables) == tables[:1]
    assert TableFilter(whitelist=["orders"]).select(tables) == tables[1:]
    assert TableFilter(whitelist=["`om`.`orders`"]).select(tables) == tables[1:]
    assert TableFilter(blacklist=["orders"]).select(tables) == tables[:1]
    assert TableFilter(include=["om\\.c.*"]).select(tables) == tables[:1]
    assert TableFilter(exclude=["om\\.c.*"]).select(tables) == tables[1:]
    with pytest.raises(ConfigError, match="same table name"):
        TableFilter().select([TableId("a", None, "t"), TableId("b", None, "t")])


def test_jdbc_urls() -> None:
    url = parse_jdbc_url("jdbc:mysql://localhost:3306/kafkadb?user=kafka&password=kafka123")
    assert (url.host, url.port, url.database, url.user, url.password) == (
        "localhost",
        3306,
        "kafkadb",
        "kafka",
        "kafka123",
    )
    assert url.with_credentials("u", None).user == "u"
    pg = parse_jdbc_url("jdbc:postgresql://db:5433/shop")
    assert (pg.flavour, pg.host, pg.port, pg.database) == ("postgresql", "db", 5433, "shop")
    assert parse_jdbc_url("jdbc:mariadb://h/om").flavour == "mysql"
    assert parse_jdbc_url("jdbc:sqlite:/tmp/x.db").database == "/tmp/x.db"
    with pytest.raises(ConfigError):
        parse_jdbc_url("jdbc:oracle:thin:@h:1521:x")


# ---------------------------------------------------------------------------------------------- config


def test_config_defaults_unknown_keys_and_validation() -> None:
    s = JdbcSourceSettings.parse(
        {
            "connection.url": "jdbc:sqlite:x",
            "topic.prefix": "p",
            "mode": "bulk",
            "connecftion.password": "ignored",
        }
    )
    assert s.batch_max_rows == 100 and s.poll_interval_ms == 5000 and s.table_poll_interval_ms == 60000
    assert s.quote_sql_identifiers == "ALWAYS" and s.validate_non_null is True
    assert s.numeric_mapping == "none" and s.password is None
    assert JDBC_SOURCE_DEF["connection.password"].type.value == "PASSWORD"
    errors = {
        r.name: r.errors
        for r in validate_jdbc({"connection.url": "jdbc:sqlite:x", "topic.prefix": "p", "mode": "timestamp"})
    }
    assert any("timestamp.column.name" in e for e in errors["mode"])
    errors = {
        r.name: r.errors for r in validate_jdbc({"connection.url": "x", "topic.prefix": "p", "mode": "nope"})
    }
    assert errors["mode"]
    doc = JDBC_SOURCE_DEF.to_markdown()
    assert "`incrementing.lookback.ms`" in doc and "`tables`" not in doc


def test_plugin_names() -> None:
    from cdc.plugins import registry

    for name in ("io.confluent.connect.jdbc.JdbcSourceConnector", "JdbcSourceConnector", "JdbcSource"):
        assert registry.load(name) is JdbcSourceConnector
    assert JdbcSourceTask.JAVA_NAME == "io.confluent.connect.jdbc.source.JdbcSourceTask"


# ----------------------------------------------------------------------------------------------- types


def test_type_mapping() -> None:
    def kind(col: ColumnInfo, mapping: str = "none") -> Any:
        schema = field_schema(col, mapping)
        assert schema is not None
        return schema.type, schema.name, schema.optional, dict(schema.parameters or {})

    assert kind(ColumnInfo("a", "int32", False)) == (Type.INT32, None, False, {})
    assert kind(ColumnInfo("a", "int32", True, unsigned=True))[0] is Type.INT64
    assert kind(ColumnInfo("a", "int8", unsigned=True))[0] is Type.INT16
    assert kind(ColumnInfo("a", "int64", unsigned=True))[1] == "org.apache.kafka.connect.data.Decimal"
    assert kind(ColumnInfo("a", "decimal", precision=10, scale=2)) == (
        Type.BYTES,
        "org.apache.kafka.connect.data.Decimal",
        True,
        {"scale": "2", "connect.decimal.precision": "10"},
    )
    # numeric.mapping changes NUMERIC, never DECIMAL (MySQL's columns are DECIMAL: #563)
    assert kind(ColumnInfo("a", "decimal", precision=10, scale=2), "best_fit")[0] is Type.BYTES
    numeric = ColumnInfo("a", "decimal", precision=10, scale=2, numeric=True)
    assert kind(numeric, "best_fit")[0] is Type.FLOAT64
    assert kind(numeric, "precision_only")[0] is Type.BYTES
    assert (
        kind(ColumnInfo("a", "decimal", precision=5, scale=0, numeric=True), "precision_only")[0]
        is Type.INT32
    )
    assert kind(ColumnInfo("a", "decimal", precision=3, scale=0, numeric=True), "best_fit")[0] is Type.INT16
    assert kind(ColumnInfo("a", "timestamp", False))[1] == "org.apache.kafka.connect.data.Timestamp"
    assert kind(ColumnInfo("a", "date"))[1] == "org.apache.kafka.connect.data.Date"
    assert kind(ColumnInfo("a", "time"))[1] == "org.apache.kafka.connect.data.Time"
    assert field_schema(ColumnInfo("a", None), "none") is None


# -------------------------------------------------------------------------------------------- queriers


def memory_querier(ddl: str, rows: str, clock: Any = None, table: str = "t", **kw: Any) -> tuple[Any, Any]:
    s = settings(**kw)
    dialect = SqliteDialect(parse_jdbc_url("jdbc:sqlite::memory:"), UTC)
    conn = dialect.connect()
    conn.executescript(ddl + ";" + rows)
    conn.commit()
    tid = TableId(None, None, table)
    extra = {"clock": clock} if clock else {}
    q = TableQuerier(dialect, s, tid, TimestampIncrementingOffset(), dialect.describe_table(tid), **extra)
    return q, conn


def drain(q: TableQuerier, conn: Any) -> list[Any]:
    out: list[Any] = []
    q.start_query(conn)
    while True:
        out.extend(q.next_batch())
        if q.done:
            q.finish(conn)
            return out


TS_DDL = "CREATE TABLE t (id INTEGER PRIMARY KEY, ts TIMESTAMP NOT NULL, v TEXT)"


def test_timestamp_offset_moves_only_past_complete_groups() -> None:
    rows = (
        "INSERT INTO t(ts, v) VALUES ('2024-01-01 00:00:01','a'),('2024-01-01 00:00:01','b'),"
        "('2024-01-01 00:00:02','c'),('2024-01-01 00:00:02','d'),('2024-01-01 00:00:03','e')"
    )
    q, conn = memory_querier(TS_DDL, rows, mode="timestamp", timestamp_column_name="ts", batch_max_rows=2)
    records = drain(q, conn)
    t = [r.source_offset["timestamp"] for r in records]
    t1 = 1704067201000
    assert t == [0, t1, t1, t1 + 1000, t1 + 2000]
    assert records[0].source_partition == {"protocol": "1", "table": "t"}
    assert [r.value.get("v") for r in records] == ["a", "b", "c", "d", "e"]
    # restart from the offset of record 3 (in the middle of the T2 group, across a batch boundary): c, d again
    q2 = TableQuerier(
        q.dialect,
        q.settings,
        q.table,
        TimestampIncrementingOffset.from_dict(records[2].source_offset),
        q.dialect.describe_table(q.table),
    )
    assert [r.value.get("v") for r in drain(q2, conn)] == ["c", "d", "e"]
    assert drain(q, conn) == []  # nothing new


def test_timestamp_incrementing_tie_break_and_updates() -> None:
    rows = "INSERT INTO t(ts, v) VALUES ('2024-01-01 00:00:01','a'),('2024-01-01 00:00:01','b')"
    q, conn = memory_querier(
        TS_DDL,
        rows,
        mode="timestamp+incrementing",
        timestamp_column_name="ts",
        incrementing_column_name="id",
        batch_max_rows=1,
    )
    records = drain(q, conn)
    assert [r.source_offset for r in records] == [
        {"timestamp_nanos": 0, "incrementing": 1, "timestamp": 1704067201000},
        {"timestamp_nanos": 0, "incrementing": 2, "timestamp": 1704067201000},
    ]
    conn.execute("INSERT INTO t(ts, v) VALUES ('2024-01-01 00:00:01','c')")  # same ts, higher id
    conn.execute("UPDATE t SET ts = '2024-01-01 00:00:05', v = 'a2' WHERE id = 1")
    conn.execute("INSERT INTO t(ts, v) VALUES ('2999-01-01 00:00:00','future')")
    conn.commit()
    assert [r.value.get("v") for r in drain(q, conn)] == ["c", "a2"]  # the future row waits


def test_incrementing_and_first_run_from_minus_one() -> None:
    q, conn = memory_querier(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO t VALUES (-5, 'neg'), (1, 'a'), (2, 'b')",
        mode="incrementing",
    )
    assert [r.value.get("v") for r in drain(q, conn)] == ["a", "b"]  # Confluent starts at > -1
    conn.execute("INSERT INTO t VALUES (3, 'c')")
    conn.commit()
    assert [r.source_offset for r in drain(q, conn)] == [{"incrementing": 3}]


def test_incrementing_lookback_finds_late_commits() -> None:
    now = [1000.0]
    q, conn = memory_querier(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO t VALUES (1, 'a'), (3, 'c')",
        clock=lambda: now[0],
        mode="incrementing",
        incrementing_lookback_ms=60000,
    )
    records = drain(q, conn)
    assert records[-1].source_offset == {"incrementing": 3, "incrementing_gaps": "2@1000000"}
    conn.execute("INSERT INTO t VALUES (2, 'late'), (4, 'd')")
    conn.commit()
    records = drain(q, conn)
    assert [r.value.get("v") for r in records] == ["late", "d"]
    assert records[-1].source_offset == {"incrementing": 4}
    conn.execute("INSERT INTO t VALUES (7, 'g')")
    conn.commit()
    drain(q, conn)
    now[0] += 61
    drain(q, conn)
    assert q.offset.gaps == ()  # 5 and 6 were given up


def test_bulk_and_delete_detection() -> None:
    q, conn = memory_querier(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
        mode="bulk",
        bulk_detect_deletes="true",
    )
    first = drain(q, conn)
    assert len(first) == 3 and first[0].source_offset is None and first[0].source_partition == {"table": "t"}
    conn.execute("DELETE FROM t WHERE id = 2")
    conn.commit()
    second = drain(q, conn)
    assert [r.value for r in second[:2]] == [first[0].value, first[2].value]
    tomb = second[2]
    assert tomb.value is None and tomb.key.get("id") == 2 and tomb.key_schema.name == "t.Key"


def test_validate_non_null_and_autodetect() -> None:
    with pytest.raises(ConnectError, match="nullable"):
        memory_querier(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, ts TIMESTAMP)",
            "",
            mode="timestamp",
            timestamp_column_name="ts",
        )
    q, _ = memory_querier(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, ts TIMESTAMP)",
        "",
        mode="timestamp",
        timestamp_column_name="ts",
        validate_non_null="false",
    )
    assert q.mode == "timestamp"
    q, _ = memory_querier("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)", "", mode="incrementing")
    assert q.incrementing_column == "id"
    with pytest.raises(ConnectError, match="auto-increment"):
        memory_querier("CREATE TABLE t (a TEXT, b TEXT)", "", mode="incrementing")


def test_values_and_query_mode() -> None:
    ddl = (
        "CREATE TABLE t (id INTEGER PRIMARY KEY, price NUMERIC(10,2), d DATE, ts TIMESTAMP NOT NULL, "
        "b BLOB, f REAL)"
    )
    rows = "INSERT INTO t VALUES (1, 1.5, '2024-02-03', '2024-01-01 01:02:03.250', x'00ff', 2.5)"
    q, conn = memory_querier(ddl, rows, mode="bulk")
    (rec,) = drain(q, conn)
    assert rec.value.as_dict() == {
        "id": 1,
        "price": decimal.Decimal("1.5"),
        "d": dt.date(2024, 2, 3),
        "ts": dt.datetime(2024, 1, 1, 1, 2, 3, 250000, tzinfo=UTC),
        "b": b"\x00\xff",
        "f": 2.5,
    }
    assert rec.value_schema.name == "t" and rec.topic == "t-t"
    s = settings(mode="incrementing", query="SELECT id, d FROM t", incrementing_column_name="id")
    qq = TableQuerier(q.dialect, s, None, TimestampIncrementingOffset())
    (rec,) = drain(qq, conn)
    assert rec.topic == "t-" and rec.source_partition == {"query": "query"} and rec.value_schema.name is None
    assert rec.source_offset == {"incrementing": 1}


# ------------------------------------------------------------------------------------- connector + task


class _Reader:
    def __init__(self, offsets: dict[str, dict[str, Any]]) -> None:
        self.stored = offsets

    def offsets(self, partitions: Any) -> dict[str, dict[str, Any]]:
        return self.stored

    def offset(self, partition: Any) -> Any:
        return None


class _Ctx:
    def __init__(self, offsets: dict[str, dict[str, Any]] | None = None) -> None:
        self.reader = _Reader(offsets or {})
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


def test_connector_tasks_and_table_monitor(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE multitab1 (id INTEGER PRIMARY KEY, name TEXT);"
        "CREATE TABLE multitab2 (id INTEGER PRIMARY KEY, name TEXT);"
        "INSERT INTO multitab2(name) VALUES ('x')"
    )
    props = {
        "connector.class": "JdbcSourceConnector",
        "connection.url": f"jdbc:sqlite:{path}",
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "topic.prefix": "mysql-",
        "tasks.max": "10",
        "table.poll.interval.ms": "50",
        "poll.interval.ms": "10",
    }
    connector = JdbcSourceConnector()
    ctx = _Ctx()
    connector.initialize(ctx)  # type: ignore[arg-type]
    connector.start(props)
    try:
        configs = connector.task_configs(10)
        assert [c["tables"] for c in configs] == ['"multitab1"', '"multitab2"']
        task = JdbcSourceTask(max_wait_s=0.5)
        task.initialize(_Ctx({'{"protocol":"1","table":"multitab2"}': {"incrementing": 0}}))  # type: ignore[arg-type]
        task.start(configs[1])
        records = task.poll()
        assert (
            records
            and records[0].source_offset == {"incrementing": 1}
            and records[0].topic == "mysql-multitab2"
        )
        task.stop()
        db.execute("CREATE TABLE multitab3 (id INTEGER PRIMARY KEY)")
        db.commit()
        import time

        deadline = time.monotonic() + 5
        while ctx.reconfigurations == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ctx.reconfigurations >= 1
        assert len(connector.task_configs(10)) == 3
        assert [c["tables"] for c in connector.task_configs(2)] == ['"multitab1","multitab2"', '"multitab3"']
    finally:
        connector.stop()


def test_value_to_key_and_extract_field_give_a_key() -> None:
    from cdc.plugins import registry

    q, conn = memory_querier(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO t VALUES (7, 'a')",
        mode="incrementing",
    )
    (record,) = drain(q, conn)
    to_key = registry.instantiate("org.apache.kafka.connect.transforms.ValueToKey")
    to_key.configure({"fields": "id"})
    extract = registry.instantiate("org.apache.kafka.connect.transforms.ExtractField$Key")
    extract.configure({"field": "id"})
    keyed = extract.apply(to_key.apply(record))
    assert keyed.key == 7 and keyed.value is record.value


def test_docs_list_every_key() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "jdbc.md"
    assert JDBC_SOURCE_DEF.to_markdown() in docs.read_text()
