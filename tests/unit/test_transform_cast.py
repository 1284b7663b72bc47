"""Cast: field specs and whole-value casts, with Java's narrowing and parsing."""

from __future__ import annotations

import pytest

from cdc.api import (
    BYTES_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    STRING_SCHEMA,
    ConfigError,
    DataError,
    SchemaBuilder,
    SourceRecord,
    Struct,
    Type,
)
from cdc.transforms.cast import CastValue, cast_value, java_double


def make(spec: str) -> CastValue:
    t: CastValue = CastValue()
    t.configure({"spec": spec})
    return t


def rec(value, schema=None) -> SourceRecord:
    return SourceRecord("t", 0, None, None, schema, value)


def test_cast_fields_with_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("v")
        .field("a", INT64_SCHEMA)
        .field("b", OPTIONAL_INT32_SCHEMA)
        .field("c", FLOAT64_SCHEMA)
        .field("d", BYTES_SCHEMA)
        .build()
    )
    value = Struct(schema, [300, None, 2.9, b"\x01\x02"])
    out = make("a:int8,b:string,c:int32,d:string").apply(rec(value, schema))
    assert out.value.values == [44, None, 2, "AQI="]
    assert out.value_schema.field("a").schema.type is Type.INT8
    assert out.value_schema.field("b").schema.optional and out.value_schema.name == "v"


def test_cast_schemaless_and_whole_value() -> None:
    assert make("a:boolean,b:float64,c:string").apply(rec({"a": "TRUE", "b": "1.5", "c": 1e10})).value == {
        "a": True,
        "b": 1.5,
        "c": "1.0E10",
    }
    out = make("int32").apply(rec("123", STRING_SCHEMA))
    assert out.value == 123 and out.value_schema == INT32_SCHEMA
    assert make("string").apply(rec(5)).value == "5"


def test_cast_conversions() -> None:
    assert cast_value(INT8_SCHEMA, 5, Type.BOOLEAN) is True
    assert cast_value(None, -1.9, Type.INT16) == -1
    assert cast_value(None, 1e20, Type.INT32) == 2**31 - 1
    assert cast_value(None, True, Type.STRING) == "true"
    assert java_double(100.0) == "100.0" and java_double(0.0001) == "1.0E-4"
    with pytest.raises(DataError, match="For input string"):
        cast_value(None, "abc", Type.INT32)
    with pytest.raises(DataError, match="does not support casting from ARRAY"):
        cast_value(None, [1], Type.STRING)


def test_cast_config_errors() -> None:
    with pytest.raises(ConfigError, match="Invalid type found in casting spec: nope"):
        make("a:nope")
    with pytest.raises(ConfigError, match="does not support casting to/from BYTES"):
        make("a:bytes")
    with pytest.raises(ConfigError, match="may only specify a single cast"):
        make("int32,a:int8")
