"""The admin work of MM2's connectors: topics, partitions, configs, ACLs and groups on either cluster.

Each function mirrors the ``MirrorSourceConnector`` / ``MirrorUtils`` method it is named after. Failures that
leave a flow unable to work (the offset-syncs topic not creatable, a remote topic that cannot be created or
grown) raise :class:`~cdc.api.errors.ConnectError` naming the topic and the cluster, so that the connector
fails readably rather than replicating into a topic the worker's producer would auto-create with other
settings.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

from cdc.api.errors import ConnectError, RetriableError
from cdc.mirror.policy import ConfigPropertyFilter

__all__ = [
    "create_compacted_topic",
    "create_partitions",
    "create_topics",
    "describe_topic_configs",
    "incremental_alter_configs",
    "partition_counts",
    "target_config",
]

log = logging.getLogger(__name__)


def _code(exc: BaseException) -> int | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return int(exc.args[0].code())
    return None


def create_compacted_topic(
    admin: AdminClient, topic: str, replication_factor: int, cluster: str, timeout: float
) -> None:
    """MirrorUtils.createSinglePartitionCompactedTopic: one partition, ``cleanup.policy=compact``; an
    existing topic is fine."""
    futures = admin.create_topics(
        [NewTopic(topic, 1, replication_factor, config={"cleanup.policy": "compact"})],
        request_timeout=timeout,
    )
    try:
        futures[topic].result(timeout)
        log.info("Created topic '%s' on the %s cluster", topic, cluster)
    except KafkaException as exc:
        if _code(exc) == KafkaError.TOPIC_ALREADY_EXISTS:
            return
        raise ConnectError(f"Unable to create topic '{topic}' on the {cluster} cluster: {exc}") from exc


def partition_counts(admin: AdminClient, timeout: float, cluster: str) -> dict[str, int]:
    """Every topic of a cluster with its partition count; a cluster that does not answer is a
    :class:`RetriableError` naming it (at start it fails the connector; later, the next refresh retries)."""
    try:
        metadata = admin.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise RetriableError(f"Could not list the topics of the {cluster} cluster: {exc}") from exc
    return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}


def describe_topic_configs(
    admin: AdminClient, topics: Iterable[str], timeout: float
) -> dict[str, dict[str, Any]]:
    """Topic → {name: ConfigEntry} on one cluster."""
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in topics]
    if not resources:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for resource, future in admin.describe_configs(resources, request_timeout=timeout).items():
        try:
            out[resource.name] = future.result(timeout)
        except KafkaException as exc:
            log.warning("Could not describe the configs of topic %s: %s", resource.name, exc)
    return out


def target_config(
    entries: Mapping[str, Any], config_filter: ConfigPropertyFilter, incremental: bool
) -> dict[str, ConfigEntry]:
    """MirrorSourceConnector.targetConfig: what of a source topic's config a remote topic takes."""
    out: dict[str, ConfigEntry] = {}
    for name, entry in entries.items():
        is_default = entry.source == ConfigSource.DEFAULT_CONFIG
        if not (
            incremental or (is_default and config_filter.replicate_source_default(name)) or not is_default
        ):
            continue
        if entry.is_read_only or entry.is_sensitive or entry.source == ConfigSource.STATIC_BROKER_CONFIG:
            continue
        if not config_filter.replicate(name):
            continue
        out[name] = entry
    return out


def create_topics(
    admin: AdminClient,
    topics: Mapping[str, tuple[int, dict[str, str]]],
    replication_factor: int,
    cluster: str,
    timeout: float,
) -> None:
    """Create remote topics (name → (partitions, configs)); one already there is fine."""
    if not topics:
        return
    new = [NewTopic(name, n, replication_factor, config=cfg) for name, (n, cfg) in topics.items()]
    failures: list[str] = []
    for name, future in admin.create_topics(new, request_timeout=timeout).items():
        try:
            future.result(timeout)
            log.info(
                "Created remote topic %s with %d partitions on the %s cluster", name, topics[name][0], cluster
            )
        except KafkaException as exc:
            if _code(exc) != KafkaError.TOPIC_ALREADY_EXISTS:
                failures.append(f"'{name}': {exc}")
    if failures:
        raise ConnectError(f"Could not create remote topics on the {cluster} cluster: {'; '.join(failures)}")


def create_partitions(admin: AdminClient, counts: Mapping[str, int], cluster: str, timeout: float) -> None:
    """Grow remote topics to the source's partition count (a topic already that large is fine)."""
    if not counts:
        return
    futures = admin.create_partitions(
        [NewPartitions(t, n) for t, n in counts.items()], request_timeout=timeout
    )
    failures: list[str] = []
    for name, future in futures.items():
        try:
            future.result(timeout)
            log.info("Increased size of %s to %d partitions on the %s cluster", name, counts[name], cluster)
        except KafkaException as exc:
            if _code(exc) != KafkaError.INVALID_PARTITIONS:
                failures.append(f"'{name}': {exc}")
    if failures:
        raise ConnectError(
            f"Could not add partitions to remote topics on the {cluster} cluster: {'; '.join(failures)}"
        )


def incremental_alter_configs(
    admin: AdminClient,
    configs: Mapping[str, Mapping[str, ConfigEntry]],
    config_filter: ConfigPropertyFilter,
    timeout: float,
) -> None:
    """MirrorSourceConnector.incrementalAlterConfigs: SET what the source sets, DELETE what it leaves at the
    default (unless defaults come from the source)."""
    resources = []
    for topic, entries in configs.items():
        ops = []
        for name, entry in entries.items():
            default = (
                entry.source == ConfigSource.DEFAULT_CONFIG
                and not config_filter.replicate_source_default(name)
            )
            op = AlterConfigOpType.DELETE if default else AlterConfigOpType.SET
            ops.append(ConfigEntry(name, None if default else entry.value, incremental_operation=op))
        if ops:
            resources.append(ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=ops))
    if not resources:
        return
    for resource, future in admin.incremental_alter_configs(resources, request_timeout=timeout).items():
        try:
            future.result(timeout)
        except KafkaException as exc:
            log.warning("Could not alter configuration of topic %s: %s", resource.name, exc)
