"""Connect values to JSON payloads and back, compiled once per schema.

``compile_encoder(schema, ...)`` walks the schema once and returns a closure that turns a value into
plain Python objects (dicts in field order, lists, str, int, bool, None) that orjson serializes exactly as
Jackson would. Where orjson's spelling differs from Jackson's, the closure emits an ``orjson.Fragment``
holding Jackson's text: doubles outside ``[1e-3, 1e7)`` (``1.0E7``), every float32 (``Float.toString``),
non-finite numbers (``"NaN"``) and NUMERIC decimals (``BigDecimal.toString``). Doubles inside that range
are written by orjson itself: its shortest round-trip digits match Java's there.

Structs are the hot path: each struct schema gets a generated function that returns one dict display in
the schema's field order, with every field's conversion and null rule inline.
"""

from __future__ import annotations

import base64
import binascii
import decimal as _decimal
from collections.abc import Callable
from typing import Any

import orjson

from cdc.api.errors import DataError
from cdc.api.schema import Date, Decimal, Schema, Time, Timestamp, Type
from cdc.api.struct import Struct
from cdc.converters._java import java_double_json, java_float_json

__all__ = [
    "Decoder",
    "Encoder",
    "compile_decoder",
    "compile_encoder",
    "decode_schemaless",
    "encode_schemaless",
]

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]

_Fragment = orjson.Fragment
_b64encode = base64.b64encode
_LOGICAL = (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)
_PASS_THROUGH = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.BOOLEAN, Type.STRING)


def _b64(value: bytes | bytearray | memoryview) -> str:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise DataError(f"Invalid type for bytes type: {type(value).__name__}")
    return _b64encode(value).decode("ascii")


def _double(value: Any) -> Any:
    if type(value) is float and (1e-3 <= value < 1e7 or -1e7 < value <= -1e-3):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"Invalid type for FLOAT64: {type(value).__name__}")
    return _Fragment(java_double_json(float(value)))


def _float(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"Invalid type for FLOAT32: {type(value).__name__}")
    return _Fragment(java_float_json(float(value)))


def _numeric_decimal(value: Any) -> Any:
    if not isinstance(value, _decimal.Decimal):
        raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {type(value).__name__}")
    return _Fragment(str(value))


class _Required:
    """Marker for 'null is not allowed here'."""


_REQUIRED = _Required()


def _null_result(schema: Schema, replace_null: bool, numeric: bool) -> Any:
    if schema.default is not None and replace_null:
        conv = _non_null(schema, numeric, replace_null)
        return schema.default if conv is None else conv(schema.default)
    if schema.optional:
        return None
    return _REQUIRED


def _null_error() -> DataError:
    return DataError("Conversion error: null value for field that is required and has no default value")


def _non_null(schema: Schema, numeric: bool, replace_null: bool) -> Encoder | None:
    """The converter for non-null values, or None when the value passes through unchanged."""
    name = schema.name
    if name in _LOGICAL:
        if name == Decimal.LOGICAL_NAME:
            if numeric:
                return _numeric_decimal
            return _base64_decimal(schema)
        logical: Any = {Date.LOGICAL_NAME: Date, Time.LOGICAL_NAME: Time}.get(name, Timestamp)
        return lambda v: logical.from_logical(schema, v)
    t = schema.type
    if t in _PASS_THROUGH:
        return None
    if t is Type.FLOAT64:
        return _double
    if t is Type.FLOAT32:
        return _float
    if t is Type.BYTES:
        return _b64
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        item = compile_encoder(schema.value_schema, numeric, replace_null)
        return lambda v: [item(x) for x in v]
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key = compile_encoder(schema.key_schema, numeric, replace_null)
        val = compile_encoder(schema.value_schema, numeric, replace_null)
        if schema.key_schema.type is Type.STRING:
            return lambda v: {_key_text(key(k)): val(x) for k, x in v.items()}
        return lambda v: [[key(k), val(x)] for k, x in v.items()]
    return _struct_encoder(schema, numeric, replace_null)


_EXACT = _decimal.Context(prec=1000, Emax=_decimal.MAX_EMAX, Emin=_decimal.MIN_EMIN)


def _base64_decimal(schema: Schema) -> Encoder:
    scale = Decimal.scale(schema)

    def enc(value: Any) -> Any:
        if not isinstance(value, _decimal.Decimal):
            raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {type(value).__name__}")
        scaled = value.scaleb(scale, _EXACT)
        unscaled = int(scaled) if scaled.is_finite() else None
        if unscaled is None or scaled != unscaled:
            return _b64(Decimal.from_logical(schema, value))  # rounds or raises, as the API decides
        length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
        return _b64encode(unscaled.to_bytes(length, "big", signed=True)).decode("ascii")

    return enc


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else str(key)


