"""The JDBC sinks' pure logic: the keys and defaults of both classes, the batch's collapse by key and its
statement order, the SQL text per family, the column types of Connect's and Debezium's types."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdc.api.errors import ConfigError, DataError
from cdc.api.records import SinkRecord
from cdc.api.schema import INT32_SCHEMA, OPTIONAL_STRING_SCHEMA, Decimal, SchemaBuilder, Timestamp
from cdc.api.struct import Struct
from cdc.config.settings import unbound_keys
from cdc.jdbc.dialects import PostgresDialect, SqliteDialect
from cdc.jdbc.tables import TableId
from cdc.jdbc.url import parse_jdbc_url
from cdc.jdbcsink.buffer import ChangeBuffer
from cdc.jdbcsink.changes import Change, ChangeReader, Layout, Op
from cdc.jdbcsink.confluent_config import CONFLUENT_SINK_DEF, ConfluentSinkSettings
from cdc.jdbcsink.debezium_config import DEBEZIUM_SINK_DEF, DebeziumSinkSettings
from cdc.jdbcsink.plan import InsertMode, PkMode
from cdc.jdbcsink.sql import MySql, PostgresSql, SqliteSql
from cdc.jdbcsink.types import column_spec, compatible
from cdc.plugins import registry


def test_every_key_has_its_field() -> None:
    assert unbound_keys(ConfluentSinkSettings, CONFLUENT_SINK_DEF) == []
    assert unbound_keys(DebeziumSinkSettings, DEBEZIUM_SINK_DEF) == []


def test_confluent_defaults_and_rules() -> None:
    plan = ConfluentSinkSettings.parse({"connection.url": "jdbc:sqlite:x"}).plan()
    assert plan.insert_mode is InsertMode.INSERT and plan.pk_mode is PkMode.NONE
    assert plan.batch_size == 3000 and plan.max_retries == 10 and plan.retry_backoff_ms == 3000
    assert plan.table_format == "${topic}" and plan.time_zone == "UTC" and plan.quote
    assert not plan.reduce and not plan.delete_enabled and not plan.auto_create
    kafka = ConfluentSinkSettings.parse({"connection.url": "jdbc:sqlite:x", "pk.mode": "KAFKA"}).plan()
    assert kafka.pk_fields == ("__connect_topic", "__connect_partition", "__connect_offset")
    with pytest.raises(
        ConfigError, match="Primary key mode must be 'record_key' when delete support is enabled"
    ):
        ConfluentSinkSettings.parse({"connection.url": "jdbc:sqlite:x", "delete.enabled": "true"}).check()
    with pytest.raises(
        ConfigError, match=r"Invalid value Upsert for configuration insert\.mode: Invalid enumerator"
    ):
        ConfluentSinkSettings.parse({"connection.url": "jdbc:sqlite:x", "insert.mode": "Upsert"})


def test_debezium_defaults_and_aliases() -> None:
    settings = DebeziumSinkSettings.parse(
        {"connection.url": "jdbc:sqlite:x", "connection.username": "u", "database.time_zone": "Europe/Paris"}
    )
    plan = settings.plan()
    assert plan.batch_size == 500 and plan.table_format == "${topic}" and plan.dots_to_underscores
    assert plan.time_zone == "Europe/Paris" and not plan.quote and not plan.auto_create
    assert DEBEZIUM_SINK_DEF.knows("hibernate.c3p0.max_size")
    with pytest.raises(ConfigError, match=r"primary\.key\.mode"):
        DebeziumSinkSettings.parse(
            {"connection.url": "jdbc:sqlite:x", "connection.username": "u", "insert.mode": "upsert"}
        ).check()


def test_both_classes_are_registered_as_their_java_names() -> None:
    # the shared simple name is Confluent's, as on the clusters users come from
    assert registry.load("JdbcSinkConnector") is registry.load("io.confluent.connect.jdbc.JdbcSinkConnector")
    canonical = registry.canonical()
    assert (
        canonical["io.confluent.connect.jdbc.JdbcSinkConnector"] == "cdc.jdbcsink.connector:JdbcSinkConnector"
    )
    assert (
        canonical["io.debezium.connector.jdbc.JdbcSinkConnector"]
        == "cdc.jdbcsink.connector:DebeziumJdbcSinkConnector"
    )


def _layout(table: str = "t", keys: tuple[str, ...] = ("id",)) -> Layout:
    sql = PostgresSql(PostgresDialect(parse_jdbc_url("jdbc:postgresql://h/db"), dt.UTC), True)
    key = tuple(column_spec(k, INT32_SCHEMA, sql.family, True, dt.UTC) for k in keys)
    return Layout(
        TableId(None, None, table),
        key,
        (column_spec("v", OPTIONAL_STRING_SCHEMA, sql.family, False, dt.UTC),),
    )


def _change(layout: Layout, op: Op, key: int, value: str | None = None, offset: int = 0) -> Change:
    record = SinkRecord(
        topic="t",
        kafka_partition=0,
        key_schema=None,
        key=key,
        value_schema=None,
        value=value,
        kafka_offset=offset,
    )
    return Change(record, op, layout, (key,), (value,) if op is Op.UPSERT else ())


def test_the_buffer_collapses_each_key_to_its_last_change() -> None:
    layout = _layout()
    buffer = ChangeBuffer(reduce=True)
    for change in [
        _change(layout, Op.UPSERT, 1, "a"),
        _change(layout, Op.UPSERT, 2, "b"),
        _change(layout, Op.UPSERT, 1, "a2"),
        _change(layout, Op.DELETE, 2),
        _change(layout, Op.DELETE, 3),
        _change(layout, Op.UPSERT, 3, "c"),
    ]:
        buffer.add(change)
    assert len(buffer) == 6
    groups = [(g.op, [c.key[0] for c in g.changes], [c.row for c in g.changes]) for g in buffer.groups()]
    assert groups == [(Op.DELETE, [2], [()]), (Op.UPSERT, [1, 3], [("a2",), ("c",)])]


def test_without_reduction_the_order_is_kept_in_runs() -> None:
    layout = _layout()
    buffer = ChangeBuffer(reduce=False)
    for change in [
        _change(layout, Op.UPSERT, 1, "a"),
        _change(layout, Op.UPSERT, 1, "b"),
        _change(layout, Op.DELETE, 1),
        _change(layout, Op.UPSERT, 1, "c"),
    ]:
        buffer.add(change)
    assert [(g.op, len(g.changes)) for g in buffer.groups()] == [
        (Op.UPSERT, 2),
        (Op.DELETE, 1),
        (Op.UPSERT, 1),
    ]


def test_a_truncate_drops_what_came_before_it_in_its_table() -> None:
    layout, other = _layout("t"), _layout("u")
    buffer = ChangeBuffer(reduce=True)
    buffer.add(_change(layout, Op.UPSERT, 1, "a"))
    buffer.add(_change(other, Op.UPSERT, 1, "x"))
    buffer.add(
        Change(_change(layout, Op.UPSERT, 0).record, Op.TRUNCATE, Layout(layout.table, (), ()), (), ())
    )
    buffer.add(_change(layout, Op.UPSERT, 2, "b"))
    ops = [(g.op, g.layout.table.name, [c.key for c in g.changes]) for g in buffer.groups()]
    assert ops == [(Op.TRUNCATE, "t", [()]), (Op.UPSERT, "u", [(1,)]), (Op.UPSERT, "t", [(2,)])]


def test_statements_per_family() -> None:
    table = TableId(None, "s", "t")
    pg = PostgresSql(PostgresDialect(parse_jdbc_url("jdbc:postgresql://h/db"), dt.UTC), True)
    assert pg.upsert(table, ["id"], ["v"], 2) == (
        'INSERT INTO "s"."t" ("id","v") VALUES ($1,$2),($3,$4) '
        'ON CONFLICT ("id") DO UPDATE SET "v"=EXCLUDED."v"'
    )
    assert pg.delete(table, ["a", "b"], 2) == 'DELETE FROM "s"."t" WHERE ("a","b") IN (($1,$2),($3,$4))'
    unquoted = PostgresSql(pg.dialect, False)
    assert unquoted.ident("Order") == '"order"'  # folded as PostgreSQL folds it, a reserved word still parses
    from cdc.jdbc.dialects import MySqlDialect

    my = MySql(MySqlDialect(parse_jdbc_url("jdbc:mysql://h/db"), dt.UTC), True)
    assert my.table_id("db.t") == TableId("db", None, "t")
    assert my.upsert(TableId(None, None, "t"), ["id"], ["v"], 1) == (
        "INSERT INTO `t` (`id`,`v`) VALUES (%s,%s) ON DUPLICATE KEY UPDATE `v`=VALUES(`v`)"
    )
    lite = SqliteSql(SqliteDialect(parse_jdbc_url("jdbc:sqlite::memory:"), dt.UTC), True)
    assert lite.delete(TableId(None, None, "t"), ["id"], 3) == 'DELETE FROM "t" WHERE "id" IN (?,?,?)'
    assert lite.rows_per_statement(10) == 1000 and pg.rows_per_statement(100) == 300


def test_column_types_keep_meaning() -> None:
    price = Decimal.builder(3).parameter("connect.decimal.precision", "12").build()
    assert column_spec("p", price, "postgresql", False, dt.UTC).sql_type == "NUMERIC(12,3)"
    assert column_spec("p", Decimal.schema(3), "postgresql", False, dt.UTC).sql_type == "NUMERIC"
    assert column_spec("p", Decimal.schema(3), "mysql", False, dt.UTC).sql_type == "DECIMAL(65,3)"
    zoned = SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").build()
    spec = column_spec("z", zoned, "postgresql", False, dt.UTC)
    assert spec.sql_type == "TIMESTAMPTZ(6)"
    assert spec.convert("2024-01-01T10:00:00+02:00") == dt.datetime(2024, 1, 1, 8, tzinfo=dt.UTC)
    paris = __import__("zoneinfo").ZoneInfo("Europe/Paris")
    ts = column_spec("t", Timestamp.schema(), "mysql", False, paris)
    assert ts.sql_type == "DATETIME(3)"
    assert ts.convert(dt.datetime(2024, 7, 1, 10, tzinfo=dt.UTC)) == dt.datetime(2024, 7, 1, 12)
    varchar = SchemaBuilder.string().parameter("__debezium.source.column.length", "40").build()
    assert column_spec("s", varchar, "mysql", False, dt.UTC).sql_type == "VARCHAR(40)"
    bits = SchemaBuilder.bytes().name("io.debezium.data.Bits").parameter("length", "10").build()
    assert column_spec("b", bits, "postgresql", False, dt.UTC).convert(b"\x05\x02") == "1000000101"
    # as Debezium's sink creates them (tests/integration/test_jdbc_sink_peer.py compares the two)
    assert column_spec("b", bits, "postgresql", False, dt.UTC).sql_type == "BIT(10)"
    wall = SchemaBuilder.int64().name("io.debezium.time.Timestamp").build()
    assert column_spec("w", wall, "postgresql", False, dt.UTC).sql_type == "TIMESTAMP(6)"
    assert column_spec("w", wall, "mysql", False, dt.UTC).sql_type == "DATETIME(6)"
    point = (
        SchemaBuilder.struct()
        .name("io.debezium.data.geometry.Point")
        .field("x", SchemaBuilder.float64().build())
        .field("y", SchemaBuilder.float64().build())
        .field("wkb", SchemaBuilder.bytes().optional().build())
        .field("srid", SchemaBuilder.int32().optional().build())
        .build()
    )
    wkb = bytes.fromhex("0101000000000000000000F03F0000000000000040")
    p = Struct(point).put("x", 1.0).put("y", 2.0).put("wkb", wkb).put("srid", 4326)
    mysql_point = column_spec("g", point, "mysql", False, dt.UTC)
    assert mysql_point.sql_type == "POINT" and mysql_point.convert(p) == (4326).to_bytes(4, "little") + wkb
    assert column_spec("g", point, "postgresql", False, dt.UTC).convert(p) == wkb
    vsd = SchemaBuilder.struct().name("io.debezium.data.VariableScaleDecimal").field("scale", INT32_SCHEMA)
    vsd_schema = vsd.field("value", SchemaBuilder.bytes().build()).build()
    value = Struct(vsd_schema).put("scale", 2).put("value", (-1234).to_bytes(2, "big", signed=True))
    assert column_spec("d", vsd_schema, "postgresql", False, dt.UTC).convert(value) == decimal.Decimal(
        "-12.34"
    )
    ints = SchemaBuilder.array(INT32_SCHEMA).build()
    assert column_spec("a", ints, "postgresql", False, dt.UTC).sql_type == "INT[]"
    with pytest.raises(DataError, match="Unsupported source data type: ARRAY"):
        column_spec("a", ints, "mysql", False, dt.UTC)
    with pytest.raises(DataError, match="Unsupported source data type: ARRAY in a key"):
        column_spec("a", ints, "postgresql", True, dt.UTC)


def test_type_changes_that_need_an_alter_are_told_apart() -> None:
    assert compatible("int", "bigint") and compatible("text", "character varying(20)")
    assert compatible("timestamp", "datetime(6)") and compatible("decimal", "numeric(10,2)")
    assert not compatible("text", "integer") and not compatible("binary", "numeric")


def test_schemaless_values_are_refused_by_coordinates() -> None:
    plan = ConfluentSinkSettings.parse({"connection.url": "jdbc:sqlite::memory:"}).plan()
    sql = SqliteSql(SqliteDialect(parse_jdbc_url("jdbc:sqlite::memory:"), dt.UTC), True)
    reader = ChangeReader(plan, sql, "sink")
    record = SinkRecord(
        topic="t",
        kafka_partition=0,
        key_schema=None,
        key=None,
        value_schema=None,
        value={"a": 1},
        kafka_offset=4,
    )
    with pytest.raises(DataError, match=r"requires records with a non-null Struct value.*offset=4"):
        reader.read(record)
    assert reader.read(record.new_record(value=None)) is None  # a tombstone with deletes off: nothing


def _defaulted_record() -> SinkRecord:
    schema = (
        SchemaBuilder.struct()
        .field("id", INT32_SCHEMA)
        .field("s", SchemaBuilder.string().optional().default_value("abc").build())
        .build()
    )
    return SinkRecord(
        topic="t",
        kafka_partition=0,
        key_schema=None,
        key=None,
        value_schema=schema,
        value=Struct(schema).put("id", 1).put("s", None),
        kafka_offset=0,
    )


def test_a_null_with_a_default_is_written_as_each_peer_writes_it() -> None:
    """Confluent's sink binds ``Struct.get`` (the default) unless ``replace.null.with.default=false``;
    Debezium's (3.6) reads ``getWithoutDefault``: NULL stays NULL."""
    sql = SqliteSql(SqliteDialect(parse_jdbc_url("jdbc:sqlite::memory:"), dt.UTC), True)
    url = {"connection.url": "jdbc:sqlite::memory:"}
    rows = {}
    for name, plan in {
        "confluent": ConfluentSinkSettings.parse(url).plan(),
        "confluent-false": ConfluentSinkSettings.parse({**url, "replace.null.with.default": "false"}).plan(),
        "debezium": DebeziumSinkSettings.parse({**url, "connection.username": "u"}).plan(),
    }.items():
        change = ChangeReader(plan, sql, "sink").read(_defaulted_record())
        assert change is not None
        rows[name] = change.row
    assert rows == {"confluent": (1, "abc"), "confluent-false": (1, None), "debezium": (1, None)}
