"""MirrorMaker 2's connector configuration: Kafka's keys, defaults and checks, declared once.

``MIRROR_DEF`` declares every key of ``MirrorConnectorConfig``, ``MirrorSourceConfig``,
``MirrorCheckpointConfig`` and ``MirrorHeartbeatConfig`` (Kafka 4.x) with Kafka's defaults; each connector
shows the subset Kafka's shows (:func:`connector_def`). :class:`MirrorSettings` is the parsed, typed view
the connectors and tasks read. :func:`validate_mirror` adds the cross-key and cluster checks (both aliases
equal, offset-syncs keys with ``emit.offset-syncs.enabled=false``, a cluster that does not answer, a
replication factor above the cluster's broker count), each reported on the key at fault
(:mod:`cdc.mirror.validation`).

Client settings follow ``MirrorConnectorConfig``: for a client of the source cluster, the ``source.cluster.``
keys that are common client settings (bootstrap, security, SSL, SASL …), then ``consumer.``/``producer.``/
``admin.``, then ``source.consumer.``/``source.producer.``/``source.admin.`` (likewise ``target.``), then
:func:`cdc.kafka.clients.to_librdkafka`. Consumers get ``enable.auto.commit=false`` and ``auto.offset.reset=
earliest`` unless set, as in Kafka.

Pluggable classes (``topic.filter.class``, ``group.filter.class``, ``config.property.filter.class``,
``forwarding.admin.class``) accept only Kafka's defaults: a custom Java class cannot run here, and is refused
naming the key. ``replication.policy.class`` accepts Kafka's Default and Identity policies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConfigError
from cdc.config import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.config import validators as v
from cdc.config.settings import setting, settings_from
from cdc.config.shorthands import CLS, INT, LO, LST, SH, B, H, L, M, S
from cdc.kafka.clients import to_librdkafka
from cdc.mirror.policy import (
    POLICY_NAMES,
    ConfigPropertyFilter,
    NameFilter,
    ReplicationPolicy,
    policy_for,
)

__all__ = [
    "CHECKPOINT",
    "HEARTBEAT",
    "MIRROR_DEF",
    "SOURCE",
    "MirrorSettings",
    "client_settings",
    "connector_def",
]

SOURCE, CHECKPOINT, HEARTBEAT = "source", "checkpoint", "heartbeat"


TOPICS_EXCLUDE_DEFAULT = r".*[\-\.]internal, .*\.replica, __.*"
GROUPS_EXCLUDE_DEFAULT = "console-consumer-.*, connect-.*, __.*"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = (
    r"follower\.replication\.throttled\.replicas, leader\.replication\.throttled\.replicas, "
    r"message\.timestamp\.difference\.max\.ms, message\.timestamp\.type, "
    r"unclean\.leader\.election\.enable, min\.insync\.replicas"
)
TASK_TOPIC_PARTITIONS = "task.assigned.partitions"
TASK_CONSUMER_GROUPS = "task.assigned.groups"
TASK_INDEX = "task.index"
OFFSET_SYNCS_PREFIXES = ("offset-syncs-", "offset-syncs.topic.")

_ONLY_DEFAULT_CLASSES = {
    "topic.filter.class": ("org.apache.kafka.connect.mirror.DefaultTopicFilter", "DefaultTopicFilter"),
    "group.filter.class": ("org.apache.kafka.connect.mirror.DefaultGroupFilter", "DefaultGroupFilter"),
    "config.property.filter.class": (
        "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
        "DefaultConfigPropertyFilter",
    ),
    "forwarding.admin.class": ("org.apache.kafka.clients.admin.ForwardingAdmin", "ForwardingAdmin"),
}


def _only_default(name: str, value: Any) -> None:
    allowed = _ONLY_DEFAULT_CLASSES[name]
    if value is not None and str(value).strip() not in allowed:
        raise ConfigError(
            f"Class {value} cannot be used: cdc runs MirrorMaker 2 with Kafka's default {allowed[0]} only",
            name,
            value,
        )


def _policy(name: str, value: Any) -> None:
    if str(value).strip() not in POLICY_NAMES:
        raise ConfigError(
            f"Class {value} cannot be used: cdc offers "
            "org.apache.kafka.connect.mirror.DefaultReplicationPolicy and "
            "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
            name,
            value,
        )


def _alias(name: str, value: Any) -> None:
    if value is not None and not str(value).strip():
        raise ConfigError("A cluster alias may not be empty", name, value)


_regexes = v.regex  # each item of the list must compile (Python's syntax, which Java's patterns share here)

# (key, type, default, validator, importance, documentation, connectors showing it)
_ALL = (SOURCE, CHECKPOINT, HEARTBEAT)
_KEYS: tuple[tuple[str, ConfigType, Any, Any, Importance, str, tuple[str, ...]], ...] = (
    ("enabled", B, True, None, LO, "Whether to replicate source->target.", _ALL),
    ("source.cluster.alias", S, NO_DEFAULT, _alias, H, "Alias of source cluster", _ALL),
    (
        "target.cluster.alias",
        S,
        "target",
        _alias,
        M,
        "Alias of target cluster. Used in metrics reporting.",
        _ALL,
    ),
    (
        "source.cluster.bootstrap.servers",
        LST,
        None,
        None,
        H,
        "The source cluster's brokers (host:port, …); every source.cluster.* client setting applies too.",
        (SOURCE, CHECKPOINT),
    ),
    (
        "target.cluster.bootstrap.servers",
        LST,
        None,
        None,
        H,
        "The target cluster's brokers, for the admin clients (topics, groups); the records go through the "
        "worker's producer, as in Connect.",
        _ALL,
    ),
    (
        "admin.timeout.ms",
        L,
        60000,
        v.at_least(0),
        LO,
        "Timeout for administrative tasks, e.g. detecting new topics.",
        _ALL,
    ),
    (
        "replication.policy.class",
        CLS,
        "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
        _policy,
        LO,
        "Class which defines the remote topic naming convention.",
        _ALL,
    ),
    (
        "replication.policy.separator",
        S,
        ".",
        v.non_empty_string,
        LO,
        "Separator used in remote topic naming convention.",
        _ALL,
    ),
    (
        "replication.policy.internal.topic.separator.enabled",
        B,
        True,
        None,
        LO,
        "Whether to use replication.policy.separator to control the names of topics used for checkpoints "
        "and offset syncs.",
        _ALL,
    ),
    (
        "forwarding.admin.class",
        CLS,
        "org.apache.kafka.clients.admin.ForwardingAdmin",
        _only_default,
        LO,
        "Admin class (Kafka's default only).",
        _ALL,
    ),
    (
        "offset-syncs.topic.location",
        S,
        "source",
        v.one_of("source", "target"),
        LO,
        "The location (source/target) of the offset-syncs topic.",
        (SOURCE, CHECKPOINT),
    ),
    (
        "emit.offset-syncs.enabled",
        B,
        True,
        None,
        LO,
        "Whether to store the new offset of the replicated records in offset-syncs topic or not.",
        (SOURCE, CHECKPOINT),
    ),
    (
        "consumer.poll.timeout.ms",
        L,
        1000,
        v.at_least(0),
        LO,
        "Timeout when polling source cluster.",
        (SOURCE, CHECKPOINT),
    ),
    (
        "topics",
        LST,
        ".*",
        _regexes,
        H,
        "Topics to replicate. Supports comma-separated topic names and regexes.",
        (SOURCE, CHECKPOINT),
    ),
    (
        "topics.exclude",
        LST,
        TOPICS_EXCLUDE_DEFAULT,
        _regexes,
        H,
        "Excluded topics. Supports comma-separated topic names and regexes.",
        (SOURCE, CHECKPOINT),
    ),
    (
        "topic.filter.class",
        CLS,
        "org.apache.kafka.connect.mirror.DefaultTopicFilter",
        _only_default,
        LO,
        "TopicFilter to use (Kafka's default only).",
        (SOURCE, CHECKPOINT),
    ),
    (
        "config.properties.exclude",
        LST,
        CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
        _regexes,
        H,
        "Topic config properties that should not be replicated. Supports comma-separated property names "
        "and regexes.",
        (SOURCE,),
    ),
    (
        "use.defaults.from",
        S,
        "target",
        v.one_of("source", "target"),
        LO,
        "Which cluster's defaults (source or target) to use when syncing topic configurations that have "
        "default values.",
        (SOURCE,),
    ),
    (
        "config.property.filter.class",
        CLS,
        "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
        _only_default,
        LO,
        "ConfigPropertyFilter to use (Kafka's default only).",
        (SOURCE,),
    ),
    (
        "refresh.topics.enabled",
        B,
        True,
        None,
        LO,
        "Whether to periodically check for new topics and partitions.",
        (SOURCE,),
    ),
    ("refresh.topics.interval.seconds", L, 600, v.at_least(0), LO, "Frequency of topic refresh.", (SOURCE,)),
    (
        "sync.topic.configs.enabled",
        B,
        True,
        None,
        LO,
        "Whether to periodically configure remote topics to match their corresponding upstream topics.",
        (SOURCE,),
    ),
    (
        "sync.topic.configs.interval.seconds",
        L,
        600,
        v.at_least(0),
        LO,
        "Frequency of topic config sync.",
        (SOURCE,),
    ),
    (
        "sync.topic.acls.enabled",
        B,
        True,
        None,
        LO,
        "Whether to periodically configure remote topic ACLs to match their corresponding upstream topics "
        "(not applicable where the source cluster has no authorizer: logged once, as Kafka does).",
        (SOURCE,),
    ),
    (
        "sync.topic.acls.interval.seconds",
        L,
        600,
        v.at_least(0),
        LO,
        "Frequency of topic ACL sync.",
        (SOURCE,),
    ),
    (
        "replication.factor",
        INT,
        2,
        v.at_least(1),
        LO,
        "Replication factor for newly created remote topics.",
        (SOURCE,),
    ),
    (
        "offset-syncs.topic.replication.factor",
        SH,
        3,
        v.at_least(1),
        LO,
        "Replication factor for offset-syncs topic.",
        (SOURCE,),
    ),
    (
        "offset.lag.max",
        L,
        100,
        v.at_least(0),
        LO,
        "How out-of-sync a remote partition can be before it is resynced.",
        (SOURCE,),
    ),
    (
        "heartbeats.replication.enabled",
        B,
        True,
        None,
        LO,
        "Whether to replicate the heartbeats topics even when the topic filter does not include them.",
        (SOURCE,),
    ),
    (
        "provenance.headers.enabled",
        B,
        True,
        None,
        LO,
        "cdc only, IdentityReplicationPolicy only: add a __cdc.mm2.provenance header (the source alias) to "
        "each copied record and skip records that already passed through the target cluster, so that "
        "active/active flows do not loop (Kafka's MM2 has no such protection under the identity policy).",
        (SOURCE,),
    ),
    (
        "groups",
        LST,
        ".*",
        _regexes,
        H,
        "Consumer groups to replicate. Supports comma-separated group IDs and regexes.",
        (CHECKPOINT,),
    ),
    (
        "groups.exclude",
        LST,
        GROUPS_EXCLUDE_DEFAULT,
        _regexes,
        H,
        "Exclude groups. Supports comma-separated group IDs and regexes.",
        (CHECKPOINT,),
    ),
    (
        "group.filter.class",
        CLS,
        "org.apache.kafka.connect.mirror.DefaultGroupFilter",
        _only_default,
        LO,
        "GroupFilter to use (Kafka's default only).",
        (CHECKPOINT,),
    ),
    (
        "refresh.groups.enabled",
        B,
        True,
        None,
        LO,
        "Whether to periodically check for new consumer groups.",
        (CHECKPOINT,),
    ),
    (
        "refresh.groups.interval.seconds",
        L,
        600,
        v.at_least(0),
        LO,
        "Frequency of group refresh.",
        (CHECKPOINT,),
    ),
    (
        "emit.checkpoints.enabled",
        B,
        True,
        None,
        LO,
        "Whether to replicate consumer offsets to target cluster.",
        (CHECKPOINT,),
    ),
    (
        "emit.checkpoints.interval.seconds",
        L,
        60,
        v.at_least(0),
        LO,
        "Frequency of checkpoints.",
        (CHECKPOINT,),
    ),
    (
        "sync.group.offsets.enabled",
        B,
        False,
        None,
        LO,
        "Whether to periodically write the translated offsets to __consumer_offsets topic in target cluster, "
        "as long as no active consumers in that group are connected to the target cluster",
        (CHECKPOINT,),
    ),
    (
        "sync.group.offsets.interval.seconds",
        L,
        60,
        v.at_least(0),
        LO,
        "Frequency of consumer group offset sync.",
        (CHECKPOINT,),
    ),
    (
        "checkpoints.topic.replication.factor",
        SH,
        3,
        v.at_least(1),
        LO,
        "Replication factor for checkpoints topic.",
        (CHECKPOINT,),
    ),
    (
        "emit.heartbeats.enabled",
        B,
        True,
        None,
        LO,
        "Whether to emit heartbeats to target cluster.",
        (HEARTBEAT,),
    ),
    ("emit.heartbeats.interval.seconds", L, 1, v.at_least(0), LO, "Frequency of heartbeats.", (HEARTBEAT,)),
    (
        "heartbeats.topic.replication.factor",
        SH,
        3,
        v.at_least(1),
        LO,
        "Replication factor for heartbeats topic.",
        (HEARTBEAT,),
    ),
)
_INTERNAL: tuple[tuple[str, ConfigType, Any], ...] = (
    (TASK_TOPIC_PARTITIONS, LST, ""),
    (TASK_CONSUMER_GROUPS, LST, ""),
    (TASK_INDEX, INT, 0),
)
CLIENT_PREFIXES = (
    "source.cluster.",
    "target.cluster.",
    "source.consumer.",
    "source.producer.",
    "source.admin.",
    "target.consumer.",
    "target.producer.",
    "target.admin.",
    "consumer.",
    "producer.",
    "admin.",
)


def _build(kind: str | None) -> ConfigDef:
    d = ConfigDef()
    for name, typ, default, validator, importance, doc, kinds in _KEYS:
        if kind is None or kind in kinds:
            d.define(name, typ, default, validator, importance, doc, group="Mirror")
    if kind is None:
        for name, typ, default in _INTERNAL:
            d.define(name, typ, default, None, LO, "Set by the connector for its tasks.", internal=True)
    return d.accept(prefixes=CLIENT_PREFIXES)


MIRROR_DEF = _build(None)
"""Every key of the three connectors (and the keys their tasks receive)."""
_DEFS = {kind: _build(kind) for kind in _ALL}


def connector_def(kind: str) -> ConfigDef:
    """The keys Kafka's connector of that kind shows."""
    return _DEFS[kind]


