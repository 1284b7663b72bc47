"""Debezium's JDBC sink class reading change events (no unwrap SMT) into PostgreSQL and MariaDB.

Events are built as the MySQL connector writes them (envelope ``before``/``after``/``source``/``op``,
Debezium's semantic types); the task runs as the worker runs it, and rows and column types are read back
over the test's own connection.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc.api.connector import ErrantRecordReporter, SinkTaskContext
from cdc.api.records import SinkRecord
from cdc.api.schema import (
    INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from cdc.jdbcsink.connector import DebeziumJdbcSinkConnector
from cdc.jdbcsink.task import DebeziumJdbcSinkTask
from tests.integration.jdbc_sink_targets import Target, mariadb_target, postgres_target, sqlite_target

pytestmark = pytest.mark.integration


@pytest.fixture(params=["postgresql", "mariadb"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    yield from postgres_target() if request.param == "postgresql" else mariadb_target()


class Context(SinkTaskContext):
    def configs(self) -> dict[str, str]:
        return {}

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return None


def _opt(builder: SchemaBuilder) -> Schema:
    return builder.optional().build()


ROW = (
    SchemaBuilder.struct()
    .name("srv.ops.orders.Value")
    .optional()
    .field("id", INT32_SCHEMA)
    .field("note", OPTIONAL_STRING_SCHEMA)
    .field(
        "price",
        _opt(
            SchemaBuilder.bytes()
            .name("org.apache.kafka.connect.data.Decimal")
            .parameter("scale", "2")
            .parameter("connect.decimal.precision", "8")
        ),
    )
    .field("created", _opt(SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp")))
    .field("changed", _opt(SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp")))
    .field("day", _opt(SchemaBuilder.int32().name("io.debezium.time.Date")))
    .field("at", _opt(SchemaBuilder.int64().name("io.debezium.time.MicroTime")))
    .field("doc", _opt(SchemaBuilder.string().name("io.debezium.data.Json")))
    .field(
        "state",
        _opt(SchemaBuilder.string().name("io.debezium.data.Enum").parameter("allowed", "new,paid,sent")),
    )
    .field(
        "ratio",
        _opt(
            SchemaBuilder.struct()
            .name("io.debezium.data.VariableScaleDecimal")
            .field("scale", INT32_SCHEMA)
            .field("value", SchemaBuilder.bytes().build())
        ),
    )
    .build()
)
SOURCE = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.mysql.Source")
    .field("db", STRING_SCHEMA)
    .field("table", OPTIONAL_STRING_SCHEMA)
    .build()
)
ENVELOPE = (
    SchemaBuilder.struct()
    .name("srv.ops.orders.Envelope")
    .field("before", ROW)
    .field("after", ROW)
    .field("source", SOURCE)
    .field("op", STRING_SCHEMA)
    .field("ts_ms", OPTIONAL_INT64_SCHEMA)
    .build()
)
KEY = SchemaBuilder.struct().name("srv.ops.orders.Key").field("id", INT32_SCHEMA).build()


def _row(id_: int, note: str | None, **extra: Any) -> Struct:
    s = Struct(ROW).put("id", id_).put("note", note)
    for k, v in extra.items():
        s.put(k, v)
    return s


class Events:
    def __init__(self, target: Target, **props: str) -> None:
        self.target = target
        self.offset = 0
        self.task = DebeziumJdbcSinkTask()
        self.task.initialize(Context())
        self.task.start(
            {
                "connection.url": target.url,
                "connection.username": target.user,
                "connection.password": target.password,
                "collection.name.format": target.table_format("${source.table}"),
                **props,
            }
        )

    def event(self, op: str, id_: int, before: Struct | None, after: Struct | None) -> SinkRecord:
        envelope = Struct(ENVELOPE).put("op", op).put("before", before).put("after", after)
        envelope.put("source", Struct(SOURCE).put("db", "ops").put("table", "orders"))
        return self._record(Struct(KEY).put("id", id_), envelope)

    def tombstone(self, id_: int) -> SinkRecord:
        return self._record(Struct(KEY).put("id", id_), None)

    def _record(self, key: Struct, value: Struct | None) -> SinkRecord:
        self.offset += 1
        return SinkRecord(
            topic="srv.ops.orders",
            kafka_partition=0,
            key_schema=KEY,
            key=key,
            value_schema=ENVELOPE if value is not None else None,
            value=value,
            kafka_offset=self.offset - 1,
        )

    def write(self, *records: SinkRecord) -> None:
        self.task.put(list(records))
        self.task.flush({})


def test_change_events_upsert_delete_and_truncate(target: Target) -> None:
    sink = Events(
        target,
        **{
            "insert.mode": "upsert",
            "primary.key.mode": "record_key",
            "delete.enabled": "true",
            "truncate.enabled": "true",
            "schema.evolution": "basic",
        },
    )
    try:
        sink.write(
            sink.event("r", 1, None, _row(1, "snap")),
            sink.event("c", 2, None, _row(2, "new")),
            sink.event("u", 1, _row(1, "snap"), _row(1, "changed")),
            sink.event("c", 3, None, _row(3, "gone soon")),
        )
        assert [(r[0], r[1]) for r in target.rows("orders")] == [(1, "changed"), (2, "new"), (3, "gone soon")]
        sink.write(sink.event("d", 3, _row(3, "gone soon"), None), sink.tombstone(3))
        sink.write(sink.event("d", 2, _row(2, "new"), None))
        assert [r[0] for r in target.rows("orders")] == [1]
        truncate = (
            Struct(ENVELOPE)
            .put("op", "t")
            .put("source", Struct(SOURCE).put("db", "ops").put("table", "orders"))
        )
        sink.write(
            sink._record(Struct(KEY).put("id", 0), truncate), sink.event("c", 9, None, _row(9, "after"))
        )
        assert [r[0] for r in target.rows("orders")] == [9]
    finally:
        sink.task.stop()


def test_semantic_types_land_as_column_types(target: Target) -> None:
    sink = Events(
        target, **{"insert.mode": "upsert", "primary.key.mode": "record_key", "schema.evolution": "basic"}
    )
    created = dt.datetime(2024, 3, 1, 12, 30, 45, 123456)
    micros = int((created - dt.datetime(1970, 1, 1)) / dt.timedelta(microseconds=1))
    ratio = (
        Struct(ROW.field("ratio").schema)
        .put("scale", 4)
        .put("value", (123456).to_bytes(3, "big", signed=True))
    )
    row = _row(
        1,
        "typed",
        price=decimal.Decimal("12.30"),
        created=micros,
        changed="2024-03-01T11:30:45.5Z",
        day=19783,
        at=(7 * 3600 + 5) * 1_000_000 + 250,
        doc='{"a": 1}',
        state="paid",
        ratio=ratio,
    )
    try:
        sink.write(sink.event("c", 1, None, row))
        types = target.column_types("orders")
        got = target.rows("orders")[0]
        if target.family == "postgresql":
            assert types["price"] == "numeric" and types["created"] == "timestamp without time zone"
            assert types["changed"] == "timestamp with time zone" and types["day"] == "date"
            assert (
                types["at"] == "time without time zone"
                and types["doc"] == "json"
                and types["ratio"] == "numeric"
            )
            assert got[2] == decimal.Decimal("12.30") and got[3] == created
            assert got[4] == dt.datetime(2024, 3, 1, 11, 30, 45, 500000, tzinfo=dt.UTC)
            assert got[5] == dt.date(2024, 3, 1) and got[6] == dt.time(7, 0, 5, 250)
            assert got[7] == {"a": 1} and got[8] == "paid" and got[9] == decimal.Decimal("12.3456")
        else:
            assert types["price"] == "decimal(8,2)" and types["created"] == "datetime(6)"
            assert types["state"] == "enum('new','paid','sent')" and types["day"] == "date"
            assert got[3] == created and got[4] == dt.datetime(2024, 3, 1, 11, 30, 45, 500000)
            assert got[8] == "paid" and got[9] == decimal.Decimal("12.3456")
    finally:
        sink.task.stop()


def test_schema_evolution_none_refuses_a_missing_table(target: Target) -> None:
    sink = Events(target, **{"insert.mode": "upsert", "primary.key.mode": "record_key"})
    try:
        sink.task.put([sink.event("c", 1, None, _row(1, "x"))])
        with pytest.raises(
            Exception, match=r"is missing and auto-creation is disabled \(schema.evolution=none\)"
        ):
            sink.task.flush({})
    finally:
        sink.task.stop()


def test_validate_debezium_rules(tmp_path: Path) -> None:
    url = f"jdbc:sqlite:{tmp_path / 'v.db'}"

    def errors(**props: str) -> dict[str, list[str]]:
        config = {"connection.url": url, "connection.username": "", **props}
        return {r.name: r.errors for r in DebeziumJdbcSinkConnector().validate(config) if r.errors}

    assert errors() == {}
    assert errors(**{"insert.mode": "upsert"})["insert.mode"] == [
        "When using UPSERT, please define 'primary.key.mode' and 'primary.key.fields'."
    ]
    assert "must be set to 'record_key'" in errors(**{"delete.enabled": "true"})["delete.enabled"][0]
    missing = {
        r.name: r.errors for r in DebeziumJdbcSinkConnector().validate({"connection.url": url}) if r.errors
    }
    assert missing == {
        "connection.username": [
            'Missing required configuration "connection.username" which has no default value.'
        ]
    }
    assert errors(**{"hibernate.c3p0.max_size": "9", "connection.pool.max_size": "9"}) == {}


def test_sqlite_is_written_too(tmp_path: Path) -> None:
    for target in sqlite_target(tmp_path):
        sink = Events(
            target, **{"insert.mode": "upsert", "primary.key.mode": "record_key", "schema.evolution": "basic"}
        )
        try:
            sink.write(sink.event("c", 1, None, _row(1, "lite")), sink.event("u", 1, None, _row(1, "lite2")))
            assert [(r[0], r[1]) for r in target.rows("orders")] == [(1, "lite2")]
        finally:
            sink.task.stop()
