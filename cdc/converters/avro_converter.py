"""``io.confluent.connect.avro.AvroConverter``: Avro with a schema registry, in Confluent's wire format.

A message is ``0x00`` (magic byte), the schema id as 4 bytes big-endian, then the Avro binary encoding of
the value (fastavro's ``schemaless_writer``). The Avro schema comes from the Connect schema as
:mod:`cdc.converters.avro_schema` maps it; it is registered under the subject named by the subject
strategy (``TopicNameStrategy``: ``<topic>-key`` / ``<topic>-value``) when ``auto.register.schemas`` is on,
else looked up. Reading fetches the writer's schema by id, decodes, and maps it back to Connect.

Config keys: ``schema.registry.url`` (required, comma list), ``auto.register.schemas`` (true),
``basic.auth.credentials.source`` (URL), ``basic.auth.user.info``, ``key.subject.name.strategy`` /
``value.subject.name.strategy`` (TopicNameStrategy; RecordNameStrategy and TopicRecordNameStrategy too),
``schemas.cache.config`` (1000), ``connect.meta.data`` (true).
"""

from __future__ import annotations

import io
import ssl
import struct
from collections.abc import Callable, Mapping
from typing import Any

import fastavro
import orjson

from cdc.api.errors import ConfigError, DataError
from cdc.api.plugins import Converter
from cdc.api.records import Headers, SchemaAndValue
from cdc.api.schema import Date, Decimal, Schema, Time, Timestamp, Type
from cdc.api.struct import Struct
from cdc.config import ConfigDef, ConfigType, Importance, Password
from cdc.config.validators import case_insensitive_one_of
from cdc.converters.avro_schema import from_connect, to_connect, to_json
from cdc.converters.registry_client import SchemaRegistryClient, Transport, requests_transport

__all__ = ["AvroConverter", "avro_converter_config", "from_connect_value", "to_connect_value"]

MAGIC = 0
_HEADER = struct.Struct(">bI")
_STRATEGIES = ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
_STRATEGY_PREFIX = "io.confluent.kafka.serializers.subject."


def avro_converter_config() -> ConfigDef:
    d = ConfigDef()
    d.define(
        "schema.registry.url",
        ConfigType.LIST,
        documentation=(
            "Comma-separated list of URLs for Schema Registry instances that can be used to register or"
            " look up schemas."
        ),
        importance=Importance.HIGH,
    )
    d.define(
        "auto.register.schemas",
        ConfigType.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Specify if the Serializer should attempt to register the Schema with Schema Registry",
    )
    d.define(
        "basic.auth.credentials.source",
        ConfigType.STRING,
        "URL",
        case_insensitive_one_of("URL", "USER_INFO", "SASL_INHERIT"),
        Importance.MEDIUM,
        "Specify how to pick the credentials for the Basic Auth header.",
    )
    d.define(
        "basic.auth.user.info",
        ConfigType.PASSWORD,
        "",
        None,
        Importance.MEDIUM,
        "Specify the user info for Basic Auth in the form of {username}:{password}",
    )
    for kind in ("key", "value"):
        d.define(
            f"{kind}.subject.name.strategy",
            ConfigType.CLASS,
            _STRATEGY_PREFIX + "TopicNameStrategy",
            None,
            Importance.MEDIUM,
            f"Determines how to construct the subject name under which the {kind} schema is registered.",
        )
    ssl_keys = (
        (
            "truststore.location",
            ConfigType.STRING,
            "The trust store of the registry's CA (JKS, PKCS12 or PEM).",
        ),
        ("truststore.password", ConfigType.PASSWORD, "The trust store's password."),
        ("truststore.type", ConfigType.STRING, "JKS, PKCS12 or PEM (the file's content decides)."),
        ("keystore.location", ConfigType.STRING, "A client certificate and key (JKS, PKCS12 or PEM)."),
        ("keystore.password", ConfigType.PASSWORD, "The key store's password."),
        ("keystore.type", ConfigType.STRING, "JKS, PKCS12 or PEM (the file's content decides)."),
        ("key.password", ConfigType.PASSWORD, "The key's password, when it differs from the store's."),
    )
    for name, kind, doc in ssl_keys:
        d.define(f"schema.registry.ssl.{name}", kind, None, None, Importance.MEDIUM, doc)
    d.define(
        "schema.registry.ssl.endpoint.identification.algorithm",
        ConfigType.STRING,
        "https",
        None,
        Importance.LOW,
        "https checks the registry's host name against its certificate; empty does not.",
    )
    d.define(
        "schemas.cache.config",
        ConfigType.INT,
        1000,
        None,
        Importance.LOW,
        "Size of the converted schema cache",
    )
    d.define(
        "connect.meta.data",
        ConfigType.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Toggle for enabling/disabling connect converter to add its meta data to the output schema or not",
    )
    d.define(
        "ignore.default.for.nullables",
        ConfigType.BOOLEAN,
        False,
        None,
        Importance.LOW,
        "Whether to ignore the default for nullable fields when the value is null",
    )
    return d


