"""Shared machinery of the transforms: Connect's ``Requirements``, ``SchemaUtil``, a schema cache, the
``$Key``/``$Value`` split, and KIP-821 field paths.

Error texts follow Connect's ``Requirements`` so users see the messages they know, with Java class
names standing in for Python ones (``java.lang.String`` for ``str`` …).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from cdc.api.errors import DataError
from cdc.api.plugins import Transformation
from cdc.api.records import ConnectRecord, SinkRecord
from cdc.api.schema import Schema, SchemaBuilder, Type
from cdc.api.struct import Struct
from cdc.config.definition import ConfigDef, ConfigType, Importance
from cdc.config.validators import case_insensitive_one_of

__all__ = [
    "BaseTransformation",
    "KeyOrValue",
    "SchemaCache",
    "copy_schema_basics",
    "field_path",
    "infer_type",
    "java_class",
    "replace_null_key",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "syntax_version_key",
]

R = TypeVar("R", bound=ConnectRecord)

_JAVA_CLASSES: dict[type, str] = {
    str: "java.lang.String",
    bool: "java.lang.Boolean",
    int: "java.lang.Long",
    float: "java.lang.Double",
    bytes: "[B",
    bytearray: "[B",
    list: "java.util.ArrayList",
    tuple: "java.util.ArrayList",
    dict: "java.util.HashMap",
    Struct: "org.apache.kafka.connect.data.Struct",
    _decimal.Decimal: "java.math.BigDecimal",
    _dt.date: "java.util.Date",
    _dt.datetime: "java.util.Date",
    _dt.time: "java.util.Date",
}


def java_class(value: Any) -> str:
    """The Java class name Connect would print for ``value`` (``nullSafeClassName``)."""
    if value is None:
        return "null"
    if isinstance(value, ConnectRecord):
        return "org.apache.kafka.connect." + (
            "sink.SinkRecord" if isinstance(value, SinkRecord) else "source.SourceRecord"
        )
    return _JAVA_CLASSES.get(type(value), type(value).__name__)


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {java_class(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> dict[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {java_class(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataError(f"Only SinkRecord supported for [{purpose}], found: {java_class(record)}")
    return record


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """``SchemaUtil.copySchemaBasics``: name, version, doc and parameters (not optionality)."""
    builder.name(source.name).version(source.version).doc(source.doc)
    if source.parameters:
        builder.parameters(source.parameters)
    return builder


def infer_type(value: Any) -> Type | None:
    """``ConnectSchema.schemaType`` for a schemaless value (Python ints count as INT64)."""
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Type.BYTES
    if isinstance(value, (list, tuple)):
        return Type.ARRAY
    if isinstance(value, dict):
        return Type.MAP
    if isinstance(value, Struct):
        return Type.STRUCT
    return None


class SchemaCache:
    """A small bounded map from an input schema to the schema a transform derives from it.

    Transforms run per record, so the derived schema is built once per input schema. Schemas hash
    cheaply and compare by identity first, so a hit costs a dict lookup. The cache is cleared when it
    outgrows its bound (schemas change rarely; an LRU would buy nothing here).
    """

    __slots__ = ("_data", "_max")

    def __init__(self, max_size: int = 64) -> None:
        self._data: dict[Any, Schema] = {}
        self._max = max_size

    def get(self, key: Any) -> Schema | None:
        return self._data.get(key)

    def put(self, key: Any, schema: Schema) -> Schema:
        if len(self._data) >= self._max:
            self._data.clear()
        self._data[key] = schema
        return schema


def replace_null_key(cd: ConfigDef) -> ConfigDef:
    """Add KIP-1040's ``replace.null.with.default`` (3.8+)."""
    return cd.define(
        "replace.null.with.default",
        ConfigType.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Whether to replace fields that have a default value and that are null to the default value. "
        "When set to true, the default value is used, otherwise null is used.",
    )


def syntax_version_key(cd: ConfigDef) -> ConfigDef:
    """Add KIP-821's ``field.syntax.version`` (3.8+): V1 plain names, V2 dotted nested paths."""
    return cd.define(
        "field.syntax.version",
        ConfigType.STRING,
        "V1",
        case_insensitive_one_of("V1", "V2"),
        Importance.HIGH,
        "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are "
        "limited to access the elements at the root level of the struct or map. If set to `V2`, the syntax "
        "will support accessing nested elements (dots separate levels; backticks quote names with dots).",
    )


def field_path(path: str, version: str) -> tuple[str, ...]:
    """Split a KIP-821 path: dots separate steps, a backticked `` `a.b` `` is one name, ``\\``` a backtick."""
    if version.upper() != "V2":
        return (path,)
    steps: list[str] = []
    i, n = 0, len(path)
    while True:
        if i < n and path[i] == "`":
            j, buf = i + 1, []
            while j < n:
                if path[j] == "\\" and j + 1 < n and path[j + 1] == "`":
                    buf.append("`")
                    j += 2
                    continue
                if path[j] == "`" and (j + 1 == n or path[j + 1] == "."):
                    break
                buf.append(path[j])
                j += 1
            if j < n:  # properly closed
                steps.append("".join(buf))
                i = j + 1
            else:  # an unclosed backtick is part of the name
                end = path.find(".", i)
                end = n if end == -1 else end
                steps.append(path[i:end])
                i = end
        else:
            end = path.find(".", i)
            end = n if end == -1 else end
            steps.append(path[i:end])
            i = end
        if i >= n:
            return tuple(steps)
        i += 1  # the dot
        if i == n:
            steps.append("")
            return tuple(steps)


class BaseTransformation(Transformation[R]):
    """Declares keys once in ``CONFIG_DEF``; ``configure`` parses them and hands them to ``_setup``."""

    CONFIG_DEF: ClassVar[ConfigDef] = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._setup(self.CONFIG_DEF.parse(configs))

    def _setup(self, cfg: dict[str, Any]) -> None:  # pragma: no cover - overridden where keys exist
        return None


class KeyOrValue(BaseTransformation[R]):
    """The ``$Key``/``$Value`` split of Connect's field transforms: subclasses set ``IS_KEY``."""

    IS_KEY: ClassVar[bool] = False

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        return record.key_schema if self.IS_KEY else record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        return record.key if self.IS_KEY else record.value

    def new_record(self, record: R, schema: Schema | None, value: Any, **changes: Any) -> R:
        if self.IS_KEY:
            return record.new_record(key_schema=schema, key=value, **changes)
        return record.new_record(value_schema=schema, value=value, **changes)
