"""Converters: Connect data to Kafka bytes and back, answering to the class names users write.

* :class:`JsonConverter` — Kafka's JSON converter, byte for byte (schemas envelope on by default).
* :class:`StringConverter`, :class:`ByteArrayConverter` and the big-endian number converters
  (Integer, Long, Short, Float, Double, Boolean).
* :class:`SimpleHeaderConverter` — the default header converter (``Values`` string forms).
* :class:`AvroConverter` — Confluent's Avro converter (wire format ``0x00`` + schema id + Avro binary)
  with its schema-registry client.

Modules are imported lazily by the plugin registry through :data:`PLUGINS`; importing this package
imports none of them: a name is imported on first use (PEP 562), so that a worker whose
converters are JSON never loads Avro's (``fastavro``, the schema registry's HTTP client) — a submodule
such as :mod:`cdc.converters.header_bytes` imports this package first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdc.converters.avro_converter import AvroConverter
    from cdc.converters.header import SimpleHeaderConverter
    from cdc.converters.json_converter import JsonConverter
    from cdc.converters.registry_client import SchemaRegistryClient
    from cdc.converters.simple import (
        BooleanConverter,
        ByteArrayConverter,
        DoubleConverter,
        FloatConverter,
        IntegerConverter,
        LongConverter,
        ShortConverter,
        StringConverter,
    )

__all__ = [
    "PLUGINS",
    "AvroConverter",
    "BooleanConverter",
    "ByteArrayConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "JsonConverter",
    "LongConverter",
    "SchemaRegistryClient",
    "ShortConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]

_CLASSES = {
    "org.apache.kafka.connect.json.JsonConverter": "cdc.converters.json_converter:JsonConverter",
    "org.apache.kafka.connect.storage.StringConverter": "cdc.converters.simple:StringConverter",
    "org.apache.kafka.connect.converters.ByteArrayConverter": "cdc.converters.simple:ByteArrayConverter",
    "org.apache.kafka.connect.converters.IntegerConverter": "cdc.converters.simple:IntegerConverter",
    "org.apache.kafka.connect.converters.LongConverter": "cdc.converters.simple:LongConverter",
    "org.apache.kafka.connect.converters.ShortConverter": "cdc.converters.simple:ShortConverter",
    "org.apache.kafka.connect.converters.FloatConverter": "cdc.converters.simple:FloatConverter",
    "org.apache.kafka.connect.converters.DoubleConverter": "cdc.converters.simple:DoubleConverter",
    "org.apache.kafka.connect.converters.BooleanConverter": "cdc.converters.simple:BooleanConverter",
    "org.apache.kafka.connect.storage.SimpleHeaderConverter": "cdc.converters.header:SimpleHeaderConverter",
    "io.confluent.connect.avro.AvroConverter": "cdc.converters.avro_converter:AvroConverter",
}

PLUGINS: dict[str, str] = {
    **_CLASSES,
    **{name.rpartition(".")[2]: target for name, target in _CLASSES.items()},
}
"""Every name a user may write (Java FQCN and simple name) → ``module:attribute``."""

_LAZY = {
    **{target.rpartition(":")[2]: target.partition(":")[0] for target in _CLASSES.values()},
    "SchemaRegistryClient": "cdc.converters.registry_client",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # once: later lookups find it without this hook
    return value
