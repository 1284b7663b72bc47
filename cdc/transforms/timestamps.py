"""``TimestampConverter``: between strings, unix epochs, and Connect's Date, Time and Timestamp."""

from __future__ import annotations

import datetime as _dt
from typing import Any, TypeVar

from cdc.api.errors import ConfigError, DataError
from cdc.api.records import ConnectRecord
from cdc.api.schema import (
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Schema,
    SchemaBuilder,
    Time,
    Timestamp,
    Type,
)
from cdc.api.struct import Struct
from cdc.config.definition import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.config.validators import one_of
from cdc.transforms._java import JavaDateFormat
from cdc.transforms._util import (
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    java_class,
    replace_null_key,
    require_map,
    require_struct,
)

__all__ = ["TimestampConverter", "TimestampConverterKey", "TimestampConverterValue"]

R = TypeVar("R", bound=ConnectRecord)

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_TYPES = ("string", "unix", "Date", "Time", "Timestamp")
_PRECISION_MS = {"seconds": 1000.0, "milliseconds": 1.0, "microseconds": 0.001, "nanoseconds": 0.000001}


def _validate_type(name: str, value: Any) -> None:
    if value not in _TYPES:
        raise ConfigError(
            f"Unknown timestamp type in TimestampConverter: {value}. Valid values are {', '.join(_TYPES)}."
        )


def _ms(value: _dt.datetime) -> int:
    return Timestamp.from_logical(Timestamp.schema(), value)


