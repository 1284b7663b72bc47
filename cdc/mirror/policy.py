"""MM2's replication policies and filters: how remote topics are named and what is replicated.

``DefaultReplicationPolicy`` names a remote topic ``<source alias><separator><topic>`` and reads the
source back from the name; ``IdentityReplicationPolicy`` keeps the name (heartbeats excepted, which stay
renamed so that heartbeats from several sources do not mix). Both follow Kafka's connect-mirror-client,
including Java's ``String.split`` (trailing empty parts dropped) in ``topicSource``.

Provenance: with the default policy a topic already carrying the target's alias is a cycle and is not
replicated (``MirrorSourceConnector.isCycle``). The identity policy keeps names, so a name cannot tell;
Kafka's MM2 loops in active/active there. cdc adds a provenance header (:data:`PROVENANCE_HEADER`, the
source alias, one per hop) to each record it copies under the identity policy and skips records that
already went through the target cluster (see ``docs/mirror-maker.md``).

Filters follow ``DefaultTopicFilter``, ``DefaultGroupFilter`` and ``DefaultConfigPropertyFilter``: a list of
names/regexes joined with ``|`` and matched against the whole name; an empty include list matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_POLICY",
    "HEARTBEATS_TOPIC",
    "IDENTITY_POLICY",
    "PROVENANCE_HEADER",
    "ConfigPropertyFilter",
    "NameFilter",
    "ReplicationPolicy",
    "compile_list",
    "policy_for",
]

DEFAULT_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
POLICY_NAMES = {
    DEFAULT_POLICY: DEFAULT_POLICY,
    "DefaultReplicationPolicy": DEFAULT_POLICY,
    IDENTITY_POLICY: IDENTITY_POLICY,
    "IdentityReplicationPolicy": IDENTITY_POLICY,
}
HEARTBEATS_TOPIC = "heartbeats"
PROVENANCE_HEADER = "__cdc.mm2.provenance"
"""Header naming each cluster alias a record was copied from (identity policy only)."""


def _java_split(text: str, separator: str) -> list[str]:
    """``Pattern.compile(Pattern.quote(sep)).split(text)``: trailing empty strings removed."""
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""]:
        return [""]
    return parts


@dataclass(frozen=True)
class ReplicationPolicy:
    """Kafka's DefaultReplicationPolicy, or IdentityReplicationPolicy when ``identity``."""

    separator: str = "."
    internal_separator_enabled: bool = True
    identity: bool = False
    source_alias: str | None = None
    """IdentityReplicationPolicy's ``source.cluster.alias``: what ``topic_source`` answers for plain names."""

    # -- DefaultReplicationPolicy -------------------------------------------------------------------
    def _default_remote(self, source: str, topic: str) -> str:
        return source + self.separator + topic

    def _default_source(self, topic: str) -> str | None:
        parts = _java_split(topic, self.separator)
        return parts[0] if len(parts) >= 2 else None

    def _default_upstream(self, topic: str) -> str | None:
        source = self._default_source(topic)
        return None if source is None else topic[len(source) + len(self.separator) :]

    def _looks_like_heartbeat(self, topic: str | None) -> bool:
        return topic is not None and topic.endswith(HEARTBEATS_TOPIC)

    # -- the ReplicationPolicy interface ----------------------------------------------------------
    def format_remote_topic(self, source: str, topic: str) -> str:
        if self.identity and not self._looks_like_heartbeat(topic):
            return topic
        return self._default_remote(source, topic)

    def topic_source(self, topic: str) -> str | None:
        if self.identity and not self._looks_like_heartbeat(topic):
            return self.source_alias
        return self._default_source(topic)

    def upstream_topic(self, topic: str) -> str | None:
        if self.identity and not self._looks_like_heartbeat(topic):
            return topic
        return self._default_upstream(topic)

    def original_topic(self, topic: str) -> str:
        upstream = self.upstream_topic(topic)
        if upstream is None or upstream == topic:
            return topic
        return self.original_topic(upstream)

    @property
    def _internal_separator(self) -> str:
        return self.separator if self.internal_separator_enabled else "."

    def offset_syncs_topic(self, alias: str) -> str:
        return f"mm2-offset-syncs{self._internal_separator}{alias}{self._internal_separator}internal"

    def checkpoints_topic(self, alias: str) -> str:
        sep = self._internal_separator
        return f"{alias}{sep}checkpoints{sep}internal"

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self.original_topic(topic) == HEARTBEATS_TOPIC

    def is_checkpoints_topic(self, topic: str) -> bool:
        sep = self._internal_separator
        return topic.endswith(f"{sep}checkpoints{sep}internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return topic.endswith(f"{self._internal_separator}internal")

    def is_internal_topic(self, topic: str) -> bool:
        kafka_internal = topic.startswith("__") or topic.startswith(".")
        connect_internal = topic.endswith("-internal") or topic.endswith(".internal")
        return self.is_mm2_internal_topic(topic) or kafka_internal or connect_internal

    def is_cycle(self, topic: str, target: str) -> bool:
        """MirrorSourceConnector.isCycle: ``topic`` came (at any hop) from ``target``."""
        source = self.topic_source(topic)
        if source is None:
            return False
        if source == target:
            return True
        upstream = self.upstream_topic(topic)
        if upstream is None or upstream == topic:
            return False
        return self.is_cycle(upstream, target)


def policy_for(
    class_name: str, separator: str, internal_separator: bool, source_alias: str
) -> ReplicationPolicy:
    identity = POLICY_NAMES.get(class_name.strip()) == IDENTITY_POLICY
    return ReplicationPolicy(separator, internal_separator, identity, source_alias if identity else None)


def compile_list(items: Sequence[str]) -> re.Pattern[str] | None:
    """MirrorUtils.compilePatternList: ``None`` (matches nothing) for an empty list."""
    items = [i for i in items if i]
    if not items:
        return None
    return re.compile("|".join(items))


@dataclass(frozen=True)
class NameFilter:
    """DefaultTopicFilter / DefaultGroupFilter: included and not excluded, whole-name matches."""

    include: re.Pattern[str] | None
    exclude: re.Pattern[str] | None

    @classmethod
    def of(cls, include: Sequence[str], exclude: Sequence[str]) -> NameFilter:
        return cls(compile_list(include), compile_list(exclude))

    def __call__(self, name: str) -> bool:
        if self.include is None or not self.include.fullmatch(name):
            return False
        return self.exclude is None or not self.exclude.fullmatch(name)


@dataclass(frozen=True)
class ConfigPropertyFilter:
    """DefaultConfigPropertyFilter: which topic config properties are copied to remote topics."""

    exclude: re.Pattern[str] | None
    use_defaults_from_source: bool = False

    def replicate(self, name: str) -> bool:
        return self.exclude is None or not self.exclude.fullmatch(name)

    def replicate_source_default(self, name: str) -> bool:
        return self.use_defaults_from_source
