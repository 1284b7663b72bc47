"""Columns to Connect schemas, and driver values to Connect values.

:class:`ColumnInfo` is what a dialect learns about a column (from SQLAlchemy's reflection in table mode,
from the cursor description in query mode). :func:`field_schema` maps it as Confluent's
``GenericDatabaseDialect.addFieldToSchema`` does:

* TINYINT/SMALLINT/INT → int8/int16/int32, one size wider when unsigned; BIGINT → int64 (unsigned:
  Decimal scale 0); BIT(1) → int8; BOOLEAN → boolean; REAL → float32; FLOAT/DOUBLE → float64;
* NUMERIC/DECIMAL → ``org.apache.kafka.connect.data.Decimal`` with ``scale`` and
  ``connect.decimal.precision``; ``numeric.mapping`` (precision_only, best_fit, best_fit_eager_double)
  turns NUMERIC (never DECIMAL, as in Confluent: MySQL's columns are DECIMAL) into integers or doubles;
* CHAR/VARCHAR/TEXT/ENUM/JSON/UUID → string; BINARY/BLOB/BYTEA → bytes; DATE → Date; TIME → Time;
  DATETIME/TIMESTAMP → Timestamp; arrays, intervals and other types are left out, as Confluent does.

Differences, on purpose: SQLite INTEGER is int64 and REAL float64 (SQLite stores 64 bits; Confluent's
int32/float32 would overflow or round); a PostgreSQL NUMERIC without a declared precision becomes
float64 (a Decimal schema needs one scale; Confluent's scale 0 drops the fraction).

Zone-less date-times are read in ``db.timezone`` and become aware UTC datetimes.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cdc.api.schema import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type

__all__ = [
    "ColumnInfo",
    "Converter",
    "RowMapper",
    "column_info_from_sqlalchemy",
    "compile_row_function",
    "converter_for",
    "field_schema",
    "infer_kind",
]

log = logging.getLogger(__name__)

PRECISION_PARAM = "connect.decimal.precision"
Converter = Callable[[Any], Any]

_INT_KINDS = {"int8": Type.INT8, "int16": Type.INT16, "int32": Type.INT32, "int64": Type.INT64}
_WIDER = {"int8": "int16", "int16": "int32", "int32": "int64"}


@dataclass(frozen=True)
class ColumnInfo:
    """One column as the dialect sees it. ``kind`` None means "not mapped" (the column is left out)."""

    name: str
    kind: str | None
    nullable: bool = True
    precision: int = 0
    scale: int = 0
    unsigned: bool = False
    autoincrement: bool = False
    numeric: bool = False
    """NUMERIC rather than DECIMAL (only NUMERIC follows ``numeric.mapping``)."""

    def effective_kind(self) -> str | None:
        kind = self.kind
        if kind in _WIDER and self.unsigned:
            return _WIDER[kind]
        if kind == "int64" and self.unsigned:
            return "decimal"
        if kind == "bit":
            return "int8" if self.precision <= 1 else "bytes"
        return kind


def _int_kind_for_precision(precision: int) -> str:
    if precision > 9:
        return "int64"
    if precision > 4:
        return "int32"
    if precision > 2:
        return "int16"
    return "int8"


def mapped_kind(col: ColumnInfo, numeric_mapping: str) -> str | None:
    """The Connect-side kind after unsigned widening and ``numeric.mapping``."""
    kind = col.effective_kind()
    if kind != "decimal":
        return kind
    if col.numeric and col.precision == 0 and col.scale == 0 and not col.unsigned:
        return "float64"  # unconstrained NUMERIC: no single scale fits
    if not col.numeric:
        return "decimal"
    p, s = col.precision, col.scale
    if numeric_mapping == "precision_only" and s == 0 and p <= 18:
        return _int_kind_for_precision(p)
    if numeric_mapping in ("best_fit", "best_fit_eager_double"):
        if p <= 18 and s <= 0:
            return _int_kind_for_precision(p)
        if s > 0 and (p <= 18 or numeric_mapping == "best_fit_eager_double"):
            return "float64"
    return "decimal"


def field_schema(col: ColumnInfo, numeric_mapping: str) -> Schema | None:
    kind = mapped_kind(col, numeric_mapping)
    b: SchemaBuilder
    if kind is None:
        return None
    if kind in _INT_KINDS:
        b = SchemaBuilder.type(_INT_KINDS[kind])
    elif kind == "boolean":
        b = SchemaBuilder.bool()
    elif kind == "float32":
        b = SchemaBuilder.float32()
    elif kind == "float64":
        b = SchemaBuilder.float64()
    elif kind == "decimal":
        scale = max(col.scale, 0)
        b = Decimal.builder(scale).parameter(PRECISION_PARAM, str(col.precision or 0))
    elif kind in ("string", "json"):
        b = SchemaBuilder.string()
    elif kind == "bytes":
        b = SchemaBuilder.bytes()
    elif kind in ("date", "year"):
        b = Date.builder()
    elif kind == "time":
        b = Time.builder()
    elif kind in ("timestamp", "timestamptz"):
        b = Timestamp.builder()
    else:
        log.warning("Column %s has an unsupported type (%s) and is left out", col.name, kind)
        return None
    if col.nullable:
        b.optional()
    return b.build()


# ------------------------------------------------------------------------------------- value converters


def _parse_datetime(text: str) -> dt.datetime | None:
    if text.startswith("0000-00-00"):
        return None  # MySQL's zero date
    return dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))


def timestamp_converter(tz: dt.tzinfo) -> Converter:
    utc = tz in (dt.UTC,) or getattr(tz, "key", None) in ("UTC", "Etc/UTC")

    def convert(value: Any) -> Any:
        if isinstance(value, str):
            value = _parse_datetime(value)
            if value is None:
                return None
        elif isinstance(value, (int, float)):
            return dt.datetime.fromtimestamp(value, dt.UTC)
        elif not isinstance(value, dt.datetime):
            if isinstance(value, dt.date):
                value = dt.datetime(value.year, value.month, value.day)
            else:
                raise TypeError(f"not a timestamp: {value!r}")
        if value.tzinfo is None:
            if utc:
                return value.replace(tzinfo=dt.UTC)
            return value.replace(tzinfo=tz).astimezone(dt.UTC)
        return value.astimezone(dt.UTC)

    return convert


def _date(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, int):
        return dt.date(value, 1, 1)  # MySQL YEAR, as Connector/J's yearIsDateType gives it
    if isinstance(value, str):
        return None if value.startswith("0000") else dt.date.fromisoformat(value[:10])
    raise TypeError(f"not a date: {value!r}")


def _time(value: Any) -> Any:
    if isinstance(value, dt.timedelta):
        seconds = int(value.total_seconds()) % 86_400
        return dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60, value.microseconds)
    if isinstance(value, dt.time):
        return value.replace(tzinfo=None)
    if isinstance(value, str):
        return dt.time.fromisoformat(value)
    raise TypeError(f"not a time: {value!r}")


def _decimal(value: Any) -> Any:
    return value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))


def _string(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


def _bytes(value: Any) -> Any:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def _int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, (bytes, bytearray)):
        return int.from_bytes(value, "big")
    return int(value)


def _float(value: Any) -> Any:
    return value if isinstance(value, float) else float(value)


def _bool(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return any(value)
    return bool(value)


def converter_for(kind: str | None, tz: dt.tzinfo) -> Converter | None:
    """How a non-null driver value of ``kind`` becomes a Connect value (None: use it as it is)."""
    if kind in ("timestamp", "timestamptz"):
        return timestamp_converter(tz)
    return {
        "int8": _int,
        "int16": _int,
        "int32": _int,
        "int64": _int,
        "float32": _float,
        "float64": _float,
        "boolean": _bool,
        "decimal": _decimal,
        "string": _string,
        "json": _string,
        "bytes": _bytes,
        "date": _date,
        "year": _date,
        "time": _time,
    }.get(kind or "")


def infer_kind(value: Any) -> str:
    """A kind from a value, for result sets the driver cannot describe (SQLite in query mode)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes"
    if isinstance(value, decimal.Decimal):
        return "float64"
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.date):
        return "date"
    return "string"


