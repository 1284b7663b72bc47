"""The worker's internal topics are the worker's: no connector config reads or writes them.

A distributed worker keeps every connector's config (passwords included, unless a config provider holds
them), every source offset and every status in three topics (``config.storage.topic``,
``offset.storage.topic``, ``status.storage.topic``). A REST user who could point a connector at them could
read the other connectors' secrets (a sink whose ``topics`` or ``topics.regex`` takes in the config topic,
then writes it to a database of theirs), or forge configs, offsets and states (a source whose records, whose
dead letter queue, schema history or own offsets topic land in one). Kafka Connect does not stop either;
cdc refuses both:

* at validate (so create and update answer 400 naming the key): a sink's ``topics`` naming one, a
  ``topics.regex`` matching one, and the topic-valued keys of :data:`TOPIC_KEYS` naming one (a connector's own
  ``offsets.storage.topic`` may be the worker's offsets topic, as in Connect, not the others);
* at run time, where only the records say the topic (a transform can route anywhere): a source task fails on
  the first record bound for one, before it is produced (the check runs once per topic, never per record);
  a sink task fails when its subscription is assigned one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["TOPIC_KEYS", "InternalTopics", "refusal"]

TOPIC_KEYS = (
    "errors.deadletterqueue.topic.name",
    "schema.history.internal.kafka.topic",
    "database.history.kafka.topic",
    "notification.sink.topic.name",
    "offsets.storage.topic",
)
"""Keys whose value is a topic a connector's clients write (the dead letter queue, a schema history, the
notification channel, a connector's own offsets topic)."""


def refusal(topic: str) -> str:
    return (
        f"The topic {topic} is one of this worker's internal topics (its connector configs, offsets and "
        "statuses): no connector may read or write it"
    )


@dataclass(frozen=True)
class InternalTopics:
    """A distributed worker's three topics (all empty for a standalone worker, which has none)."""

    configs: str = ""
    offsets: str = ""
    status: str = ""

    @classmethod
    def of(cls, worker: Mapping[str, Any] | None) -> InternalTopics:
        """From a worker's parsed config."""
        if worker is None:
            return cls()
        return cls(
            str(worker.get("config.storage.topic") or ""),
            str(worker.get("offset.storage.topic") or ""),
            str(worker.get("status.storage.topic") or ""),
        )

    @property
    def names(self) -> frozenset[str]:
        return frozenset(t for t in (self.configs, self.offsets, self.status) if t)

    def errors(self, props: Mapping[str, str]) -> dict[str, str]:
        """Validate errors by key for a connector config that names one of them."""
        names = self.names
        if not names:
            return {}
        errors: dict[str, str] = {}
        topics = [t.strip() for t in str(props.get("topics") or "").split(",") if t.strip()]
        named = next((t for t in topics if t in names), None)
        if named is not None:
            errors["topics"] = refusal(named)
        pattern = str(props.get("topics.regex") or "").strip()
        if pattern:
            try:
                compiled: re.Pattern[str] | None = re.compile(pattern)
            except re.error:
                compiled = None  # refused on its own key
            matched = sorted(t for t in names if compiled is not None and compiled.fullmatch(t))
            if matched:
                errors["topics.regex"] = (
                    f"The pattern matches this worker's internal topic {matched[0]} (its connector configs, "
                    "offsets and statuses): no connector may read it; make the pattern exclude it"
                )
        for key in TOPIC_KEYS:
            topic = str(props.get(key) or "").strip()
            # a connector's own offsets topic may be the worker's (as in Connect), not the other two
            shared = self.offsets if key == "offsets.storage.topic" else ""
            if topic and topic in names and topic != shared:
                errors[key] = refusal(topic)
        return errors