_CONFIG = avro_converter_config()


# ------------------------------------------------------------------------------------ value mapping


def from_connect_value(schema: Schema, value: Any, ignore_default: bool = False) -> Any:
    """A Connect value as the datum fastavro writes for ``from_connect(schema)``. A null whose schema has a
    default is written as the default (Confluent's AvroData), unless ``ignore_default`` and the schema is
    optional (its ``ignore.default.for.nullables``)."""
    if value is None:
        if schema.default is not None and not (ignore_default and schema.optional):
            value = schema.default
        elif schema.optional:
            return None
        else:
            raise DataError("Found null value for non-optional schema")
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return Decimal.from_logical(schema, value)
    if name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    t = schema.type
    if t is Type.STRUCT:
        if not isinstance(value, Struct):
            raise DataError(f"Invalid type for STRUCT: {type(value).__name__}")
        return {
            f.name: from_connect_value(f.schema, value.values[f.index], ignore_default) for f in schema.fields
        }
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return [from_connect_value(schema.value_schema, v, ignore_default) for v in value]
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
            return {k: from_connect_value(schema.value_schema, v, ignore_default) for k, v in value.items()}
        return [
            {
                "key": from_connect_value(schema.key_schema, k, ignore_default),
                "value": from_connect_value(schema.value_schema, v, ignore_default),
            }
            for k, v in value.items()
        ]
    if t is Type.BYTES:
        return bytes(value)
    if t in (Type.FLOAT32, Type.FLOAT64):
        return float(value)
    return value


def to_connect_value(schema: Schema, datum: Any) -> Any:
    """A datum read by fastavro as the Connect value of ``schema``."""
    if datum is None:
        if not schema.optional and schema.default is None:
            raise DataError("Found null value for non-optional schema")
        return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return (
            datum if not isinstance(datum, (bytes, bytearray)) else Decimal.to_logical(schema, bytes(datum))
        )
    if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        if isinstance(datum, int):
            logical: Any = {Date.LOGICAL_NAME: Date, Time.LOGICAL_NAME: Time}.get(name, Timestamp)
            return logical.to_logical(schema, datum)
        return datum
    t = schema.type
    if t is Type.STRUCT:
        return Struct(schema, [to_connect_value(f.schema, datum.get(f.name)) for f in schema.fields])
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return [to_connect_value(schema.value_schema, v) for v in datum]
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if isinstance(datum, dict):
            return {k: to_connect_value(schema.value_schema, v) for k, v in datum.items()}
        return {
            to_connect_value(schema.key_schema, e["key"]): to_connect_value(schema.value_schema, e["value"])
            for e in datum
        }
    return datum


# ----------------------------------------------------------------------------------------- converter


class _Writer:
    __slots__ = ("parsed", "text")

    def __init__(self, text: str, parsed: Any) -> None:
        self.text = text
        self.parsed = parsed


def _parse(avro: Any) -> Any:
    # fastavro checks logical-type values on write; we hand it physical values (ints, bytes), which it
    # accepts, and on read it returns Python logical values (Decimal, date, time, datetime).
    return fastavro.parse_schema(avro)


_UNSUPPORTED_PREFIXES = ("schema.registry.ssl.", "bearer.auth.")
"""Registry settings Confluent's converter reads that ours does not (beyond the ``schema.registry.ssl.*``
keys declared above): refused rather than ignored."""


def _registry_ssl_context(parsed: Mapping[str, Any]) -> ssl.SSLContext | None:
    """The registry client's TLS context from ``schema.registry.ssl.*`` (None: the system's CAs)."""
    from cdc.keystores import StoreKeys, read_keystore, read_truststore, ssl_context

    def secret(key: str) -> str | None:
        value = parsed.get(key)
        return value.value() if isinstance(value, Password) else value

    prefix = "schema.registry.ssl."
    trust, keys = parsed.get(prefix + "truststore.location"), parsed.get(prefix + "keystore.location")
    if not trust and not keys:
        return None
    cadata = None
    if trust:
        cadata = read_truststore(
            trust,
            secret(prefix + "truststore.password"),
            StoreKeys(prefix + "truststore.location", prefix + "truststore.password"),
        )
    pair = None
    if keys:
        pair = read_keystore(
            keys,
            secret(prefix + "keystore.password"),
            StoreKeys(prefix + "keystore.location", prefix + "keystore.password", prefix + "key.password"),
            secret(prefix + "key.password"),
        )
    check = bool(str(parsed.get(prefix + "endpoint.identification.algorithm") or "").strip())
    return ssl_context(cadata, pair, verify=True, check_hostname=check)


