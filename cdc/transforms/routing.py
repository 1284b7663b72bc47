"""Record-level transforms: RegexRouter, TimestampRouter, Filter, SetSchemaMetadata."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, TypeVar

from cdc.api.errors import ConfigError, DataError
from cdc.api.records import ConnectRecord
from cdc.api.schema import Schema
from cdc.api.struct import Struct
from cdc.config.definition import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.transforms._java import JavaDateFormat, compile_java_regex, expand, java_replacement
from cdc.transforms._util import BaseTransformation, KeyOrValue, require_schema

__all__ = [
    "Filter",
    "RegexRouter",
    "SetSchemaMetadata",
    "SetSchemaMetadataKey",
    "SetSchemaMetadataValue",
    "TimestampRouter",
    "java_regex",
]

R = TypeVar("R", bound=ConnectRecord)


def java_regex(name: str, value: Any) -> None:
    """Validator: the value must compile as a (Java-syntax) regular expression."""
    if value is None:
        return
    try:
        compile_java_regex(str(value))
    except re.error as exc:
        raise ConfigError(f"Invalid regex: {exc}", name, value) from exc


class RegexRouter(BaseTransformation[R]):
    """Rename the topic when the whole topic matches ``regex`` (Java's ``Matcher.matches()``).

    ``replacement`` uses Java's syntax (``$1``, ``${name}``, ``\\$``), parsed once at configure time.
    """

    CONFIG_DEF = (
        ConfigDef()
        .define(
            "regex",
            ConfigType.STRING,
            NO_DEFAULT,
            java_regex,
            Importance.HIGH,
            "Regular expression to use for matching.",
        )
        .define("replacement", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Replacement string.")
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.regex = compile_java_regex(cfg["regex"])
        self.replacement = java_replacement(cfg["replacement"], self.regex)
        self._topics: dict[str, str | None] = {}

    def apply(self, record: R) -> R | None:
        topic = record.topic
        # Few distinct topics flow through a task: remember each one's fate.
        if topic in self._topics:
            routed = self._topics[topic]
        else:
            m = self.regex.fullmatch(topic) if topic is not None else None
            routed = expand(self.replacement, m) if m else None
            if len(self._topics) > 1024:
                self._topics.clear()
            self._topics[topic] = routed
        if routed is None:
            return record
        return record.new_record(topic=routed)


class TimestampRouter(BaseTransformation[R]):
    """Route to ``topic.format`` with ``${topic}`` and ``${timestamp}`` (the record time, UTC)."""

    CONFIG_DEF = (
        ConfigDef()
        .define(
            "topic.format",
            ConfigType.STRING,
            "${topic}-${timestamp}",
            None,
            Importance.HIGH,
            "Format string which can contain ``${topic}`` and ``${timestamp}`` as placeholders for the topic "
            "and timestamp, respectively.",
        )
        .define(
            "timestamp.format",
            ConfigType.STRING,
            "yyyyMMdd",
            None,
            Importance.HIGH,
            "Format string for the timestamp that is compatible with ``java.text.SimpleDateFormat``.",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.topic_format: str = cfg["topic.format"]
        try:
            self.fmt = JavaDateFormat(cfg["timestamp.format"])
        except ValueError as exc:
            raise ConfigError(str(exc), "timestamp.format", cfg["timestamp.format"]) from exc

    def apply(self, record: R) -> R | None:
        ts = record.timestamp
        if ts is None:
            raise DataError(f"Timestamp missing on record: {record}")
        stamp = self.fmt.format(_dt.datetime(1970, 1, 1, tzinfo=_dt.UTC) + _dt.timedelta(milliseconds=ts))
        topic = self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp)
        return record.new_record(topic=topic)


class Filter(BaseTransformation[R]):
    """Drops every record; used with a predicate to drop some."""

    CONFIG_DEF = ConfigDef()

    def apply(self, record: R) -> R | None:
        return None


class SetSchemaMetadata(KeyOrValue[R]):
    """Set the name and/or version of the key or value schema."""

    PURPOSE = "updating schema metadata"
    CONFIG_DEF = (
        ConfigDef()
        .define("schema.name", ConfigType.STRING, None, None, Importance.HIGH, "Schema name to set.")
        .define("schema.version", ConfigType.INT, None, None, Importance.HIGH, "Schema version to set.")
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.name: str | None = cfg["schema.name"]
        self.version: int | None = cfg["schema.version"]
        if self.name is None and self.version is None:
            raise ConfigError("Neither schema name nor version configured")
        self._cache: dict[Schema, Schema] = {}

    def _updated(self, schema: Schema) -> Schema:
        cached = self._cache.get(schema)
        if cached is None:
            cached = Schema(
                schema.type,
                optional=schema.optional,
                default=schema.default,
                name=self.name if self.name is not None else schema.name,
                version=self.version if self.version is not None else schema.version,
                doc=schema.doc,
                parameters=schema.parameters,
                fields=schema.fields,
                key_schema=schema.key_schema,
                value_schema=schema.value_schema,
            )
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[schema] = cached
        return cached

    def apply(self, record: R) -> R | None:
        schema = require_schema(self.operating_schema(record), self.PURPOSE)
        updated = self._updated(schema)
        value = self.operating_value(record)
        if isinstance(value, Struct):
            value = Struct(updated, list(value.values))
        return self.new_record(record, updated, value)


class SetSchemaMetadataKey(SetSchemaMetadata[R]):
    IS_KEY = True


class SetSchemaMetadataValue(SetSchemaMetadata[R]):
    IS_KEY = False
