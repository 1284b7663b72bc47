"""``Cast``: change the type of fields, or of the whole key/value, as Connect's ``Cast`` does.

Numbers narrow as Java's do (truncation toward zero, then two's-complement wrap), strings parse, and
anything casts to a string (dates in ISO form, bytes in base64, floats as Java prints doubles).
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import math
import struct as _struct
from typing import Any, TypeVar

from cdc.api.errors import ConfigError, DataError
from cdc.api.records import ConnectRecord
from cdc.api.schema import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from cdc.api.struct import Struct
from cdc.config.definition import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.transforms._util import (
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    infer_type,
    java_class,
    replace_null_key,
    require_map,
    require_struct,
)
from cdc.transforms.fields import non_empty_list

__all__ = ["Cast", "CastKey", "CastValue", "cast_value", "java_double"]

R = TypeVar("R", bound=ConnectRecord)

_OUTPUT = (
    Type.INT8,
    Type.INT16,
    Type.INT32,
    Type.INT64,
    Type.FLOAT32,
    Type.FLOAT64,
    Type.BOOLEAN,
    Type.STRING,
)
_INPUT = (*_OUTPUT, Type.BYTES)
_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_WHOLE = object()


def _names(types: tuple[Type, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def java_double(x: float) -> str:
    """``Double.toString``: plain between 10^-3 and 10^7, else ``1.0E10`` style."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(float(x))
    d = _decimal.Decimal(repr(float(x)))
    sign, digits, _ = d.as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    return ("-" if sign else "") + ds[0] + "." + (ds[1:] or "0") + "E" + str(d.adjusted())


def _wrap(number: int, bits: int) -> int:
    number &= (1 << bits) - 1
    return number - (1 << bits) if number >= 1 << (bits - 1) else number


def _to_int(value: Any, target: Type) -> int:
    bits = _BITS[target]
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, (float, _decimal.Decimal)):
        f = float(value)
        if math.isnan(f):
            return 0
        # Java narrows a double to int (or long) with saturation, then int to byte/short by wrapping.
        wide = 64 if bits == 64 else 32
        n = (
            max(-(2 ** (wide - 1)), min(2 ** (wide - 1) - 1, int(f)))
            if not math.isinf(f)
            else (2 ** (wide - 1) - 1 if f > 0 else -(2 ** (wide - 1)))
        )
        return _wrap(n, bits)
    if isinstance(value, str):
        try:
            n = int(value)
        except ValueError as exc:
            raise DataError(f'For input string: "{value}"') from exc
        if not -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
            raise DataError(f'Value out of range. Value:"{value}"')
        return n
    raise DataError(f"Unexpected type in Cast transformation: class {java_class(value)}")


def _to_float(value: Any, target: Type) -> float:
    if isinstance(value, (bool, int, float, _decimal.Decimal)):
        f = float(value)
    elif isinstance(value, str):
        try:
            f = float(value.strip())
        except ValueError as exc:
            raise DataError(f'For input string: "{value}"') from exc
    else:
        raise DataError(f"Unexpected type in Cast transformation: class {java_class(value)}")
    if target is Type.FLOAT32 and not math.isinf(f) and not math.isnan(f):
        f = (
            _struct.unpack("f", _struct.pack("f", f))[0]
            if abs(f) <= 3.4028234663852886e38
            else math.copysign(math.inf, f)
        )
    return f


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, _decimal.Decimal)):
        return int(value) != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataError(f"Unexpected type in Cast transformation: class {java_class(value)}")


def _to_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if schema is not None and schema.type is Type.FLOAT32:
            return repr(value)  # Float.toString prints the shortest float digits
        return java_double(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, _dt.datetime):
        v = value.astimezone(_dt.UTC) if value.tzinfo else value
        return v.strftime("%Y-%m-%dT%H:%M:%S.") + f"{v.microsecond // 1000:03d}Z"
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _dt.time):
        return value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    if isinstance(value, _decimal.Decimal):
        return str(value)
    return str(value)


def _encode_logical(schema: Schema, value: Any) -> Any:
    """Logical values (other than Decimal, a Number already) as their physical numbers before a cast."""
    if schema.name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if schema.name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    return value


def cast_value(schema: Schema | None, value: Any, target: Type) -> Any:
    """Connect's ``castValueToType``."""
    if value is None:
        return None
    inferred = schema.type if schema is not None else infer_type(value)
    if inferred is None:
        raise DataError(
            f"Cast transformation was passed a value of type class {java_class(value)} which is not "
            "supported by Connect's data API"
        )
    if inferred not in _INPUT:
        raise DataError(
            f"Cast transformation does not support casting from {inferred.name}; supported types are "
            f"{_names(_INPUT)}"
        )
    if schema is not None and schema.name is not None and target is not Type.STRING:
        value = _encode_logical(schema, value)
    if target in _BITS:
        return _to_int(value, target)
    if target in (Type.FLOAT32, Type.FLOAT64):
        return _to_float(value, target)
    if target is Type.BOOLEAN:
        return _to_bool(value)
    return _to_string(value, schema)


