"""Connect's field transforms: InsertField, ReplaceField, MaskField, ExtractField, ValueToKey, HoistField.

Each has a ``Key`` and a ``Value`` variant (``InsertField$Key`` / ``InsertField$Value``), works on
Structs with a schema (the derived schema cached per input schema) and on plain dicts without one, and
passes records whose operating value is null (tombstones) through unchanged where Connect does.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from typing import Any, TypeVar

from cdc.api.errors import ConfigError, DataError
from cdc.api.records import ConnectRecord
from cdc.api.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Time,
    Timestamp,
    Type,
)
from cdc.api.struct import Struct
from cdc.config.definition import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.config.validators import non_empty_string
from cdc.transforms._util import (
    BaseTransformation,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    field_path,
    java_class,
    replace_null_key,
    require_map,
    require_map_or_null,
    require_sink_record,
    require_struct,
    require_struct_or_null,
    syntax_version_key,
)

__all__ = [
    "ExtractField",
    "HoistField",
    "InsertField",
    "MaskField",
    "ReplaceField",
    "ValueToKey",
    "java_list",
    "non_empty_list",
    "struct_values",
]

R = TypeVar("R", bound=ConnectRecord)


def java_list(items: Any) -> str:
    """A list as Java's ``List.toString`` prints it, for error messages."""
    return "[" + ", ".join(str(i) for i in items) + "]" if isinstance(items, (list, tuple)) else str(items)


def non_empty_list(name: str, value: Any) -> None:
    """Connect's ``NonEmptyListValidator``."""
    if not value:
        raise ConfigError("Empty list", name, java_list(value or []))


def struct_values(struct: Struct, replace_null_with_default: bool) -> list[Any]:
    """The struct's values in field order, nulls replaced by field defaults when asked."""
    if not replace_null_with_default:
        return list(struct.values)
    return [
        v if v is not None else f.schema.default
        for f, v in zip(struct.schema.fields, struct.values, strict=True)
    ]


def _get(struct: Struct, name: str, replace_null_with_default: bool) -> Any:
    return struct.get(name) if replace_null_with_default else struct.get_without_default(name)


# -- InsertField ----------------------------------------------------------------------------------------


class InsertField(KeyOrValue[R]):
    """Insert the topic, partition, offset, timestamp or a static string (``name!`` = required field)."""

    PURPOSE = "field insertion"
    CONFIG_DEF = replace_null_key(
        ConfigDef()
        .define(
            "topic.field",
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for Kafka topic. Suffix with ! to make this a required field, or ? to keep it "
            "optional (the default).",
        )
        .define(
            "partition.field",
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for Kafka partition. Suffix with ! to make this a required field, or ? to keep "
            "it optional (the default).",
        )
        .define(
            "offset.field",
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for Kafka offset - only applicable to sink connectors.",
        )
        .define(
            "timestamp.field",
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for record timestamp. Suffix with ! to make this a required field, or ? to keep "
            "it optional (the default).",
        )
        .define(
            "static.field",
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Field name for static data field.",
        )
        .define(
            "static.value",
            ConfigType.STRING,
            None,
            None,
            Importance.MEDIUM,
            "Static field value, if field name configured.",
        )
    )

    @staticmethod
    def _spec(spec: str | None) -> tuple[str, bool] | None:
        """``(name, optional)``: ``x!`` is required, ``x?`` and ``x`` optional."""
        if spec is None:
            return None
        if spec.endswith("?"):
            return spec[:-1], True
        if spec.endswith("!"):
            return spec[:-1], False
        return spec, True

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.topic = self._spec(cfg["topic.field"])
        self.partition = self._spec(cfg["partition.field"])
        self.offset = self._spec(cfg["offset.field"])
        self.timestamp = self._spec(cfg["timestamp.field"])
        self.static = self._spec(cfg["static.field"])
        self.static_value = cfg["static.value"]
        self.replace_null = cfg["replace.null.with.default"]
        if not any((self.topic, self.partition, self.offset, self.timestamp, self.static)):
            raise ConfigError("No field insertion configured")
        if self.static is not None and self.static_value is None:
            raise ConfigError(
                f"No value specified for static field: {cfg['static.field']}", "static.value", None
            )
        self._cache = SchemaCache()

    def _insertions(self, record: ConnectRecord, with_schema: bool) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if self.topic:
            out.append((self.topic[0], record.topic))
        if self.partition:
            out.append((self.partition[0], record.kafka_partition))
        if self.offset:
            out.append((self.offset[0], require_sink_record(record, self.PURPOSE).kafka_offset))
        if self.timestamp:
            ts = record.timestamp
            if with_schema and ts is not None:
                out.append((self.timestamp[0], Timestamp.to_logical(Timestamp.schema(), ts)))
            else:
                out.append((self.timestamp[0], ts))
        if self.static:
            out.append((self.static[0], self.static_value))
        return out

    def _updated_schema(self, schema: Schema) -> Schema:
        b = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            b.field(f.name, f.schema)
        if self.topic:
            b.field(self.topic[0], OPTIONAL_STRING_SCHEMA if self.topic[1] else STRING_SCHEMA)
        if self.partition:
            b.field(self.partition[0], OPTIONAL_INT32_SCHEMA if self.partition[1] else INT32_SCHEMA)
        if self.offset:
            b.field(self.offset[0], OPTIONAL_INT64_SCHEMA if self.offset[1] else INT64_SCHEMA)
        if self.timestamp:
            b.field(self.timestamp[0], Timestamp.schema(optional=self.timestamp[1]))
        if self.static:
            b.field(self.static[0], OPTIONAL_STRING_SCHEMA if self.static[1] else STRING_SCHEMA)
        return b.build()

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            updated = dict(require_map(value, self.PURPOSE))
            updated.update(self._insertions(record, False))
            return self.new_record(record, None, updated)
        struct = require_struct(value, self.PURPOSE)
        new_schema = self._cache.get(struct.schema) or self._cache.put(
            struct.schema, self._updated_schema(struct.schema)
        )
        values = struct_values(struct, self.replace_null) + [v for _, v in self._insertions(record, True)]
        out = Struct(new_schema, values)
        out.validate()
        return self.new_record(record, new_schema, out)


