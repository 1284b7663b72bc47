"""String, ByteArray, numeric and SimpleHeader converters: bytes as Kafka's serializers write them."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdc.api import (
    BOOLEAN_SCHEMA,
    FLOAT32_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    DataError,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from cdc.converters import (
    PLUGINS,
    BooleanConverter,
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from cdc.converters.header import convert_to_string, parse_string
from cdc.plugins import Registry


@pytest.mark.parametrize(
    ("conv", "value", "data"),
    [
        (IntegerConverter, 1, b"\x00\x00\x00\x01"),
        (IntegerConverter, -2, b"\xff\xff\xff\xfe"),
        (LongConverter, 258, b"\x00\x00\x00\x00\x00\x00\x01\x02"),
        (ShortConverter, -1, b"\xff\xff"),
        (FloatConverter, 1.5, b"\x3f\xc0\x00\x00"),
        (DoubleConverter, -2.0, b"\xc0\x00\x00\x00\x00\x00\x00\x00"),
        (BooleanConverter, True, b"\x01"),
        (BooleanConverter, False, b"\x00"),
    ],
)
def test_numeric_converters_big_endian(conv: type, value: object, data: bytes) -> None:
    c = conv()
    c.configure({}, False)
    assert c.from_connect_data("t", None, value) == data
    back = c.to_connect_data("t", data)
    assert back.value == value and back.schema is not None and back.schema.optional
    assert c.from_connect_data("t", None, None) is None
    assert c.to_connect_data("t", None).value is None


def test_numeric_errors() -> None:
    with pytest.raises(DataError, match="Failed to serialize to int32"):
        IntegerConverter().from_connect_data("t", None, "x")
    with pytest.raises(DataError, match="is not 4"):
        IntegerConverter().to_connect_data("t", b"\x00")
    assert IntegerConverter().to_connect_data("t", b"\x00\x00\x00\x07").schema == OPTIONAL_INT32_SCHEMA


def test_string_converter() -> None:
    c = StringConverter()
    c.configure({}, False)
    assert c.from_connect_data("t", STRING_SCHEMA, "hé") == "hé".encode()
    assert c.from_connect_data("t", None, True) == b"true"
    assert c.from_connect_data("t", None, 1e10) == b"1.0E10"
    assert c.to_connect_data("t", b"abc").schema == OPTIONAL_STRING_SCHEMA
    latin = StringConverter()
    latin.configure({"converter.encoding": "ISO-8859-1"}, True)
    assert latin.from_connect_data("t", None, "é") == b"\xe9"
    assert latin.to_connect_data("t", b"\xe9").value == "é"


def test_bytearray_converter() -> None:
    c = ByteArrayConverter()
    assert c.from_connect_data("t", None, b"\x00\x01") == b"\x00\x01"
    assert c.to_connect_data("t", b"\x02").schema == OPTIONAL_BYTES_SCHEMA
    with pytest.raises(DataError, match="Invalid schema type for ByteArrayConverter: STRING"):
        c.from_connect_data("t", STRING_SCHEMA, b"x")
    with pytest.raises(DataError, match="not compatible"):
        c.from_connect_data("t", None, "text")


def test_header_strings_like_values_convert_to_string() -> None:
    s = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", STRING_SCHEMA).build()
    assert convert_to_string(STRING_SCHEMA, "plain") == "plain"
    assert convert_to_string(None, [1, "x", None]) == '[1,"x",null]'
    assert convert_to_string(None, {"k": True}) == '{"k":true}'
    assert convert_to_string(s, Struct(s).put("a", 1).put("b", "q")) == '{"a":1,"b":"q"}'
    assert convert_to_string(Date.schema(), dt.date(2024, 1, 2)) == "2024-01-02"
    assert convert_to_string(Time.schema(), dt.time(1, 2, 3, 4000)) == "01:02:03.004Z"
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    assert convert_to_string(Timestamp.schema(), ts) == "2024-01-02T03:04:05.678Z"
    assert convert_to_string(FLOAT32_SCHEMA, 0.1) == "0.1"
    assert convert_to_string(None, b"\x00\xff") == "AP8="
    assert convert_to_string(None, None) is None


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("true", BOOLEAN_SCHEMA, True),
        ("12", INT8_SCHEMA, 12),
        ("300", INT16_SCHEMA, 300),
        ("70000", INT32_SCHEMA, 70000),
        ("5000000000", INT64_SCHEMA, 5000000000),
        ("1.5", FLOAT32_SCHEMA, 1.5),
        ("hello world", STRING_SCHEMA, "hello world"),
        ("2024-01-02", Date.schema(), dt.date(2024, 1, 2)),
        ("01:02:03.004Z", Time.schema(), dt.time(1, 2, 3, 4000)),
        (
            "2024-01-02T03:04:05.678Z",
            Timestamp.schema(),
            dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC),
        ),
        ("", STRING_SCHEMA, ""),
    ],
)
def test_header_parse_string(text: str, schema: object, value: object) -> None:
    parsed = parse_string(text)
    assert parsed.schema == schema and parsed.value == value


def test_header_parse_big_integer_is_decimal() -> None:
    parsed = parse_string("99999999999999999999")
    assert parsed.schema == Decimal.schema(0) and parsed.value == decimal.Decimal("99999999999999999999")


def test_simple_header_converter_round_trip() -> None:
    h = SimpleHeaderConverter()
    h.configure({})
    assert h.from_connect_header("t", "k", INT32_SCHEMA, 42) == b"42"
    assert h.to_connect_header("t", "k", b"42").value == 42
    assert h.to_connect_header("t", "k", None).value is None
    assert h.from_connect_header("t", "k", OPTIONAL_BOOLEAN_SCHEMA, None) is None


def test_plugins_cover_java_and_simple_names() -> None:
    expected = {
        "org.apache.kafka.connect.json.JsonConverter",
        "org.apache.kafka.connect.storage.StringConverter",
        "org.apache.kafka.connect.converters.ByteArrayConverter",
        "org.apache.kafka.connect.converters.IntegerConverter",
        "org.apache.kafka.connect.converters.LongConverter",
        "org.apache.kafka.connect.converters.ShortConverter",
        "org.apache.kafka.connect.converters.FloatConverter",
        "org.apache.kafka.connect.converters.DoubleConverter",
        "org.apache.kafka.connect.converters.BooleanConverter",
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        "io.confluent.connect.avro.AvroConverter",
    }
    assert expected | {n.rpartition(".")[2] for n in expected} == set(PLUGINS)
    registry = Registry()
    for name in PLUGINS:
        cls = registry.load(name)
        assert cls.__name__ == name.rpartition(".")[2]
