"""Struct, map and array fields (other than Debezium's semantic types) written by the JDBC sink: into
PostgreSQL as JSONB and native arrays, refused by MariaDB and SQLite naming the column."""

from __future__ import annotations

import decimal
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc.api.schema import (
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Decimal,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from tests.integration.jdbc_sink_targets import Target, mariadb_target, postgres_target, sqlite_target
from tests.integration.test_jdbc_sink import KEY, Recorder, Sink, _value

pytestmark = pytest.mark.integration

ADDRESS = (
    SchemaBuilder.struct()
    .name("address")
    .field("city", STRING_SCHEMA)
    .field("zip", OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
PRICE = Decimal.builder(2).optional().build()
VALUE = (
    SchemaBuilder.struct()
    .name("v")
    .field("id", INT32_SCHEMA)
    .field("address", ADDRESS)
    .field("tags", SchemaBuilder.array(STRING_SCHEMA).optional().build())
    .field("scores", SchemaBuilder.array(SchemaBuilder.int32().optional().build()).optional().build())
    .field("prices", SchemaBuilder.array(PRICE).optional().build())
    .field("attrs", SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).optional().build())
    .field("lines", SchemaBuilder.array(ADDRESS).optional().build())
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


def test_structs_maps_and_arrays(target: Target) -> None:
    recorder = Recorder()
    sink = Sink(target, recorder, **{"insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true"})
    try:
        home = Struct(ADDRESS).put("city", "Lyon").put("zip", None)
        row = _value(
            VALUE,
            id=1,
            address=home,
            tags=["a", "b"],
            scores=[1, None, 3],
            prices=[decimal.Decimal("1.50"), decimal.Decimal("-2.25")],
            attrs={"x": 1},
            lines=[home],
        )
        sink.put(sink.record(_value(KEY, id=1), row))
        sink.flush()
        if target.family != "postgresql":
            assert len(recorder.reported) == 1
            message = str(recorder.reported[0][1])
            assert "Column address" in message and "Unsupported source data type: STRUCT" in message
            return
        assert recorder.reported == []
        types = target.column_types("items")
        assert types["address"] == "jsonb" and types["attrs"] == "jsonb" and types["lines"] == "jsonb"
        assert types["tags"] == types["scores"] == types["prices"] == "array"
        assert target.query(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
            f" WHERE attrelid = '{target.namespace}.items'::regclass"
            " AND attname IN ('tags','scores','prices')"
            " ORDER BY attname"
        ) == [("numeric[]",), ("integer[]",), ("text[]",)]
        (got,) = target.query(
            f"SELECT address, tags, scores, prices, attrs, lines FROM {target.table('items')}"
        )
        address, tags, scores, prices, attrs, lines = got
        assert address == {"city": "Lyon", "zip": None}
        assert tags == ["a", "b"] and scores == [1, None, 3]
        assert prices == [decimal.Decimal("1.50"), decimal.Decimal("-2.25")]
        assert attrs == {"x": 1} and lines == [{"city": "Lyon", "zip": None}]
        assert json.loads(json.dumps(address)) == address
    finally:
        sink.stop()