def _output_type(text: str) -> Type:
    try:
        t = Type[text.strip().upper()]
    except KeyError as exc:
        raise ConfigError(f"Invalid type found in casting spec: {text.strip()}") from exc
    if t not in _OUTPUT:
        raise ConfigError(
            f"Cast transformation does not support casting to/from {t.name}; supported types are "
            f"{_names(_OUTPUT)}"
        )
    return t


def _parse_spec(mappings: list[str]) -> dict[Any, Type]:
    casts: dict[Any, Type] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) > 2:
            raise ConfigError(f"Invalid cast mapping: {mapping}", "spec", "[" + ", ".join(mappings) + "]")
        if len(parts) == 1:
            casts[_WHOLE] = _output_type(parts[0])
        else:
            casts[parts[0].strip()] = _output_type(parts[1])
    if _WHOLE in casts and len(mappings) > 1:
        raise ConfigError(
            "Cast transformations that specify a type to cast the entire value to may only specify "
            "a single cast in their spec"
        )
    return casts


def _validate_spec(name: str, value: Any) -> None:
    non_empty_list(name, value)
    _parse_spec(list(value))


_BUILDERS = {
    Type.INT8: SchemaBuilder.int8,
    Type.INT16: SchemaBuilder.int16,
    Type.INT32: SchemaBuilder.int32,
    Type.INT64: SchemaBuilder.int64,
    Type.FLOAT32: SchemaBuilder.float32,
    Type.FLOAT64: SchemaBuilder.float64,
    Type.BOOLEAN: SchemaBuilder.bool,
    Type.STRING: SchemaBuilder.string,
}


class Cast(KeyOrValue[R]):
    """Cast fields (``spec=a:int32,b:string``) or the whole value (``spec=int64``) to another type."""

    PURPOSE = "cast types"
    CONFIG_DEF = replace_null_key(
        ConfigDef().define(
            "spec",
            ConfigType.LIST,
            NO_DEFAULT,
            _validate_spec,
            Importance.HIGH,
            "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields "
            "of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, "
            "int64, float32, float64, boolean, and string. Note that binary fields can only be cast to "
            "string.",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.casts = _parse_spec(cfg["spec"])
        self.whole = self.casts.get(_WHOLE)
        self.replace_null = cfg["replace.null.with.default"]
        self._cache = SchemaCache()

    def _updated_schema(self, schema: Schema) -> Schema:
        if self.whole is not None:
            b = _BUILDERS[self.whole]()
            if schema.name not in (
                Date.LOGICAL_NAME,
                Time.LOGICAL_NAME,
                Timestamp.LOGICAL_NAME,
                Decimal.LOGICAL_NAME,
            ):
                copy_schema_basics(schema, b)
        else:
            b = copy_schema_basics(schema, SchemaBuilder.struct())
            for f in require_struct_schema(schema).fields:
                target = self.casts.get(f.name)
                if target is None:
                    b.field(f.name, f.schema)
                    continue
                fb = _BUILDERS[target]()
                if f.schema.optional:
                    fb.optional()
                if f.schema.default is not None:
                    fb.default_value(cast_value(f.schema, f.schema.default, target))
                b.field(f.name, fb.build())
        if schema.optional:
            b.optional()
        if schema.default is not None and self.whole is not None:
            b.default_value(cast_value(schema, schema.default, self.whole))
        return b.build()

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self.whole is not None:
                return self.new_record(record, None, cast_value(None, value, self.whole))
            updated = dict(require_map(value, self.PURPOSE))
            for name, target in self.casts.items():
                updated[name] = cast_value(None, updated.get(name), target)
            return self.new_record(record, None, updated)
        new_schema = self._cache.get(schema) or self._cache.put(schema, self._updated_schema(schema))
        if self.whole is not None:
            return self.new_record(record, new_schema, cast_value(schema, value, self.whole))
        struct = require_struct(value, self.PURPOSE)
        values = []
        for f in struct.schema.fields:
            v = struct.get(f) if self.replace_null else struct.values[f.index]
            to = self.casts.get(f.name)
            values.append(v if to is None else cast_value(f.schema, v, to))
        return self.new_record(record, new_schema, Struct(new_schema, values))


def require_struct_schema(schema: Schema) -> Schema:
    if schema.type is not Type.STRUCT:
        raise DataError(f"Only Struct objects supported for [{Cast.PURPOSE}], found: {schema.type.name}")
    return schema


class CastKey(Cast[R]):
    IS_KEY = True


class CastValue(Cast[R]):
    IS_KEY = False