def compile_encoder(schema: Schema, numeric: bool = False, replace_null: bool = True) -> Encoder:
    """A function from a Connect value of ``schema`` to its orjson-ready JSON form."""
    conv = _non_null(schema, numeric, replace_null)
    null = _null_result(schema, replace_null, numeric)
    required = null is _REQUIRED

    if conv is None:
        if not required and null is None:
            return _identity

        def enc_plain(v: Any) -> Any:
            if v is None:
                if required:
                    raise _null_error()
                return null
            return v

        return enc_plain

    def enc(v: Any) -> Any:
        if v is None:
            if required:
                raise _null_error()
            return null
        return conv(v)

    return enc


def _identity(v: Any) -> Any:
    return v


def _struct_encoder(schema: Schema, numeric: bool, replace_null: bool) -> Encoder:
    """One generated function per struct schema: a dict display in field order, with each field's
    conversion and null rule written inline (no per-value dispatch, no second pass over the fields)."""
    fields = schema.fields
    namespace: dict[str, Any] = {
        "Struct": Struct,
        "DataError": DataError,
        "schema": schema,
        "_required": _raise_required,
    }
    entries: list[str] = []
    for i, f in enumerate(fields):
        conv = _non_null(f.schema, numeric, replace_null)
        null = _null_result(f.schema, replace_null, numeric)
        if null is None:
            null_expr = "None"
        elif null is _REQUIRED:
            null_expr = "_required()"
        else:
            namespace[f"n{i}"] = null
            null_expr = f"n{i}"
        if conv is None:
            expr = f"v{i}" if null is None else f"(v{i} if v{i} is not None else {null_expr})"
        else:
            namespace[f"c{i}"] = conv
            expr = f"(c{i}(v{i}) if v{i} is not None else {null_expr})"
        entries.append(f"{f.name!r}: {expr}")
    unpack = "".join(f"v{i}, " for i in range(len(fields)))
    lines = [
        "def enc_struct(value):",
        "    if type(value) is not Struct or (value.schema is not schema and value.schema != schema):",
        "        raise DataError('Mismatching schema.')",
    ]
    if fields:
        lines.append(f"    {unpack}= value.values")
    lines.append("    return {" + ", ".join(entries) + "}")
    exec(compile("\n".join(lines) + "\n", "<json-struct-encoder>", "exec"), namespace)  # from field names
    enc_struct: Encoder = namespace["enc_struct"]
    return enc_struct


def _raise_required() -> Any:
    raise _null_error()


