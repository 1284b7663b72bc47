"""``org.apache.kafka.connect.storage.SimpleHeaderConverter`` and the parts of Connect's ``Values`` it uses.

Header values become strings the way ``Values.convertToString`` writes them: strings as they are
(quoted only inside arrays, maps and structs), numbers and booleans as Java prints them, bytes in
base64, Date ``yyyy-MM-dd``, Time ``HH:mm:ss.SSS'Z'``, Timestamp ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` (UTC),
lists ``[a,b]``, maps ``{k:v}`` and structs ``{"f":v}``.

Reading back (``Values.parseString``) covers the basic cases: ``true``/``false``, integers as the
smallest of INT8…INT64 that holds them (larger ones as a Decimal of scale 0), numbers with a fraction as
FLOAT32 when finite in float32 and FLOAT64 otherwise, the three temporal forms above, and everything else
as a STRING. Arrays and maps in headers come back as strings (not parsed).
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import re
from collections.abc import Mapping
from typing import Any

from cdc.api.plugins import HeaderConverter
from cdc.api.records import SchemaAndValue
from cdc.api.schema import (
    BOOLEAN_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    Time,
    Timestamp,
    Type,
)
from cdc.api.struct import Struct
from cdc.converters._java import java_double, java_float, to_float32

__all__ = ["SimpleHeaderConverter", "convert_to_string", "parse_string"]


def _date_text(value: _dt.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _time_text(value: _dt.time) -> str:
    return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond // 1000:03d}Z"


def _append(out: list[str], schema: Schema | None, value: Any, embedded: bool) -> None:
    if value is None:
        out.append("null")
        return
    name = schema.name if schema is not None else None
    if name == Date.LOGICAL_NAME or (name is None and type(value) is _dt.date):
        out.append(_date_text(value))
        return
    if name == Time.LOGICAL_NAME or isinstance(value, _dt.time):
        out.append(_time_text(value))
        return
    if name == Timestamp.LOGICAL_NAME or isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.UTC)
        out.append(f"{_date_text(value)}T{_time_text(value.time())}")
        return
    if isinstance(value, str):
        if embedded:
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'"{escaped}"')
        else:
            out.append(value)
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, float):
        single = schema is not None and schema.type is Type.FLOAT32
        out.append(java_float(value) if single else java_double(value))
    elif isinstance(value, (int, _decimal.Decimal)):
        out.append(str(value))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        out.append(base64.b64encode(value).decode("ascii"))
    elif isinstance(value, (list, tuple)):
        item = schema.value_schema if schema is not None else None
        out.append("[")
        for i, x in enumerate(value):
            if i:
                out.append(",")
            _append(out, item, x, True)
        out.append("]")
    elif isinstance(value, dict):
        key_schema = schema.key_schema if schema is not None else None
        val_schema = schema.value_schema if schema is not None else None
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _append(out, key_schema, k, True)
            out.append(":")
            _append(out, val_schema, v, True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for i, f in enumerate(value.schema.fields):
            if i:
                out.append(",")
            out.append(f'"{f.name}":')
            _append(out, f.schema, value.values[f.index], True)
        out.append("}")
    else:
        out.append(str(value))


def convert_to_string(schema: Schema | None, value: Any) -> str | None:
    """``Values.convertToString``."""
    if value is None:
        return None
    out: list[str] = []
    _append(out, schema, value, False)
    return "".join(out)


_INT = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z")
_INT_SCHEMAS = ((INT8_SCHEMA, 2**7), (INT16_SCHEMA, 2**15), (INT32_SCHEMA, 2**31), (INT64_SCHEMA, 2**63))


def _parse_number(text: str) -> SchemaAndValue:
    if _INT.fullmatch(text):
        n = int(text)
        for schema, bound in _INT_SCHEMAS:
            if -bound <= n < bound:
                return SchemaAndValue(schema, n)
        return SchemaAndValue(Decimal.schema(0), _decimal.Decimal(n))
    value = _decimal.Decimal(text)
    exponent = value.as_tuple().exponent
    scale = -exponent if isinstance(exponent, int) else 0
    if scale == 0:
        # an integral value written with an exponent (1E3): Connect keeps it exact as a Decimal
        return SchemaAndValue(Decimal.schema(0), value)
    as_float = float(value)
    single = to_float32(as_float)
    if single not in (float("inf"), float("-inf")):
        return SchemaAndValue(FLOAT32_SCHEMA, single)
    if as_float not in (float("inf"), float("-inf")):
        return SchemaAndValue(FLOAT64_SCHEMA, as_float)
    return SchemaAndValue(Decimal.schema(scale), value)


def parse_string(text: str) -> SchemaAndValue:
    """``Values.parseString`` for the basic cases (see the module docstring)."""
    if text == "":
        return SchemaAndValue(STRING_SCHEMA, text)
    stripped = text.strip()
    if stripped in ("true", "false"):
        return SchemaAndValue(BOOLEAN_SCHEMA, stripped == "true")
    if _NUMBER.fullmatch(stripped):
        return _parse_number(stripped)
    if m := _TIMESTAMP.fullmatch(stripped):
        y, mo, d, h, mi, s, ms = (int(g) for g in m.groups())
        return SchemaAndValue(Timestamp.schema(), _dt.datetime(y, mo, d, h, mi, s, ms * 1000, tzinfo=_dt.UTC))
    if m := _DATE.fullmatch(stripped):
        y, mo, d = (int(g) for g in m.groups())
        return SchemaAndValue(Date.schema(), _dt.date(y, mo, d))
    if m := _TIME.fullmatch(stripped):
        h, mi, s, ms = (int(g) for g in m.groups())
        return SchemaAndValue(Time.schema(), _dt.time(h, mi, s, ms * 1000))
    return SchemaAndValue(STRING_SCHEMA, text)


class SimpleHeaderConverter(HeaderConverter):
    """``org.apache.kafka.connect.storage.SimpleHeaderConverter``: UTF-8 strings via ``Values``."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        text = convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        text = bytes(value).decode("utf-8", errors="replace")
        try:
            return parse_string(text)
        except (ValueError, ArithmeticError):
            return SchemaAndValue(STRING_SCHEMA, text)
