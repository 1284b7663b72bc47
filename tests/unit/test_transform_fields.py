"""InsertField, ReplaceField, MaskField, ExtractField, ValueToKey, HoistField: with and without schemas."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdc.api import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    ConfigError,
    DataError,
    Decimal,
    SchemaBuilder,
    SinkRecord,
    SourceRecord,
    Struct,
    Timestamp,
)
from cdc.transforms.fields import (
    ExtractFieldKey,
    ExtractFieldValue,
    HoistFieldKey,
    HoistFieldValue,
    InsertFieldValue,
    MaskFieldValue,
    ReplaceFieldValue,
    ValueToKey,
)

SCHEMA = (
    SchemaBuilder.struct()
    .name("t.Value")
    .version(3)
    .field("id", INT32_SCHEMA)
    .field("name", OPTIONAL_STRING_SCHEMA)
    .field("n", INT64_SCHEMA)
    .build()
)


def rec(value, schema=None, **kw) -> SourceRecord:
    return SourceRecord("topic", 2, None, None, schema, value, timestamp=kw.pop("timestamp", 1000), **kw)


def struct(id=1, name="a", n=7) -> Struct:
    return Struct(SCHEMA, [id, name, n])


def make(cls, **cfg):
    t = cls()
    t.configure(cfg)
    return t


# -- InsertField --------------------------------------------------------------------------------------------


def test_insert_field_with_schema() -> None:
    t = make(
        InsertFieldValue,
        **{
            "topic.field": "t!",
            "partition.field": "p",
            "timestamp.field": "ts",
            "static.field": "s",
            "static.value": "v",
        },
    )
    out = t.apply(rec(struct(), SCHEMA))
    assert out.value.as_dict() == {
        "id": 1,
        "name": "a",
        "n": 7,
        "t": "topic",
        "p": 2,
        "ts": dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC),
        "s": "v",
    }
    schema = out.value_schema
    assert schema.name == "t.Value" and schema.version == 3
    assert schema.field("t").schema == STRING_SCHEMA and schema.field("p").schema == OPTIONAL_INT32_SCHEMA
    assert schema.field("ts").schema == Timestamp.schema(optional=True)
    assert t.apply(rec(struct(2), SCHEMA)).value_schema is schema  # cached per input schema


def test_insert_field_schemaless_and_tombstone() -> None:
    t = make(InsertFieldValue, **{"topic.field": "t", "timestamp.field": "ts"})
    assert t.apply(rec({"a": 1})).value == {"a": 1, "t": "topic", "ts": 1000}
    tomb = rec(None)
    assert t.apply(tomb) is tomb


def test_insert_field_offset_needs_sink_record_and_required_null_fails() -> None:
    t = make(InsertFieldValue, **{"offset.field": "o"})
    with pytest.raises(DataError, match=r"Only SinkRecord supported for \[field insertion\]"):
        t.apply(rec({"a": 1}))
    sink = SinkRecord("topic", 0, None, None, None, {"a": 1}, kafka_offset=42)
    assert t.apply(sink).value == {"a": 1, "o": 42}
    req = make(InsertFieldValue, **{"timestamp.field": "ts!"})
    with pytest.raises(DataError, match="null used for required field"):
        req.apply(rec(struct(), SCHEMA, timestamp=None))


def test_insert_field_config_errors_and_bad_input() -> None:
    with pytest.raises(ConfigError, match="No field insertion configured"):
        make(InsertFieldValue)
    t = make(InsertFieldValue, **{"topic.field": "t"})
    with pytest.raises(
        DataError,
        match=r"Only Map objects supported in absence of schema for \[field insertion\], "
        r"found: java.lang.String",
    ):
        t.apply(rec("text"))
    with pytest.raises(DataError, match=r"Only Struct objects supported for \[field insertion\]"):
        t.apply(rec("text", STRING_SCHEMA))


# -- ReplaceField -------------------------------------------------------------------------------------------


def test_replace_field_with_schema() -> None:
    t = make(ReplaceFieldValue, exclude="n", renames="id:key,name:label")
    out = t.apply(rec(struct(), SCHEMA))
    assert out.value.as_dict() == {"key": 1, "label": "a"}
    assert out.value_schema.name == "t.Value"
    assert make(ReplaceFieldValue, include="name,n").apply(rec(struct(), SCHEMA)).value.as_dict() == {
        "name": "a",
        "n": 7,
    }


def test_replace_field_schemaless_and_old_names() -> None:
    t = make(ReplaceFieldValue, blacklist="b", renames="a:x")
    assert t.apply(rec({"a": 1, "b": 2, "c": 3})).value == {"x": 1, "c": 3}
    assert make(ReplaceFieldValue, whitelist="c").apply(rec({"a": 1, "c": 3})).value == {"c": 3}
    with pytest.raises(
        ConfigError, match=r"Invalid value \[a\] for configuration renames: Invalid rename mapping: a"
    ):
        make(ReplaceFieldValue, renames="a")


# -- MaskField ----------------------------------------------------------------------------------------------


def test_mask_field_with_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("s", STRING_SCHEMA)
        .field("i", INT32_SCHEMA)
        .field("d", Decimal.schema(2))
        .field("ts", Timestamp.schema())
        .build()
    )
    value = Struct(schema, ["secret", 5, decimal.Decimal("1.50"), dt.datetime(2024, 1, 1, tzinfo=dt.UTC)])
    out = make(MaskFieldValue, fields="s,i,d,ts").apply(rec(value, schema))
    assert out.value.values == ["", 0, decimal.Decimal(0), dt.datetime(1970, 1, 1, tzinfo=dt.UTC)]
    rep = make(MaskFieldValue, fields="s,i", replacement="42").apply(rec(value, schema))
    assert rep.value.values[:2] == ["42", 42]
    with pytest.raises(DataError, match=r"Unable to convert x \(class java.lang.String\) to number"):
        make(MaskFieldValue, fields="i", replacement="x").apply(rec(value, schema))
    with pytest.raises(
        DataError, match=r"Cannot mask value of type class java\.util\.Date with custom replacement\."
    ):
        make(MaskFieldValue, fields="ts", replacement="x").apply(rec(value, schema))


def test_mask_field_schemaless() -> None:
    t = make(MaskFieldValue, fields="a,b,c,missing")
    assert t.apply(rec({"a": "x", "b": 3, "c": [1], "d": True})).value == {
        "a": "",
        "b": 0,
        "c": [],
        "d": True,
        "missing": None,
    }
    with pytest.raises(ConfigError, match="Empty list"):
        make(MaskFieldValue, fields="")


# -- ExtractField -------------------------------------------------------------------------------------------


def test_extract_field() -> None:
    t = make(ExtractFieldValue, field="name")
    out = t.apply(rec(struct(), SCHEMA))
    assert out.value == "a" and out.value_schema == OPTIONAL_STRING_SCHEMA
    assert t.apply(rec({"name": "b"})).value == "b"
    assert t.apply(rec(None, SCHEMA)).value is None
    with pytest.raises(DataError, match="Unknown field: nope"):
        make(ExtractFieldValue, field="nope").apply(rec(struct(), SCHEMA))
    key = SourceRecord("t", 0, SCHEMA, struct(), None, None)
    assert make(ExtractFieldKey, field="id").apply(key).key == 1


def test_extract_field_v2_nested_paths() -> None:
    inner = SchemaBuilder.struct().field("x.y", INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("a", inner).build()
    value = Struct(outer, [Struct(inner, [9])])
    t = make(ExtractFieldValue, field="a.`x.y`", **{"field.syntax.version": "V2"})
    assert t.apply(rec(value, outer)).value == 9
    assert t.apply(rec({"a": {"x.y": 3}})).value == 3
    v1 = make(ExtractFieldValue, field="a.b")
    assert v1.apply(rec({"a.b": 1, "a": {"b": 2}})).value == 1


# -- ValueToKey / HoistField --------------------------------------------------------------------------------


def test_value_to_key() -> None:
    t = make(ValueToKey, fields="id,n")
    out = t.apply(rec(struct(), SCHEMA))
    assert out.key.as_dict() == {"id": 1, "n": 7}
    assert out.key_schema.field("n").schema == INT64_SCHEMA
    assert t.apply(rec({"id": 1, "x": 2})).key == {"id": 1, "n": None}
    with pytest.raises(DataError, match="Field does not exist: zz"):
        make(ValueToKey, fields="zz").apply(rec(struct(), SCHEMA))


def test_hoist_field() -> None:
    out = make(HoistFieldValue, field="wrapped").apply(rec(5, INT32_SCHEMA))
    assert out.value.as_dict() == {"wrapped": 5}
    assert out.value_schema.field("wrapped").schema == INT32_SCHEMA
    assert make(HoistFieldValue, field="w").apply(rec("x")).value == {"w": "x"}
    key = SourceRecord("t", 0, None, "k", None, None)
    assert make(HoistFieldKey, field="id").apply(key).key == {"id": "k"}
