"""``String.valueOf(value)`` for Connect values: what Java's ``PrintStream.println(Object)`` writes.

The file sink writes each record value as Connect's does, so a pipeline moved from Kafka Connect
produces the same file: ``null`` for a missing value, ``true``/``false``, Java's ``Double.toString``
(``1.0``, ``1.0E10``), ``Float.toString`` for FLOAT32 fields, ``[a, b]`` for arrays, ``{k=v, k2=v2}`` for
maps, ``Struct{a=1,b=x}`` for structs (null fields left out, as ``Struct.toString`` does) and
``java.util.Date.toString`` (``Tue Jan 25 12:34:56 UTC 2022``, local time zone) for the Date, Time and
Timestamp logical types.

One deliberate difference: Java prints a ``byte[]`` as its identity (``[B@1b6d3586``), which is of no
use to anyone; bytes are written here as UTF-8 text (undecodable bytes replaced), which is what a
byte-array pipeline of text lines means.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import struct as _struct
from collections.abc import Mapping
from typing import Any

from cdc.api.schema import Schema, Type
from cdc.api.struct import Struct

__all__ = ["java_double_to_string", "java_float_to_string", "java_to_string"]


def java_to_string(value: Any, schema: Schema | None = None) -> str:
    """Java's ``String.valueOf`` of the Connect value ``value`` (``schema`` refines floats)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if schema is not None and schema.type is Type.FLOAT32:
            return java_float_to_string(value)
        return java_double_to_string(value)
    if isinstance(value, decimal.Decimal):
        return str(value)  # BigDecimal.toString and Python share the to-scientific-string rules
    if isinstance(value, Struct):
        parts = [
            f"{f.name}={java_to_string(v, f.schema)}"
            for f, v in zip(value.schema.fields, value.values, strict=True)
            if v is not None
        ]
        return "Struct{" + ",".join(parts) + "}"
    if isinstance(value, Mapping):
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        items = (
            f"{java_to_string(k, key_schema)}={java_to_string(v, value_schema)}" for k, v in value.items()
        )
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        element_schema = schema.value_schema if schema is not None else None
        return "[" + ", ".join(java_to_string(v, element_schema) for v in value) + "]"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return _java_date(value)
    return str(value)


def _java_date(value: _dt.datetime | _dt.date | _dt.time) -> str:
    """``java.util.Date.toString``: ``EEE MMM dd HH:mm:ss zzz yyyy`` in the local time zone."""
    if isinstance(value, _dt.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=_dt.UTC)
    elif isinstance(value, _dt.date):
        moment = _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.UTC)
    else:  # Connect's Time is a Date on 1970-01-01 (UTC)
        moment = _dt.datetime.combine(_dt.date(1970, 1, 1), value.replace(tzinfo=None), tzinfo=_dt.UTC)
    local = moment.astimezone()
    return local.strftime("%a %b %d %H:%M:%S ") + (local.tzname() or "UTC") + local.strftime(" %Y")


def java_double_to_string(x: float) -> str:
    """Java's ``Double.toString`` as JDK 19+ prints it: the shortest digits (at least two) that round-trip.

    JDK 17 and older sometimes print one digit more (``9.999999999999999E22`` for ``1e23``).
    """
    return _java_fp(x, repr(x))


def java_float_to_string(x: float) -> str:
    """Java's ``Float.toString`` for a value that came from a 32-bit float."""
    if math.isnan(x) or math.isinf(x) or x == 0.0:
        return _java_fp(x, repr(x))
    target = _struct.unpack("f", _struct.pack("f", x))[0]
    for precision in range(1, 10):
        text = f"{target:.{precision}g}"
        if _struct.unpack("f", _struct.pack("f", float(text)))[0] == target:
            return _java_fp(target, text)
    return _java_fp(target, repr(target))


def _java_fp(x: float, shortest: str) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    d = decimal.Decimal(shortest.lstrip("-")).normalize()
    if len(d.as_tuple().digits) == 1:
        # JDK 19+ never prints fewer than two digits: of those, the one closest to the exact value
        # (Double.MIN_VALUE is 4.9E-324, not 5.0E-324).
        d = decimal.Decimal(f"{abs(x):.1e}").normalize()
    digits = "".join(str(n) for n in d.as_tuple().digits)
    exponent = int(d.as_tuple().exponent)
    if 1e-3 <= abs(x) < 1e7:
        text = format(d, "f")
        return sign + (text if "." in text else text + ".0")
    magnitude = len(digits) - 1 + exponent
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{magnitude}"
