"""``mm2.properties`` read as Kafka's ``MirrorMakerConfig`` reads it: flows, worker and connector configs.

A dedicated-mode MirrorMaker (``connect-mirror-maker.sh mm2.properties``) runs one Connect herder per
*herder pair* ``source->target`` — every enabled flow, plus, while heartbeats are on (the default), the
reverse pair of each cluster pair so that a ``MirrorHeartbeatConnector`` emits into the source too — each a
distributed worker group on the **target** cluster: ``group.id`` ``<source>-mm2``, internal topics
``mm2-configs.<source>.internal``, ``mm2-offsets.<source>.internal``, ``mm2-status.<source>.internal``,
``client.id`` ``source->target``, ByteArrayConverter for keys, values and headers. Its leader configures
the three connectors, named by their class's simple name, from :meth:`MirrorMakerSettings.connector_config`.

Inheritance, as Java's (``clusterProps``, ``workerConfig``, ``connectorBaseConfig``): ``<alias>.k`` is the
cluster's key ``k``; a client key (bootstrap, security, SSL, SASL) of a cluster or of the top level also
becomes ``producer.k``/``consumer.k``/``admin.k``; a connector gets the top-level keys MM2's connectors
define, the source cluster's keys as ``source.cluster.k`` (clients' as ``source.producer.k``, …), the
target's as ``target.…``, then ``<source>-><target>.k`` overrides. The worker of a pair takes the target
cluster's keys and the top-level ``offset.storage*``, ``config.storage*``, ``status.storage*``,
``key.converter*``, ``value.converter*``, ``header.converter*``, ``task*``, ``worker*``,
``replication.policy*`` and ``config.providers*`` keys. ``${provider:…}`` references are resolved by the
worker that runs the pair (as Java's transform does for the worker config), never here.

Stricter than Java, where Java silently does something surprising: an alias listed twice, a flow key naming
a cluster that ``clusters`` does not list, and a herder pair's cluster without ``bootstrap.servers`` are
refused naming the key (``tests/integration/test_mirror_maker_java_config.py`` compares the rest with Java's
``MirrorMakerConfig`` live).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from cdc.errors import ConfigError

__all__ = [
    "CLIENT_CONFIG_NAMES",
    "CONNECTOR_CLASSES",
    "CONNECTOR_CONFIG_NAMES",
    "Flow",
    "MirrorMakerSettings",
]

BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
# MirrorMaker.CONNECTOR_CLASSES, in the order its leader configures them
CONNECTOR_CLASSES = (
    "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
)
INTERNAL_REST = "dedicated.mode.enable.internal.rest"

# MirrorClientConfig.CLIENT_CONFIG_DEF's names (bootstrap, security protocol, client SSL and SASL), Kafka 4.3
CLIENT_CONFIG_NAMES = frozenset(
    {
        "bootstrap.servers",
        "sasl.client.callback.handler.class",
        "sasl.jaas.config",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.service.name",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.login.callback.handler.class",
        "sasl.login.class",
        "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms",
        "sasl.login.refresh.buffer.seconds",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.retry.backoff.max.ms",
        "sasl.login.retry.backoff.ms",
        "sasl.mechanism",
        "sasl.oauthbearer.assertion.algorithm",
        "sasl.oauthbearer.assertion.claim.aud",
        "sasl.oauthbearer.assertion.claim.exp.seconds",
        "sasl.oauthbearer.assertion.claim.iss",
        "sasl.oauthbearer.assertion.claim.jti.include",
        "sasl.oauthbearer.assertion.claim.nbf.seconds",
        "sasl.oauthbearer.assertion.claim.sub",
        "sasl.oauthbearer.assertion.file",
        "sasl.oauthbearer.assertion.private.key.file",
        "sasl.oauthbearer.assertion.private.key.passphrase",
        "sasl.oauthbearer.assertion.template.file",
        "sasl.oauthbearer.client.credentials.client.id",
        "sasl.oauthbearer.client.credentials.client.secret",
        "sasl.oauthbearer.clock.skew.seconds",
        "sasl.oauthbearer.expected.audience",
        "sasl.oauthbearer.expected.issuer",
        "sasl.oauthbearer.header.urlencode",
        "sasl.oauthbearer.jwks.endpoint.refresh.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
        "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
        "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.jwt.retriever.class",
        "sasl.oauthbearer.jwt.validator.class",
        "sasl.oauthbearer.scope",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name",
        "sasl.oauthbearer.token.endpoint.url",
        "security.protocol",
        "ssl.cipher.suites",
        "ssl.enabled.protocols",
        "ssl.endpoint.identification.algorithm",
        "ssl.engine.factory.class",
        "ssl.key.password",
        "ssl.keymanager.algorithm",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.type",
        "ssl.protocol",
        "ssl.provider",
        "ssl.secure.random.implementation",
        "ssl.trustmanager.algorithm",
        "ssl.truststore.certificates",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.type",
    }
)

_CONNECTOR_OWN_NAMES = frozenset(
    {
        "admin.timeout.ms",
        "checkpoints.topic.replication.factor",
        "config.action.reload",
        "config.properties.exclude",
        "config.property.filter.class",
        "config.providers",
        "connector.class",
        "connector.plugin.version",
        "consumer.poll.timeout.ms",
        "emit.checkpoints.enabled",
        "emit.checkpoints.interval.seconds",
        "emit.heartbeats.enabled",
        "emit.heartbeats.interval.seconds",
        "emit.offset-syncs.enabled",
        "enabled",
        "errors.log.enable",
        "errors.log.include.messages",
        "errors.retry.delay.max.ms",
        "errors.retry.timeout",
        "errors.tolerance",
        "forwarding.admin.class",
        "group.filter.class",
        "groups",
        "groups.exclude",
        "header.converter",
        "header.converter.plugin.version",
        "heartbeats.replication.enabled",
        "heartbeats.topic.replication.factor",
        "key.converter",
        "key.converter.plugin.version",
        "metric.names.formats",
        "metric.reporters",
        "name",
        "offset-syncs.topic.location",
        "offset-syncs.topic.replication.factor",
        "offset.lag.max",
        "predicates",
        "refresh.groups.enabled",
        "refresh.groups.interval.seconds",
        "refresh.topics.enabled",
        "refresh.topics.interval.seconds",
        "replication.factor",
        "replication.policy.class",
        "replication.policy.internal.topic.separator.enabled",
        "replication.policy.separator",
        "source.cluster.alias",
        "sync.group.offsets.enabled",
        "sync.group.offsets.interval.seconds",
        "sync.topic.acls.enabled",
        "sync.topic.acls.interval.seconds",
        "sync.topic.configs.enabled",
        "sync.topic.configs.interval.seconds",
        "target.cluster.alias",
        "tasks.max",
        "tasks.max.enforce",
        "topic.filter.class",
        "topics",
        "topics.exclude",
        "transforms",
        "value.converter",
        "value.converter.plugin.version",
    }
)

# MirrorMakerConfig.allConfigNames(): every key the three connectors' ConfigDefs define
CONNECTOR_CONFIG_NAMES = (CLIENT_CONFIG_NAMES - {"bootstrap.servers"}) | _CONNECTOR_OWN_NAMES

# the top-level keys a pair's worker accepts (MirrorMakerConfig.workerConfig)
_WORKER_PREFIXES = (
    "offset.storage",
    "config.storage",
    "status.storage",
    "key.converter",
    "value.converter",
    "header.converter",
    "task",
    "worker",
    "replication.policy",
)
_CLIENT_PREFIX = re.compile(r"^(consumer|producer|admin)")


@dataclass(frozen=True, order=True)
class Flow:
    """A herder pair ``source->target``."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}->{self.target}"


