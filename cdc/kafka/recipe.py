"""One recipe for a source connector's way to Kafka: its converters and its producer, as Connect gives them.

The worker's source tasks and the Spark snapshot writer both write a connector's records; both take
their converters and producer settings from here, so the bytes, the partitions and the client-override
policy are the same whichever of them writes.

* Converters (:func:`converter_spec`): the connector's ``key.converter`` … if it names one, else the
  worker's (``header.converter`` defaults to ``SimpleHeaderConverter`` as in Connect's worker ConfigDef),
  configured with the ``<role>.`` sub-settings of whichever config named the class.
* Producer (:func:`source_producer_settings`): ``acks=all``, idempotence, Java's murmur2 placement for
  keyed records (``partitioner=murmur2_random``, see :mod:`cdc.kafka.murmur2`), then the worker's shared
  and ``producer.`` settings and the connector's ``producer.override.`` ones the worker's
  ``connector.client.config.override.policy`` allows (:func:`cdc.kafka.clients.connector_client_settings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConfigError
from cdc.kafka.clients import connector_client_settings, to_librdkafka

__all__ = [
    "CONVERTER_ROLES",
    "DEFAULT_HEADER_CONVERTER",
    "SOURCE_PRODUCER_DEFAULTS",
    "ConverterSpec",
    "converter_spec",
    "source_producer_settings",
]

CONVERTER_ROLES = ("key.converter", "value.converter", "header.converter")
DEFAULT_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

SOURCE_PRODUCER_DEFAULTS: Mapping[str, Any] = {
    "acks": "all",
    "enable.idempotence": True,
    "linger.ms": 5,
    "compression.type": "none",
    "partitioner": "murmur2_random",
    "delivery.timeout.ms": 2147483647,
}
"""What Connect's worker sets on a source task's producer before the user's settings."""


@dataclass(frozen=True)
class ConverterSpec:
    """A converter as Connect picks it: the class and its sub-settings (plain data, so it pickles)."""

    class_name: str
    configs: dict[str, str]
    is_key: bool
    header: bool = False

    def build(self) -> Any:
        """A configured instance of the class, from the plugin registry."""
        from cdc.plugins import registry

        instance = registry.instantiate(self.class_name)
        if self.header:
            instance.configure(dict(self.configs))
        else:
            instance.configure(dict(self.configs), self.is_key)
        return instance


def converter_spec(
    role: str, connector_config: Mapping[str, Any], worker_props: Mapping[str, Any]
) -> ConverterSpec:
    """Connect's choice for ``role``: the connector's converter if it names one, else the worker's."""
    source: Mapping[str, Any]
    class_name: Any
    if connector_config.get(role):
        source, class_name = connector_config, connector_config[role]
    else:
        source = worker_props
        class_name = worker_props.get(role) or (
            DEFAULT_HEADER_CONVERTER if role == "header.converter" else None
        )
    if not class_name:
        raise ConfigError(f'Missing required configuration "{role}" which has no default value.')
    prefix = role + "."
    sub = {k[len(prefix) :]: str(v) for k, v in source.items() if k.startswith(prefix)}
    return ConverterSpec(str(class_name), sub, role == "key.converter", header=role == "header.converter")


def source_producer_settings(
    worker_props: Mapping[str, Any], connector_config: Mapping[str, Any], client_id: str
) -> dict[str, Any]:
    """librdkafka settings of a source connector's producer (raises when the override policy forbids one)."""
    policy = worker_props.get("connector.client.config.override.policy")
    settings = connector_client_settings(worker_props, connector_config, "producer", policy)
    return {**SOURCE_PRODUCER_DEFAULTS, "client.id": client_id, **to_librdkafka(settings)}
