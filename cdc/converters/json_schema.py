"""Connect schemas as the JSON converter writes them, and back.

The JSON form is Connect's ``JsonConverter.asJsonSchema``: ``type`` first, then the type's own keys
(``items``; ``keys``, ``values``; ``fields``), then ``optional``, and only when set ``name``,
``version``, ``doc``, ``parameters`` and ``default``. A struct field is its schema's node with
``"field": <name>`` appended last. ``parameters`` keep the order they were added in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cdc.api.errors import DataError
from cdc.api.schema import Schema, SchemaBuilder, Type

__all__ = ["from_json_schema", "to_json_schema"]

_TYPES = {t.value: t for t in Type}


def to_json_schema(schema: Schema, encode_default: Callable[[Schema, Any], Any]) -> dict[str, Any]:
    """The JSON node (a dict in key order) for ``schema``.

    ``encode_default(schema, value)`` turns a default value into what the payload would hold, so defaults
    follow the converter's settings (e.g. ``decimal.format``).
    """
    node: dict[str, Any] = {"type": schema.type.value}
    t = schema.type
    if t is Type.ARRAY:
        node["items"] = _child(schema.value_schema, encode_default)
    elif t is Type.MAP:
        node["keys"] = _child(schema.key_schema, encode_default)
        node["values"] = _child(schema.value_schema, encode_default)
    elif t is Type.STRUCT:
        fields = []
        for f in schema.fields:
            child = to_json_schema(f.schema, encode_default)
            child["field"] = f.name
            fields.append(child)
        node["fields"] = fields
    node["optional"] = schema.optional
    if schema.name is not None:
        node["name"] = schema.name
    if schema.version is not None:
        node["version"] = schema.version
    if schema.doc is not None:
        node["doc"] = schema.doc
    if schema.parameters is not None:
        node["parameters"] = dict(schema.parameters)
    if schema.default is not None:
        node["default"] = encode_default(schema, schema.default)
    return node


def _child(schema: Schema | None, encode_default: Callable[[Schema, Any], Any]) -> dict[str, Any] | None:
    return None if schema is None else to_json_schema(schema, encode_default)


def from_json_schema(node: Any, decode_default: Callable[[Schema, Any], Any]) -> Schema | None:
    """The Connect schema for a JSON schema node (``None`` for JSON null), as ``asConnectSchema``.

    ``decode_default(schema_without_default, json_value)`` converts a ``default`` node.
    """
    if node is None:
        return None
    if not isinstance(node, Mapping):
        raise DataError("Schema must contain 'type' field")
    type_name = node.get("type")
    if not isinstance(type_name, str):
        raise DataError("Schema must contain 'type' field")
    t = _TYPES.get(type_name)
    if t is None:
        raise DataError("Unknown schema type: " + type_name)
    builder: SchemaBuilder
    if t is Type.ARRAY:
        items = node.get("items")
        if items is None:
            raise DataError("Array schema did not specify the element type")
        builder = SchemaBuilder.array(_required(from_json_schema(items, decode_default)))
    elif t is Type.MAP:
        if "keys" not in node:
            raise DataError("Map schema did not specify the key type")
        if "values" not in node:
            raise DataError("Map schema did not specify the value type")
        builder = SchemaBuilder.map(
            _required(from_json_schema(node["keys"], decode_default)),
            _required(from_json_schema(node["values"], decode_default)),
        )
    elif t is Type.STRUCT:
        builder = SchemaBuilder.struct()
        fields = node.get("fields")
        if not isinstance(fields, list):
            raise DataError('Struct schema\'s "fields" argument is not an array.')
        for f in fields:
            fname = f.get("field") if isinstance(f, Mapping) else None
            if not isinstance(fname, str):
                raise DataError("Struct schema's field name not specified properly")
            builder.field(fname, _required(from_json_schema(f, decode_default)))
    else:
        builder = SchemaBuilder(t)
    if node.get("optional") is True:
        builder.optional()
    name = node.get("name")
    if isinstance(name, str):
        builder.name(name)
    version = node.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        builder.version(version)
    doc = node.get("doc")
    if isinstance(doc, str):
        builder.doc(doc)
    params = node.get("parameters")
    if isinstance(params, Mapping):
        for k, v in params.items():
            if not isinstance(v, str):
                raise DataError("Schema parameters must have string values.")
            builder.parameter(k, v)
    if "default" in node:
        plain = builder.build()
        default = decode_default(plain, node["default"])
        if default is not None:
            builder.default_value(default)
    return builder.build()


def _required(schema: Schema | None) -> Schema:
    if schema is None:
        raise DataError("Schema must contain 'type' field")
    return schema
