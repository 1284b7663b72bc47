"""HeaderFrom, InsertHeader, DropHeaders and Flatten."""

from __future__ import annotations

import pytest

from cdc.api import (
    INT8_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    STRING_SCHEMA,
    ConfigError,
    DataError,
    Headers,
    SchemaBuilder,
    SourceRecord,
    Struct,
)
from cdc.transforms.flatten import FlattenValue
from cdc.transforms.headers import DropHeaders, HeaderFromValue, InsertHeader

SCHEMA = SchemaBuilder.struct().name("v").field("a", INT32_SCHEMA).field("b", STRING_SCHEMA).build()


def rec(value, schema=None, headers=None) -> SourceRecord:
    return SourceRecord("t", 0, None, None, schema, value, headers=headers or Headers())


def make(cls, **cfg):
    t = cls()
    t.configure(cfg)
    return t


def test_header_from_move_and_copy() -> None:
    moved = make(HeaderFromValue, fields="a", headers="h_a", operation="move").apply(
        rec(Struct(SCHEMA, [1, "x"]), SCHEMA)
    )
    assert moved.value.as_dict() == {"b": "x"} and moved.value_schema.name == "v"
    h = moved.headers.last_with_name("h_a")
    assert h.value == 1 and h.schema == INT32_SCHEMA
    original = rec({"a": 1, "b": 2})
    copied = make(HeaderFromValue, fields="a,b", headers="x,y", operation="copy").apply(original)
    assert copied.value == {"a": 1, "b": 2} and [x.key for x in copied.headers] == ["x", "y"]
    assert len(original.headers) == 0  # the input record's headers are untouched


def test_header_from_errors() -> None:
    with pytest.raises(ConfigError, match="'fields' config must have the same number of elements"):
        make(HeaderFromValue, fields="a,b", headers="x", operation="copy")
    with pytest.raises(ConfigError, match="String must be one of: move, copy"):
        make(HeaderFromValue, fields="a", headers="x", operation="cut")
    with pytest.raises(
        DataError, match=r"Only Map objects supported in absence of schema for \[header copy\]"
    ):
        make(HeaderFromValue, fields="a", headers="x", operation="copy").apply(rec("str"))


def test_insert_and_drop_headers() -> None:
    out = make(InsertHeader, header="n", **{"value.literal": "42"}).apply(rec(None))
    h = out.headers.last_with_name("n")
    assert (h.value, h.schema) == (42, INT8_SCHEMA)
    assert (
        make(InsertHeader, header="s", **{"value.literal": "hi"})
        .apply(rec(None))
        .headers.last_with_name("s")
        .value
        == "hi"
    )
    headers = Headers().add("a", 1).add("b", 2).add("a", 3)
    dropped = make(DropHeaders, headers="a").apply(rec(None, headers=headers))
    assert [x.key for x in dropped.headers] == ["b"] and len(headers) == 3


def test_flatten_with_schema() -> None:
    inner = SchemaBuilder.struct().field("x", INT32_SCHEMA).field("y", STRING_SCHEMA).optional().build()
    outer = SchemaBuilder.struct().name("o").field("id", INT32_SCHEMA).field("in", inner).build()
    t = make(FlattenValue, delimiter="_")
    out = t.apply(rec(Struct(outer, [1, Struct(inner, [2, "z"])]), outer))
    assert out.value.as_dict() == {"id": 1, "in_x": 2, "in_y": "z"}
    assert out.value_schema.field("in_x").schema == OPTIONAL_INT32_SCHEMA  # inside an optional struct
    assert t.apply(rec(Struct(outer, [1, None]), outer)).value.as_dict() == {
        "id": 1,
        "in_x": None,
        "in_y": None,
    }
    bad = SchemaBuilder.struct().field("m", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).build()).build()
    with pytest.raises(
        DataError, match="Flatten transformation does not support MAP for record with schemas"
    ):
        t.apply(rec(Struct(bad, [{}]), bad))


def test_flatten_schemaless() -> None:
    t = make(FlattenValue)
    assert t.apply(rec({"a": {"b": {"c": 1}, "d": [1]}, "e": None})).value == {
        "a.b.c": 1,
        "a.d": [1],
        "e": None,
    }
    tomb = rec(None)
    assert t.apply(tomb) is tomb
