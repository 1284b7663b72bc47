"""Checks of MM2 connector configs beyond each key's own: Kafka's cross-key rules, the clusters' answers.

:func:`validate_mirror` is what each connector's ``validate`` returns: the per-key validation of the keys
Kafka's connector of that kind shows, then two aliases that are the same, offset-syncs keys with
``emit.offset-syncs.enabled=false`` (Kafka's message), a missing bootstrap, a cluster that does not answer,
and a replication factor above the broker count of the cluster the topic goes to, each on its key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.config import ConfigValue
from cdc.mirror.config import (
    CHECKPOINT,
    HEARTBEAT,
    OFFSET_SYNCS_PREFIXES,
    SOURCE,
    MirrorSettings,
    connector_def,
)

__all__ = ["validate_mirror"]


def _rf_message(rf: int, brokers: int) -> str:
    return (
        f"Unable to replicate the partition {rf} time(s): The target replication factor of {rf} cannot be "
        f"reached because only {brokers} broker(s) are registered."
    )


def _broker_count(config: dict[str, Any], timeout: float) -> int:
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient(config).list_topics(timeout=timeout)
    return len(metadata.brokers)


def validate_mirror(
    props: Mapping[str, str], kind: str, check_clusters: bool = True, timeout_s: float = 10.0
) -> list[ConfigValue]:
    """Per-key validation of the keys Kafka's ``kind`` connector shows, then the cross-key checks and
    (``check_clusters``) the clusters' answers, each error on its key."""
    definition = connector_def(kind)
    results = definition.validate(props)
    by_name = {r.name: r for r in results}
    if any(r.errors for r in results):
        return results
    settings = MirrorSettings.parse(props)
    if settings.source_alias == settings.target_alias:
        by_name["target.cluster.alias"].add_error(
            f"source.cluster.alias and target.cluster.alias are both '{settings.source_alias}': a cluster "
            "cannot be replicated to itself under one alias"
        )
    emit_off = props.get("emit.offset-syncs.enabled", "").strip().lower() == "false"
    if kind == SOURCE and emit_off and any(k.startswith(OFFSET_SYNCS_PREFIXES) for k in props):
        by_name["emit.offset-syncs.enabled"].add_error(
            "MirrorSourceConnector can't setup offset-syncs feature while "
            "emit.offset-syncs.enabled set to false"
        )
    needed = ("target",) if kind == HEARTBEAT else ("source", "target")
    missing = False
    for cluster in needed:
        key = f"{cluster}.cluster.bootstrap.servers"
        if not props.get(key, "").strip():
            by_name[key].add_error(f'Missing required configuration "{key}" which has no default value.')
            missing = True
    skip = not settings.enabled and kind != HEARTBEAT  # heartbeats run for disabled flows too
    if any(r.errors for r in results) or missing or not check_clusters or skip:
        return results
    brokers: dict[str, int] = {}
    for cluster in needed:
        key = f"{cluster}.cluster.bootstrap.servers"
        alias = settings.source_alias if cluster == "source" else settings.target_alias
        try:
            brokers[cluster] = _broker_count(settings.client(cluster, "admin"), timeout_s)
        except Exception as exc:  # KafkaException, or a client setting librdkafka refuses
            by_name[key].add_error(
                f"The {cluster} cluster '{alias}' at {props.get(key)} could not be reached within "
                f"{timeout_s:.0f} s: {exc}"
            )
    checks: list[tuple[str, int, str]] = []
    if kind == SOURCE:
        checks.append(("replication.factor", settings.replication_factor, "target"))
        if settings.emit_offset_syncs:
            checks.append(
                (
                    "offset-syncs.topic.replication.factor",
                    settings.offset_syncs_rf,
                    settings.offset_syncs_location,
                )
            )
    elif kind == CHECKPOINT:
        checks.append(("checkpoints.topic.replication.factor", settings.checkpoints_rf, "target"))
    else:
        checks.append(("heartbeats.topic.replication.factor", settings.heartbeats_rf, "target"))
    for key, rf, cluster in checks:
        count = brokers.get(cluster)
        if count is not None and rf > count:
            by_name[key].add_error(_rf_message(rf, count))
    return results
