"""``org.apache.kafka.connect.json.JsonConverter``: Connect data as JSON, byte for byte as Kafka writes it.

With ``schemas.enable=true`` (the default) each message is the envelope ``{"schema":…,"payload":…}``;
with ``false`` it is the bare payload. Output is Jackson's compact form: no spaces, struct fields in schema
order, bytes and (by default) decimals as base64, dates/times/timestamps as ints.

Speed: for each schema the converter compiles, once, the schema's JSON bytes and a payload encoder
(:mod:`cdc.converters.json_values`); a record then costs one encoder call and one ``orjson.dumps``. The
compiled pairs are cached by schema (``schemas.cache.size``, oldest evicted first).
"""

from __future__ import annotations

import decimal as _decimal
import json as _stdjson
from collections.abc import Mapping
from typing import Any

import orjson

from cdc.api.errors import DataError
from cdc.api.plugins import Converter, HeaderConverter
from cdc.api.records import Headers, SchemaAndValue
from cdc.api.schema import Schema
from cdc.config import ConfigDef, ConfigType, Importance, Width
from cdc.config.validators import case_insensitive_one_of
from cdc.converters._java import fix_escapes
from cdc.converters.json_schema import from_json_schema, to_json_schema
from cdc.converters.json_values import (
    Decoder,
    Encoder,
    compile_decoder,
    compile_encoder,
    decode_schemaless,
    encode_schemaless,
)

__all__ = ["ENVELOPE_ERROR", "JsonConverter", "json_converter_config"]

SCHEMAS_ENABLE = "schemas.enable"
SCHEMAS_CACHE_SIZE = "schemas.cache.size"
DECIMAL_FORMAT = "decimal.format"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
CONVERTER_TYPE = "converter.type"

ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional'
    " fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter"
    " configuration."
)


def json_converter_config() -> ConfigDef:
    """``JsonConverterConfig``: the keys, defaults and groups of Kafka's JsonConverter."""
    d = ConfigDef()
    d.define(
        CONVERTER_TYPE,
        ConfigType.STRING,
        None,
        case_insensitive_one_of("key", "value", "header"),
        Importance.LOW,
        "How this converter will be used.",
    )
    d.define(
        SCHEMAS_ENABLE,
        ConfigType.BOOLEAN,
        True,
        None,
        Importance.HIGH,
        "Include schemas within each of the serialized values and keys.",
        group="Schemas",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Enable Schemas",
    )
    d.define(
        SCHEMAS_CACHE_SIZE,
        ConfigType.INT,
        1000,
        None,
        Importance.HIGH,
        "The maximum number of schemas that can be cached in this converter instance.",
        group="Schemas",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Schema Cache Size",
    )
    d.define(
        DECIMAL_FORMAT,
        ConfigType.STRING,
        "BASE64",
        case_insensitive_one_of("BASE64", "NUMERIC"),
        Importance.LOW,
        "Controls which format this converter will serialize decimals in. This value is case insensitive"
        " and can be either 'BASE64' (default) or 'NUMERIC'",
        group="Serialization",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Decimal Format",
    )
    d.define(
        REPLACE_NULL_WITH_DEFAULT,
        ConfigType.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Whether to replace fields that have a default value and that are null to the default value. When set"
        " to true, the default value is used, otherwise null is used.",
        group="Serialization",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Replace null with default",
    )
    return d


_CONFIG = json_converter_config()
_SCHEMA_PREFIX = b'{"schema":'
_PAYLOAD = b',"payload":'
_NULL_ENVELOPE_PREFIX = b'{"schema":null,"payload":'


class _Compiled:
    __slots__ = ("encode", "prefix")

    def __init__(self, prefix: bytes, encode: Encoder) -> None:
        self.prefix = prefix
        self.encode = encode


