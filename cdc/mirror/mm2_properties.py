"""An ``mm2.properties`` file (``connect-mirror-maker.sh``) turned into connector and worker configs.

Follows Kafka's ``MirrorMakerConfig``: ``clusters = a, b``; ``a.bootstrap.servers`` and the other ``<alias>.``
keys describe a cluster (its ``<alias>.producer.*``, ``.consumer.*``, ``.admin.*`` client settings too); a
flow ``a->b`` runs when ``a->b.enabled = true``, or for its heartbeats alone when heartbeats are enabled (the
default) — its source and checkpoint connectors then carry ``enabled=false``; ``a->b.<key>`` overrides a
top-level key for that flow. Each flow gets the three connectors, named by their simple class names, and a
worker config whose brokers are the target's, with ``ByteArrayConverter`` for keys, values and headers unless
the file names others, and Kafka's default internal topic names (``mm2-offsets.<source>.internal`` …).

For the ``cdc mirror-maker`` command (branch ``mm2-peer``): :func:`cluster_pairs` lists the flows,
:func:`connector_configs` gives ``{connector name: config}`` for one flow and :func:`worker_config` its
worker settings. Config providers (``config.providers``) are passed on, not resolved here: the worker
resolves ``${provider:…}`` as it does for any connector.
"""

from __future__ import annotations

from collections.abc import Mapping

from cdc.api.errors import ConfigError
from cdc.mirror.config import MIRROR_DEF

__all__ = [
    "BYTE_ARRAY_CONVERTER",
    "CONNECTOR_CLASSES",
    "cluster_pairs",
    "cluster_props",
    "clusters",
    "connector_configs",
    "worker_config",
]

BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONNECTOR_CLASSES = (
    "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
)
# Connect's ConnectorConfig keys, which Kafka's connector definitions include (so a top-level ``tasks.max``
# reaches every connector)
_CONNECT_KEYS = (
    "name",
    "connector.class",
    "tasks.max",
    "tasks.max.enforce",
    "key.converter",
    "value.converter",
    "header.converter",
    "transforms",
    "predicates",
    "config.action.reload",
    "errors.retry.timeout",
    "errors.retry.delay.max.ms",
    "errors.tolerance",
    "errors.log.enable",
    "errors.log.include.messages",
)
# MirrorClientConfig.CLIENT_CONFIG_DEF: what a cluster's keys give all its clients
_CLIENT_KEYS = ("bootstrap.servers", "security.protocol", "client.dns.lookup", "client.id")
_CLIENT_PREFIXES = ("ssl.", "sasl.")
_ROLES = ("producer.", "consumer.", "admin.")


def _strip(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix) and len(k) > len(prefix)}


def _with(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {k: v for k, v in props.items() if k.startswith(prefix)}


def _client_key(key: str) -> bool:
    return key in _CLIENT_KEYS or key.startswith(_CLIENT_PREFIXES)


def clusters(props: Mapping[str, str]) -> list[str]:
    """The ``clusters`` list; an alias given twice, an empty one, or one with ``->`` in it is refused."""
    raw = props.get("clusters")
    if raw is None:
        raise ConfigError('Missing required configuration "clusters" which has no default value.')
    aliases = [a.strip() for a in raw.split(",") if a.strip()]
    seen: set[str] = set()
    for alias in aliases:
        if alias in seen:
            raise ConfigError(f"clusters: the alias '{alias}' appears twice", "clusters", raw)
        if "->" in alias:
            raise ConfigError(f"clusters: the alias '{alias}' may not contain '->'", "clusters", raw)
        seen.add(alias)
    if not aliases:
        raise ConfigError("clusters: at least one cluster alias is needed", "clusters", raw)
    return aliases


def cluster_pairs(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """MirrorMakerConfig.clusterPairs: the flows that run (replication enabled, or heartbeats alone)."""
    heartbeats = props.get("emit.heartbeats.enabled", "true").strip().lower() == "true"
    pairs = []
    names = clusters(props)
    for source in names:
        for target in names:
            if source == target:
                continue
            prefix = f"{source}->{target}."
            enabled = props.get(prefix + "enabled", "false").strip().lower() == "true"
            beats = props.get(prefix + "emit.heartbeats.enabled")
            pair_beats = heartbeats if beats is None else beats.strip().lower() == "true"
            if enabled or pair_beats:
                pairs.append((source, target))
    return pairs


def cluster_props(props: Mapping[str, str], cluster: str) -> dict[str, str]:
    """MirrorMakerConfig.clusterProps: ``<cluster>.*`` stripped, its client keys (and the top-level ones)
    copied to ``producer.``/``consumer.``/``admin.`` where not given."""
    out = _strip(props, cluster + ".")
    for source in (dict(out), {k: v for k, v in props.items() if _client_key(k)}):
        for key, value in source.items():
            if not _client_key(key):
                continue
            for role in _ROLES:
                out.setdefault(role + key, value)
            out.setdefault(key, value)
    return out


def _side(prefix: str, cluster: Mapping[str, str]) -> dict[str, str]:
    out = {}
    for key, value in cluster.items():
        if key.startswith(_ROLES):  # clientConfigsWithPrefix: source.producer.*, target.admin.* …
            out[("source." if prefix == "source.cluster." else "target.") + key] = value
        else:  # clusterConfigsWithPrefix: source.cluster.*, target.cluster.*
            out[prefix + key] = value
    return out


def connector_configs(props: Mapping[str, str], source: str, target: str) -> dict[str, dict[str, str]]:
    """MirrorMakerConfig.connectorBaseConfig for each of the three connectors of the flow ``source->target``,
    by connector name (the simple class name, unless the file sets ``name``)."""
    known = set(MIRROR_DEF.names()) | set(_CONNECT_KEYS)
    base = {k: v for k, v in props.items() if k in known}
    base.update(_with(props, "config.providers"))
    base.update(_with(props, "replication.policy"))
    base.update(_side("source.cluster.", cluster_props(props, source)))
    base.update(_side("target.cluster.", cluster_props(props, target)))
    out: dict[str, dict[str, str]] = {}
    for cls in CONNECTOR_CLASSES:
        config = dict(base)
        config.setdefault("name", cls.rsplit(".", 1)[1])
        config.setdefault("connector.class", cls)
        config.setdefault("source.cluster.alias", source)
        config.setdefault("target.cluster.alias", target)
        config.update(_strip(props, f"{source}->{target}."))
        config.setdefault("enabled", "false")
        out[config["name"]] = config
    return out


def worker_config(props: Mapping[str, str], source: str, target: str) -> dict[str, str]:
    """MirrorMakerConfig.workerConfig: the worker of the flow, on the target's brokers."""
    out = dict(cluster_props(props, target))
    for prefix in (
        "offset.storage",
        "config.storage",
        "status.storage",
        "key.converter",
        "value.converter",
        "header.converter",
        "task",
        "worker",
        "replication.policy",
        "config.providers",
    ):
        out.update(_with(props, prefix))
    out.setdefault("client.id", f"{source}->{target}")
    out.setdefault("group.id", f"{source}-mm2")
    out.setdefault("offset.storage.topic", f"mm2-offsets.{source}.internal")
    out.setdefault("status.storage.topic", f"mm2-status.{source}.internal")
    out.setdefault("config.storage.topic", f"mm2-configs.{source}.internal")
    for key in ("key.converter", "value.converter", "header.converter"):
        out.setdefault(key, BYTE_ARRAY_CONVERTER)
    return out
