"""The MySQL type mapping (Debezium's): schemas per column and the converters, for both value origins.

A snapshot value comes from PyMySQL (text protocol: '0000-00-00' as a string, TIME as timedelta, BIT and
BINARY as bytes), a streamed one from mysql-replication (zero dates as None, BIT as a '0101' string, SET
as a Python set, TIMESTAMP as a naive UTC datetime, epoch 0 for a zero TIMESTAMP); both must give the
same field value. Expectations follow Debezium's documentation and ``BinlogValueConverters``.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from cdc.api.schema import Type
from cdc.history.model import Column
from cdc.mysql.config import MySqlSettings
from cdc.mysql.types import ColumnMapping, TypeMapper

BASE = {
    "database.hostname": "localhost",
    "database.user": "u",
    "database.password": "p",
    "database.server.id": "1",
    "topic.prefix": "p",
}


def mapper(**props: str) -> TypeMapper:
    return TypeMapper(MySqlSettings.parse({**BASE, **props}))


def column(
    type_name: str,
    length: int | None = None,
    scale: int | None = None,
    optional: bool = True,
    enum: tuple[str, ...] = (),
    default: str | None = None,
) -> Column:
    return Column(
        "c",
        1,
        type_name,
        type_name,
        0,
        length,
        scale,
        optional,
        enum_values=enum,
        has_default=default is not None,
        default_expression=default,
    )


def convert(m: ColumnMapping, v: Any) -> Any:
    if v is None:
        return m.null
    return v if m.convert is None else m.convert(v)


@pytest.mark.parametrize(
    ("type_name", "length", "scale", "expected"),
    [
        ("TINYINT", 4, None, Type.INT16),
        ("TINYINT UNSIGNED", 3, None, Type.INT16),
        ("TINYINT", 1, None, Type.INT16),  # tinyint(1): BOOLEAN as SHOW CREATE TABLE gives it
        ("BOOLEAN", None, None, Type.BOOLEAN),
        ("SMALLINT", 6, None, Type.INT16),
        ("SMALLINT UNSIGNED", 5, None, Type.INT32),
        ("MEDIUMINT", 9, None, Type.INT32),
        ("MEDIUMINT UNSIGNED", 8, None, Type.INT32),
        ("INT", 11, None, Type.INT32),
        ("INT UNSIGNED", 10, None, Type.INT64),
        ("BIGINT", 20, None, Type.INT64),
        ("BIGINT UNSIGNED", 20, None, Type.INT64),
        ("FLOAT", None, None, Type.FLOAT32),
        ("FLOAT", 7, 2, Type.FLOAT64),
        ("DOUBLE", None, None, Type.FLOAT64),
        ("BIT", 1, None, Type.BOOLEAN),
        ("BIT", 10, None, Type.BYTES),
    ],
)
def test_numeric_schemas(type_name: str, length: int | None, scale: int | None, expected: Type) -> None:
    assert mapper().map(column(type_name, length, scale)).schema.type is expected


@pytest.mark.honours("bigint.unsigned.handling.mode")
def test_integers_from_both_origins() -> None:
    m = mapper().map(column("BIGINT UNSIGNED", 20))
    assert convert(m, 18446744073709551615) == -1
    assert convert(m, 18000000000000000000) == -446744073709551616
    precise = mapper(**{"bigint.unsigned.handling.mode": "precise"}).map(column("BIGINT UNSIGNED", 20))
    assert precise.schema.name == "org.apache.kafka.connect.data.Decimal"
    assert precise.schema.parameters == {"scale": "0", "connect.decimal.precision": "20"}
    assert convert(precise, 18446744073709551615) == decimal.Decimal(18446744073709551615)


def test_float32_is_the_same_from_text_and_binlog() -> None:
    m = mapper().map(column("FLOAT"))
    assert convert(m, 0.1) == convert(m, 0.10000000149011612)
    assert convert(m, 1.5) == 1.5


@pytest.mark.honours("decimal.handling.mode")
def test_decimals_keep_65_digits_in_every_mode() -> None:
    value = decimal.Decimal("12345.678901234567890123456789012345")
    precise = mapper().map(column("DECIMAL", 65, 30))
    assert precise.schema.parameters == {"scale": "30", "connect.decimal.precision": "65"}
    assert convert(precise, value) == value
    assert convert(precise, value).as_tuple().exponent == -30
    string = mapper(**{"decimal.handling.mode": "string"}).map(column("DECIMAL", 65, 30))
    assert convert(string, value) == "12345.678901234567890123456789012345"
    assert convert(string, decimal.Decimal("-0.000000000000000000000000000001")) == "-1E-30"
    assert (
        convert(
            mapper(**{"decimal.handling.mode": "string"}).map(column("DECIMAL", 10, 2)),
            decimal.Decimal("12345678.9"),
        )
        == "12345678.90"
    )
    double = mapper(**{"decimal.handling.mode": "double"}).map(column("DECIMAL", 10, 2))
    assert convert(double, decimal.Decimal("12345678.90")) == 12345678.9


def test_bits_are_little_endian_from_both_origins() -> None:
    m = mapper().map(column("BIT", 10))
    assert m.schema.name == "io.debezium.data.Bits" and m.schema.parameters == {"length": "10"}
    assert convert(m, b"\x02\x01") == b"\x01\x02"  # SELECT: big-endian bytes
    assert convert(m, "1000000001") == b"\x01\x02"  # binlog: bit string
    bit1 = mapper().map(column("BIT", 1))
    assert convert(bit1, b"\x01") is True and convert(bit1, "0") is False


@pytest.mark.honours("binary.handling.mode")
def test_binary_is_padded_and_encoded_per_mode() -> None:
    assert convert(mapper().map(column("BINARY", 4)), b"\x01\x02") == b"\x01\x02\x00\x00"
    assert convert(mapper().map(column("VARBINARY", 4)), b"\x01\x02") == b"\x01\x02"
    b64 = mapper(**{"binary.handling.mode": "base64"}).map(column("BINARY", 4))
    assert b64.schema.type is Type.STRING and convert(b64, b"") == "AAAAAA=="
    assert convert(mapper(**{"binary.handling.mode": "hex"}).map(column("BLOB")), b"\xde\xad") == "dead"


def test_zero_dates_are_null_or_epoch() -> None:
    nullable = mapper().map(column("DATE"))
    required = mapper().map(column("DATE", optional=False))
    for zero in ("0000-00-00", None):  # SELECT text, binlog None
        assert convert(nullable, zero) is None
        assert convert(required, zero) == 0
    assert convert(nullable, dt.date(2018, 6, 20)) == 17702
    stamp = mapper().map(column("TIMESTAMP", optional=False, default="current_timestamp()"))
    assert stamp.schema.default == "1970-01-01T00:00:00Z"
    assert convert(stamp, dt.datetime(1970, 1, 1)) == "1970-01-01T00:00:00Z"  # binlog zero: epoch 0
    assert convert(mapper().map(column("TIMESTAMP")), "0000-00-00 00:00:00") is None
    assert convert(mapper().map(column("DATETIME")), "0000-00-00 00:00:00") is None


def test_a_snapshot_zero_date_in_a_not_null_column_is_its_default() -> None:
    """Debezium's snapshot reads a zero date as NULL (Connector/J's zeroDateTimeBehavior=CONVERT_TO_NULL), so
    a NOT NULL column with a default gets the default, where streaming writes what the binlog holds (issue
    #27, seen side by side with the real Debezium)."""
    stamp = mapper().map(column("TIMESTAMP", optional=False, default="'2001-02-03 04:05:06'"))
    assert stamp.schema.default == "2001-02-03T04:05:06Z"
    assert convert(stamp, "0000-00-00 00:00:00") == "2001-02-03T04:05:06Z"  # a SELECT's zero
    assert convert(stamp, dt.datetime(1970, 1, 1)) == "1970-01-01T00:00:00Z"  # the binlog's zero: epoch 0
    date = mapper().map(column("DATE", optional=False, default="'2001-02-03'"))
    assert convert(date, "0000-00-00") == convert(date, dt.date(2001, 2, 3)) == 11356
    when = mapper().map(column("DATETIME", 6, optional=False, default="'2001-02-03 00:00:00'"))
    assert convert(when, "0000-00-00 00:00:00") == 981158400000000
    # no default: the type's fallback, as before
    assert convert(mapper().map(column("DATE", optional=False)), "0000-00-00") == 0


def test_temporal_values() -> None:
    m = mapper()
    assert convert(m.map(column("TIME")), -dt.timedelta(hours=838, minutes=59, seconds=59)) == -3020399000000
    assert convert(m.map(column("TIME", 6)), -dt.timedelta(seconds=1, microseconds=500000)) == -1500000
    assert convert(m.map(column("TIME")), dt.timedelta(hours=100)) == 360000000000
    assert convert(m.map(column("DATETIME")), dt.datetime(2018, 6, 20, 6, 37, 3)) == 1529476623000
    assert convert(m.map(column("DATETIME", 3)), dt.datetime(1969, 12, 31, 23, 59, 59, 999000)) == -1
    assert m.map(column("DATETIME", 6)).schema.name == "io.debezium.time.MicroTimestamp"
    ts6 = m.map(column("TIMESTAMP", 6))
    assert convert(ts6, dt.datetime(2018, 6, 20, 13, 37, 3, 123400)) == "2018-06-20T13:37:03.123400Z"
    assert convert(m.map(column("TIMESTAMP")), dt.datetime(2018, 6, 20, 13, 37, 3)) == "2018-06-20T13:37:03Z"
    assert convert(m.map(column("YEAR")), 2018) == 2018


@pytest.mark.honours("time.precision.mode")
def test_connect_time_mode() -> None:
    m = mapper(**{"time.precision.mode": "connect"})
    time = m.map(column("TIME", 6))
    assert time.schema.name == "org.apache.kafka.connect.data.Time"
    assert convert(time, dt.timedelta(hours=12, minutes=34, seconds=56, microseconds=789012)) == dt.time(
        12, 34, 56, 789000
    )
    assert convert(time, dt.timedelta(hours=100)) is None  # Debezium cannot carry it either
    assert convert(time, -dt.timedelta(seconds=1)) is None
    assert convert(m.map(column("DATE", optional=False)), "0000-00-00") == dt.date(1970, 1, 1)
    assert m.map(column("DATETIME", 6)).schema.name == "org.apache.kafka.connect.data.Timestamp"


def test_enum_set_json_geometry() -> None:
    m = mapper()
    enum = m.map(column("ENUM", enum=("a", "b", "c")))
    assert enum.schema.name == "io.debezium.data.Enum" and enum.schema.parameters == {"allowed": "a,b,c"}
    st = m.map(column("SET", enum=("x", "y", "z")))
    assert convert(st, {"z", "x"}) == "x,z" and convert(st, "x,z") == "x,z"
    js = m.map(column("JSON"))
    assert js.schema.name == "io.debezium.data.Json"
    assert convert(js, '{"a": 1}') == '{"a": 1}'  # SELECT text as MySQL wrote it
    point = m.map(column("POINT"))
    raw = b"\xe6\x10\x00\x00\x01\x01\x00\x00\x00" + b"\x00" * 6 + b"\xf8\xbf" + b"\x00" * 6 + b"\x02@"
    value = convert(point, raw)
    assert (value.get("x"), value.get("y"), value.get("srid")) == (-1.5, 2.25, 4326)
    geometry = m.map(column("GEOMETRY"))
    assert convert(geometry, b"\x00\x00\x00\x00" + raw[4:]).get("srid") is None


def test_defaults() -> None:
    assert mapper().map(column("INT", 11, optional=False, default="42")).schema.default == 42
    assert mapper().map(column("VARCHAR", 10, default="'abc'")).schema.default == "abc"
    assert mapper().map(column("VARCHAR", 10, default="NULL")).schema.default is None


@pytest.mark.parametrize(
    ("type_name", "length", "optional", "default", "expected"),
    [
        # the defaults Debezium 3.5 gives these columns (seen side by side in `make compat`)
        ("BIT", 1, True, "1", True),
        ("BIT", 10, True, "1000000001", b"\x01\x02"),
        ("BIT", 64, True, "1", b"\x01" + b"\x00" * 7),
        ("TIME", 0, True, "-01:02:03", -3_723_000_000),
        ("TIME", 6, True, "12:00:00.5", 43_200_500_000),
        ("TIME", 6, True, "-00:00:00.25", -250_000),
        ("TIME", 0, True, "100:00:00", 360_000_000_000),
        ("DATE", None, False, "0000-00-00", 0),
        ("DATETIME", 0, False, "0000-00-00 00:00:00", 0),
        ("TIMESTAMP", 0, False, "0000-00-00 00:00:00", "1970-01-01T00:00:00Z"),
        ("BINARY", 2, True, "ab", b"ab"),
        ("VARBINARY", 8, True, "xyz", b"xyz"),
        ("BIGINT UNSIGNED", None, True, "18446744073709551615", 9_223_372_036_854_775_807),
    ],
)
def test_defaults_of_every_type(
    type_name: str, length: int | None, optional: bool, default: str, expected: Any
) -> None:
    col = column(type_name.split()[0], length, optional=optional, default=default)
    if type_name.endswith("UNSIGNED"):
        col = Column(
            "c", 1, type_name, type_name, 0, None, None, True, has_default=True, default_expression=default
        )
    assert mapper().map(col).schema.default == expected


def test_float_with_scale_is_a_float32_widened_and_a_streamed_zero_timestamp_is_epoch() -> None:
    """As the real Debezium 3.5 writes them (make compat): FLOAT(7,3) -9999.999 is the float32's double,
    and the binlog's zero TIMESTAMP (epoch second 0) streams as 1970-01-01T00:00:00 with fsp digits."""
    m = mapper()
    float_p = m.map(column("FLOAT", 7, 3))
    assert float_p.schema.type is Type.FLOAT64
    assert convert(float_p, -9999.999) == -9999.9990234375
    assert convert(m.map(column("TIMESTAMP", 6)), dt.datetime(1970, 1, 1)) == "1970-01-01T00:00:00.000000Z"
    assert convert(m.map(column("TIMESTAMP", 0)), dt.datetime(1970, 1, 1)) == "1970-01-01T00:00:00Z"
    assert convert(m.map(column("TIMESTAMP", 3)), "0000-00-00 00:00:00") is None


def test_a_selected_timestamp_has_no_trailing_zeros_a_streamed_one_has_fsp_digits() -> None:
    """Debezium 3.5 (make compat): the snapshot's TIMESTAMP(3) 23:59:59.900 is ...59.9Z, the binlog's
    ...59.900Z; a zero fraction is left out of the snapshot's text."""
    from cdc.drivers import timestamp_from_text

    ts3, ts6 = mapper().map(column("TIMESTAMP", 3)), mapper().map(column("TIMESTAMP", 6))
    assert convert(ts3, timestamp_from_text("1999-12-31 23:59:59.900")) == "1999-12-31T23:59:59.9Z"
    assert convert(ts3, dt.datetime(1999, 12, 31, 23, 59, 59, 900000)) == "1999-12-31T23:59:59.900Z"
    assert convert(ts6, timestamp_from_text(b"2030-06-15 12:00:00.000000")) == "2030-06-15T12:00:00Z"
    assert convert(ts6, dt.datetime(2030, 6, 15, 12)) == "2030-06-15T12:00:00.000000Z"
    assert timestamp_from_text("0000-00-00 00:00:00") == "0000-00-00 00:00:00"