@dataclass(frozen=True)
class MirrorSettings:
    enabled: bool = setting("enabled")
    source_alias: str = setting("source.cluster.alias")
    target_alias: str = setting("target.cluster.alias")
    source_bootstrap: tuple[str, ...] | None = setting("source.cluster.bootstrap.servers")
    target_bootstrap: tuple[str, ...] | None = setting("target.cluster.bootstrap.servers")
    admin_timeout_ms: int = setting("admin.timeout.ms")
    policy_class: str = setting("replication.policy.class")
    separator: str = setting("replication.policy.separator")
    internal_separator_enabled: bool = setting("replication.policy.internal.topic.separator.enabled")
    forwarding_admin_class: str = setting("forwarding.admin.class")
    offset_syncs_location: str = setting("offset-syncs.topic.location")
    emit_offset_syncs: bool = setting("emit.offset-syncs.enabled")
    poll_timeout_ms: int = setting("consumer.poll.timeout.ms")
    topics: tuple[str, ...] = setting("topics")
    topics_exclude: tuple[str, ...] = setting("topics.exclude")
    topic_filter_class: str = setting("topic.filter.class")
    config_properties_exclude: tuple[str, ...] = setting("config.properties.exclude")
    use_defaults_from: str = setting("use.defaults.from")
    config_property_filter_class: str = setting("config.property.filter.class")
    refresh_topics: bool = setting("refresh.topics.enabled")
    refresh_topics_s: int = setting("refresh.topics.interval.seconds")
    sync_configs: bool = setting("sync.topic.configs.enabled")
    sync_configs_s: int = setting("sync.topic.configs.interval.seconds")
    sync_acls: bool = setting("sync.topic.acls.enabled")
    sync_acls_s: int = setting("sync.topic.acls.interval.seconds")
    replication_factor: int = setting("replication.factor")
    offset_syncs_rf: int = setting("offset-syncs.topic.replication.factor")
    offset_lag_max: int = setting("offset.lag.max")
    heartbeats_replication: bool = setting("heartbeats.replication.enabled")
    provenance_headers: bool = setting("provenance.headers.enabled")
    groups: tuple[str, ...] = setting("groups")
    groups_exclude: tuple[str, ...] = setting("groups.exclude")
    group_filter_class: str = setting("group.filter.class")
    refresh_groups: bool = setting("refresh.groups.enabled")
    refresh_groups_s: int = setting("refresh.groups.interval.seconds")
    emit_checkpoints: bool = setting("emit.checkpoints.enabled")
    emit_checkpoints_s: int = setting("emit.checkpoints.interval.seconds")
    sync_group_offsets: bool = setting("sync.group.offsets.enabled")
    sync_group_offsets_s: int = setting("sync.group.offsets.interval.seconds")
    checkpoints_rf: int = setting("checkpoints.topic.replication.factor")
    emit_heartbeats: bool = setting("emit.heartbeats.enabled")
    emit_heartbeats_s: int = setting("emit.heartbeats.interval.seconds")
    heartbeats_rf: int = setting("heartbeats.topic.replication.factor")
    task_partitions: tuple[str, ...] = setting(TASK_TOPIC_PARTITIONS)
    task_groups: tuple[str, ...] = setting(TASK_CONSUMER_GROUPS)
    task_index: int = setting(TASK_INDEX)
    connector_name: str = "mirror"
    raw: Mapping[str, str] | None = None

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> MirrorSettings:
        return settings_from(
            cls, MIRROR_DEF.parse(props), connector_name=props.get("name", "mirror"), raw=dict(props)
        )

    # -- derived -------------------------------------------------------------------------------------
    @property
    def policy(self) -> ReplicationPolicy:
        return policy_for(
            self.policy_class, self.separator, self.internal_separator_enabled, self.source_alias
        )

    @property
    def topic_filter(self) -> NameFilter:
        return NameFilter.of(self.topics, self.topics_exclude)

    @property
    def group_filter(self) -> NameFilter:
        return NameFilter.of(self.groups, self.groups_exclude)

    @property
    def config_filter(self) -> ConfigPropertyFilter:
        return ConfigPropertyFilter(
            NameFilter.of(self.config_properties_exclude, ()).include, self.use_defaults_from == "source"
        )

    @property
    def offset_syncs_topic(self) -> str:
        other = self.target_alias if self.offset_syncs_location == "source" else self.source_alias
        return self.policy.offset_syncs_topic(other)

    @property
    def offset_syncs_cluster(self) -> str:
        """``source`` or ``target``: where the offset-syncs topic lives."""
        return self.offset_syncs_location

    @property
    def checkpoints_topic(self) -> str:
        return self.policy.checkpoints_topic(self.source_alias)

    def client(self, cluster: str, role: str, client_id: str | None = None) -> dict[str, Any]:
        return client_settings(self.raw or {}, cluster, role, client_id)