class AvroConverter(Converter):
    """Confluent's AvroConverter."""

    def __init__(self, transport: Transport | None = None) -> None:
        self._transport = transport
        self.client: SchemaRegistryClient | None = None
        self.is_key = False
        self.auto_register = True
        self.meta = True
        self.ignore_default = False
        self.cache_size = 1000
        self._strategy: Callable[[str, Any, bool], str] = _topic_name
        self._writers: dict[Schema, _Writer] = {}
        self._readers: dict[int, tuple[Any, Schema]] = {}

    def config(self) -> ConfigDef:
        return _CONFIG

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        unsupported = sorted(
            k for k in configs if str(k).startswith(_UNSUPPORTED_PREFIXES) and k not in _CONFIG
        )
        if unsupported:
            raise ConfigError(
                f"The Avro converter's registry client does not support {', '.join(unsupported)} yet "
                "(TLS client settings and bearer tokens for the schema registry; docs/schema-registry.md)"
            )
        parsed = _CONFIG.parse(configs)
        self.is_key = is_key
        self.auto_register = parsed["auto.register.schemas"]
        self.meta = parsed["connect.meta.data"]
        self.ignore_default = parsed["ignore.default.for.nullables"]
        self.cache_size = max(1, parsed["schemas.cache.config"])
        user_info: str | None = None
        if parsed["basic.auth.credentials.source"].upper() == "USER_INFO":
            secret = parsed["basic.auth.user.info"]
            user_info = secret.value() if isinstance(secret, Password) else secret
        strategy = parsed[f"{'key' if is_key else 'value'}.subject.name.strategy"].rpartition(".")[2]
        if strategy not in _STRATEGIES:
            raise DataError(f"Unsupported subject name strategy {strategy}")
        self._strategy = {
            "TopicNameStrategy": _topic_name,
            "RecordNameStrategy": _record_name,
            "TopicRecordNameStrategy": _topic_record_name,
        }[strategy]
        transport = self._transport
        if transport is None:
            transport = requests_transport(context=_registry_ssl_context(parsed))
        self.client = SchemaRegistryClient(
            parsed["schema.registry.url"], user_info=user_info, transport=transport
        )

    def _writer(self, schema: Schema) -> _Writer:
        writer = self._writers.get(schema)
        if writer is None:
            avro = from_connect(schema, self.meta)
            text = to_json(avro)
            writer = _Writer(text, _parse(orjson.loads(text)))
            if len(self._writers) >= self.cache_size:
                del self._writers[next(iter(self._writers))]
            self._writers[schema] = writer
        return writer

    def avro_schema(self, schema: Schema) -> str:
        """The Avro schema text registered for ``schema``."""
        return self._writer(schema).text

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None and (schema is None or schema.default is None):
            return None
        if schema is None:
            raise DataError("AvroConverter here needs a schema: schemaless values are not supported")
        if self.client is None:
            raise DataError("AvroConverter used before configure()")
        writer = self._writer(schema)
        subject = self._strategy(topic, writer.parsed, self.is_key)
        if self.auto_register:
            schema_id = self.client.register(subject, writer.text)
        else:
            schema_id = self.client.lookup(subject, writer.text)
        out = io.BytesIO()
        out.write(_HEADER.pack(MAGIC, schema_id))
        try:
            fastavro.schemaless_writer(
                out, writer.parsed, from_connect_value(schema, value, self.ignore_default)
            )
        except (ValueError, TypeError, AttributeError) as exc:
            raise DataError(f"Failed to serialize Avro data from topic {topic} :{exc}") from exc
        return out.getvalue()

    def to_connect_data(
        self, topic: str, value: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        if len(value) < 5 or value[0] != MAGIC:
            raise DataError(f"Failed to deserialize data for topic {topic} to Avro: Unknown magic byte!")
        if self.client is None:
            raise DataError("AvroConverter used before configure()")
        schema_id = _HEADER.unpack_from(value)[1]
        reader = self._readers.get(schema_id)
        if reader is None:
            avro = orjson.loads(self.client.schema_by_id(schema_id))
            reader = (_parse(avro), to_connect(avro, self.meta))
            if len(self._readers) >= self.cache_size:
                del self._readers[next(iter(self._readers))]
            self._readers[schema_id] = reader
        parsed, schema = reader
        try:
            datum = fastavro.schemaless_reader(io.BytesIO(value[5:]), parsed, None)
        except (ValueError, EOFError, struct.error, IndexError) as exc:
            raise DataError(f"Failed to deserialize data for topic {topic} to Avro: {exc}") from exc
        return SchemaAndValue(schema, to_connect_value(schema, datum))


def _record_full_name(parsed: Any) -> str:
    if isinstance(parsed, dict) and parsed.get("type") == "record":
        return str(parsed["name"])
    raise DataError("RecordNameStrategy needs a record schema")


def _topic_name(topic: str, parsed: Any, is_key: bool) -> str:
    return f"{topic}-key" if is_key else f"{topic}-value"


def _record_name(topic: str, parsed: Any, is_key: bool) -> str:
    return _record_full_name(parsed)


def _topic_record_name(topic: str, parsed: Any, is_key: bool) -> str:
    return f"{topic}-{_record_full_name(parsed)}"