# Values a driver already gives in their Connect form, per kind: the compiled row function passes a value
# of exactly this class through without calling the converter (one ``type(v) is T`` test per column).
_PASSTHROUGH: dict[str, type] = {
    "int8": int,
    "int16": int,
    "int32": int,
    "int64": int,
    "float32": float,
    "float64": float,
    "boolean": bool,
    "decimal": decimal.Decimal,
    "string": str,
    "json": str,
    "bytes": bytes,
    "date": dt.date,
}


def _fast_timestamp(tz: dt.tzinfo) -> Converter:
    """:func:`timestamp_converter` with the common case first: a naive ``datetime`` from the driver."""
    slow = timestamp_converter(tz)
    datetime, utc = dt.datetime, dt.UTC
    if tz in (dt.UTC,) or getattr(tz, "key", None) in ("UTC", "Etc/UTC"):

        def convert_utc(value: Any) -> Any:
            if type(value) is datetime and value.tzinfo is None:
                return value.replace(tzinfo=utc)
            return slow(value)

        return convert_utc

    def convert(value: Any) -> Any:
        if type(value) is datetime and value.tzinfo is None:
            return value.replace(tzinfo=tz).astimezone(utc)
        return slow(value)

    return convert


def compile_row_function(
    plan: list[tuple[int, str | None, Converter | None]], name: str = "values"
) -> Callable[[Any], list[Any]]:
    """One function per table from a driver row to the list of Connect values, written out column by column.

    ``plan`` holds (row index, kind, converter) per field. A column without a converter is copied; one
    whose kind has a passthrough class copies values of that class and converts the others; nulls stay
    null. Generating the code once per table leaves no per-column loop, lookup or call for the common case.
    """
    namespace: dict[str, Any] = {}
    parts = []
    for j, (i, kind, conv) in enumerate(plan):
        if conv is None:
            parts.append(f"row[{i}]")
            continue
        namespace[f"c{j}"] = conv
        passthrough = _PASSTHROUGH.get(kind or "")
        if passthrough is not None:
            namespace[f"t{j}"] = passthrough
            parts.append(f"(v{j} if (v{j} := row[{i}]) is None or type(v{j}) is t{j} else c{j}(v{j}))")
        else:
            parts.append(f"(None if (v{j} := row[{i}]) is None else c{j}(v{j}))")
    source = f"def {name}(row):\n    return [{', '.join(parts)}]\n"
    exec(compile(source, f"<jdbc row function {name}>", "exec"), namespace)
    function: Callable[[Any], list[Any]] = namespace[name]
    return function


