"""``Flatten``: nested structs (or maps) become top-level fields joined by ``delimiter``."""

from __future__ import annotations

from typing import Any, TypeVar

from cdc.api.errors import DataError
from cdc.api.records import ConnectRecord
from cdc.api.schema import Schema, SchemaBuilder, Type
from cdc.api.struct import Struct
from cdc.config.definition import ConfigDef, ConfigType, Importance
from cdc.transforms._util import (
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    infer_type,
    java_class,
    require_map,
    require_struct,
)

__all__ = ["Flatten", "FlattenKey", "FlattenValue"]

R = TypeVar("R", bound=ConnectRecord)

_LEAF = (
    Type.INT8,
    Type.INT16,
    Type.INT32,
    Type.INT64,
    Type.FLOAT32,
    Type.FLOAT64,
    Type.BOOLEAN,
    Type.STRING,
    Type.BYTES,
    Type.ARRAY,
)


class Flatten(KeyOrValue[R]):
    """Flatten nested structs/maps; a nested optional struct makes its flattened fields optional."""

    PURPOSE = "flattening"
    CONFIG_DEF = ConfigDef().define(
        "delimiter",
        ConfigType.STRING,
        ".",
        None,
        Importance.MEDIUM,
        "Delimiter to insert between field names from the input record when generating field names for the "
        "output record",
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.delimiter: str = cfg["delimiter"]
        self._cache = SchemaCache()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else prefix + self.delimiter + name

    # -- schemaless -------------------------------------------------------------------------------------
    def _flatten_map(self, value: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for k, v in value.items():
            name = self._name(prefix, k)
            if v is None:
                out[name] = None
                continue
            t = infer_type(v)
            if t in _LEAF:
                out[name] = v
            elif t is Type.MAP:
                self._flatten_map(v, name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support class {java_class(v)} for record "
                    f"without schemas (for field {name})."
                )

    # -- with schema ------------------------------------------------------------------------------------
    def _build(self, schema: Schema, prefix: str, b: SchemaBuilder, optional: bool) -> None:
        for f in schema.fields:
            name = self._name(prefix, f.name)
            fs = f.schema
            if fs.type in _LEAF:
                if optional and not fs.optional:
                    fs = Schema(
                        fs.type,
                        optional=True,
                        default=fs.default,
                        name=fs.name,
                        version=fs.version,
                        doc=fs.doc,
                        parameters=fs.parameters,
                        key_schema=fs.key_schema,
                        value_schema=fs.value_schema,
                    )
                b.field(name, fs)
            elif fs.type is Type.STRUCT:
                self._build(fs, name, b, optional or fs.optional)
            else:
                raise DataError(
                    f"Flatten transformation does not support {fs.type.name} for record with schemas "
                    f"(for field {name})."
                )

    def _values(self, struct: Struct | None, schema: Schema, out: list[Any]) -> None:
        for f in schema.fields:
            v = struct.values[f.index] if struct is not None else None
            if f.schema.type is Type.STRUCT:
                self._values(v, f.schema, out)
            else:
                out.append(v)

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            out: dict[str, Any] = {}
            self._flatten_map(require_map(value, self.PURPOSE), "", out)
            return self.new_record(record, None, out)
        struct = require_struct(value, self.PURPOSE)
        new_schema = self._cache.get(schema)
        if new_schema is None:
            b = copy_schema_basics(schema, SchemaBuilder.struct())
            if schema.optional:
                b.optional()
            self._build(schema, "", b, False)
            new_schema = self._cache.put(schema, b.build())
        values: list[Any] = []
        self._values(struct, schema, values)
        return self.new_record(record, new_schema, Struct(new_schema, values))


class FlattenKey(Flatten[R]):
    IS_KEY = True


class FlattenValue(Flatten[R]):
    IS_KEY = False