class InsertFieldKey(InsertField[R]):
    IS_KEY = True


class InsertFieldValue(InsertField[R]):
    IS_KEY = False


# -- ReplaceField ---------------------------------------------------------------------------------------


def _parse_renames(name: str, value: Any) -> None:
    for mapping in value or []:
        if len(mapping.split(":")) != 2:
            raise ConfigError(f"Invalid rename mapping: {mapping}", name, java_list(value))


class ReplaceField(KeyOrValue[R]):
    """Keep (``include``), drop (``exclude``) and rename (``renames=a:b,c:d``) fields."""

    PURPOSE = "field replacement"
    CONFIG_DEF = replace_null_key(
        ConfigDef()
        .define(
            "exclude",
            ConfigType.LIST,
            "",
            None,
            Importance.MEDIUM,
            "Fields to exclude. This takes precedence over the fields to include.",
            aliases=("blacklist",),
        )
        .define(
            "include",
            ConfigType.LIST,
            "",
            None,
            Importance.MEDIUM,
            "Fields to include. If specified, only these fields will be used.",
            aliases=("whitelist",),
        )
        .define("renames", ConfigType.LIST, "", _parse_renames, Importance.MEDIUM, "Field rename mappings.")
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.exclude = set(cfg["exclude"])
        self.include = set(cfg["include"])
        self.renames = dict(m.split(":") for m in cfg["renames"])
        self.reverse = {v: k for k, v in self.renames.items()}
        self.replace_null = cfg["replace.null.with.default"]
        self._cache = SchemaCache()
        self._plans: dict[Schema, list[int]] = {}

    def filter(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            src = require_map(value, self.PURPOSE)
            updated = {self.renames.get(k, k): v for k, v in src.items() if self.filter(k)}
            return self.new_record(record, None, updated)
        struct = require_struct(value, self.PURPOSE)
        new_schema = self._cache.get(struct.schema)
        if new_schema is None:
            b = copy_schema_basics(struct.schema, SchemaBuilder.struct())
            for f in struct.schema.fields:
                if self.filter(f.name):
                    b.field(self.renames.get(f.name, f.name), f.schema)
            new_schema = self._cache.put(struct.schema, b.build())
        values = [
            _get(struct, self.reverse.get(f.name, f.name), self.replace_null) for f in new_schema.fields
        ]
        return self.new_record(record, new_schema, Struct(new_schema, values))


class ReplaceFieldKey(ReplaceField[R]):
    IS_KEY = True


class ReplaceFieldValue(ReplaceField[R]):
    IS_KEY = False


# -- MaskField ------------------------------------------------------------------------------------------

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_JAVA_BOXED = {
    Type.INT8: "Byte",
    Type.INT16: "Short",
    Type.INT32: "Integer",
    Type.INT64: "Long",
    Type.FLOAT32: "Float",
    Type.FLOAT64: "Double",
    Type.BOOLEAN: "Boolean",
    Type.STRING: "String",
}


class MaskField(KeyOrValue[R]):
    """Replace the listed fields with the type's null-equivalent (0, "", false, …) or ``replacement``."""

    PURPOSE = "mask fields"
    CONFIG_DEF = (
        ConfigDef()
        .define(
            "fields", ConfigType.LIST, NO_DEFAULT, non_empty_list, Importance.HIGH, "Names of fields to mask."
        )
        .define(
            "replacement",
            ConfigType.STRING,
            None,
            non_empty_string,
            Importance.LOW,
            "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty "
            "string values only).",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.fields = list(cfg["fields"])
        self.field_set = set(self.fields)
        self.replacement: str | None = cfg["replacement"]

    @staticmethod
    def _class(schema: Schema | None, value: Any) -> str:
        if schema is not None and schema.name is None and schema.type in _JAVA_BOXED:
            return "class java.lang." + _JAVA_BOXED[schema.type]
        return "class " + java_class(value)

    def masked(self, schema: Schema | None, value: Any) -> Any:
        if value is None:
            return None
        t = schema.type if schema is not None else None
        logical = schema.name if schema is not None else None
        if self.replacement is None:
            return self._null_equivalent(schema, t, logical, value)
        rep = self.replacement
        try:
            if logical == Decimal.LOGICAL_NAME or (t is None and isinstance(value, _decimal.Decimal)):
                return _decimal.Decimal(rep)
            if logical is None and (
                t in _INT_BITS or (t is None and isinstance(value, int) and not isinstance(value, bool))
            ):
                number = int(rep.strip())
                bits = _INT_BITS.get(t or Type.INT64, 64)
                if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
                    raise ValueError(rep)
                return number
            if logical is None and (
                t in (Type.FLOAT32, Type.FLOAT64) or (t is None and isinstance(value, float))
            ):
                return float(rep)
        except (ValueError, _decimal.InvalidOperation) as exc:
            raise DataError(f"Unable to convert {rep} (class java.lang.String) to number") from exc
        if logical is None and (t is Type.STRING or (t is None and isinstance(value, str))):
            return rep
        raise DataError(f"Cannot mask value of type {self._class(schema, value)} with custom replacement.")

    def _null_equivalent(self, schema: Schema | None, t: Type | None, logical: str | None, value: Any) -> Any:
        if logical == Decimal.LOGICAL_NAME or isinstance(value, _decimal.Decimal):
            return _decimal.Decimal(0)
        if logical == Timestamp.LOGICAL_NAME or isinstance(value, _dt.datetime):
            return _EPOCH
        if logical == Date.LOGICAL_NAME or isinstance(value, _dt.date):
            return _EPOCH.date()
        if logical == Time.LOGICAL_NAME or isinstance(value, _dt.time):
            return _dt.time(0)
        if isinstance(value, bool):
            return False
        if isinstance(value, int):
            return 0
        if isinstance(value, float):
            return 0.0
        if isinstance(value, str):
            return ""
        if isinstance(value, (list, tuple)):
            return []
        if isinstance(value, dict):
            return {}
        raise DataError(f"Cannot mask value of type: {self._class(schema, value)}")

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            updated = dict(require_map(value, self.PURPOSE))
            for name in self.fields:  # Connect puts every listed key, null when absent
                updated[name] = self.masked(None, updated.get(name))
            return self.new_record(record, None, updated)
        struct = require_struct(value, self.PURPOSE)
        values = [
            self.masked(f.schema, struct.get(f)) if f.name in self.field_set else struct.get(f)
            for f in struct.schema.fields
        ]
        return self.new_record(record, struct.schema, Struct(struct.schema, values))


class MaskFieldKey(MaskField[R]):
    IS_KEY = True


class MaskFieldValue(MaskField[R]):
    IS_KEY = False


# -- ExtractField ---------------------------------------------------------------------------------------


class ExtractField(KeyOrValue[R]):
    """Replace the key or value by one of its fields (a nested path with ``field.syntax.version=V2``)."""

    PURPOSE = "field extraction"
    CONFIG_DEF = replace_null_key(
        syntax_version_key(
            ConfigDef().define(
                "field", ConfigType.STRING, NO_DEFAULT, None, Importance.MEDIUM, "Field name to extract."
            )
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.original_path = cfg["field"]
        self.path = field_path(cfg["field"], cfg["field.syntax.version"])
        self.replace_null = cfg["replace.null.with.default"]
        self._field_cache: dict[Schema, Schema] = {}

    def _field_schema(self, schema: Schema) -> Schema:
        cached = self._field_cache.get(schema)
        if cached is not None:
            return cached
        current: Schema | None = schema
        for step in self.path:
            f = current.field(step) if current is not None and current.type is Type.STRUCT else None
            if f is None:
                raise DataError(f"Unknown field: {self.original_path}")
            current = f.schema
        assert current is not None
        if len(self._field_cache) > 64:
            self._field_cache.clear()
        self._field_cache[schema] = current
        return current

    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            current: Any = require_map_or_null(value, self.PURPOSE)
            for step in self.path:
                current = current.get(step) if isinstance(current, dict) else None
            return self.new_record(record, None, current)
        struct = require_struct_or_null(value, self.PURPOSE)
        field_schema = self._field_schema(schema)
        out: Any = struct
        for step in self.path:
            if not isinstance(out, Struct):
                out = None
                break
            out = _get(out, step, self.replace_null)
        return self.new_record(record, field_schema, out)


class ExtractFieldKey(ExtractField[R]):
    IS_KEY = True


class ExtractFieldValue(ExtractField[R]):
    IS_KEY = False


# -- ValueToKey -----------------------------------------------------------------------------------------


class ValueToKey(BaseTransformation[R]):
    """Replace the key with a struct (or map) of the listed value fields."""

    PURPOSE = "copying fields from value to key"
    CONFIG_DEF = replace_null_key(
        ConfigDef().define(
            "fields",
            ConfigType.LIST,
            NO_DEFAULT,
            non_empty_list,
            Importance.HIGH,
            "Field names on the record value to extract as the record key.",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.fields = list(cfg["fields"])
        self.replace_null = cfg["replace.null.with.default"]
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        if record.value_schema is None:
            value = require_map(record.value, self.PURPOSE)
            return record.new_record(key_schema=None, key={f: value.get(f) for f in self.fields})
        struct = require_struct(record.value, self.PURPOSE)
        key_schema = self._cache.get(struct.schema)
        if key_schema is None:
            b = SchemaBuilder.struct()
            for name in self.fields:
                f = struct.schema.field(name)
                if f is None:
                    raise DataError(f"Field does not exist: {name}")
                b.field(name, f.schema)
            key_schema = self._cache.put(struct.schema, b.build())
        key = Struct(key_schema, [_get(struct, name, self.replace_null) for name in self.fields])
        return record.new_record(key_schema=key_schema, key=key)


# -- HoistField -----------------------------------------------------------------------------------------


class HoistField(KeyOrValue[R]):
    """Wrap the key or value in a struct (or map) with a single ``field``."""

    CONFIG_DEF = ConfigDef().define(
        "field",
        ConfigType.STRING,
        NO_DEFAULT,
        None,
        Importance.MEDIUM,
        "Field name for the single field that will be created in the resulting Struct or Map.",
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.field = cfg["field"]
        self._cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self.field: value})
        new_schema = self._cache.get(schema) or self._cache.put(
            schema, SchemaBuilder.struct().field(self.field, schema).build()
        )
        return self.new_record(record, new_schema, Struct(new_schema).put(self.field, value))


class HoistFieldKey(HoistField[R]):
    IS_KEY = True


class HoistFieldValue(HoistField[R]):
    IS_KEY = False
