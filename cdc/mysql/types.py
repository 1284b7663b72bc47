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
from collections.abc import Callable
from typing import Any

from cdc.api.schema import Decimal as ConnectDecimal
from cdc.api.schema import Schema, SchemaBuilder, Type
from cdc.history.model import Column
from cdc.mysql.config import MySqlSettings

__all__ = ["ColumnMapping", "TypeMapper"]

Converter = Callable[[Any], Any]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_UTC = dt.UTC


class ColumnMapping:
    __slots__ = ("column", "convert", "schema")

    def __init__(self, column: Column, schema: Schema, convert: Converter | None) -> None:
        self.column = column
        self.schema = schema
        self.convert = convert


def _ident(v: Any) -> Any:
    return v


def _days(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        v = v.date()
    if isinstance(v, dt.date):
        return (v - _EPOCH_DATE).days
    return None  # zero dates ('0000-00-00') arrive as strings or None


def _micros_of_timedelta(v: dt.timedelta) -> int:
    return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds


def _time_micros(v: Any) -> Any:
    if isinstance(v, dt.timedelta):
        return _micros_of_timedelta(v)
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    return None


def _time_millis(v: Any) -> Any:
    micros = _time_micros(v)
    return None if micros is None else micros // 1000


def _epoch_micros(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_UTC).replace(tzinfo=None)
        delta = v - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(v, dt.date):
        return (v - _EPOCH_DATE).days * 86_400_000_000
    return None


def _epoch_millis(v: Any) -> Any:
    micros = _epoch_micros(v)
    return None if micros is None else micros // 1000


def _connect_date(v: Any) -> Any:
    """Connect's Date logical type takes a ``datetime.date``."""
    if isinstance(v, dt.datetime):
        return v.date()
    return v if isinstance(v, dt.date) else None


def _connect_time(v: Any) -> Any:
    """Connect's Time logical type: a ``datetime.time`` with millisecond precision (within one day)."""
    micros = _time_micros(v)
    if micros is None:
        return None
    ms = (micros // 1000) % 86_400_000
    seconds, milli = divmod(ms, 1000)
    return dt.time(seconds // 3600, (seconds // 60) % 60, seconds % 60, milli * 1000)


def _connect_timestamp(v: Any) -> Any:
    """Connect's Timestamp logical type: an aware UTC ``datetime`` (DATETIME taken as UTC wall clock)."""
    if isinstance(v, dt.datetime):
        v = v.astimezone(_UTC) if v.tzinfo is not None else v.replace(tzinfo=_UTC)
        return v.replace(microsecond=v.microsecond // 1000 * 1000)
    if isinstance(v, dt.date):
        return dt.datetime(v.year, v.month, v.day, tzinfo=_UTC)
    return None


def _zoned(fsp: int) -> Converter:
    def convert(v: Any) -> Any:
        if not isinstance(v, dt.datetime):
            return None
        if v.tzinfo is not None:
            v = v.astimezone(_UTC).replace(tzinfo=None)
        text = v.strftime("%Y-%m-%dT%H:%M:%S")
        if fsp > 0:
            text += "." + f"{v.microsecond:06d}"[:fsp]
        return text + "Z"

    return convert


def _text(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return v


def _json_text(v: Any) -> Any:
    """JSON as compact text, whichever form it arrives in (text from SELECT, a parsed tree from the binlog)."""
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        v = bytes(v).decode("utf-8")
    if isinstance(v, str):
        try:
            return json.dumps(json.loads(v), separators=(",", ":"), ensure_ascii=False)
        except ValueError:
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


def _set_text(v: Any) -> Any:
    if isinstance(v, (set, frozenset, list, tuple)):
        return ",".join(sorted(v, key=lambda s: s))
    return _text(v)


def _bits(length: int) -> Converter:
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


def _to_int(v: Any) -> Any:
    return None if v is None else int(v)


def _to_float(v: Any) -> Any:
    return None if v is None else float(v)


def _to_bool(v: Any) -> Any:
    return None if v is None else bool(v)


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
    """MySQL's internal geometry (4-byte little-endian SRID, then WKB) → Debezium's struct."""

    def __init__(self, point: bool) -> None:
        self.point = point
        self.schema: Schema | None = None

    def bind(self, schema: Schema) -> None:
        self.schema = schema

    def __call__(self, v: Any) -> Any:
        import struct

        from cdc.api.struct import Struct

        if v is None or self.schema is None:
            return None
        data = bytes(v)
        srid = struct.unpack("<I", data[:4])[0] if len(data) >= 4 else 0
        wkb = data[4:]
        if self.point:
            x, y = struct.unpack("<dd", wkb[5:21]) if len(wkb) >= 21 else (0.0, 0.0)
            return Struct(self.schema, [x, y, wkb, srid or None])
        return Struct(self.schema, [wkb, srid or None])


class TypeMapper:
    """Chooses schema and converter per column, following the connector's type-handling modes."""

    def __init__(self, settings: MySqlSettings) -> None:
        self.time_mode = str(settings["time.precision.mode"]).lower()
        self.decimal_mode = str(settings["decimal.handling.mode"]).lower()
        self.bigint_mode = str(settings["bigint.unsigned.handling.mode"]).lower()
        self.binary_mode = str(settings["binary.handling.mode"]).lower()
        self.adjust_years = bool(settings["enable.time.adjuster"])

    def map(self, column: Column) -> ColumnMapping:
        builder, convert = self._builder(column)
        if column.optional:
            builder.optional()
        default = self._default(column, convert)
        if default is not None:
            builder.default_value(default)
        schema = builder.build()
        if isinstance(convert, _GeometryConverter):
            convert.bind(schema)
        return ColumnMapping(column, schema, None if convert is _ident else convert)

    def _default(self, column: Column, convert: Converter) -> Any:
        """The schema default from a literal column default, as Debezium derives it (best effort)."""
        expr = column.default_expression
        if not column.has_default or expr is None or expr.upper() == "NULL":
            return None
        if "CURRENT_TIMESTAMP" in expr.upper() or "NOW(" in expr.upper():
            if column.base_type == "TIMESTAMP":
                return _zoned(0)(dt.datetime(1970, 1, 1))
            return None
        text = expr.strip("'\"")
        base = column.base_type
        try:
            value: Any
            if base in ("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "YEAR"):
                value = int(text)
            elif base in ("FLOAT", "DOUBLE", "REAL"):
                value = float(text)
            elif base in ("DECIMAL", "NUMERIC"):
                value = decimal.Decimal(text).quantize(decimal.Decimal(1).scaleb(-(column.scale or 0)))
            elif base in ("DATE",):
                value = dt.date.fromisoformat(text)
            elif base in ("DATETIME", "TIMESTAMP"):
                value = dt.datetime.fromisoformat(text)
            elif base in ("BOOLEAN", "BOOL"):
                value = text not in ("0", "false", "FALSE")
            elif base in ("CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET"):
                value = text
            else:
                return None
            result = convert(value)
        except (ValueError, ArithmeticError, TypeError):
            return None
        if isinstance(result, decimal.Decimal) and self.decimal_mode == "precise":
            return result
        return result

    def _builder(self, c: Column) -> tuple[SchemaBuilder, Converter]:
        base = c.base_type
        unsigned = c.unsigned
        length = c.length
        if base in ("BOOLEAN", "BOOL"):
            return SchemaBuilder.bool(), _to_bool
        if base == "BIT":
            if not length or length == 1:
                return SchemaBuilder.bool(), _bit_bool
            b = SchemaBuilder.bytes().name("io.debezium.data.Bits").version(1).parameter("length", str(length))
            return b, _bits(length)
        if base == "TINYINT":
            return (SchemaBuilder.int16(), _to_int) if unsigned else (SchemaBuilder.int8(), _to_int)
        if base == "SMALLINT":
            return (SchemaBuilder.int32(), _to_int) if unsigned else (SchemaBuilder.int16(), _to_int)
        if base in ("MEDIUMINT",):
            return SchemaBuilder.int32(), _to_int
        if base in ("INT", "INTEGER"):
            return (SchemaBuilder.int64(), _to_int) if unsigned else (SchemaBuilder.int32(), _to_int)
        if base in ("BIGINT", "SERIAL"):
            if unsigned and self.bigint_mode == "precise":
                b = ConnectDecimal.builder(0).parameter("connect.decimal.precision", "20")
                return b, lambda v: None if v is None else decimal.Decimal(int(v))
            return SchemaBuilder.int64(), _unsigned_wrap(64) if unsigned else _to_int
        if base in ("FLOAT", "REAL"):
            if base == "FLOAT" and (length or 0) >= 24:
                return SchemaBuilder.float64(), _to_float
            return SchemaBuilder.float32(), _to_float
        if base in ("DOUBLE", "DOUBLE PRECISION"):
            return SchemaBuilder.float64(), _to_float
        if base in ("DECIMAL", "NUMERIC", "DEC", "FIXED"):
            scale = c.scale or 0
            if self.decimal_mode == "double":
                return SchemaBuilder.float64(), _to_float
            if self.decimal_mode == "string":
                return SchemaBuilder.string(), lambda v: None if v is None else str(v)
            b = ConnectDecimal.builder(scale)
            if length is not None:
                b.parameter("connect.decimal.precision", str(length))
            quant = decimal.Decimal(1).scaleb(-scale)
            return b, lambda v: None if v is None else decimal.Decimal(v).quantize(quant)
        if base in ("CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "NCHAR", "NVARCHAR",
                    "CHARACTER", "LONG VARCHAR", "LONG"):
            return SchemaBuilder.string(), _text
        if base == "JSON":
            return SchemaBuilder.string().name("io.debezium.data.Json").version(1), _json_text
        if base == "ENUM":
            b = SchemaBuilder.string().name("io.debezium.data.Enum").version(1)
            return b.parameter("allowed", ",".join(c.enum_values)), _text
        if base == "SET":
            b = SchemaBuilder.string().name("io.debezium.data.EnumSet").version(1)
            order = {label: i for i, label in enumerate(c.enum_values)}

            def set_text(v: Any) -> Any:
                if isinstance(v, (set, frozenset, list, tuple)):
                    return ",".join(sorted(v, key=lambda s: order.get(s, len(order))))
                return _text(v)

            return b.parameter("allowed", ",".join(c.enum_values)), set_text
        if base in ("BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"):
            return self._binary()
        if base == "YEAR":
            return SchemaBuilder.int32().name("io.debezium.time.Year").version(1), _year(self.adjust_years)
        if base == "DATE":
            if self.time_mode == "connect":
                return SchemaBuilder.int32().name("org.apache.kafka.connect.data.Date").version(1), _connect_date
            return SchemaBuilder.int32().name("io.debezium.time.Date").version(1), _days
        if base == "TIME":
            fsp = length or 0
            if self.time_mode == "connect":
                return SchemaBuilder.int32().name("org.apache.kafka.connect.data.Time").version(1), _connect_time
            if self.time_mode == "adaptive" and fsp <= 3:
                return SchemaBuilder.int32().name("io.debezium.time.Time").version(1), _time_millis
            return SchemaBuilder.int64().name("io.debezium.time.MicroTime").version(1), _time_micros
        if base == "DATETIME":
            fsp = length or 0
            if self.time_mode == "connect":
                b = SchemaBuilder.int64().name("org.apache.kafka.connect.data.Timestamp").version(1)
                return b, _connect_timestamp
            if fsp <= 3:
                return SchemaBuilder.int64().name("io.debezium.time.Timestamp").version(1), _epoch_millis
            return SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").version(1), _epoch_micros
        if base == "TIMESTAMP":
            return SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").version(1), _zoned(length or 0)
        if base in ("GEOMETRY", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON",
                    "GEOMETRYCOLLECTION", "GEOMCOLLECTION", "POINT"):
            return self._geometry(base == "POINT")
        b = SchemaBuilder.bytes()
        return b, lambda v: v if isinstance(v, (bytes, type(None))) else str(v).encode()

    def _binary(self) -> tuple[SchemaBuilder, Converter]:
        def raw(v: Any) -> Any:
            if isinstance(v, str):
                return v.encode("latin-1", "replace")
            return None if v is None else bytes(v)

        if self.binary_mode == "bytes":
            return SchemaBuilder.bytes(), raw
        encode: Callable[[bytes], str] = {
            "base64": lambda b: base64.b64encode(b).decode(),
            "base64-url-safe": lambda b: base64.urlsafe_b64encode(b).decode(),
            "hex": lambda b: b.hex(),
        }[self.binary_mode]
        return SchemaBuilder.string(), lambda v: None if v is None else encode(raw(v))

    def _geometry(self, point: bool) -> tuple[SchemaBuilder, Converter]:
        if point:
            b = (SchemaBuilder.struct().name("io.debezium.data.geometry.Point").version(1)
                 .doc("Geometry (POINT)")
                 .field("x", Schema(Type.FLOAT64)).field("y", Schema(Type.FLOAT64))
                 .field("wkb", Schema(Type.BYTES, optional=True)).field("srid", Schema(Type.INT32, optional=True)))
        else:
            b = (SchemaBuilder.struct().name("io.debezium.data.geometry.Geometry").version(1)
                 .doc("Geometry")
                 .field("wkb", Schema(Type.BYTES)).field("srid", Schema(Type.INT32, optional=True)))
        return b, _GeometryConverter(point)
