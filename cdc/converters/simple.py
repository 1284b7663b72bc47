"""Kafka's plain converters: String, ByteArray and the big-endian number converters.

Each is also a header converter, as in Kafka. The numeric ones write what Kafka's serializers write:
``IntegerSerializer`` 4 bytes, ``LongSerializer`` 8, ``ShortSerializer`` 2, ``FloatSerializer`` and
``DoubleSerializer`` IEEE 754, ``BooleanSerializer`` one byte 0/1, all big-endian, and read back with
an optional schema of their type.
"""

from __future__ import annotations

import codecs
import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from cdc.api.errors import ConfigError, DataError
from cdc.api.plugins import Converter, HeaderConverter
from cdc.api.records import Headers, SchemaAndValue
from cdc.api.schema import (
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    Schema,
    Type,
)
from cdc.config import ConfigDef, ConfigType, Importance, Width
from cdc.converters._java import java_double

__all__ = [
    "BooleanConverter",
    "ByteArrayConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "LongConverter",
    "ShortConverter",
    "StringConverter",
]


class _Both(Converter, HeaderConverter):
    """A converter that serves keys, values and headers alike."""

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        return None

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)


# ------------------------------------------------------------------------------------------- String


def _string_config() -> ConfigDef:
    d = ConfigDef()
    d.define(
        "converter.type", ConfigType.STRING, None, None, Importance.LOW, "How this converter will be used."
    )
    d.define(
        "converter.encoding",
        ConfigType.STRING,
        "UTF8",
        None,
        Importance.HIGH,
        "The name of the Java character set to use for encoding strings as byte arrays.",
        group="Converter",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Character encoding",
    )
    return d


_STRING_CONFIG = _string_config()


def java_to_string(value: Any) -> str:
    """``String.valueOf(value)`` for the Python forms of Connect values."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    return str(value)


class StringConverter(_Both):
    """``org.apache.kafka.connect.storage.StringConverter``: ``toString()`` of the value, encoded."""

    def __init__(self) -> None:
        self.encoding = "utf-8"

    def config(self) -> ConfigDef:
        return _STRING_CONFIG

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        parsed = _STRING_CONFIG.parse(configs)
        name = parsed["converter.encoding"]
        try:
            self.encoding = codecs.lookup(name).name
        except LookupError as exc:
            raise ConfigError(f"Unsupported encoding {name}", "converter.encoding", name) from exc

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        return java_to_string(value).encode(self.encoding)

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, bytes(value).decode(self.encoding))
        except UnicodeDecodeError as exc:
            raise DataError(f"Failed to deserialize string: {exc}") from exc


# ---------------------------------------------------------------------------------------- ByteArray


class ByteArrayConverter(_Both):
    """``org.apache.kafka.connect.converters.ByteArrayConverter``: bytes through unchanged."""

    passes_bytes_through: ClassVar[bool] = True

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError("Invalid schema type for ByteArrayConverter: " + schema.type.name)
        if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataError(
                f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}"
            )
        return None if value is None else bytes(value)

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, value)


# ------------------------------------------------------------------------------------------ Numbers


class _NumberConverter(_Both):
    FORMAT: ClassVar[str]
    TYPE_NAME: ClassVar[str]
    SCHEMA: ClassVar[Schema]
    DESERIALIZER: ClassVar[str]

    def __init__(self) -> None:
        self._struct = struct.Struct(self.FORMAT)

    def _check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError
        return value

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        try:
            return self._struct.pack(self._check(value))
        except (TypeError, struct.error) as exc:
            raise DataError(
                f"Failed to serialize to {self.TYPE_NAME} (was {type(value).__name__}): "
            ) from exc

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(self.SCHEMA, None)
        if len(value) != self._struct.size:
            raise DataError(
                f"Failed to deserialize {self.TYPE_NAME}: Size of data received by {self.DESERIALIZER} "
                f"is not {self._struct.size}"
            )
        return SchemaAndValue(self.SCHEMA, self._struct.unpack(value)[0])


class IntegerConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.IntegerConverter``: 4 bytes, big-endian."""

    FORMAT = ">i"
    TYPE_NAME = "int32"
    SCHEMA = OPTIONAL_INT32_SCHEMA
    DESERIALIZER = "IntegerDeserializer"


class LongConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.LongConverter``: 8 bytes, big-endian."""

    FORMAT = ">q"
    TYPE_NAME = "int64"
    SCHEMA = OPTIONAL_INT64_SCHEMA
    DESERIALIZER = "LongDeserializer"


class ShortConverter(_NumberConverter):
    """``org.apache.kafka.connect.converters.ShortConverter``: 2 bytes, big-endian."""

    FORMAT = ">h"
    TYPE_NAME = "int16"
    SCHEMA = OPTIONAL_INT16_SCHEMA
    DESERIALIZER = "ShortDeserializer"


class _FloatingConverter(_NumberConverter):
    def _check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError
        return float(value)


class FloatConverter(_FloatingConverter):
    """``org.apache.kafka.connect.converters.FloatConverter``: IEEE 754 single, big-endian."""

    FORMAT = ">f"
    TYPE_NAME = "float32"
    SCHEMA = OPTIONAL_FLOAT32_SCHEMA
    DESERIALIZER = "FloatDeserializer"


class DoubleConverter(_FloatingConverter):
    """``org.apache.kafka.connect.converters.DoubleConverter``: IEEE 754 double, big-endian."""

    FORMAT = ">d"
    TYPE_NAME = "float64"
    SCHEMA = OPTIONAL_FLOAT64_SCHEMA
    DESERIALIZER = "DoubleDeserializer"


class BooleanConverter(_Both):
    """``org.apache.kafka.connect.converters.BooleanConverter``: one byte, 1 for true and 0 for false."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is not None and schema.type is not Type.BOOLEAN:
            raise DataError("Invalid schema type for BooleanConverter: " + schema.type.name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise DataError(f"BooleanConverter is not compatible with objects of type {type(value).__name__}")
        return b"\x01" if value else b"\x00"

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(OPTIONAL_BOOLEAN_SCHEMA, None)
        if len(value) != 1:
            raise DataError(
                "Failed to deserialize boolean: Size of data received by BooleanDeserializer is not 1"
            )
        if value[0] not in (0, 1):
            raise DataError("Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer")
        return SchemaAndValue(OPTIONAL_BOOLEAN_SCHEMA, value[0] == 1)
