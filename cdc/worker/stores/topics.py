"""Create or check Connect's internal topics (config, offsets, status).

Each is compacted (``cleanup.policy=compact``, forced whatever the user's extra settings say); the config
topic has exactly one partition. A topic that already exists is checked, not changed: a non-compacted
internal topic loses connector configs or offsets once retention deletes its old segments (KIP-154), and
a config topic with several partitions has no order between its records, so the worker refuses both
with a :class:`~cdc.api.errors.ConfigError` that names the topic, the worker key and the fix.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from cdc.api.errors import ConfigError, ConnectError, RetriableError
from cdc.kafka.failures import describe_topic_configs

__all__ = ["Backoff", "TopicSpec", "ensure_topic"]

log = logging.getLogger(__name__)


class Backoff:
    """Sleeps between asks for what a broker will know in a moment (a topic just created in the metadata,
    its partitions' leaders): 10 ms, doubling up to ``cap``. A fixed 200 ms cost every start of a worker
    on a new cluster one to three such waits per internal topic, where the broker answers within tens of ms.
    """

    def __init__(self, first: float = 0.01, cap: float = 0.2) -> None:
        self._next = first
        self._cap = cap

    def sleep(self, remaining: float) -> None:
        time.sleep(min(self._next, max(0.0, remaining)))
        self._next = min(self._next * 2, self._cap)


@dataclass(frozen=True)
class TopicSpec:
    """What an internal topic must look like. ``-1`` partitions or replication = the broker's default."""

    name: str
    partitions: int
    replication_factor: int
    setting: str  # the worker key that names the topic, e.g. "config.storage.topic"
    purpose: str  # e.g. "connector configurations", for messages
    config: Mapping[str, str] = field(default_factory=dict)
    single_partition: bool = False


def _error_code(exc: BaseException) -> int | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        code: int = exc.args[0].code()
        return code
    return None


def ensure_topic(
    admin_config: Mapping[str, Any], spec: TopicSpec, timeout: float = 30.0, admin: AdminClient | None = None
) -> int:
    """Create ``spec.name`` if missing, check it if it exists; return its partition count. ``admin``: a
    client to use (else one is made from ``admin_config``)."""
    admin = admin if admin is not None else AdminClient(dict(admin_config))
    deadline = time.monotonic() + timeout
    created = _create(admin, spec, timeout)
    if not created:
        _check_cleanup_policy(admin, spec, max(1.0, deadline - time.monotonic()))
    partitions = _partition_count(admin, spec.name, deadline)
    if spec.single_partition and partitions > 1:
        raise ConfigError(
            f"Topic '{spec.name}' supplied via the '{spec.setting}' property is required to have a single "
            f"partition in order to guarantee consistency of {spec.purpose}, but found {partitions} "
            f"partitions. Point '{spec.setting}' at a new topic (it will be created with one partition), "
            "or recreate this one with a single partition."
        )
    return partitions


def _create(admin: AdminClient, spec: TopicSpec, timeout: float) -> bool:
    """True if we created the topic; False if it existed (or another worker created it meanwhile)."""
    config = {**dict(spec.config), "cleanup.policy": "compact"}
    new = NewTopic(
        spec.name,
        num_partitions=1 if spec.single_partition else spec.partitions,
        replication_factor=spec.replication_factor,
        config=config,
    )
    futures = admin.create_topics([new], operation_timeout=timeout, request_timeout=timeout)
    try:
        futures[spec.name].result(timeout + 5)
    except KafkaException as exc:
        code = _error_code(exc)
        if code == KafkaError.TOPIC_ALREADY_EXISTS:
            return False
        if code in (KafkaError.INVALID_REPLICATION_FACTOR, KafkaError.INVALID_PARTITIONS):
            key = spec.setting.removesuffix(".topic")
            raise ConfigError(
                f"Could not create topic '{spec.name}' ({spec.setting}): {exc.args[0].str()}. Set "
                f"'{key}.replication.factor' to at most the number of brokers (1 for a single-broker "
                f"cluster, -1 for the broker default), or create the topic yourself (compacted)."
            ) from exc
        if code in (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED):
            log.warning("Not allowed to create topic %s; assuming it exists: %s", spec.name, exc)
            return False
        raise RetriableError(f"Could not create topic '{spec.name}' ({spec.setting}): {exc}") from exc
    except Exception as exc:  # a timeout of the future itself
        raise RetriableError(f"Timed out creating topic '{spec.name}' ({spec.setting})") from exc
    log.info("Created topic %s (%s) for %s", spec.name, spec.setting, spec.purpose)
    return True


def _check_cleanup_policy(admin: AdminClient, spec: TopicSpec, timeout: float) -> None:
    try:
        configs = describe_topic_configs(admin, spec.name, timeout)
    except KafkaException as exc:
        # Connect also goes on when it may not describe the topic (ACLs): it cannot tell, so it trusts.
        log.warning("Could not check the cleanup policy of topic %s: %s", spec.name, exc)
        return
    entry = configs.get("cleanup.policy")
    policy = entry.value if entry is not None else None
    policies = {p.strip() for p in (policy or "").split(",") if p.strip()}
    if policies != {"compact"}:
        raise ConfigError(
            f"Topic '{spec.name}' supplied via the '{spec.setting}' property is required to have "
            f"'cleanup.policy=compact' to guarantee consistency and durability of {spec.purpose}, but found "
            f"the topic currently has 'cleanup.policy={policy}'. Continuing would likely result in "
            f"eventually losing {spec.purpose}. Either change the topic's policy (kafka-configs --alter "
            f"--entity-type topics --entity-name {spec.name} --add-config cleanup.policy=compact) or point "
            f"'{spec.setting}' at a compacted topic."
        )


def _partition_count(admin: AdminClient, topic: str, deadline: float) -> int:
    # Right after creation the metadata may not list the topic yet; ask until it does.
    backoff = Backoff()
    while True:
        remaining = deadline - time.monotonic()
        try:
            metadata = admin.list_topics(topic=topic, timeout=max(1.0, min(remaining, 10.0)))
            found = metadata.topics.get(topic)
            if found is not None and found.error is None and found.partitions:
                return len(found.partitions)
        except KafkaException as exc:
            if remaining <= 0:
                raise RetriableError(f"Could not read the metadata of topic '{topic}': {exc}") from exc
        if remaining <= 0:
            raise ConnectError(f"Topic '{topic}' does not exist or has no partitions")
        backoff.sleep(deadline - time.monotonic())
