"""Header transforms: HeaderFrom, InsertHeader, DropHeaders."""

from __future__ import annotations

import re
from typing import Any, TypeVar

from cdc.api.errors import ConfigError, DataError
from cdc.api.records import ConnectRecord, Header, Headers
from cdc.api.schema import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from cdc.config.definition import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.config.validators import non_null, one_of
from cdc.transforms._util import (
    BaseTransformation,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    replace_null_key,
    require_map,
    require_struct,
)
from cdc.transforms.fields import non_empty_list

__all__ = ["DropHeaders", "HeaderFrom", "HeaderFromKey", "HeaderFromValue", "InsertHeader", "parse_literal"]

R = TypeVar("R", bound=ConnectRecord)


class HeaderFrom(KeyOrValue[R]):
    """Copy or move key/value fields into headers (``fields`` → ``headers``, pairwise)."""

    CONFIG_DEF = replace_null_key(
        ConfigDef()
        .define(
            "fields",
            ConfigType.LIST,
            NO_DEFAULT,
            non_empty_list,
            Importance.HIGH,
            "Field names in the record whose values are to be copied or moved to headers.",
        )
        .define(
            "headers",
            ConfigType.LIST,
            NO_DEFAULT,
            non_empty_list,
            Importance.HIGH,
            "Header names, in the same order as the field names listed in the fields configuration property.",
        )
        .define(
            "operation",
            ConfigType.STRING,
            NO_DEFAULT,
            one_of("move", "copy"),
            Importance.HIGH,
            "Either <code>move</code> if the fields are to be moved to the headers (removed from the "
            "key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in "
            "the key/value).",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.fields: list[str] = list(cfg["fields"])
        self.headers: list[str] = list(cfg["headers"])
        if len(self.fields) != len(self.headers):
            raise ConfigError(
                "'fields' config must have the same number of elements as 'headers' config.",
                "headers",
                "[" + ", ".join(self.headers) + "]",
            )
        self.move = cfg["operation"] == "move"
        self.purpose = "header " + cfg["operation"]
        self.replace_null = cfg["replace.null.with.default"]
        self._moved = set(self.fields)
        self._cache = SchemaCache()

    def _move_schema(self, schema: Schema) -> Schema:
        b = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            if f.name not in self._moved:
                b.field(f.name, f.schema)
        if schema.optional:
            b.optional()
        return b.build()

    def apply(self, record: R) -> R | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        headers = record.headers.copy()
        if schema is None:
            src = require_map(value, self.purpose)
            updated = dict(src)
            for name, header in zip(self.fields, self.headers, strict=True):
                headers.add(header, src.get(name), None)
                if self.move:
                    updated.pop(name, None)
            return self.new_record(record, None, updated, headers=headers)
        struct = require_struct(value, self.purpose)
        for name, header in zip(self.fields, self.headers, strict=True):
            f = schema.field(name)
            if f is None:
                raise DataError(f"{name} is not a valid field name")
            v = struct.get(f) if self.replace_null else struct.values[f.index]
            headers.add(header, v, f.schema)
        if not self.move:
            return self.new_record(record, schema, struct, headers=headers)
        new_schema = self._cache.get(schema) or self._cache.put(schema, self._move_schema(schema))
        out = Struct(
            new_schema,
            [
                struct.get(f.name) if self.replace_null else struct.get_without_default(f.name)
                for f in new_schema.fields
            ],
        )
        return self.new_record(record, new_schema, out, headers=headers)


class HeaderFromKey(HeaderFrom[R]):
    IS_KEY = True


class HeaderFromValue(HeaderFrom[R]):
    IS_KEY = False


_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def parse_literal(text: str | None) -> tuple[Schema | None, Any]:
    """A header literal as Connect's ``Values.parseString`` infers it, for the common cases.

    ``true``/``false`` are booleans, integers take the smallest int type that holds them, decimals are
    doubles, anything else (and the empty string) stays a string.
    """
    if text is None:
        return None, None
    stripped = text.strip()
    if stripped.lower() in ("true", "false"):
        return BOOLEAN_SCHEMA, stripped.lower() == "true"
    if _INT.fullmatch(stripped):
        n = int(stripped)
        for schema, bits in ((INT8_SCHEMA, 8), (INT16_SCHEMA, 16), (INT32_SCHEMA, 32), (INT64_SCHEMA, 64)):
            if -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
                return schema, n
    elif _FLOAT.fullmatch(stripped):
        return FLOAT64_SCHEMA, float(stripped)
    return STRING_SCHEMA, text


class InsertHeader(BaseTransformation[R]):
    """Add a header with a literal value."""

    CONFIG_DEF = (
        ConfigDef()
        .define("header", ConfigType.STRING, NO_DEFAULT, non_null, Importance.HIGH, "The name of the header.")
        .define(
            "value.literal",
            ConfigType.STRING,
            NO_DEFAULT,
            non_null,
            Importance.HIGH,
            "The literal value that is to be set as the header value on all records.",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.header: str = cfg["header"]
        self.schema, self.value = parse_literal(cfg["value.literal"])

    def apply(self, record: R) -> R | None:
        headers = record.headers.copy()
        headers.add_header(Header(self.header, self.schema, self.value))
        return record.new_record(headers=headers)


class DropHeaders(BaseTransformation[R]):
    """Remove every header whose name is listed."""

    CONFIG_DEF = ConfigDef().define(
        "headers",
        ConfigType.LIST,
        NO_DEFAULT,
        non_empty_list,
        Importance.HIGH,
        "The name of the headers to be removed.",
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.names = frozenset(cfg["headers"])

    def apply(self, record: R) -> R | None:
        kept = [h for h in record.headers if h.key not in self.names]
        return record.new_record(headers=Headers(kept))
