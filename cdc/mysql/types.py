"""Debezium's MySQL type mapping: a column → its Connect schema and a value converter.

For every column the mapper gives the field schema (names, versions and parameters as Debezium writes
them) and one converter used for both origins — values read by the snapshot's SELECT (PyMySQL) and
values decoded from row events (mysql-replication) — so a row gets the same value either way. The
converters are chosen once per column (per-table precompiled), not per value.

Temporal values: DATETIME is taken as UTC wall-clock; TIMESTAMP arrives in UTC (the snapshot sets the
session zone to UTC; the binlog stores epoch seconds) and is written as ``ZonedTimestamp`` with ``Z``.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import struct
from collections.abc import Callable
from typing import Any

from cdc.api.schema import Decimal as ConnectDecimal
from cdc.api.schema import Schema, SchemaBuilder, Type
from cdc.api.struct import Struct
from cdc.drivers import SelectedTimestamp
from cdc.history.model import Column
from cdc.mysql.config import MySqlSettings

__all__ = ["BINARY_TYPES", "TEXT_TYPES", "ColumnMapping", "TypeMapper"]

Converter = Callable[[Any], Any]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_UTC = dt.UTC


class ColumnMapping:
    """A column's field schema, its converter (None: values pass as they are) and ``null``, the value a
    NULL becomes: None for an optional column; for a NOT NULL one (a zero date read as NULL) the schema
    default, else the type's fallback, as Debezium's ``convertValue`` does."""

    __slots__ = ("column", "convert", "custom", "null", "schema")

    def __init__(self, column: Column, schema: Schema, convert: Converter | None, null: Any = None) -> None:
        self.column = column
        self.schema = schema
        self.convert = convert
        self.null = null
        self.custom = False
        """Whether a column rule or a custom converter made this mapping (not the type mapping alone)."""


def _ident(v: Any) -> Any:
    return v


# DECIMAL(65,30) has 65 digits: more than the default context's 28.
_DECIMAL_CONTEXT = decimal.Context(prec=100)


def _micros_of_timedelta(v: dt.timedelta) -> int:
    return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds


def _days(zero: Any) -> Converter:
    """DATE → epoch days; a zero date ('0000-00-00' text, or None from the binlog) → ``zero``."""

    def convert(v: Any) -> Any:
        if isinstance(v, dt.datetime):
            v = v.date()
        if isinstance(v, dt.date):
            return (v - _EPOCH_DATE).days
        return zero

    return convert


def _time_micros(v: Any) -> Any:
    """TIME → signed microseconds (negative and beyond 24 h allowed, as Debezium's MicroTime)."""
    if isinstance(v, dt.timedelta):
        return _micros_of_timedelta(v)
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    return None


def _time_millis(v: Any) -> Any:
    micros = _time_micros(v)
    return None if micros is None else micros // 1000


def _epoch_micros(zero: Any) -> Converter:
    """DATETIME as UTC wall clock → epoch microseconds; a zero datetime → ``zero``."""

    def convert(v: Any) -> Any:
        if isinstance(v, dt.datetime):
            if v.tzinfo is not None:
                v = v.astimezone(_UTC).replace(tzinfo=None)
            delta = v - _EPOCH
            return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        if isinstance(v, dt.date):
            return (v - _EPOCH_DATE).days * 86_400_000_000
        return zero

    return convert


def _epoch_millis(zero: Any) -> Converter:
    micros = _epoch_micros(None)

    def convert(v: Any) -> Any:
        m = micros(v)
        return zero if m is None else m // 1000

    return convert


def _connect_date(zero: Any) -> Converter:
    """Connect's Date logical type takes a ``datetime.date``."""

    def convert(v: Any) -> Any:
        if isinstance(v, dt.datetime):
            return v.date()
        return v if isinstance(v, dt.date) else zero

    return convert


def _connect_time(v: Any) -> Any:
    """Connect's Time logical type: a ``datetime.time`` to the millisecond. Debezium cannot carry a TIME
    outside [00:00, 24:00) in this mode (``Time.toMilliOfDay`` rejects it, the field stays null)."""
    micros = _time_micros(v)
    if micros is None or micros < 0 or micros >= 86_400_000_000:
        return None
    ms = micros // 1000
    seconds, milli = divmod(ms, 1000)
    return dt.time(seconds // 3600, (seconds // 60) % 60, seconds % 60, milli * 1000)


def _connect_timestamp(zero: Any) -> Converter:
    """Connect's Timestamp logical type: an aware UTC ``datetime`` (DATETIME taken as UTC wall clock)."""

    def convert(v: Any) -> Any:
        if isinstance(v, dt.datetime):
            v = v.astimezone(_UTC) if v.tzinfo is not None else v.replace(tzinfo=_UTC)
            return v.replace(microsecond=v.microsecond // 1000 * 1000)
        if isinstance(v, dt.date):
            return dt.datetime(v.year, v.month, v.day, tzinfo=_UTC)
        return zero

    return convert


def _zoned(fsp: int, zero: Any) -> Converter:
    """TIMESTAMP(fsp) → ISO-8601 UTC with ``Z`` (ZonedTimestamp): the fraction has exactly ``fsp`` digits
    (none for fsp 0). The binlog carries a zero TIMESTAMP as epoch second 0, which Debezium streams as
    ``1970-01-01T00:00:00Z`` (with ``fsp`` zeros); '0000-00-00 00:00:00' text from a SELECT → ``zero``."""

    def convert(v: Any) -> Any:
        if not isinstance(v, dt.datetime):
            return zero
        if v.tzinfo is not None:
            v = v.astimezone(_UTC).replace(tzinfo=None)
        text = v.strftime("%Y-%m-%dT%H:%M:%S")
        if isinstance(v, SelectedTimestamp):  # a snapshot's: ISO_OFFSET_DATE_TIME, no trailing zeros
            if v.microsecond:
                text += "." + f"{v.microsecond:06d}".rstrip("0")
        elif fsp > 0:
            text += "." + f"{v.microsecond:06d}"[:fsp]
        return text + "Z"

    return convert


def _text(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return v


def _json_text(v: Any) -> Any:
    """MySQL JSON: text from a SELECT is passed as MySQL wrote it (Debezium delivers the JDBC string);
    a document decoded from the binlog is written compactly."""
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8")
    if isinstance(v, str):
        return v
    return json.dumps(_json_tree(v), separators=(",", ":"), ensure_ascii=False)


def _json_tree(v: Any) -> Any:
    if isinstance(v, dict):
        return {(k.decode() if isinstance(k, bytes) else k): _json_tree(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_tree(x) for x in v]
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v


def _bits(length: int) -> Converter:
    """BIT(n>1) → ⌈n/8⌉ bytes, little-endian (io.debezium.data.Bits)."""
    nbytes = (length + 7) // 8

    def convert(v: Any) -> Any:
        if isinstance(v, str):  # mysql-replication gives '0101…' (most significant bit first)
            number = int(v, 2) if v else 0
        elif isinstance(v, (bytes, bytearray)):
            number = int.from_bytes(v, "big")
        elif isinstance(v, int):
            number = v
        else:
            return None
        return number.to_bytes(nbytes, "little")

    return convert


def _bit_bool(v: Any) -> Any:
    if isinstance(v, str):
        return v.strip("0") != ""
    if isinstance(v, (bytes, bytearray)):
        return any(v)
    return None if v is None else bool(v)


def _unsigned_wrap(bits: int) -> Converter:
    limit = 1 << (bits - 1)

    def convert(v: Any) -> Any:
        if v is None:
            return None
        v = int(v)
        return v - (1 << bits) if v >= limit else v

    return convert


def _time_literal(text: str) -> dt.timedelta:
    """A TIME literal ('-01:02:03', '100:00:00', '12:00:00.5') as a signed timedelta."""
    negative = text.startswith("-")
    parts = text.lstrip("-+").split(":")
    hours, minutes = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    seconds = decimal.Decimal(parts[2]) if len(parts) > 2 else decimal.Decimal(0)
    micros = int((hours * 3600 + minutes * 60) * 1_000_000 + seconds * 1_000_000)
    return dt.timedelta(microseconds=-micros if negative else micros)


def _to_int(v: Any) -> Any:
    return None if v is None else int(v)


def _to_float(v: Any) -> Any:
    return None if v is None else float(v)


_FLOAT32 = struct.Struct("<f")


def _to_float32(v: Any) -> Any:
    """A FLOAT value as the float32 it is: the binlog gives the float32's exact double, a SELECT its
    shortest decimal text; both become the same float."""
    return None if v is None else _FLOAT32.unpack(_FLOAT32.pack(float(v)))[0]


def _to_bool(v: Any) -> Any:
    return None if v is None else bool(v)


def _decimal_of(scale: int) -> Converter:
    quant = decimal.Decimal(1).scaleb(-scale)

    def convert(v: Any) -> Any:
        if v is None:
            return None
        return decimal.Decimal(v).quantize(quant, context=_DECIMAL_CONTEXT)

    return convert


def _decimal_text(scale: int) -> Converter:
    """``decimal.handling.mode=string``: Java's ``BigDecimal.toString`` of the value at the column scale,
    which Python's ``str`` of a Decimal matches (``-1E-30``, ``0E-30``)."""
    exact = _decimal_of(scale)

    def convert(v: Any) -> Any:
        return None if v is None else str(exact(v))

    return convert


def _year(adjust: bool) -> Converter:
    def convert(v: Any) -> Any:
        if v is None:
            return None
        if isinstance(v, dt.date):
            v = v.year
        year = int(v)
        if adjust and 0 <= year < 100:
            year += 2000 if year < 70 else 1900
        return year

    return convert


class _GeometryConverter:
    """MySQL's internal geometry (4-byte little-endian SRID, then WKB) → Debezium's struct (SRID 0 → null)."""

    def __init__(self, point: bool) -> None:
        self.point = point
        self.schema: Schema | None = None

    def bind(self, schema: Schema) -> None:
        self.schema = schema

    def __call__(self, v: Any) -> Any:
        if v is None or self.schema is None:
            return None
        data = bytes(v)
        srid = _SRID.unpack_from(data)[0] if len(data) >= 4 else 0
        wkb = data[4:]
        if self.point:
            x, y = _XY.unpack_from(wkb, 5) if len(wkb) >= 21 else (0.0, 0.0)
            return Struct(self.schema, [x, y, wkb, srid or None])
        return Struct(self.schema, [wkb, srid or None])


_SRID = struct.Struct("<i")
_XY = struct.Struct("<dd")

_INT_TYPES = ("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "SERIAL")
_TEXT_TYPES = (
    "CHAR",
    "VARCHAR",
    "TINYTEXT",
    "TEXT",
    "MEDIUMTEXT",
    "LONGTEXT",
    "NCHAR",
    "NVARCHAR",
    "CHARACTER",
    "LONG VARCHAR",
    "LONG",
)
_BINARY_TYPES = ("BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "LONG VARBINARY")
TEXT_TYPES, BINARY_TYPES = _TEXT_TYPES, _BINARY_TYPES  # for other encoders of the same mapping
_GEOMETRY_TYPES = (
    "GEOMETRY",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
    "GEOMCOLLECTION",
    "POINT",
)


class TypeMapper:
    """Chooses schema and converter per column, following the connector's type-handling modes.

    Debezium's mapping (``BinlogValueConverters`` over ``JdbcValueConverters``, with the JDBC types its DDL
    parser gives): TINYINT and SMALLINT (signed or not) → int16 except SMALLINT UNSIGNED → int32;
    MEDIUMINT, INT → int32; INT UNSIGNED, BIGINT → int64; BOOLEAN (as DDL, not tinyint(1)) → boolean;
    FLOAT without (M,D) and p ≤ 24 → float32, other FLOAT/DOUBLE/REAL → float64 (MariaDB's REAL is DOUBLE).
    """

    def __init__(self, settings: MySqlSettings) -> None:
        self.time_mode = settings.time_precision_mode.lower()
        self.decimal_mode = settings.decimal_handling_mode.lower()
        self.bigint_mode = settings.bigint_unsigned_handling_mode.lower()
        self.binary_mode = settings.binary_handling_mode.lower()
        self.adjust_years = settings.enable_time_adjuster

    def map(self, column: Column) -> ColumnMapping:
        builder, convert, fallback = self._builder(column)
        if column.optional:
            builder.optional()
        default = self._default(column, convert, fallback)
        if default is not None:
            builder.default_value(default)
        schema = builder.build()
        if (
            default is not None
            and not column.optional
            and column.base_type in ("DATE", "DATETIME", "TIMESTAMP")
        ):
            # A snapshot reads a zero date as NULL (Debezium: JDBC's zeroDateTimeBehavior=CONVERT_TO_NULL),
            # and a NULL in a NOT NULL column becomes the schema default, not the type's fallback.
            _, convert, _ = self._temporal(column, column.base_type, column.length, True, zero_as=default)
        if isinstance(convert, _GeometryConverter):
            convert.bind(schema)
        null = None if column.optional else (default if default is not None else fallback)
        return ColumnMapping(column, schema, None if convert is _ident else convert, null)

    def _default(self, column: Column, convert: Converter, fallback: Any) -> Any:
        """The schema default from a literal column default, as Debezium derives it (best effort)."""
        expr = column.default_expression
        if not column.has_default or expr is None or expr.upper() == "NULL":
            return None
        if "CURRENT_TIMESTAMP" in expr.upper() or "NOW(" in expr.upper():
            if column.base_type == "TIMESTAMP":
                return "1970-01-01T00:00:00Z"
            return None
        text = expr.strip("'\"")
        base = column.base_type
        if base in ("DATE", "DATETIME", "TIMESTAMP") and text.startswith("0000-00-00"):
            # a zero date: Debezium's default is the NOT NULL column's stand-in value (epoch)
            return None if column.optional else fallback
        try:
            value: Any
            if base in _INT_TYPES or base == "YEAR":
                value = int(text)
                if base in ("BIGINT", "SERIAL") and self.bigint_mode != "precise":
                    value = min(value, (1 << 63) - 1)  # Debezium saturates (BIGINT UNSIGNED's maximum)
            elif base in ("FLOAT", "DOUBLE", "REAL", "DOUBLE PRECISION"):
                value = float(text)
            elif base in ("DECIMAL", "NUMERIC", "DEC", "FIXED"):
                value = decimal.Decimal(text)
            elif base == "DATE":
                value = dt.date.fromisoformat(text)
            elif base in ("DATETIME", "TIMESTAMP"):
                value = dt.datetime.fromisoformat(text)
            elif base == "TIME":
                value = _time_literal(text)
            elif base == "BIT":
                # b'0101' is kept as its digits; SHOW CREATE TABLE writes BIT defaults that way
                value = int(text, 2) if text and set(text) <= {"0", "1"} else int(text)
            elif base in ("BOOLEAN", "BOOL"):
                value = text not in ("0", "false", "FALSE")
            elif base in _TEXT_TYPES or base in ("ENUM", "SET"):
                value = text
            elif base in _BINARY_TYPES:
                value = text.encode("utf-8")
            else:
                return None
            return convert(value)
        except (ValueError, ArithmeticError, TypeError):
            return None

    def _builder(self, c: Column) -> tuple[SchemaBuilder, Converter, Any]:
        """(schema builder, converter, the value a NULL in a NOT NULL column becomes)."""
        base = c.base_type
        unsigned = c.unsigned
        length = c.length
        required = not c.optional
        if base in ("BOOLEAN", "BOOL"):
            return SchemaBuilder.bool(), _to_bool, False
        if base == "BIT":
            if not length or length == 1:
                return SchemaBuilder.bool(), _bit_bool, False
            b = SchemaBuilder.bytes().name("io.debezium.data.Bits").version(1)
            return b.parameter("length", str(length)), _bits(length), b""
        if base == "TINYINT":
            return SchemaBuilder.int16(), _to_int, 0
        if base == "SMALLINT":
            return (SchemaBuilder.int32() if unsigned else SchemaBuilder.int16()), _to_int, 0
        if base == "MEDIUMINT":
            return SchemaBuilder.int32(), _to_int, 0
        if base in ("INT", "INTEGER"):
            return (SchemaBuilder.int64() if unsigned else SchemaBuilder.int32()), _to_int, 0
        if base in ("BIGINT", "SERIAL"):
            if unsigned and self.bigint_mode == "precise":
                b = ConnectDecimal.builder(0).parameter("connect.decimal.precision", "20")
                return b, _decimal_of(0), decimal.Decimal(0)
            return SchemaBuilder.int64(), _unsigned_wrap(64) if unsigned else _to_int, 0
        if base == "FLOAT":
            if c.scale is None and (length is None or length <= 24):
                return SchemaBuilder.float32(), _to_float32, 0.0
            # FLOAT(M,D) is still a float32 in the row: Debezium gives its exact double (-9999.9990234375)
            return SchemaBuilder.float64(), _to_float32 if c.scale is not None else _to_float, 0.0
        if base in ("DOUBLE", "DOUBLE PRECISION", "REAL"):
            return SchemaBuilder.float64(), _to_float, 0.0
        if base in ("DECIMAL", "NUMERIC", "DEC", "FIXED"):
            scale = c.scale or 0
            if self.decimal_mode == "double":
                return SchemaBuilder.float64(), _to_float, 0.0
            if self.decimal_mode == "string":
                return SchemaBuilder.string(), _decimal_text(scale), str(decimal.Decimal(0).scaleb(-scale))
            b = ConnectDecimal.builder(scale)
            b.parameter("connect.decimal.precision", str(length if length is not None else 10))
            return b, _decimal_of(scale), decimal.Decimal(0).scaleb(-scale)
        if base in _TEXT_TYPES:
            return SchemaBuilder.string(), _text, ""
        if base == "JSON":
            return SchemaBuilder.string().name("io.debezium.data.Json").version(1), _json_text, "{}"
        if base == "ENUM":
            b = SchemaBuilder.string().name("io.debezium.data.Enum").version(1)
            return b.parameter("allowed", ",".join(c.enum_values)), _text, ""
        if base == "SET":
            b = SchemaBuilder.string().name("io.debezium.data.EnumSet").version(1)
            order = {label: i for i, label in enumerate(c.enum_values)}

            def set_text(v: Any) -> Any:
                if isinstance(v, (set, frozenset, list, tuple)):
                    return ",".join(sorted(v, key=lambda s: order.get(s, len(order))))
                return _text(v)

            return b.parameter("allowed", ",".join(c.enum_values)), set_text, ""
        if base in _BINARY_TYPES:
            return self._binary(length if base == "BINARY" else None)
        if base == "YEAR":
            return SchemaBuilder.int32().name("io.debezium.time.Year").version(1), _year(self.adjust_years), 0
        return self._temporal(c, base, length, required)

    def _temporal(
        self, c: Column, base: str, length: int | None, required: bool, zero_as: Any = None
    ) -> tuple[SchemaBuilder, Converter, Any]:
        """``zero_as``: what a snapshot's zero date ('0000-00-00…' text) becomes instead of the type's
        fallback: the NOT NULL column's schema default (see :meth:`map`)."""
        connect = self.time_mode == "connect"
        fsp = length or 0
        if base == "DATE":
            if connect:
                zero = _EPOCH_DATE if required else None
                b = SchemaBuilder.int32().name("org.apache.kafka.connect.data.Date").version(1)
                return b, _connect_date(zero if zero_as is None else zero_as), zero
            zero_days = 0 if required else None
            converter = _days(zero_days if zero_as is None else zero_as)
            return SchemaBuilder.int32().name("io.debezium.time.Date").version(1), converter, zero_days
        if base == "TIME":
            if connect:
                b = SchemaBuilder.int32().name("org.apache.kafka.connect.data.Time").version(1)
                return b, _connect_time, dt.time(0)
            if self.time_mode == "adaptive" and fsp <= 3:
                return SchemaBuilder.int32().name("io.debezium.time.Time").version(1), _time_millis, 0
            return SchemaBuilder.int64().name("io.debezium.time.MicroTime").version(1), _time_micros, 0
        if base == "DATETIME":
            if connect:
                zero_ts = dt.datetime(1970, 1, 1, tzinfo=_UTC) if required else None
                b = SchemaBuilder.int64().name("org.apache.kafka.connect.data.Timestamp").version(1)
                return b, _connect_timestamp(zero_ts if zero_as is None else zero_as), zero_ts
            zero_epoch = 0 if required else None
            zero_value: Any = zero_epoch if zero_as is None else zero_as
            if fsp <= 3:
                b = SchemaBuilder.int64().name("io.debezium.time.Timestamp").version(1)
                return b, _epoch_millis(zero_value), zero_epoch
            b = SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").version(1)
            return b, _epoch_micros(zero_value), zero_epoch
        if base == "TIMESTAMP":
            # the binlog carries a zero TIMESTAMP as epoch second 0 (a datetime): only a SELECT's text
            # reaches ``zero``, which Debezium's snapshot reads as NULL (Connector/J's
            # zeroDateTimeBehavior=CONVERT_TO_NULL) and so as the NOT NULL column's default
            zero_text = "1970-01-01T00:00:00Z" if required else None
            b = SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").version(1)
            return b, _zoned(fsp, zero_text if zero_as is None else zero_as), zero_text
        if base in _GEOMETRY_TYPES:
            return self._geometry(base == "POINT")
        b = SchemaBuilder.bytes()
        return b, lambda v: v if isinstance(v, (bytes, type(None))) else str(v).encode(), b""

    def _binary(self, pad_to: int | None) -> tuple[SchemaBuilder, Converter, Any]:
        """Binary columns per ``binary.handling.mode``; BINARY(n) is right-padded with 0x00 to n bytes
        (the binlog drops the trailing zeros; Debezium's DBZ-254)."""

        def raw(v: Any) -> Any:
            if isinstance(v, str):
                return v.encode("utf-8")
            return None if v is None else bytes(v)

        if pad_to:

            def padded(v: Any) -> Any:
                data = raw(v)
                return data if data is None or len(data) >= pad_to else data.ljust(pad_to, b"\0")

            read = padded
        else:
            read = raw
        if self.binary_mode == "bytes":
            return SchemaBuilder.bytes(), read, b""
        encode: Callable[[bytes], str] = {
            "base64": lambda b: base64.b64encode(b).decode(),
            "base64-url-safe": lambda b: base64.urlsafe_b64encode(b).decode(),
            "hex": lambda b: b.hex(),
        }[self.binary_mode]
        return SchemaBuilder.string(), lambda v: None if v is None else encode(read(v)), ""

    def _geometry(self, point: bool) -> tuple[SchemaBuilder, Converter, Any]:
        if point:
            b = (
                SchemaBuilder.struct()
                .name("io.debezium.data.geometry.Point")
                .version(1)
                .doc("Geometry (POINT)")
                .field("x", Schema(Type.FLOAT64))
                .field("y", Schema(Type.FLOAT64))
                .field("wkb", Schema(Type.BYTES, optional=True))
                .field("srid", Schema(Type.INT32, optional=True))
            )
        else:
            b = (
                SchemaBuilder.struct()
                .name("io.debezium.data.geometry.Geometry")
                .version(1)
                .doc("Geometry")
                .field("wkb", Schema(Type.BYTES))
                .field("srid", Schema(Type.INT32, optional=True))
            )
        return b, _GeometryConverter(point), None