def encode_schemaless(value: Any) -> Any:
    """A value without a schema, typed by its Python class (Connect's ``ConnectSchema.schemaType``)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _double(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _b64(value)
    if isinstance(value, (list, tuple)):
        return [encode_schemaless(x) for x in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: encode_schemaless(v) for k, v in value.items()}
        return [[encode_schemaless(k), encode_schemaless(v)] for k, v in value.items()]
    if isinstance(value, Struct):
        raise DataError("Mismatching schema.")
    raise DataError(f"Java class {type(value).__name__} does not have corresponding schema type.")


# -------------------------------------------------------------------------------------------- decoding


def _node_type(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, (int, float, _decimal.Decimal)):
        return "NUMBER"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list):
        return "ARRAY"
    return "OBJECT"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _to_int(value: Any) -> int:
    if isinstance(value, (int, float, _decimal.Decimal)) and not isinstance(value, bool):
        return int(value)
    return 0  # Jackson's intValue() of a non-numeric node


def _to_float(value: Any) -> float:
    if isinstance(value, (int, float, _decimal.Decimal)) and not isinstance(value, bool):
        return float(value)
    return 0.0


def _from_b64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise DataError("Invalid bytes field")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise DataError("Invalid bytes field") from exc


def _decimal_decoder(schema: Schema) -> Decoder:
    def dec(value: Any) -> Any:
        if isinstance(value, _decimal.Decimal):
            return value
        if _is_int(value):
            return _decimal.Decimal(value)
        if isinstance(value, float):
            return _decimal.Decimal(repr(value))
        if isinstance(value, str):
            try:
                raw = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise DataError("Invalid bytes for Decimal field") from exc
            return Decimal.to_logical(schema, raw)
        raise DataError(
            "Invalid type for Decimal, underlying representation should be numeric or bytes but was "
            + _node_type(value)
        )

    return dec


def _int_logical_decoder(schema: Schema, logical: Any, label: str, kind: str) -> Decoder:
    def dec(value: Any) -> Any:
        if not _is_int(value):
            raise DataError(
                f"Invalid type for {label}, underlying representation should be {kind} "
                f"but was {_node_type(value)}"
            )
        return logical.to_logical(schema, value)

    return dec


def _non_null_decoder(schema: Schema, replace_null: bool) -> Decoder:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return _decimal_decoder(schema)
    if name == Date.LOGICAL_NAME:
        return _int_logical_decoder(schema, Date, "Date", "integer")
    if name == Time.LOGICAL_NAME:
        return _int_logical_decoder(schema, Time, "Time", "integer")
    if name == Timestamp.LOGICAL_NAME:
        return _int_logical_decoder(schema, Timestamp, "Timestamp", "integral")
    t = schema.type
    if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        return _to_int
    if t in (Type.FLOAT32, Type.FLOAT64):
        return _to_float
    if t is Type.BOOLEAN:
        return lambda v: v is True
    if t is Type.STRING:
        return lambda v: v if isinstance(v, str) else None
    if t is Type.BYTES:
        return _from_b64
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        item = compile_decoder(schema.value_schema, replace_null)
        return lambda v: [item(x) for x in v] if isinstance(v, list) else []
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key = compile_decoder(schema.key_schema, replace_null)
        val = compile_decoder(schema.value_schema, replace_null)
        if schema.key_schema.type is Type.STRING:

            def dec_obj_map(v: Any) -> Any:
                if not isinstance(v, dict):
                    raise DataError(
                        "Maps with string fields should be encoded as JSON objects, but found "
                        + _node_type(v)
                    )
                return {k: val(x) for k, x in v.items()}

            return dec_obj_map

        def dec_pair_map(v: Any) -> Any:
            if not isinstance(v, list):
                raise DataError(
                    "Maps with non-string fields should be encoded as JSON array of tuples, but found "
                    + _node_type(v)
                )
            out = {}
            for entry in v:
                if not isinstance(entry, list):
                    raise DataError("Found invalid map entry instead of array tuple: " + _node_type(entry))
                if len(entry) != 2:
                    raise DataError(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
                out[key(entry[0])] = val(entry[1])
            return out

        return dec_pair_map
    return _struct_decoder(schema, replace_null)


def _struct_decoder(schema: Schema, replace_null: bool) -> Decoder:
    """A struct's decoder as one generated function: the sinks decode every field of every change event,
    and a generated list display (``[x if type(x := get(n0)) is t0 else d0(x), d1(get(n1)), …]``) costs
    a third of a loop over (name, decoder) pairs. Field names and decoders are passed in the namespace,
    never written into the source (they come from the messages)."""

    def bad(v: Any) -> Any:
        raise DataError("Structs should be encoded as JSON objects, but found " + _node_type(v))

    namespace: dict[str, Any] = {"trusted": Struct.trusted, "schema": schema, "bad": bad, "dict": dict}
    items = []
    for i, f in enumerate(schema.fields):
        dec, exact = _decoder_and_type(f.schema, replace_null)
        namespace[f"n{i}"], namespace[f"d{i}"] = f.name, dec
        if exact is None:
            items.append(f"d{i}(get(n{i}))")
        else:
            namespace[f"t{i}"] = exact
            items.append(f"x if type(x := get(n{i})) is t{i} else d{i}(x)")
    # one value per field, by construction: no need for Struct's own count check
    source = (
        "def dec_struct(v):\n"
        "    if type(v) is not dict and not isinstance(v, dict):\n"
        "        bad(v)\n"
        "    get = v.get\n"
        f"    return trusted(schema, [{', '.join(items)}])\n"
    )
    exec(compile(source, "<json struct decoder>", "exec"), namespace)
    dec_struct: Decoder = namespace["dec_struct"]
    return dec_struct


def compile_decoder(schema: Schema, replace_null: bool = True) -> Decoder:
    """A function from a parsed JSON payload to the Connect value of ``schema``."""
    dec, exact = _decoder_and_type(schema, replace_null)
    if exact is None:
        return dec

    def dec_exact(v: Any) -> Any:
        if type(v) is exact:
            return v
        return dec(v)

    return dec_exact


def _decoder_and_type(schema: Schema, replace_null: bool) -> tuple[Decoder, type | None]:
    """The decoder of ``schema``, and the Python type whose values it returns as they are (None: none).

    The sinks decode every field of every change event: a plain integer or string field whose JSON value
    already has the Connect type (what nearly every message holds) needs no call at all (``_to_int`` of an
    int and the STRING decoder of a str are the value itself)."""
    conv = _non_null_decoder(schema, replace_null)
    default = schema.default if replace_null else None
    optional = schema.optional
    label = schema.type.name

    def dec(v: Any) -> Any:
        if v is None:
            if default is not None:
                return default
            if optional:
                return None
            raise DataError(f"Invalid null value for required {label} field")
        return conv(v)

    exact = _AS_IS.get(schema.type) if conv is _to_int or schema.type is Type.STRING else None
    return dec, exact


_AS_IS: dict[Type, type] = {
    Type.INT8: int,
    Type.INT16: int,
    Type.INT32: int,
    Type.INT64: int,
    Type.STRING: str,
}


def decode_schemaless(value: Any) -> Any:
    """A schemaless payload: integers stay ints (INT64), other numbers become floats (FLOAT64)."""
    if isinstance(value, _decimal.Decimal):
        return float(value)
    if isinstance(value, list):
        return [decode_schemaless(x) for x in value]
    if isinstance(value, dict):
        return {k: decode_schemaless(v) for k, v in value.items()}
    return value
