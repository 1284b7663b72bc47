"""The runtime's own settings, typed and frozen, built from the worker's config definitions.

As a connector reads its :class:`~cdc.mysql.config.MySqlSettings`, the runtime reads the worker file as
a :class:`WorkerSettings` and each connector config's runtime keys (``tasks.max``, ``errors.*``, topic
creation, exactly-once, a sink's topics and dead letter queue) as a :class:`SourceConnectorSettings`,
:class:`SinkConnectorSettings` or :class:`ConnectorSettings`: each field is bound to its key in
:mod:`cdc.worker.config`, so a key is parsed and checked in one place and read as a typed attribute.

What stays a mapping is what Connect reads as a *group* of keys by prefix (``producer.*``, ``ssl.*``, a
converter's sub-settings, config providers): :attr:`WorkerSettings.props` keeps the worker file's
strings for those.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from cdc.config import ConfigDef
from cdc.config.settings import setting, settings_from
from cdc.worker.config import DISTRIBUTED_DEF, STANDALONE_DEF, connector_def
from cdc.worker.file_paths import FilePolicy
from cdc.worker.internal_topics import InternalTopics

__all__ = [
    "ConnectorSettings",
    "Resolver",
    "SinkConnectorSettings",
    "SourceConnectorSettings",
    "WorkerSettings",
]

Resolver = Callable[[dict[str, str]], dict[str, str]]
"""Resolves config provider placeholders (``${file:…}``) in a connector config."""


_C = TypeVar("_C", bound="ConnectorSettings")


def _unresolved(config: dict[str, str]) -> dict[str, str]:
    return dict(config)


# A standalone worker's definition lacks the group's keys and a distributed one the offsets file: each reads
# the other mode's keys at their defaults (group.id None, rebalance.timeout.ms 60 s, HmacSHA256), so one
# type serves both modes. (connector.file.allowed.paths, declared by both, always comes from ``parsed``.)
_MODE_DEFAULTS = {key.name: key.parsed_default() for key in (*DISTRIBUTED_DEF.keys(), *STANDALONE_DEF.keys())}


@dataclass(frozen=True, eq=False, kw_only=True)
class WorkerSettings:
    """The worker file as the runtime reads it: one field per key it uses (``a.b.c`` is ``a_b_c``), with
    the worker's id (its advertised ``host:port``) and config provider resolver once the REST settings
    and providers are known (:func:`dataclasses.replace`)."""

    worker_id: str = ""
    props: Mapping[str, str]
    """The worker file's raw properties, for the keys read as groups (clients, converters, providers)."""
    parsed: Mapping[str, Any]
    """The same, parsed by the worker's definition (what :meth:`client_props` lays over :attr:`props`)."""
    bootstrap_servers: tuple[str, ...] = setting("bootstrap.servers")
    client_id: str = setting("client.id")
    key_converter: str = setting("key.converter")
    value_converter: str = setting("value.converter")
    header_converter: str = setting("header.converter")
    offset_flush_interval_ms: int = setting("offset.flush.interval.ms")
    offset_flush_timeout_ms: int = setting("offset.flush.timeout.ms")
    task_shutdown_graceful_timeout_ms: int = setting("task.shutdown.graceful.timeout.ms")
    topic_creation_enable: bool = setting("topic.creation.enable")
    topic_tracking_enable: bool = setting("topic.tracking.enable")
    topic_tracking_allow_reset: bool = setting("topic.tracking.allow.reset")
    connectors_max: int = setting("connectors.max")
    connector_config_max_bytes: int = setting("connector.config.max.bytes")
    connector_client_config_override_policy: str = setting("connector.client.config.override.policy")
    exactly_once_source_support: str = setting("exactly.once.source.support")
    connector_file_allowed_paths: tuple[str, ...] | None = setting("connector.file.allowed.paths")
    offset_storage_file_filename: str | None = setting("offset.storage.file.filename")
    group_id: str | None = setting("group.id")
    config_storage_topic: str | None = setting("config.storage.topic")
    offset_storage_topic: str | None = setting("offset.storage.topic")
    status_storage_topic: str | None = setting("status.storage.topic")
    rebalance_timeout_ms: int = setting("rebalance.timeout.ms")
    inter_worker_verification_algorithms: tuple[str, ...] = setting("inter.worker.verification.algorithms")
    resolve: Resolver = field(default=_unresolved)

    @classmethod
    def from_parsed(
        cls,
        props: Mapping[str, str],
        parsed: Mapping[str, Any],
        worker_id: str = "",
        resolve: Resolver = _unresolved,
    ) -> WorkerSettings:
        """The settings of ``parsed`` (``STANDALONE_DEF`` or ``DISTRIBUTED_DEF``'s parse of ``props``)."""
        values = {**_MODE_DEFAULTS, **parsed}
        return settings_from(cls, values, worker_id=worker_id, props=props, parsed=parsed, resolve=resolve)

    @classmethod
    def parse(cls, definition: ConfigDef, props: Mapping[str, str], worker_id: str = "") -> WorkerSettings:
        """The settings of ``props`` read by ``definition`` (ConfigError on a bad value)."""
        return cls.from_parsed(props, definition.parse(props), worker_id)

    @property
    def distributed(self) -> bool:
        return bool(self.group_id)

    @property
    def eos_mode(self) -> str:
        """``exactly.once.source.support`` in lower case (``disabled``, ``preparing``, ``enabled``)."""
        return self.exactly_once_source_support.strip().lower()

    def internal_topics(self) -> InternalTopics:
        """The worker's three internal topics, which no connector may read or write (none standalone)."""
        return InternalTopics(
            self.config_storage_topic or "", self.offset_storage_topic or "", self.status_storage_topic or ""
        )

    def file_policy(self) -> FilePolicy:
        """Where connector configs may name files (``connector.file.allowed.paths``), resolved now."""
        return FilePolicy.of(self.connector_file_allowed_paths)

    def converter_class(self, role: str) -> str:
        """The worker's class for ``key.converter``, ``value.converter`` or ``header.converter``."""
        return {
            "key.converter": self.key_converter,
            "value.converter": self.value_converter,
            "header.converter": self.header_converter,
        }[role]

    def client_props(self) -> dict[str, Any]:
        """The raw properties with the parsed values laid over them: what the Kafka client settings of
        :func:`cdc.kafka.clients.client_config` and validation's worker checks read."""
        return {**self.props, **self.parsed}