class TimestampConverter(KeyOrValue[R]):
    """Convert a timestamp field (or the whole key/value, ``field=""``) to ``target.type``."""

    PURPOSE = "converting timestamp formats"
    CONFIG_DEF = replace_null_key(
        ConfigDef()
        .define(
            "field",
            ConfigType.STRING,
            "",
            None,
            Importance.HIGH,
            "The field containing the timestamp, or empty if the entire value is a timestamp",
        )
        .define(
            "target.type",
            ConfigType.STRING,
            NO_DEFAULT,
            _validate_type,
            Importance.HIGH,
            "The desired timestamp representation: string, unix, Date, Time, or Timestamp",
        )
        .define(
            "format",
            ConfigType.STRING,
            "",
            None,
            Importance.MEDIUM,
            "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when "
            "type=string or used to parse the input if the input is a string.",
        )
        .define(
            "unix.precision",
            ConfigType.STRING,
            "milliseconds",
            one_of("nanoseconds", "microseconds", "milliseconds", "seconds"),
            Importance.LOW,
            "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or "
            "nanoseconds. Used to generate the output when type=unix or used to parse the input if the input "
            "is a Long.",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        self.field: str = cfg["field"]
        self.target: str = cfg["target.type"]
        self.precision: str = cfg["unix.precision"]
        self.replace_null = cfg["replace.null.with.default"]
        pattern: str = cfg["format"]
        self.fmt: JavaDateFormat | None = None
        if self.target == "string" and not pattern.strip():
            raise ConfigError(
                "TimestampConverter requires format option to be specified when using string timestamps"
            )
        if pattern.strip():
            try:
                self.fmt = JavaDateFormat(pattern)
            except ValueError as exc:
                raise ConfigError(
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
                    f"timestamps: {pattern}",
                    "format",
                    pattern,
                ) from exc
        self._cache = SchemaCache()

    # -- the two halves of a conversion: anything → instant → target ------------------------------------
    @staticmethod
    def _type_of_schema(schema: Schema) -> str:
        if schema.name == Timestamp.LOGICAL_NAME:
            return "Timestamp"
        if schema.name == Date.LOGICAL_NAME:
            return "Date"
        if schema.name == Time.LOGICAL_NAME:
            return "Time"
        if schema.type is Type.STRING:
            return "string"
        if schema.type is Type.INT64:
            return "unix"
        raise DataError(f"Schema {schema} does not correspond to a known timestamp type format")

    @staticmethod
    def _infer(value: Any) -> str:
        if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
            return "Timestamp"
        if isinstance(value, int) and not isinstance(value, bool):
            return "unix"
        if isinstance(value, str):
            return "string"
        raise DataError(
            f"TimestampConverter does not support class {java_class(value)} objects as timestamps"
        )

    def _to_instant(self, value: Any, kind: str) -> _dt.datetime:
        if kind == "string":
            if self.fmt is None:
                raise DataError(
                    "TimestampConverter requires format option to be specified when using string timestamps"
                )
            try:
                return self.fmt.parse(value)
            except ValueError as exc:
                raise DataError(
                    f"Could not parse timestamp: value ({value}) does not match pattern ({self.fmt.pattern})"
                ) from exc
        if kind == "unix":
            if not isinstance(value, int):
                raise DataError(f"Expected Unix timestamp to be a Long, but found class {java_class(value)}")
            ms = (
                value * 1000
                if self.precision == "seconds"
                else (
                    value
                    if self.precision == "milliseconds"
                    else value // 1000
                    if self.precision == "microseconds"
                    else value // 1_000_000
                )
            )
            return _EPOCH + _dt.timedelta(milliseconds=ms)
        if isinstance(value, _dt.datetime):
            return value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
        if isinstance(value, _dt.date):
            return _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.UTC)
        if isinstance(value, _dt.time):
            return _dt.datetime.combine(_EPOCH.date(), value.replace(tzinfo=None), tzinfo=_dt.UTC)
        raise DataError(f"Expected {kind} to be a java.util.Date, but found class {java_class(value)}")

    def _from_instant(self, instant: _dt.datetime) -> Any:
        t = self.target
        if t == "string":
            assert self.fmt is not None
            return self.fmt.format(instant)
        if t == "unix":
            ms = _ms(instant)
            if self.precision == "seconds":
                return int(ms / 1000)
            if self.precision == "microseconds":
                return ms * 1000
            if self.precision == "nanoseconds":
                return ms * 1_000_000
            return ms
        if t == "Date":
            return instant.astimezone(_dt.UTC).date()
        if t == "Time":
            return instant.astimezone(_dt.UTC).time().replace(microsecond=instant.microsecond // 1000 * 1000)
        return instant

    def convert(self, value: Any, kind: str | None = None) -> Any:
        if value is None:
            return None
        return self._from_instant(self._to_instant(value, kind or self._infer(value)))

    def _target_schema(self, optional: bool) -> Schema:
        if self.target == "string":
            return OPTIONAL_STRING_SCHEMA if optional else STRING_SCHEMA
        if self.target == "unix":
            return OPTIONAL_INT64_SCHEMA if optional else INT64_SCHEMA
        if self.target == "Date":
            return Date.schema(optional)
        if self.target == "Time":
            return Time.schema(optional)
        return Timestamp.schema(optional)

    def _struct_schema(self, schema: Schema) -> Schema:
        b = copy_schema_basics(schema, SchemaBuilder.struct())
        for f in schema.fields:
            b.field(f.name, self._target_schema(f.schema.optional) if f.name == self.field else f.schema)
        if schema.optional:
            b.optional()
        return b.build()

    def apply(self, record: R) -> R | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            if not self.field:
                return self.new_record(record, None, self.convert(value))
            if value is None:
                return record
            updated = dict(require_map(value, self.PURPOSE))
            updated[self.field] = self.convert(updated.get(self.field))
            return self.new_record(record, None, updated)
        if not self.field:
            kind = self._type_of_schema(schema)
            return self.new_record(record, self._target_schema(schema.optional), self.convert(value, kind))
        new_schema = self._cache.get(schema) or self._cache.put(schema, self._struct_schema(schema))
        if value is None:
            return self.new_record(record, new_schema, None)
        struct = require_struct(value, self.PURPOSE)
        values = []
        for f in schema.fields:
            v = struct.get(f) if self.replace_null else struct.values[f.index]
            values.append(self.convert(v, self._type_of_schema(f.schema)) if f.name == self.field else v)
        return self.new_record(record, new_schema, Struct(new_schema, values))


class TimestampConverterKey(TimestampConverter[R]):
    IS_KEY = True


class TimestampConverterValue(TimestampConverter[R]):
    IS_KEY = False
