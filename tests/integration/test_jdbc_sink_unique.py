"""A batch that moves values of a secondary unique key between rows, into the stack's PostgreSQL and MariaDB
and into SQLite: the rows are collapsed by primary key only where that is safe, and the batch is written
before a change that would otherwise collapse across a conflict on the unique key.

The table exists beforehand with ``UNIQUE (email)`` besides its primary key (the sink never creates
secondary keys: a user's table does). Without the flush the swap below is refused by the database (or,
on MariaDB, ``ON DUPLICATE KEY UPDATE`` would update the *other* row that holds the email), and the
records would be reported as refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc.api.records import SinkRecord
from cdc.api.schema import INT32_SCHEMA, OPTIONAL_STRING_SCHEMA, SchemaBuilder
from cdc.jdbcsink.task import JdbcSinkTask
from tests.integration.jdbc_sink_targets import Target, mariadb_target, postgres_target, sqlite_target
from tests.integration.test_jdbc_sink import Context, Recorder, _value

pytestmark = pytest.mark.integration

KEY = SchemaBuilder.struct().name("k").field("id", INT32_SCHEMA).build()
VALUE = (
    SchemaBuilder.struct()
    .name("v")
    .field("id", INT32_SCHEMA)
    .field("email", OPTIONAL_STRING_SCHEMA)
    .field("note", OPTIONAL_STRING_SCHEMA)
    .build()
)


@pytest.fixture(params=["postgresql", "mariadb", "sqlite"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    if request.param == "postgresql":
        yield from postgres_target()
    elif request.param == "mariadb":
        yield from mariadb_target()
    else:
        yield from sqlite_target(tmp_path)


def _create(target: Target) -> None:
    text = "VARCHAR(100)"
    target.execute(
        f"CREATE TABLE {target.table('people')} (id INT NOT NULL PRIMARY KEY, email {text} NULL,"
        f" note {text} NULL, CONSTRAINT people_email UNIQUE (email))"
    )
    target.execute(
        f"INSERT INTO {target.table('people')} VALUES"
        " (1, 'a@x', 'one'), (2, 'b@x', 'two'), (3, 'c@x', 'three')"
    )


class _Sink:
    def __init__(self, target: Target, **props: str) -> None:
        self.offset = 0
        self.recorder = Recorder()
        self.task = JdbcSinkTask()
        self.task.initialize(Context(self.recorder))
        self.task.start(
            {
                "connection.url": target.url,
                "connection.user": target.user,
                "connection.password": target.password,
                "table.name.format": target.table_format("people"),
                "insert.mode": "upsert",
                "pk.mode": "record_key",
                "delete.enabled": "true",
                "batch.size": "1000",
                **props,
            }
        )

    def row(self, id_: int, email: str | None, note: str = "") -> SinkRecord:
        return self._record(id_, _value(VALUE, id=id_, email=email, note=note))

    def delete(self, id_: int) -> SinkRecord:
        return self._record(id_, None)

    def _record(self, id_: int, value: Any) -> SinkRecord:
        self.offset += 1
        return SinkRecord(
            topic="people",
            kafka_partition=0,
            key_schema=KEY,
            key=_value(KEY, id=id_),
            value_schema=VALUE if value is not None else None,
            value=value,
            kafka_offset=self.offset - 1,
        )


def test_a_swap_of_unique_values_inside_one_batch(target: Target) -> None:
    _create(target)
    sink = _Sink(target)
    try:
        sink.task.put(
            [
                # 1 and 2 swap their emails through a temporary value, as an application must
                sink.row(1, "tmp@x"),
                sink.row(2, "a@x"),
                sink.row(1, "b@x", "swapped"),
                # 3 gives its email up, 4 (new) takes it, then 3 changes again (note only)
                sink.row(3, "c2@x"),
                sink.row(4, "c@x", "new"),
                sink.row(3, "c2@x", "three again"),
                # 4 is deleted and comes back with another value, 5 takes 4's value after the delete
                sink.delete(4),
                sink.row(5, "c@x", "five"),
                sink.row(4, "d@x", "back"),
            ]
        )
        sink.task.flush({})
        assert sink.recorder.reported == []
        assert [tuple(r) for r in target.rows("people")] == [
            (1, "b@x", "swapped"),
            (2, "a@x", ""),
            (3, "c2@x", "three again"),
            (4, "d@x", "back"),
            (5, "c@x", "five"),
        ]
    finally:
        sink.task.stop()


def test_a_batch_without_unique_conflicts_is_still_one_write(target: Target) -> None:
    _create(target)
    sink = _Sink(target)
    try:
        writes: list[int] = []
        assert sink.task.writer is not None
        original = sink.task.writer.write

        def counting(buffer: Any, report: Any) -> None:
            writes.append(len(buffer))
            original(buffer, report)

        sink.task.writer.write = counting  # type: ignore[method-assign]
        # the same key changed again without touching its unique value collapses as before
        sink.task.put([sink.row(1, "a@x", "n1"), sink.row(2, "b@x", "n2"), sink.row(1, "a@x", "n3")])
        sink.task.flush({})
        assert writes == [3]
        assert [tuple(r) for r in target.rows("people")][:2] == [(1, "a@x", "n3"), (2, "b@x", "n2")]
    finally:
        sink.task.stop()