# The settings a cluster's ``source.cluster.``/``target.cluster.`` keys may give every one of its clients
# (MirrorClientConfig.CLIENT_CONFIG_DEF: Kafka's common client settings).
_COMMON_CLIENT = ("bootstrap.servers", "security.protocol", "client.dns.lookup", "client.id")
_COMMON_CLIENT_PREFIXES = (
    "ssl.",
    "sasl.",
    "socket.",
    "reconnect.",
    "retry.",
    "request.timeout.ms",
    "metadata.max.age.ms",
    "connections.max.idle.ms",
    "receive.buffer.bytes",
    "send.buffer.bytes",
)


def _with_prefix(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {
        k[len(prefix) :]: val for k, val in props.items() if k.startswith(prefix) and len(k) > len(prefix)
    }


def client_settings(
    props: Mapping[str, str], cluster: str, role: str, client_id: str | None = None
) -> dict[str, Any]:
    """librdkafka settings of one client: ``cluster`` is ``source`` or ``target``, ``role`` ``consumer``,
    ``producer`` or ``admin`` (see the module docstring for the order)."""
    java = {
        k: val
        for k, val in _with_prefix(props, f"{cluster}.cluster.").items()
        if k in _COMMON_CLIENT or k.startswith(_COMMON_CLIENT_PREFIXES)
    }
    java.update(_with_prefix(props, f"{role}."))
    java.update(_with_prefix(props, f"{cluster}.{role}."))
    java.pop("poll.timeout.ms", None)  # consumer.poll.timeout.ms is the task's, not the client's
    if role == "consumer":
        java["enable.auto.commit"] = "false"
        java.setdefault("auto.offset.reset", "earliest")
    if client_id is not None:
        java.setdefault("client.id", client_id)
    out = to_librdkafka(java)
    if role == "admin":  # an admin client takes no producer/consumer-only settings
        for key in ("enable.auto.commit", "auto.offset.reset", "acks", "linger.ms", "compression.type"):
            out.pop(key, None)
    return out
