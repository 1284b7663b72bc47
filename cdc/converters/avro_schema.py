"""Connect schemas to Avro schemas and back, as Confluent's ``AvroData`` maps them.

Connect → Avro (``from_connect``):

* INT8/INT16 → ``int`` with ``"connect.type":"int8"|"int16"``; INT32 ``int``; INT64 ``long``; FLOAT32
  ``float``; FLOAT64 ``double``; BOOLEAN, STRING, BYTES the same; ARRAY ``array``; MAP with required string
  keys ``map``, other maps an ``array`` of records ``{key, value}`` named ``MapEntry`` (namespace
  ``io.confluent.connect.avro``) or, for a named map, the map's name with ``"connect.internal.type":
  "MapEntry"``.
* STRUCT → ``record``, its name split at the last dot into namespace and name (``ConnectDefault`` in
  ``io.confluent.connect.avro`` when unnamed; later unnamed records get ``ConnectDefault1``, ``2`` …, as
  Avro forbids redefining a name).
* Metadata (``connect.meta.data``, default on), in this order: ``connect.doc``, ``connect.version``,
  ``connect.parameters``, ``connect.default``, ``connect.name``, ``connect.type``; then the logical type:
  Decimal → ``bytes`` with ``scale`` and ``precision`` (``connect.decimal.precision``, default 64) first and
  ``"logicalType":"decimal"`` last; Date ``int``/``date``; Time ``int``/``time-millis``; Timestamp
  ``long``/``timestamp-millis``.
* Optional → union ``["null", T]`` (``[T, "null"]`` when the schema has a default); a record field gets
  ``"default": null`` when optional, or its schema's default.

The output is an ordered JSON structure; :func:`to_json` writes it compactly as Avro's ``Schema.toString``
does, with repeated named types written as references and ``namespace`` omitted where it is inherited.
Avro → Connect (``to_connect``) reverses this, resolving named references.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import orjson

from cdc.api.errors import DataError
from cdc.api.schema import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp, Type
from cdc.api.struct import Struct

__all__ = [
    "AVRO_FIELD_DEFAULT_FLAG",
    "DEFAULT_SCHEMA_FULL_NAME",
    "NAMESPACE",
    "from_connect",
    "to_connect",
    "to_json",
]

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME = NAMESPACE + "." + DEFAULT_SCHEMA_NAME
MAP_ENTRY = "MapEntry"
AVRO_FIELD_DEFAULT_FLAG = NAMESPACE + ".field.default"
AVRO_RECORD_DOC = NAMESPACE + ".record.doc"
AVRO_FIELD_DOC_PREFIX = NAMESPACE + ".field.doc."
AVRO_ENUM = NAMESPACE + ".Enum"
PRECISION_PARAM = "connect.decimal.precision"
DEFAULT_PRECISION = 64
_LOGICAL = {
    Date.LOGICAL_NAME: "date",
    Time.LOGICAL_NAME: "time-millis",
    Timestamp.LOGICAL_NAME: "timestamp-millis",
}
_PRIMITIVE = {
    Type.INT8: "int",
    Type.INT16: "int",
    Type.INT32: "int",
    Type.INT64: "long",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
}


def _split(name: str) -> tuple[str | None, str]:
    ns, dot, short = name.rpartition(".")
    return (ns if dot else None), short


class _Context:
    def __init__(self) -> None:
        self.unnamed = 0

    def default_name(self) -> str:
        index = self.unnamed
        self.unnamed += 1
        return DEFAULT_SCHEMA_NAME if index == 0 else f"{DEFAULT_SCHEMA_NAME}{index}"


def from_connect(schema: Schema, meta: bool = True) -> Any:
    """The Avro schema (an ordered JSON structure) for a Connect schema."""
    return _from(schema, _Context(), meta, ignore_optional=False)


def _from(schema: Schema, ctx: _Context, meta: bool, ignore_optional: bool) -> Any:
    t = schema.type
    base: dict[str, Any]
    if t in _PRIMITIVE:
        base = {"type": _PRIMITIVE[t]}
        if t is Type.BYTES and schema.name == Decimal.LOGICAL_NAME:
            params = schema.parameters or {}
            base["scale"] = int(params.get(Decimal.SCALE_FIELD, "0"))
            base["precision"] = int(params.get(PRECISION_PARAM, DEFAULT_PRECISION))
    elif t is Type.ARRAY:
        assert schema.value_schema is not None
        base = {"type": "array", "items": _from(schema.value_schema, ctx, meta, False)}
    elif t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
            base = {"type": "map", "values": _from(schema.value_schema, ctx, meta, False)}
        else:
            if schema.name is None:
                entry: dict[str, Any] = {"type": "record", "name": MAP_ENTRY, "namespace": NAMESPACE}
            else:
                ns, short = _split(schema.name)
                entry = {"type": "record", "name": short, "namespace": ns}
            entry["fields"] = [
                _field("key", schema.key_schema, None, ctx, meta),
                _field("value", schema.value_schema, None, ctx, meta),
            ]
            if schema.name is not None:
                entry["connect.internal.type"] = MAP_ENTRY
            base = {"type": "array", "items": entry}
    else:
        if schema.optional and not ignore_optional:
            required = SchemaBuilder.from_schema(schema).required().build()
            return ["null", _from(required, ctx, meta, False)]
        params = schema.parameters or {}
        if schema.name is not None:
            ns, short = _split(schema.name)
        else:
            ns, short = NAMESPACE, ctx.default_name()
        base = {"type": "record", "name": short, "namespace": ns}
        if AVRO_RECORD_DOC in params:
            base["doc"] = params[AVRO_RECORD_DOC]
        base["fields"] = [
            _field(f.name, f.schema, params.get(AVRO_FIELD_DOC_PREFIX + f.name), ctx, meta)
            for f in schema.fields
        ]

    if meta:
        if schema.doc is not None:
            base["connect.doc"] = schema.doc
        if schema.version is not None:
            base["connect.version"] = schema.version
        if schema.parameters:
            params_out = {k: v for k, v in schema.parameters.items() if k != AVRO_FIELD_DEFAULT_FLAG}
            if params_out:
                base["connect.parameters"] = params_out
        if schema.default is not None and AVRO_FIELD_DEFAULT_FLAG not in (schema.parameters or {}):
            base["connect.default"] = default_to_avro_json(schema, schema.default)
        if schema.name is not None:
            base["connect.name"] = schema.name
        if t in (Type.INT8, Type.INT16):
            base["connect.type"] = t.value
    if schema.name == Decimal.LOGICAL_NAME:
        base["logicalType"] = "decimal"
    elif schema.name in _LOGICAL:
        base["logicalType"] = _LOGICAL[schema.name]
    for k, v in (schema.parameters or {}).items():
        if k.startswith("avro"):
            base[k] = v

    # a primitive without properties is written as its bare name ("int"), as Avro does
    node: Any = base["type"] if len(base) == 1 and base["type"] in _PRIMITIVE.values() else base
    if schema.optional and not ignore_optional:
        return [node, "null"] if schema.default is not None else ["null", node]
    return node


def _field(name: str, schema: Schema, doc: str | None, ctx: _Context, meta: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "type": _from(schema, ctx, meta, False)}
    if doc is not None:
        out["doc"] = doc
    if schema.default is not None:
        out["default"] = default_to_avro_json(schema, schema.default)
    elif schema.optional:
        out["default"] = None
    return out


def default_to_avro_json(schema: Schema, value: Any) -> Any:
    """A Connect default as Avro writes defaults in JSON (bytes as ISO-8859-1 text)."""
    if value is None:
        return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return Decimal.from_logical(schema, value).decode("latin-1")
    if name in _LOGICAL:
        logical: Any = {Date.LOGICAL_NAME: Date, Time.LOGICAL_NAME: Time}.get(name, Timestamp)
        return logical.from_logical(schema, value)
    t = schema.type
    if t is Type.BYTES:
        return bytes(value).decode("latin-1")
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return [default_to_avro_json(schema.value_schema, v) for v in value]
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
            return {k: default_to_avro_json(schema.value_schema, v) for k, v in value.items()}
        return [
            [default_to_avro_json(schema.key_schema, k), default_to_avro_json(schema.value_schema, v)]
            for k, v in value.items()
        ]
    if t is Type.STRUCT:
        return {f.name: default_to_avro_json(f.schema, value.get(f)) for f in schema.fields}
    return value


# ------------------------------------------------------------------------------------------ writing


def to_json(avro: Any) -> str:
    """Avro's compact ``Schema.toString()`` of an Avro schema structure."""
    return orjson.dumps(_refs(avro, set(), None)).decode()