@dataclass(frozen=True, eq=False)
class ConnectorSettings:
    """The keys the runtime reads from every connector config (``connector_def("unknown")``)."""

    raw: Mapping[str, str]
    name: str = setting("name")
    connector_class: str = setting("connector.class")
    tasks_max: int = setting("tasks.max")
    tasks_max_enforce: bool = setting("tasks.max.enforce")
    key_converter: str | None = setting("key.converter")
    value_converter: str | None = setting("value.converter")
    header_converter: str | None = setting("header.converter")
    transforms: tuple[str, ...] = setting("transforms")
    predicates: tuple[str, ...] = setting("predicates")
    errors_retry_timeout: int = setting("errors.retry.timeout")
    errors_retry_delay_max_ms: int = setting("errors.retry.delay.max.ms")
    errors_tolerance: str = setting("errors.tolerance")
    errors_log_enable: bool = setting("errors.log.enable")
    errors_log_include_messages: bool = setting("errors.log.include.messages")

    _KIND: ClassVar[str] = "unknown"

    @classmethod
    def parse(cls: type[_C], config: Mapping[str, str]) -> _C:
        """The settings of ``config`` (ConfigError on a bad value)."""
        return settings_from(cls, connector_def(cls._KIND).parse(config), raw=dict(config))


@dataclass(frozen=True, eq=False)
class SourceConnectorSettings(ConnectorSettings):
    """A source connector's runtime keys: topic creation and exactly-once on top of the common ones."""

    topic_creation_default_partitions: int | None = setting("topic.creation.default.partitions")
    topic_creation_default_replication_factor: int | None = setting(
        "topic.creation.default.replication.factor"
    )
    exactly_once_support: str = setting("exactly.once.support")
    transaction_boundary: str = setting("transaction.boundary")
    transaction_boundary_interval_ms: int | None = setting("transaction.boundary.interval.ms")

    _KIND: ClassVar[str] = "source"


@dataclass(frozen=True, eq=False)
class SinkConnectorSettings(ConnectorSettings):
    """A sink connector's runtime keys: its topics and dead letter queue on top of the common ones."""

    topics: tuple[str, ...] = setting("topics")
    topics_regex: str = setting("topics.regex")
    errors_deadletterqueue_topic_name: str = setting("errors.deadletterqueue.topic.name")
    errors_deadletterqueue_topic_replication_factor: int = setting(
        "errors.deadletterqueue.topic.replication.factor"
    )
    errors_deadletterqueue_context_headers_enable: bool = setting(
        "errors.deadletterqueue.context.headers.enable"
    )

    _KIND: ClassVar[str] = "sink"