class RowMapper:
    """Turns driver rows into the value Struct of one table: its schema, and the converters per column.

    :attr:`values` is compiled per table (:func:`compile_row_function`).
    """

    def __init__(self, name: str, columns: list[ColumnInfo], numeric_mapping: str, tz: dt.tzinfo) -> None:
        from cdc.api.struct import Struct

        self._struct = Struct
        builder = SchemaBuilder.struct().name(name)
        self.columns = columns
        self.indexes: list[int] = []
        self.converters: list[Converter | None] = []
        self.by_name: dict[str, int] = {}
        plan: list[tuple[int, str | None, Converter | None]] = []
        for i, col in enumerate(columns):
            schema = field_schema(col, numeric_mapping)
            if schema is None:
                continue
            builder.field(col.name, schema)
            self.by_name[col.name] = i
            self.indexes.append(i)
            kind = mapped_kind(col, numeric_mapping)
            conv = converter_for(kind, tz)
            self.converters.append(conv)
            plan.append((i, kind, _fast_timestamp(tz) if kind in ("timestamp", "timestamptz") else conv))
        self.schema = builder.build()
        self._identity = self.indexes == list(range(len(columns))) and not any(self.converters)
        self.values: Callable[[Any], list[Any]] = list if self._identity else compile_row_function(plan)

    def struct(self, row: Any) -> Any:
        return self._struct(self.schema, self.values(row))


def column_info_from_sqlalchemy(column: dict[str, Any]) -> ColumnInfo:
    """A column reflected by SQLAlchemy (``Inspector.get_columns``) as a :class:`ColumnInfo`."""
    import sqlalchemy.types as st

    t = column["type"]
    name = column["name"]
    nullable = bool(column.get("nullable", True))
    auto = column.get("autoincrement") is True or bool(column.get("identity"))
    cls = type(t).__name__.upper()
    unsigned = bool(getattr(t, "unsigned", False))
    kind: str | None
    precision = scale = 0
    numeric = False
    if cls == "BIT":
        kind, precision = "bit", int(getattr(t, "length", 1) or 1)
    elif cls == "YEAR":
        kind = "year"
    elif isinstance(t, st.Boolean):
        kind = "boolean"
    elif cls in ("TINYINT",):
        kind = "int8"
    elif cls in ("SMALLINT",):
        kind = "int16"
    elif cls in ("MEDIUMINT", "INTEGER", "INT"):
        kind = "int32"
    elif cls == "BIGINT" or isinstance(t, st.Integer):
        kind = "int64"
    elif isinstance(t, st.Float) or cls in ("REAL", "DOUBLE", "DOUBLE_PRECISION", "FLOAT"):
        kind = (
            "float32"
            if cls in ("REAL",) or (cls == "FLOAT" and not getattr(t, "precision", None))
            else "float64"
        )
    elif isinstance(t, st.Numeric):
        kind = "decimal"
        precision, scale = int(t.precision or 0), int(t.scale or 0)
        numeric = cls == "NUMERIC"
    elif cls in ("JSON", "JSONB"):
        kind = "json"
    elif isinstance(t, (st.String, st.Enum)) or cls in (
        "UUID",
        "SET",
        "INET",
        "CIDR",
        "MACADDR",
        "XML",
        "CITEXT",
        "TSVECTOR",
        "MONEY",
    ):
        kind = "string"
    elif isinstance(t, st._Binary) or cls in (
        "BYTEA",
        "BLOB",
        "BINARY",
        "VARBINARY",
        "LONGBLOB",
        "MEDIUMBLOB",
        "TINYBLOB",
    ):
        kind = "bytes"
    elif isinstance(t, st.DateTime):
        kind = "timestamptz" if getattr(t, "timezone", False) else "timestamp"
    elif isinstance(t, st.Date):
        kind = "date"
    elif isinstance(t, st.Time):
        kind = "time"
    else:
        kind = None
    return ColumnInfo(name, kind, nullable, precision, scale, unsigned, auto, numeric)
