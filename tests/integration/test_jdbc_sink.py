"""Confluent's JDBC sink class writing into the stack's PostgreSQL and MariaDB and into SQLite.

The task runs as the worker runs it (``initialize``, ``start``, ``put`` …, ``flush``) with a context whose
errant record reporter records what it is given, as the worker's does with ``errors.tolerance=all``
(the worker's own reporter and dead letter queue are covered in ``test_jdbc_sink_worker.py``). Every
assertion reads the rows back over a connection of the test's own.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc.api.connector import ErrantRecordReporter, SinkTaskContext
from cdc.api.errors import ConnectError
from cdc.api.records import SinkRecord
from cdc.api.schema import (
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Time,
    Timestamp,
)
from cdc.api.struct import Struct
from cdc.jdbcsink.connector import JdbcSinkConnector
from cdc.jdbcsink.task import JdbcSinkTask
from tests.integration.jdbc_sink_targets import Target, mariadb_target, postgres_target, sqlite_target

pytestmark = pytest.mark.integration


@pytest.fixture(params=["postgresql", "mariadb", "sqlite"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    if request.param == "postgresql":
        yield from postgres_target()
    elif request.param == "mariadb":
        yield from mariadb_target()
    else:
        yield from sqlite_target(tmp_path)


class Recorder(ErrantRecordReporter):
    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []

    def report(self, record: SinkRecord, error: BaseException) -> None:
        self.reported.append((record, error))


class Context(SinkTaskContext):
    def __init__(self, reporter: ErrantRecordReporter | None) -> None:
        self.reporter = reporter

    def configs(self) -> dict[str, str]:
        return {}

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter


KEY = SchemaBuilder.struct().name("k").field("id", INT32_SCHEMA).build()
VALUE = (
    SchemaBuilder.struct()
    .name("v")
    .field("id", INT32_SCHEMA)
    .field("name", OPTIONAL_STRING_SCHEMA)
    .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "10").optional().build())
    .build()
)


def _value(schema: Schema, **values: Any) -> Struct:
    s = Struct(schema)
    for k, v in values.items():
        s.put(k, v)
    return s


class Sink:
    def __init__(self, target: Target, reporter: ErrantRecordReporter | None = None, **props: str) -> None:
        self.target = target
        self.offset = 0
        self.task = JdbcSinkTask()
        self.task.initialize(Context(reporter))
        self.task.start(
            {
                "connection.url": target.url,
                "connection.user": target.user,
                "connection.password": target.password,
                "table.name.format": target.table_format(),
                **props,
            }
        )

    def record(
        self, key: Any, value: Struct | None, key_schema: Schema | None = KEY, topic: str = "items"
    ) -> SinkRecord:
        self.offset += 1
        return SinkRecord(
            topic=topic,
            kafka_partition=0,
            key_schema=key_schema,
            key=key,
            value_schema=value.schema if value is not None else None,
            value=value,
            kafka_offset=self.offset - 1,
        )

    def row(self, id_: int, name: str | None, amount: str | None = "1.00", **kw: Any) -> SinkRecord:
        amount_value = decimal.Decimal(amount) if amount is not None else None
        return self.record(_value(KEY, id=id_), _value(VALUE, id=id_, name=name, amount=amount_value), **kw)

    def delete(self, id_: int) -> SinkRecord:
        return self.record(_value(KEY, id=id_), None)

    def put(self, *records: SinkRecord) -> None:
        self.task.put(list(records))

    def flush(self) -> None:
        self.task.flush({})

    def stop(self) -> None:
        self.task.stop()


def _names(target: Target, table: str = "items") -> list[tuple[Any, ...]]:
    return [(r[0], r[1]) for r in target.rows(table)]


def test_upsert_collapses_a_batch_and_deletes_on_tombstones(target: Target) -> None:
    sink = Sink(
        target,
        **{"insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true", "delete.enabled": "true"},
    )
    try:
        sink.put(sink.row(1, "a"), sink.row(2, "b"), sink.row(1, "a2"), sink.row(3, "c"), sink.delete(3))
        assert sink.task.buffer is not None and len(sink.task.buffer) == 5  # batched across puts
        sink.put(sink.row(4, "d", "12.34"))
        sink.flush()
        assert target.rows("items") == [
            (1, "a2", decimal.Decimal("1.00") if target.family != "sqlite" else 1),
            (2, "b", decimal.Decimal("1.00") if target.family != "sqlite" else 1),
            (4, "d", decimal.Decimal("12.34") if target.family != "sqlite" else 12.34),
        ]
        # redelivery after a crash: the same records again change nothing
        sink.put(sink.row(1, "a2"), sink.row(2, "b"), sink.delete(3))
        sink.put()  # an idle poll writes what is buffered
        assert _names(target) == [(1, "a2"), (2, "b"), (4, "d")]
        # a key deleted and re-inserted in one batch ends inserted
        sink.put(sink.delete(2), sink.row(2, "b2"), sink.delete(4))
        sink.flush()
        assert _names(target) == [(1, "a2"), (2, "b2")]
    finally:
        sink.stop()


def test_insert_mode_keeps_duplicates_out_only_through_the_key(target: Target) -> None:
    sink = Sink(target, **{"pk.mode": "kafka", "auto.create": "true"})
    try:
        sink.put(sink.row(1, "a"), sink.row(1, "a"))
        sink.flush()
        rows = target.query(
            "SELECT __connect_topic, __connect_partition, __connect_offset, name "
            f"FROM {target.table('items')} ORDER BY __connect_offset"
        )
        assert rows == [("items", 0, 0, "a"), ("items", 0, 1, "a")]
    finally:
        sink.stop()


def test_update_mode_changes_only_existing_rows(target: Target) -> None:
    target.execute(
        f"CREATE TABLE {target.table('items')} (id INT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2))"
    )
    target.execute(
        f"INSERT INTO {target.table('items')} VALUES (1, 'old', 1.00), (2, 'old2', 1.00), (3, 'x', 1.00)"
    )
    sink = Sink(target, **{"insert.mode": "update", "pk.mode": "record_key"})
    try:
        # a null first (MySQL's derived table takes its column types from all rows), an absent key
        sink.put(sink.row(3, None, None), sink.row(1, "new", "2.50"), sink.row(4, "never"))
        sink.flush()
        amounts = [r[2] for r in target.rows("items")]
        assert _names(target) == [(1, "new"), (2, "old2"), (3, None)]
        assert [float(a) if a is not None else None for a in amounts] == [2.5, 1.0, None]
    finally:
        sink.stop()


def test_auto_evolve_adds_a_nullable_column_and_refuses_a_type_change(target: Target) -> None:
    sink = Sink(
        target,
        **{"insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true", "auto.evolve": "true"},
    )
    wider = (
        SchemaBuilder.struct()
        .name("v")
        .field("id", INT32_SCHEMA)
        .field("name", OPTIONAL_STRING_SCHEMA)
        .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "10").optional().build())
        .field("email", STRING_SCHEMA)  # NOT NULL upstream, no default: added nullable all the same
        .field("score", SchemaBuilder.int64().optional().default_value(7).build())
        .build()
    )
    try:
        sink.put(sink.row(1, "a"))
        sink.flush()
        sink.put(sink.record(_value(KEY, id=2), _value(wider, id=2, name="b", email="b@x", score=None)))
        sink.flush()
        rows = target.query(f"SELECT id, name, email, score FROM {target.table('items')} ORDER BY id")
        assert rows == [(1, "a", None, 7), (2, "b", "b@x", 7)]
        # a field that changed type (amount now text) cannot be written into the INT column: refused, named
        changed = (
            SchemaBuilder.struct().name("v").field("id", INT32_SCHEMA).field("amount", STRING_SCHEMA).build()
        )
        sink.put(sink.record(_value(KEY, id=3), _value(changed, id=3, amount="lots")))
        with pytest.raises(ConnectError) as failure:
            sink.flush()
        text = str(failure.value)
        assert "Cannot evolve table" in text and "column amount" in text and "ALTER TABLE" in text
        assert "offset=2" in text
        assert [r[0] for r in target.rows("items")] == [1, 2]
    finally:
        sink.stop()


def test_a_refused_value_goes_to_the_reporter_and_the_rest_is_written(target: Target) -> None:
    target.execute(
        f"CREATE TABLE {target.table('items')} "
        "(id INT PRIMARY KEY, name VARCHAR(5) NOT NULL, amount DECIMAL(10,2))"
    )
    # SQLite does not enforce VARCHAR lengths: a NOT NULL refusal there instead
    bad_name = None if target.family == "sqlite" else "much too long"
    recorder = Recorder()
    sink = Sink(target, recorder, **{"insert.mode": "upsert", "pk.mode": "record_key"})
    try:
        sink.put(sink.row(1, "ok"), sink.row(2, bad_name), sink.row(3, "fine"))
        sink.flush()
        assert _names(target) == [(1, "ok"), (3, "fine")]
        assert len(recorder.reported) == 1
        record, error = recorder.reported[0]
        assert record.kafka_offset == 1
        assert "refused the record at (topic='items',partition=0,offset=1" in str(error)
        assert "name" in str(error)  # the column, named by us (PostgreSQL) or by the database
    finally:
        sink.stop()


def test_without_a_reporter_a_refused_value_fails_and_writes_nothing(target: Target) -> None:
    target.execute(
        f"CREATE TABLE {target.table('items')} "
        "(id INT PRIMARY KEY, name VARCHAR(5) NOT NULL, amount DECIMAL(10,2))"
    )
    sink = Sink(target, None, **{"insert.mode": "upsert", "pk.mode": "record_key"})
    try:
        sink.put(sink.row(1, "ok"), sink.row(2, None))
        with pytest.raises(ConnectError) as failure:
            sink.flush()
        assert "offset=1" in str(failure.value)
        assert target.rows("items") == []  # never half a batch
    finally:
        sink.stop()


def test_a_record_without_the_key_is_reported_by_coordinates(target: Target) -> None:
    recorder = Recorder()
    sink = Sink(target, recorder, **{"insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true"})
    try:
        sink.put(sink.record(None, _value(VALUE, id=1, name="x"), key_schema=None), sink.row(2, "y"))
        sink.flush()
        assert _names(target) == [(2, "y")]
        assert "pk.mode record_key" in str(recorder.reported[0][1])
        assert "offset=0" in str(recorder.reported[0][1])
    finally:
        sink.stop()


def test_types_land_as_their_column_types(target: Target) -> None:
    schema = (
        SchemaBuilder.struct()
        .name("typed")
        .field("id", INT64_SCHEMA)
        .field("price", Decimal.builder(3).parameter("connect.decimal.precision", "12").build())
        .field("born", Date.schema())
        .field("alarm", Time.schema())
        .field("seen", Timestamp.schema())
        .field("ratio", FLOAT64_SCHEMA)
        .field("flag", OPTIONAL_BOOLEAN_SCHEMA)
        .build()
    )
    key = SchemaBuilder.struct().field("id", INT64_SCHEMA).build()
    value = _value(
        schema,
        id=1,
        price=decimal.Decimal("12.500"),
        born=dt.date(1990, 5, 17),
        alarm=dt.time(7, 30, 0, 250000),
        seen=dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC),
        ratio=0.25,
        flag=True,
    )
    sink = Sink(
        target,
        **{
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "auto.create": "true",
            "db.timezone": "Europe/Paris",
        },
    )
    try:
        sink.put(sink.record(_value(key, id=1), value, key_schema=key, topic="typed"))
        sink.flush()
        types = target.column_types("typed")
        row = target.rows("typed")[0]
        if target.family == "postgresql":
            assert types == {
                "id": "bigint",
                "price": "numeric",
                "born": "date",
                "alarm": "time without time zone",
                "seen": "timestamp without time zone",
                "ratio": "double precision",
                "flag": "boolean",
            }
            assert target.query(
                "SELECT numeric_precision, numeric_scale FROM information_schema.columns "
                f"WHERE table_schema='{target.namespace}' AND column_name='price'"
            ) == [(12, 3)]
            assert row == (
                1,
                decimal.Decimal("12.500"),
                dt.date(1990, 5, 17),
                dt.time(7, 30, 0, 250000),
                dt.datetime(2024, 1, 2, 4, 4, 5, 678000),  # wall time in db.timezone (Paris, UTC+1)
                0.25,
                True,
            )
        elif target.family == "mysql":
            assert types["price"] == "decimal(12,3)" and types["seen"] == "datetime(3)"
            assert types["born"] == "date" and types["alarm"] == "time(3)" and types["flag"] == "tinyint(1)"
            assert row[1] == decimal.Decimal("12.500") and row[4] == dt.datetime(2024, 1, 2, 4, 4, 5, 678000)
            assert row[3] == dt.timedelta(hours=7, minutes=30, microseconds=250000)
        else:
            assert row == (1, 12.5, "1990-05-17", "07:30:00.250000", "2024-01-02 04:04:05.678", 0.25, 1)
    finally:
        sink.stop()


def test_validate_names_the_wrong_password_the_wrong_url_and_upsert_without_key(target: Target) -> None:
    if target.family == "sqlite":
        pytest.skip("SQLite has no password and creates any file")
    base = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "connection.url": target.url,
        "connection.user": target.user,
        "connection.password": target.password,
        "topics": "items",
    }

    def errors(**overrides: str) -> dict[str, list[str]]:
        results = JdbcSinkConnector().validate({**base, **overrides})
        return {r.name: r.errors for r in results if r.errors}

    assert errors() == {}
    wrong = errors(**{"connection.password": "not-the-password"})
    assert (
        list(wrong) == ["connection.password"] and "not-the-password" not in wrong["connection.password"][0]
    )
    assert list(
        errors(**{"connection.url": target.url.replace(target.url.split("/")[2], "127.0.0.1:1")})
    ) == ["connection.url"]
    assert "Not a JDBC URL" in errors(**{"connection.url": "postgres://x"})["connection.url"][0]
    upsert = errors(**{"insert.mode": "upsert"})
    assert "requires key field names" in upsert["pk.mode"][0]
    deletes = errors(**{"delete.enabled": "true", "pk.mode": "record_value"})
    assert deletes["pk.mode"] == [
        "'record_value' is invalid: Deletes are only supported for pk.mode 'record_key'"
    ]
    assert errors(**{"insert.mode": "merge"})["insert.mode"] == [
        "Invalid value merge for configuration insert.mode: Invalid enumerator"
    ]


def test_a_killed_connection_is_replaced_and_the_batch_written_whole(target: Target) -> None:
    if target.family == "sqlite":
        pytest.skip("no server connection to kill")
    sink = Sink(
        target,
        **{
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "auto.create": "true",
            "retry.backoff.ms": "100",
        },
    )
    try:
        sink.put(sink.row(1, "a"))
        sink.flush()
        assert sink.task.writer is not None
        conn = sink.task.writer.connection()
        if target.family == "postgresql":
            target.execute(f"SELECT pg_terminate_backend({conn.info.backend_pid})")
        else:
            target.execute(f"KILL {conn.thread_id()}")
        sink.put(sink.row(2, "b"), sink.row(1, "a2"))
        sink.flush()  # the first attempt meets the dead connection; the retry writes the batch
        assert _names(target) == [(1, "a2"), (2, "b")]
        assert sink.task.writer.connection() is not conn
    finally:
        sink.stop()