def _refs(node: Any, defined: set[str], space: str | None) -> Any:
    if isinstance(node, list):
        return [_refs(n, defined, space) for n in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("record", "enum", "fixed"):
        ns = node.get("namespace")
        full = f"{ns}.{node['name']}" if ns else node["name"]
        if full in defined:
            return node["name"] if ns == space or not ns else full
        defined.add(full)
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k == "namespace":
                if ns is not None and ns != space:
                    out[k] = v
                elif ns is None and space is not None:
                    out[k] = ""
            elif k == "fields":
                out[k] = [
                    {fk: (_refs(fv, defined, ns) if fk == "type" else fv) for fk, fv in f.items()} for f in v
                ]
            else:
                out[k] = v
        return out
    out = dict(node)
    if "items" in out:
        out["items"] = _refs(out["items"], defined, space)
    if "values" in out:
        out["values"] = _refs(out["values"], defined, space)
    return out


# ------------------------------------------------------------------------------------------ reading

_AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def resolve(avro: Any) -> Any:
    """Replace named references by their definitions (each definition object reused as is)."""
    names: dict[str, Any] = {}

    def walk(node: Any, space: str | None) -> Any:
        if isinstance(node, str):
            if node in _AVRO_PRIMITIVES:
                return node
            full = node if "." in node else (f"{space}.{node}" if space else node)
            if full in names:
                return names[full]
            if node in names:
                return names[node]
            raise DataError(f"Undefined Avro name: {node}")
        if isinstance(node, list):
            return [walk(n, space) for n in node]
        if not isinstance(node, dict):
            raise DataError(f"Invalid Avro schema node: {node!r}")
        kind = node.get("type")
        if isinstance(kind, (list, dict)) or (
            isinstance(kind, str)
            and kind not in _AVRO_PRIMITIVES
            and kind not in ("record", "enum", "fixed", "array", "map", "error")
        ):
            return walk(kind, space)
        if kind in ("record", "error", "enum", "fixed"):
            name = node["name"]
            ns = node.get("namespace", space) if "." not in name else name.rpartition(".")[0]
            short = name.rpartition(".")[2]
            full = f"{ns}.{short}" if ns else short
            out = dict(node)
            out["name"], out["namespace"] = short, ns or None
            names[full] = out
            if kind in ("record", "error"):
                out["fields"] = [dict(f, type=walk(f["type"], ns or None)) for f in node.get("fields", [])]
            return out
        out = dict(node)
        if kind == "array":
            out["items"] = walk(node["items"], space)
        elif kind == "map":
            out["values"] = walk(node["values"], space)
        return out

    return walk(avro, None)


_NO_DEFAULT = object()


def to_connect(avro: Any, meta: bool = True) -> Schema:
    """The Connect schema for a (JSON-parsed) Avro schema, as ``AvroData.toConnectSchema``."""
    return _to(resolve(avro), False, _NO_DEFAULT, meta)


def _full_name(node: Mapping[str, Any]) -> str:
    ns = node.get("namespace")
    return f"{ns}.{node['name']}" if ns else str(node["name"])


def _is_map_entry(node: Any) -> bool:
    return (
        isinstance(node, dict)
        and node.get("type") == "record"
        and (_full_name(node) == f"{NAMESPACE}.{MAP_ENTRY}" or node.get("connect.internal.type") == MAP_ENTRY)
    )


def _to(node: Any, force_optional: bool, field_default: Any, meta: bool) -> Schema:
    if isinstance(node, str):
        node = {"type": node}
    if isinstance(node, list):
        members = [m for m in node if not (m == "null" or (isinstance(m, dict) and m.get("type") == "null"))]
        if len(node) == 2 and len(members) == 1:
            return _to(members[0], True, _NO_DEFAULT, meta)
        raise DataError("Avro unions other than [null, T] are not supported by this converter")
    kind = node.get("type")
    connect_type = node.get("connect.type")
    logical = node.get("logicalType")
    builder: SchemaBuilder
    if kind == "boolean":
        builder = SchemaBuilder.bool()
    elif kind in ("bytes", "fixed"):
        if logical == "decimal":
            scale = node.get("scale")
            if not isinstance(scale, int):
                raise DataError("scale must be specified and must be a number.")
            builder = Decimal.builder(scale)
            precision = node.get("precision")
            if isinstance(precision, int) and precision != DEFAULT_PRECISION:
                builder.parameter(PRECISION_PARAM, str(precision))
        else:
            builder = SchemaBuilder.bytes()
    elif kind == "double":
        builder = SchemaBuilder.float64()
    elif kind == "float":
        builder = SchemaBuilder.float32()
    elif kind == "int":
        if logical == "date":
            builder = Date.builder()
        elif logical == "time-millis":
            builder = Time.builder()
        elif connect_type in ("int8", "int16"):
            builder = SchemaBuilder(Type.INT8 if connect_type == "int8" else Type.INT16)
        else:
            builder = SchemaBuilder.int32()
    elif kind == "long":
        builder = Timestamp.builder() if logical == "timestamp-millis" else SchemaBuilder.int64()
    elif kind == "string":
        builder = SchemaBuilder.string()
    elif kind == "enum":
        builder = SchemaBuilder.string()
        builder.parameter(AVRO_ENUM, _full_name(node))
        for symbol in node.get("symbols", []):
            builder.parameter(f"{AVRO_ENUM}.{symbol}", symbol)
    elif kind == "array":
        items = node["items"]
        if _is_map_entry(items):
            fields = {f["name"]: f for f in items["fields"]}
            builder = SchemaBuilder.map(
                _to(fields["key"]["type"], False, _NO_DEFAULT, meta),
                _to(fields["value"]["type"], False, _NO_DEFAULT, meta),
            )
        else:
            builder = SchemaBuilder.array(_to(items, False, _NO_DEFAULT, meta))
    elif kind == "map":
        from cdc.api.schema import STRING_SCHEMA

        builder = SchemaBuilder.map(STRING_SCHEMA, _to(node["values"], False, _NO_DEFAULT, meta))
    elif kind in ("record", "error"):
        builder = SchemaBuilder.struct()
        if meta and node.get("doc") is not None:
            builder.parameter(AVRO_RECORD_DOC, node["doc"])
        for f in node["fields"]:
            if meta and f.get("doc") is not None:
                builder.parameter(AVRO_FIELD_DOC_PREFIX + f["name"], f["doc"])
            default = f.get("default", _NO_DEFAULT)
            builder.field(f["name"], _to(f["type"], False, default, meta))
    elif kind == "null":
        raise DataError("Standalone null schemas are not supported by this converter")
    else:
        raise DataError(f"Couldn't translate unsupported schema type {kind}.")

    if meta and isinstance(node.get("connect.doc"), str):
        builder.doc(node["connect.doc"])
    version = node.get("connect.version")
    if version is not None:
        if not isinstance(version, int):
            raise DataError(f"Invalid Connect version found: {version}")
        builder.version(version)
    params = node.get("connect.parameters")
    if meta and params is not None:
        if not isinstance(params, dict):
            raise DataError(f"Expected JSON object for schema parameters but found: {params}")
        for k, v in params.items():
            if not isinstance(v, str):
                raise DataError(f"Expected schema parameter values to be strings but found: {v}")
            builder.parameter(k, v)
    for k, v in node.items():
        if k.startswith("avro"):
            builder.parameter(k, str(v))
    connect_default = node.get("connect.default", _NO_DEFAULT)
    default_json = field_default
    if default_json is _NO_DEFAULT:
        default_json = connect_default
    elif connect_default is _NO_DEFAULT and default_json is not None:
        builder.parameter(AVRO_FIELD_DEFAULT_FLAG, "true")
    name = node.get("connect.name")
    if name is None and kind in ("record", "error", "enum"):
        name = _full_name(node)
    if isinstance(name, str) and not name.startswith(DEFAULT_SCHEMA_FULL_NAME):
        builder.name(name)
    if force_optional:
        builder.optional()
    if default_json is not _NO_DEFAULT and default_json is not None:
        plain = builder.build()
        builder.default_value(default_from_avro_json(plain, default_json))
    return builder.build()


def default_from_avro_json(schema: Schema, value: Any) -> Any:
    """A JSON default (Avro's spelling) as the Connect value of ``schema``."""
    if value is None:
        return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        raw = value.encode("latin-1") if isinstance(value, str) else base64.b64decode(value)
        return Decimal.to_logical(schema, raw)
    if name in _LOGICAL:
        logical: Any = {Date.LOGICAL_NAME: Date, Time.LOGICAL_NAME: Time}.get(name, Timestamp)
        return logical.to_logical(schema, int(value))
    t = schema.type
    if t is Type.BYTES:
        return value.encode("latin-1")
    if t in (Type.FLOAT32, Type.FLOAT64):
        return float(value)
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return [default_from_avro_json(schema.value_schema, v) for v in value]
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if isinstance(value, dict):
            return {k: default_from_avro_json(schema.value_schema, v) for k, v in value.items()}
        return {
            default_from_avro_json(schema.key_schema, k): default_from_avro_json(schema.value_schema, v)
            for k, v in value
        }
    if t is Type.STRUCT:
        s = Struct(schema)
        for f in schema.fields:
            s.values[f.index] = default_from_avro_json(f.schema, value.get(f.name))
        return s
    return value