class JsonConverter(Converter, HeaderConverter):
    """Kafka's JsonConverter: a value and header converter."""

    def __init__(self) -> None:
        self.schemas_enabled = True
        self.cache_size = 1000
        self.numeric_decimals = False
        self.replace_null_with_default = True
        self._compiled: dict[Schema, _Compiled] = {}
        self._decoders: dict[Schema, Decoder] = {}
        self._schemas_from_json: dict[bytes, Schema | None] = {}

    def config(self) -> ConfigDef:
        return _CONFIG

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        props = dict(configs)
        if is_key is not None:
            props[CONVERTER_TYPE] = "key" if is_key else "value"
        parsed = _CONFIG.parse(props)
        self.schemas_enabled = parsed[SCHEMAS_ENABLE]
        self.cache_size = max(1, parsed[SCHEMAS_CACHE_SIZE])
        self.numeric_decimals = parsed[DECIMAL_FORMAT].upper() == "NUMERIC"
        self.replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT]
        self._compiled.clear()
        self._decoders.clear()
        self._schemas_from_json.clear()

    # ------------------------------------------------------------------------------ Connect → bytes
    def _compile(self, schema: Schema) -> _Compiled:
        encode = compile_encoder(schema, self.numeric_decimals, self.replace_null_with_default)
        schema_json = orjson.dumps(to_json_schema(schema, self._encode_default))
        compiled = _Compiled(_SCHEMA_PREFIX + fix_escapes(schema_json) + _PAYLOAD, encode)
        if len(self._compiled) >= self.cache_size:
            del self._compiled[next(iter(self._compiled))]
        self._compiled[schema] = compiled
        return compiled

    def _encode_default(self, schema: Schema, value: Any) -> Any:
        return compile_encoder(schema, self.numeric_decimals, self.replace_null_with_default)(value)

    def as_json_schema(self, schema: Schema | None) -> bytes:
        """The schema part of the envelope, as bytes (``JsonConverter.asJsonSchema``)."""
        if schema is None:
            return b"null"
        compiled = self._compiled.get(schema) or self._compile(schema)
        return compiled.prefix[len(_SCHEMA_PREFIX) : -len(_PAYLOAD)]

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if schema is None:
            if value is None:
                return None
            payload = orjson.dumps(encode_schemaless(value))
            if self.schemas_enabled:
                return _NULL_ENVELOPE_PREFIX + fix_escapes(payload) + b"}"
            return fix_escapes(payload)
        compiled = self._compiled.get(schema)
        if compiled is None:
            compiled = self._compile(schema)
        try:
            payload = orjson.dumps(compiled.encode(value))
        except orjson.JSONEncodeError as exc:
            raise DataError(
                "Converting Kafka Connect data to byte[] failed due to serialization error: " + str(exc)
            ) from exc
        if b"\\u00" in payload:
            payload = fix_escapes(payload)
        if self.schemas_enabled:
            return compiled.prefix + payload + b"}"
        return payload

    # ------------------------------------------------------------------------------ bytes → Connect
    def _parse(self, value: bytes) -> Any:
        # Jackson reads floats as BigDecimal here (USE_BIG_DECIMAL_FOR_FLOATS); keep the exact digits when
        # a Decimal may be in the message, and for integers beyond 64 bits (orjson refuses those).
        if b"connect.data.Decimal" not in value:
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass
        try:
            return _stdjson.loads(value, parse_float=_decimal.Decimal)
        except (ValueError, UnicodeDecodeError) as exc:
            raise DataError(
                "Converting byte[] to Kafka Connect data failed due to serialization error: " + str(exc)
            ) from exc

    def _schema_from_json(self, node: Any) -> Schema | None:
        if node is None:
            return None
        key = orjson.dumps(node, default=str)
        if key in self._schemas_from_json:
            return self._schemas_from_json[key]
        schema = from_json_schema(node, self._decode_default)
        if len(self._schemas_from_json) >= self.cache_size:
            del self._schemas_from_json[next(iter(self._schemas_from_json))]
        self._schemas_from_json[key] = schema
        return schema

    def _decode_default(self, schema: Schema, node: Any) -> Any:
        return compile_decoder(schema, self.replace_null_with_default)(node) if node is not None else None

    def _decoder(self, schema: Schema) -> Decoder:
        dec = self._decoders.get(schema)
        if dec is None:
            dec = compile_decoder(schema, self.replace_null_with_default)
            if len(self._decoders) >= self.cache_size:
                del self._decoders[next(iter(self._decoders))]
            self._decoders[schema] = dec
        return dec

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        node = self._parse(value)
        if not self.schemas_enabled:
            return SchemaAndValue(None, decode_schemaless(node))
        if not isinstance(node, dict) or len(node) != 2 or "schema" not in node or "payload" not in node:
            raise DataError(ENVELOPE_ERROR)
        schema = self._schema_from_json(node["schema"])
        payload = node["payload"]
        if schema is None:
            return SchemaAndValue(None, decode_schemaless(payload))
        return SchemaAndValue(schema, self._decoder(schema)(payload))

    # ------------------------------------------------------------------------------ headers
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
