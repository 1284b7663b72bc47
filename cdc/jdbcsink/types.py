"""Field schemas → column types and bound values, per database family.

A field's schema (its logical or Debezium semantic name, its parameters, its physical type) gives a
:class:`Kind`; the kind gives the column type of each family and a function turning the Connect value
into what the driver binds. Temporal values keep their meaning: a Connect ``Timestamp`` (an instant) is
written as wall time in ``db.timezone`` into a zone-less column, Debezium's ``MicroTimestamp`` (a
DATETIME's wall time) as is, ``ZonedTimestamp`` into ``timestamptz``; decimals keep their scale
(``NUMERIC(p,s)`` when the precision is known, PostgreSQL's unconstrained ``NUMERIC`` otherwise).
Debezium's ``__debezium.source.column.length``/``scale`` parameters (``column.propagate.source.type``)
size strings and decimals. ``docs/jdbc-sink.md`` has the table.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from cdc.api.errors import DataError
from cdc.api.schema import Schema, Type

__all__ = ["ColumnSpec", "column_spec", "compatible", "family_of_sql_type", "same"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_SRC_LENGTH = "__debezium.source.column.length"
_SRC_TYPE = "__debezium.source.column.type"

Converter = Callable[[Any], Any]


@dataclass(frozen=True)
class ColumnSpec:
    """One column the sink writes: its name, DDL type, broad family (for compatibility checks),
    nullability and default (for CREATE/ALTER), and the value conversion."""

    name: str
    sql_type: str
    family: str
    optional: bool
    default: Any
    convert: Converter

    def ddl(self, ident: Callable[[str], str], literal: Callable[[Any], str], key: bool) -> str:
        text = f"{ident(self.name)} {self.sql_type}"
        if self.default is not None and not key:
            text += f" DEFAULT {literal(self.convert(self.default))}"
        return text + (" NOT NULL" if key or not self.optional else " NULL")


def _param(schema: Schema, name: str) -> str | None:
    return (schema.parameters or {}).get(name)


def _int_param(schema: Schema, name: str) -> int | None:
    text = _param(schema, name)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def same(value: Any) -> Any:
    """The conversion of a value written as it is."""
    return value


# -- conversions ------------------------------------------------------------------------------------------
def _days(value: Any) -> dt.date:
    return value if isinstance(value, dt.date) else _EPOCH_DATE + dt.timedelta(days=int(value))


def _wall(unit_us: float) -> Converter:
    """Epoch counts of a zone-less DATETIME (Debezium's Timestamp/MicroTimestamp/NanoTimestamp)."""

    def convert(value: Any) -> dt.datetime:
        if isinstance(value, dt.datetime):
            return value.replace(tzinfo=None)
        micros = int(value) * int(unit_us) if unit_us >= 1 else int(value) // 1000
        return _EPOCH + dt.timedelta(microseconds=micros)

    return convert


def _duration(unit_us: float) -> Converter:
    def convert(value: Any) -> dt.timedelta:
        if isinstance(value, dt.timedelta):
            return value
        if isinstance(value, dt.time):
            return dt.timedelta(
                hours=value.hour, minutes=value.minute, seconds=value.second, microseconds=value.microsecond
            )
        micros = int(value) * int(unit_us) if unit_us >= 1 else int(value) // 1000
        return dt.timedelta(microseconds=micros)

    return convert


def _time_of_day(value: dt.timedelta) -> dt.time:
    if not dt.timedelta(0) <= value < dt.timedelta(days=1):
        raise DataError(f"Time value {value} is outside 00:00:00 to 23:59:59.999999")
    seconds, micros = divmod(value // dt.timedelta(microseconds=1), 1_000_000)
    return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)


def _variable_decimal(value: Any) -> decimal.Decimal:
    if isinstance(value, decimal.Decimal):
        return value
    scale = int(value.get("scale"))
    unscaled = int.from_bytes(value.get("value"), "big", signed=True)
    return decimal.Decimal(unscaled).scaleb(-scale)


def _zoned(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return dt.datetime.fromisoformat(str(value))


def _zoned_time(value: Any) -> dt.time:
    if isinstance(value, dt.time):
        return value
    return dt.time.fromisoformat(str(value))


def _bits_int(value: Any) -> int:
    # Debezium's Bits are java.util.BitSet.toByteArray(): little-endian
    return int.from_bytes(bytes(value), "little")


def _wkb(value: Any) -> bytes:
    return bytes(value.get("wkb")) if not isinstance(value, bytes | bytearray) else bytes(value)


def _ewkb(value: Any) -> bytes:
    """Debezium's geometry struct as PostGIS's EWKB: the WKB with the SRID flag and the SRID after its type
    word, in the WKB's own byte order. Bound as bytea, PostGIS's implicit cast (``geometry(bytea)``) reads
    it into a geometry column."""
    wkb = _wkb(value)
    srid = 0 if isinstance(value, bytes | bytearray) else int(value.get("srid") or 0)
    if not srid or len(wkb) < 5:
        return wkb
    order: Literal["little", "big"] = "little" if wkb[0] == 1 else "big"
    kind = int.from_bytes(wkb[1:5], order) | 0x20000000
    return wkb[:1] + kind.to_bytes(4, order) + srid.to_bytes(4, order) + wkb[5:]


def _mysql_geometry(value: Any) -> bytes:
    srid = 0 if isinstance(value, bytes | bytearray) else int(value.get("srid") or 0)
    return srid.to_bytes(4, "little") + _wkb(value)


# -- the kinds --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Kind:
    family: str
    pg: str
    mysql: str
    sqlite: str
    convert: Converter = same
    pg_convert: Converter | None = None
    mysql_convert: Converter | None = None
    sqlite_convert: Converter | None = None
    postgres_only: str | None = None
    """Set for a kind only PostgreSQL can hold (JSONB, arrays): the refusal other families give."""


def _kind(schema: Schema, key: bool, tz: dt.tzinfo, geometry: str | None = None) -> _Kind:
    name = schema.name or ""
    t = schema.type
    length = _int_param(schema, _SRC_LENGTH)
    if name == "org.apache.kafka.connect.data.Decimal":
        s = int(_param(schema, "scale") or 0)
        p = _int_param(schema, "connect.decimal.precision") or (length if length and length >= s else None)
        pg = f"NUMERIC({p},{s})" if p else "NUMERIC"
        my = f"DECIMAL({p},{s})" if p and p <= 65 else f"DECIMAL(65,{min(s, 30)})"
        return _Kind("decimal", pg, my, "NUMERIC", sqlite_convert=str)
    if name == "io.debezium.data.VariableScaleDecimal":
        return _Kind(
            "decimal",
            "NUMERIC",
            "DECIMAL(65,30)",
            "NUMERIC",
            _variable_decimal,
            sqlite_convert=lambda v: str(_variable_decimal(v)),
        )
    if name in ("org.apache.kafka.connect.data.Date", "io.debezium.time.Date"):
        return _Kind("date", "DATE", "DATE", "TEXT", _days, sqlite_convert=lambda v: _days(v).isoformat())
    if name == "org.apache.kafka.connect.data.Time":
        conv = _duration(1000)
        return _Kind(
            "time",
            "TIME(3)",
            "TIME(3)",
            "TEXT",
            conv,
            pg_convert=lambda v: _time_of_day(conv(v)),
            sqlite_convert=lambda v: _time_of_day(conv(v)).isoformat(),
        )
    if name in ("io.debezium.time.Time", "io.debezium.time.MicroTime", "io.debezium.time.NanoTime"):
        unit = {"io.debezium.time.Time": 1000.0, "io.debezium.time.MicroTime": 1.0}.get(name, 0.001)
        conv = _duration(unit)
        digits = 3 if unit == 1000.0 else 6
        return _Kind(
            "time",
            f"TIME({digits})",
            f"TIME({digits})",
            "TEXT",
            conv,
            pg_convert=lambda v: _time_of_day(conv(v)),
            sqlite_convert=lambda v: str(conv(v)),
        )
    if name == "org.apache.kafka.connect.data.Timestamp":

        def instant(value: Any) -> dt.datetime:
            if not isinstance(value, dt.datetime):
                value = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=int(value))
            if value.tzinfo is None:
                value = value.replace(tzinfo=dt.UTC)
            return value.astimezone(tz).replace(tzinfo=None)

        return _Kind(
            "timestamp",
            "TIMESTAMP(3)",
            "DATETIME(3)",
            "TEXT",
            instant,
            sqlite_convert=lambda v: instant(v).isoformat(sep=" ", timespec="milliseconds"),
        )
    if name in (
        "io.debezium.time.Timestamp",
        "io.debezium.time.MicroTimestamp",
        "io.debezium.time.NanoTimestamp",
    ):
        unit = {"io.debezium.time.Timestamp": 1000.0, "io.debezium.time.MicroTimestamp": 1.0}.get(name, 0.001)
        conv = _wall(unit)
        # six digits whatever the unit, as Debezium's sink creates them (a DATETIME(0) or (3) source column
        # gives a millisecond Timestamp; the wider column loses nothing)
        return _Kind(
            "timestamp",
            "TIMESTAMP(6)",
            "DATETIME(6)",
            "TEXT",
            conv,
            sqlite_convert=lambda v: conv(v).isoformat(sep=" "),
        )
    if name == "io.debezium.time.ZonedTimestamp":

        def local(value: Any) -> dt.datetime:
            return _zoned(value).astimezone(tz).replace(tzinfo=None)

        return _Kind(
            "timestamptz",
            "TIMESTAMPTZ(6)",
            "DATETIME(6)",
            "TEXT",
            _zoned,
            mysql_convert=local,
            sqlite_convert=lambda v: _zoned(v).isoformat(),
        )
    if name == "io.debezium.time.ZonedTime":

        def utc_time(value: Any) -> dt.time:
            t_ = _zoned_time(value)
            return t_.replace(tzinfo=None)

        return _Kind(
            "time",
            "TIMETZ(6)",
            "TIME(6)",
            "TEXT",
            _zoned_time,
            mysql_convert=utc_time,
            sqlite_convert=lambda v: _zoned_time(v).isoformat(),
        )
    if name == "io.debezium.time.Year":
        return _Kind("int", "INTEGER", "YEAR", "INTEGER")
    if name == "io.debezium.time.MicroDuration":
        return _Kind("interval", "INTERVAL", "BIGINT", "INTEGER", pg_convert=_duration(1.0))
    if name == "io.debezium.data.Json":
        return _Kind("json", "JSON", "JSON", "TEXT")
    if name == "io.debezium.data.Uuid":
        return _Kind("text", "UUID", "CHAR(36)", "TEXT")
    if name == "io.debezium.data.Xml":
        return _Kind("text", "XML", "LONGTEXT", "TEXT")
    if name in ("io.debezium.data.Enum", "io.debezium.data.EnumSet"):
        allowed = _param(schema, "allowed")
        my = "LONGTEXT"
        if allowed is not None:
            values = ",".join("'" + a.replace("'", "''") + "'" for a in allowed.split(","))
            my = ("ENUM(" if name.endswith(".Enum") else "SET(") + values + ")"
        return _Kind("text", "TEXT", my if not key else "VARCHAR(255)", "TEXT")
    if name == "io.debezium.data.Bits":
        n = _int_param(schema, "length") or 1
        # BIT(n), fixed, as MySQL's BIT(n) and Debezium's sink; the value is written with all n digits
        return _Kind(
            "bits",
            f"BIT({max(n, 1)})",
            f"BIT({min(max(n, 1), 64)})",
            "INTEGER",
            _bits_int,
            pg_convert=lambda v: format(_bits_int(v), f"0{n}b"),
        )
    if name.startswith("io.debezium.data.geometry."):
        # MySQL/MariaDB: a spatial column, the value in the server's own format (the SRID as 4 bytes
        # little-endian, then the WKB), as Debezium's sink writes it; PostgreSQL without PostGIS and SQLite
        # have no spatial type: the WKB as bytes
        # PostgreSQL with PostGIS (``geometry``): a geometry column for every shape, the value as EWKB
        # (the SRID kept); Debezium's sink makes a Point PostgreSQL's own ``point``, which drops the SRID
        spatial = "POINT" if name == "io.debezium.data.geometry.Point" else "GEOMETRY"
        if geometry:
            return _Kind(
                "geometry",
                geometry,
                spatial,
                "BLOB",
                _wkb,
                pg_convert=_ewkb,
                mysql_convert=_mysql_geometry,
            )
        return _Kind("geometry", "BYTEA", spatial, "BLOB", _wkb, mysql_convert=_mysql_geometry)
    if t is Type.STRUCT or t is Type.ARRAY or t is Type.MAP:
        return _nested(schema, key, tz)
    if t is Type.INT8:
        return _Kind("int", "SMALLINT", "TINYINT", "INTEGER")
    if t is Type.INT16:
        return _Kind("int", "SMALLINT", "SMALLINT", "INTEGER")
    if t is Type.INT32:
        return _Kind("int", "INT", "INT", "INTEGER")
    if t is Type.INT64:
        return _Kind("int", "BIGINT", "BIGINT", "INTEGER")
    if t is Type.FLOAT32:
        return _Kind("float", "REAL", "FLOAT", "REAL")
    if t is Type.FLOAT64:
        return _Kind("float", "DOUBLE PRECISION", "DOUBLE", "REAL")
    if t is Type.BOOLEAN:
        return _Kind("bool", "BOOLEAN", "TINYINT(1)", "INTEGER", mysql_convert=int, sqlite_convert=int)
    if t is Type.STRING:
        source_type = (_param(schema, _SRC_TYPE) or "").upper()
        if length and source_type in ("CHAR", "BPCHAR", "NCHAR"):
            return _Kind("text", f"CHAR({length})", f"CHAR({length})", "TEXT")
        if length and length <= 65535 // 4:
            return _Kind("text", f"VARCHAR({length})", f"VARCHAR({length})", "TEXT")
        return _Kind("text", "TEXT", "VARCHAR(256)" if key else "LONGTEXT", "TEXT")
    if t is Type.BYTES:
        if length and (_param(schema, _SRC_TYPE) or "").upper() in ("BINARY", "VARBINARY"):
            fixed = (_param(schema, _SRC_TYPE) or "").upper()
            return _Kind("binary", "BYTEA", f"{fixed}({length})", "BLOB", bytes)
        return _Kind("binary", "BYTEA", "VARBINARY(1024)" if key else "LONGBLOB", "BLOB", bytes)
    raise DataError(f"Unsupported source data type: {t.value.upper()}")


def _nested(schema: Schema, key: bool, tz: dt.tzinfo) -> _Kind:
    """STRUCT, ARRAY and MAP fields (other than the semantic types above): PostgreSQL only. An array of
    primitives (or of logical types) becomes a PostgreSQL array of the element's column type, as Debezium's
    sink creates it; a struct, a map or an array of those becomes JSONB, the value as Connect's
    JsonConverter writes a payload (decimals as numbers, bytes as base64). MariaDB/MySQL and SQLite have
    no such column: refused, naming the column."""
    kind = schema.type.value.upper()
    refuse = (
        f"Unsupported source data type: {kind} (only PostgreSQL takes structs, maps and arrays: as JSONB and "
        "arrays; use a transform such as Flatten, or exclude the field)"
    )
    if key:
        raise DataError(f"Unsupported source data type: {kind} in a key")
    element = schema.value_schema if schema.type is Type.ARRAY else None
    if element is not None and element.type not in (Type.STRUCT, Type.ARRAY, Type.MAP):
        inner = _kind(element, False, tz)
        convert_one = inner.pg_convert or inner.convert

        def array(value: Any) -> list[Any]:
            return [None if v is None else convert_one(v) for v in value]

        return _Kind("array", f"{inner.pg}[]", "", "", array, postgres_only=refuse)
    from cdc.converters.json_values import compile_encoder

    encode = compile_encoder(schema, numeric=True)

    def as_json(value: Any) -> str:
        import orjson

        return orjson.dumps(encode(value)).decode()

    return _Kind("json", "JSONB", "", "", as_json, postgres_only=refuse)


def column_spec(
    name: str, schema: Schema, family: str, key: bool, tz: dt.tzinfo, geometry: str | None = None
) -> ColumnSpec:
    """The column for field ``name`` in a ``family`` (postgresql, mysql, sqlite) database; ``geometry`` is
    PostgreSQL's PostGIS type when the database has it."""
    k = _kind(schema, key, tz, geometry)
    if k.postgres_only and family != "postgresql":
        raise DataError(k.postgres_only)
    sql_type = {"postgresql": k.pg, "mysql": k.mysql, "sqlite": k.sqlite}[family]
    specific = {"postgresql": k.pg_convert, "mysql": k.mysql_convert, "sqlite": k.sqlite_convert}[family]
    convert = specific or k.convert
    return ColumnSpec(name, sql_type, k.family, schema.optional, schema.default, convert)


_FAMILIES = (
    ("array", ("[]", "array")),  # first: "integer[]" is an array, not an int
    ("timestamptz", ("timestamp with time zone", "timestamptz")),
    ("timestamp", ("timestamp", "datetime")),
    ("date", ("date",)),
    ("time", ("time",)),
    ("interval", ("interval",)),
    ("json", ("json",)),
    ("bits", ("bit",)),
    ("geometry", ("geometry", "point", "linestring", "polygon", "geometrycollection")),
    ("binary", ("bytea", "blob", "binary", "varbinary")),
    ("bool", ("boolean", "bool")),
    ("decimal", ("numeric", "decimal")),
    ("float", ("double", "real", "float")),
    ("int", ("int", "serial", "year")),
    ("text", ("char", "text", "enum", "set", "uuid", "xml", "clob", "string")),
)

_COMPATIBLE = {
    # what a field of the left family may be written into
    "int": {"int", "decimal", "float", "text", "bool", "bits", "timestamp", "interval"},
    "float": {"float", "decimal", "text"},
    "decimal": {"decimal", "float", "text", "int"},
    "bool": {"bool", "int", "text", "bits"},
    # a string into a temporal column is the database's to parse (ISO text); into a number it is a type
    # change (an INT column now fed text), which needs the column altered
    "text": {"text", "json", "timestamp", "timestamptz", "date", "time", "interval", "binary"},
    "json": {"json", "text"},
    "array": {"array"},
    "binary": {"binary", "text"},
    "geometry": {"geometry", "binary"},
    "bits": {"bits", "int", "binary"},
    "date": {"date", "timestamp", "timestamptz", "text"},
    "time": {"time", "text", "interval"},
    "timestamp": {"timestamp", "timestamptz", "text", "date"},
    "timestamptz": {"timestamptz", "timestamp", "text"},
    "interval": {"interval", "int", "text", "time"},
}


def family_of_sql_type(sql_type: str) -> str | None:
    """The family of a column type as the database names it (None when unknown: then anything goes)."""
    text = sql_type.lower()
    for family, words in _FAMILIES:
        if any(w in text for w in words):
            return family
    return None


def compatible(field_family: str, column_type: str) -> bool:
    column_family = family_of_sql_type(column_type)
    if column_family is None or field_family == column_family:
        return True
    return column_family in _COMPATIBLE.get(field_family, {column_family})