def _prefixed(props: Mapping[str, str], prefix: str, strip: bool) -> dict[str, str]:
    return {(k[len(prefix) :] if strip else k): v for k, v in props.items() if k.startswith(prefix)}


def _java_bool(value: str | None) -> bool:
    """``Boolean.parseBoolean``: "true" in any case is true, anything else false."""
    return value is not None and value.strip().lower() == "true"


@dataclass(frozen=True)
class MirrorMakerSettings:
    """A parsed ``mm2.properties``: ``raw`` as the file has it, ``clusters`` in the order listed."""

    raw: Mapping[str, str]
    clusters: tuple[str, ...]
    internal_rest: bool

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> MirrorMakerSettings:
        raw = {str(k): str(v) for k, v in props.items()}
        if "clusters" not in raw:
            raise ConfigError('Missing required configuration "clusters" which has no default value.')
        listed = [alias.strip() for alias in raw["clusters"].split(",")]
        aliases = [alias for alias in listed if alias]
        if not aliases:
            raise ConfigError("at least one cluster alias is required", "clusters", raw["clusters"])
        seen: set[str] = set()
        for alias in aliases:
            if alias in seen:
                raise ConfigError(f"the cluster alias {alias!r} is listed twice", "clusters", raw["clusters"])
            if "->" in alias:
                raise ConfigError(
                    f"a cluster alias cannot contain '->': {alias!r}", "clusters", raw["clusters"]
                )
            seen.add(alias)
        rest = raw.get(INTERNAL_REST, "false").strip().lower()
        if rest not in ("true", "false"):
            raise ConfigError("Expected value to be either true or false", INTERNAL_REST, raw[INTERNAL_REST])
        settings = cls(raw, tuple(aliases), rest == "true")
        settings._check_flow_keys()
        pairs = settings.pairs()
        if not pairs:
            raise ConfigError("No source->target replication flows.")
        for alias in sorted({a for pair in pairs for a in (pair.source, pair.target)}):
            if not settings.cluster_props(alias).get("bootstrap.servers", "").strip():
                raise ConfigError(
                    f'Missing required configuration "{alias}.bootstrap.servers": cluster {alias!r} of the '
                    f"flows {', '.join(str(p) for p in pairs if alias in (p.source, p.target))} has no "
                    "bootstrap servers (nor has the top level)"
                )
        return settings

    def _check_flow_keys(self) -> None:
        for key in self.raw:
            if "->" not in key:
                continue
            source, _, rest = key.partition("->")
            target = rest.split(".", 1)[0]
            if "." not in rest or not source or not target:
                raise ConfigError("a flow key is <source>-><target>.<key>", key, self.raw[key])
            for alias in (source, target):
                if alias not in self.clusters:
                    raise ConfigError(
                        f"the cluster {alias!r} is not one of clusters ({', '.join(self.clusters)})",
                        key,
                        self.raw[key],
                    )
            if source == target:
                raise ConfigError("a flow's source and target must differ", key, self.raw[key])

    def pairs(self, targets: tuple[str, ...] = ()) -> list[Flow]:
        """MirrorMakerConfig.clusterPairs: each ``source->target`` that is enabled, or emits heartbeats
        (``emit.heartbeats.enabled``, default true, overridable per pair); only those into ``targets``
        when given (``--clusters``)."""
        globally = _java_bool(self.raw.get("emit.heartbeats.enabled", "true"))
        out = []
        for source in self.clusters:
            for target in self.clusters:
                if source == target or (targets and target not in targets):
                    continue
                prefix = f"{source}->{target}."
                heartbeats = globally
                if prefix + "emit.heartbeats.enabled" in self.raw:
                    heartbeats = _java_bool(self.raw[prefix + "emit.heartbeats.enabled"])
                if _java_bool(self.raw.get(prefix + "enabled")) or heartbeats:
                    out.append(Flow(source, target))
        return out

    def enabled_flows(self) -> list[Flow]:
        return [p for p in self.pairs() if _java_bool(self.raw.get(f"{p}.enabled"))]

    def cluster_props(self, alias: str) -> dict[str, str]:
        """MirrorMakerConfig.clusterProps: ``<alias>.k`` stripped, client keys copied to the three clients,
        then the top level's client keys where the cluster has none."""
        props = _prefixed(self.raw, alias + ".", strip=True)
        for name in sorted(CLIENT_CONFIG_NAMES):
            if name in props:
                for client in ("producer.", "consumer.", "admin."):
                    props.setdefault(client + name, props[name])
        for name in sorted(CLIENT_CONFIG_NAMES):
            if name in self.raw:
                for client in ("producer.", "consumer.", "admin.", ""):
                    props.setdefault(client + name, self.raw[name])
        return props

    def worker_config(self, flow: Flow) -> dict[str, str]:
        """MirrorMakerConfig.workerConfig: the properties of the distributed worker that runs ``flow``."""
        props = self.cluster_props(flow.target)
        for prefix in (*_WORKER_PREFIXES, "config.providers"):
            props.update(_prefixed(self.raw, prefix, strip=False))
        props.setdefault("client.id", str(flow))
        props.setdefault("group.id", f"{flow.source}-mm2")
        props.setdefault("offset.storage.topic", f"mm2-offsets.{flow.source}.internal")
        props.setdefault("status.storage.topic", f"mm2-status.{flow.source}.internal")
        props.setdefault("config.storage.topic", f"mm2-configs.{flow.source}.internal")
        for converter in ("key.converter", "value.converter", "header.converter"):
            props.setdefault(converter, BYTE_ARRAY_CONVERTER)
        return props

    def connector_config(self, flow: Flow, connector_class: str) -> dict[str, str]:
        """MirrorMakerConfig.connectorBaseConfig: the config the leader of ``flow``'s group writes for one
        of the three connectors."""
        props = {k: v for k, v in self.raw.items() if k in CONNECTOR_CONFIG_NAMES}
        props.update(_prefixed(self.raw, "config.providers", strip=False))
        props.update(_prefixed(self.raw, "replication.policy", strip=False))
        for side, alias in (("source", flow.source), ("target", flow.target)):
            cluster = self.cluster_props(alias)
            props.update(
                {f"{side}.cluster.{k}": v for k, v in cluster.items() if not _CLIENT_PREFIX.match(k)}
            )
            props.update({f"{side}.{k}": v for k, v in cluster.items() if _CLIENT_PREFIX.match(k)})
        props.setdefault("name", connector_class.rsplit(".", 1)[-1])
        props.setdefault("connector.class", connector_class)
        props.setdefault("source.cluster.alias", flow.source)
        props.setdefault("target.cluster.alias", flow.target)
        props.update(_prefixed(self.raw, f"{flow}.", strip=True))
        props.setdefault("enabled", "false")
        return props
