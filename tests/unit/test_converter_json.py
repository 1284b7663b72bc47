"""JsonConverter against hand-written expected bytes (tests/fixtures/converters/json_expected.json)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from cdc.api import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    DataError,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from cdc.converters import JsonConverter
from cdc.converters._java import java_double, java_float
from cdc.converters.json_converter import ENVELOPE_ERROR

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "converters" / "json_expected.json"
EXPECTED: dict[str, list[str]] = json.loads(FIXTURES.read_text(encoding="utf-8"))["cases"]


def _person() -> tuple[Schema, Struct]:
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Person")
        .version(2)
        .doc("a person")
        .parameter("k", "v")
        .field("id", INT32_SCHEMA)
        .field("name", OPTIONAL_STRING_SCHEMA)
        .field("nick", SchemaBuilder.string().default_value("none").build())
        .field("tags", SchemaBuilder.array(STRING_SCHEMA).optional().build())
        .build()
    )
    return schema, Struct(schema).put("id", 1)


def _opt_default() -> tuple[Schema, Struct]:
    schema = (
        SchemaBuilder.struct()
        .field("opt", SchemaBuilder.string().optional().default_value("d").build())
        .build()
    )
    return schema, Struct(schema)


DEC2 = Decimal.schema(2)
CASES: dict[str, tuple[Schema | None, Any]] = {
    "string_seed": (STRING_SCHEMA, "first message"),
    "int8": (INT8_SCHEMA, 5),
    "int16": (INT16_SCHEMA, -300),
    "int32_max": (INT32_SCHEMA, 2**31 - 1),
    "int64_min": (INT64_SCHEMA, -(2**63)),
    "float32_tenth": (FLOAT32_SCHEMA, 0.1),
    "float32_big": (FLOAT32_SCHEMA, 1e10),
    "double_one": (FLOAT64_SCHEMA, 1.0),
    "double_1e7": (FLOAT64_SCHEMA, 1e7),
    "double_small": (FLOAT64_SCHEMA, 1.5e-5),
    "double_plain": (FLOAT64_SCHEMA, 123.456),
    "double_nan": (FLOAT64_SCHEMA, math.nan),
    "boolean": (BOOLEAN_SCHEMA, True),
    "bytes": (BYTES_SCHEMA, b"\x00\x01\xff"),
    "optional_null": (OPTIONAL_STRING_SCHEMA, None),
    "decimal_base64": (DEC2, decimal.Decimal("12.34")),
    "decimal_negative": (DEC2, decimal.Decimal("-1.00")),
    "decimal_precision": (
        Decimal.builder(2).parameter("connect.decimal.precision", "10").optional().build(),
        decimal.Decimal("12.34"),
    ),
    "date": (Date.schema(), dt.date(2024, 1, 2)),
    "time": (Time.schema(), dt.time(1, 2, 3, 4000)),
    "timestamp": (Timestamp.schema(), dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)),
    "array": (SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3]),
    "map_string_keys": (SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build(), {"a": 1, "b": 2}),
    "map_int_keys": (SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build(), {1: "x", 2: "y"}),
    "struct": _person(),
    "escapes": (STRING_SCHEMA, 'a"b\\c\n\t\x01\x1f/é'),
    "schemaless": (None, {"a": 1, "b": [True, None], "c": 1.5}),
}


def _conv(**props: str) -> JsonConverter:
    c = JsonConverter()
    c.configure(props, False)
    return c


@pytest.mark.parametrize("name", sorted(CASES))
def test_from_connect_matches_connect_bytes(name: str) -> None:
    schema, value = CASES[name]
    with_schema, plain = EXPECTED[name]
    assert _conv().from_connect_data("t", schema, value) == with_schema.encode()
    assert _conv(**{"schemas.enable": "false"}).from_connect_data("t", schema, value) == plain.encode()


def test_decimal_numeric_format() -> None:
    with_schema, plain = EXPECTED["decimal_numeric"]
    value = decimal.Decimal("12.34")
    assert _conv(**{"decimal.format": "NUMERIC"}).from_connect_data("t", DEC2, value) == with_schema.encode()
    conv = _conv(**{"decimal.format": "numeric", "schemas.enable": "false"})
    assert conv.from_connect_data("t", DEC2, value) == plain.encode()


def test_replace_null_with_default() -> None:
    schema, value = _opt_default()
    replaced, _ = EXPECTED["optional_default_replaced"]
    kept, _ = EXPECTED["optional_default_kept_null"]
    assert _conv().from_connect_data("t", schema, value) == replaced.encode()
    assert (
        _conv(**{"replace.null.with.default": "false"}).from_connect_data("t", schema, value) == kept.encode()
    )


def test_null_schema_and_value_is_null() -> None:
    assert _conv().from_connect_data("t", None, None) is None


def test_required_null_raises() -> None:
    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).build()
    with pytest.raises(DataError, match="null value for field that is required"):
        _conv().from_connect_data("t", schema, Struct(schema))


@pytest.mark.parametrize("name", sorted(set(CASES) - {"double_nan", "schemaless", "optional_null"}))
def test_round_trip_with_schemas(name: str) -> None:
    schema, value = CASES[name]
    conv = _conv()
    back = conv.to_connect_data("t", conv.from_connect_data("t", schema, value))
    assert back.schema == schema
    if schema is not None and schema.type.value == "float":
        assert back.value == pytest.approx(value, rel=1e-7)
    elif name == "struct":
        assert back.value.get("nick") == "none" and back.value.get("id") == 1
    else:
        assert back.value == value


def test_to_connect_parses_the_seed_record() -> None:
    back = _conv().to_connect_data("t", EXPECTED["string_seed"][0].encode())
    assert back.schema == STRING_SCHEMA and back.value == "first message"


def test_schemas_enable_requires_envelope() -> None:
    with pytest.raises(DataError) as err:
        _conv().to_connect_data("t", b'{"a":1}')
    assert str(err.value) == ENVELOPE_ERROR
    assert ENVELOPE_ERROR.startswith(
        'JsonConverter with schemas.enable requires "schema" and "payload" fields'
    )


def test_schemaless_parsing() -> None:
    conv = _conv(**{"schemas.enable": "false"})
    back = conv.to_connect_data("t", b'{"a":1,"b":[true,null],"c":1.5,"d":"x"}')
    assert back.schema is None
    assert back.value == {"a": 1, "b": [True, None], "c": 1.5, "d": "x"}
    assert conv.to_connect_data("t", None).value is None


def test_numeric_decimal_parsing_keeps_digits() -> None:
    data = (
        b'{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
        b'"version":1,"parameters":{"scale":"20"}},"payload":1.12345678901234567890}'
    )
    assert _conv().to_connect_data("t", data).value == decimal.Decimal("1.12345678901234567890")


def test_schema_cache_is_bounded() -> None:
    conv = _conv(**{"schemas.cache.size": "2"})
    for i in range(5):
        conv.from_connect_data("t", SchemaBuilder.int32().name(f"n{i}").build(), i)
    assert len(conv._compiled) <= 2


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (0.001, "0.001"),
        (0.00099, "9.9E-4"),
        (1e21, "1.0E21"),
        (1.2345e-7, "1.2345E-7"),
        (5e-324, "4.9E-324"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (math.inf, "Infinity"),
    ],
)
def test_java_double_to_string(value: float, text: str) -> None:
    assert java_double(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (1e10, "1.0E10"),
        (3.4028234663852886e38, "3.4028235E38"),
        (1.4e-45, "1.4E-45"),
        (16777216.0, "1.6777216E7"),
        (0.3, "0.3"),
    ],
)
def test_java_float_to_string(value: float, text: str) -> None:
    assert java_float(value) == text


def test_orjson_doubles_match_java_inside_plain_range() -> None:
    rng = random.Random(7)
    for _ in range(20000):
        value = rng.uniform(1e-3, 1e7) * rng.choice((1, -1))
        value = float(f"{value:.{rng.randint(1, 17)}g}")
        if 1e-3 <= abs(value) < 1e7:
            assert orjson.dumps(value).decode() == java_double(value)
