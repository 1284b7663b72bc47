"""Settings shared by the Kafka stores, and the log each of them builds from them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc.worker.stores.kafka_log import KafkaBasedLog, LogRecord
from cdc.worker.stores.topics import TopicSpec

__all__ = ["MAX_INT", "READ_WRITE_TIMEOUT", "KafkaStoreSettings", "new_log", "utf8_key"]

log = logging.getLogger(__name__)

MAX_INT = 2**31 - 1
READ_WRITE_TIMEOUT = 30.0  # Connect's READ_WRITE_TOTAL_TIMEOUT_MS


@dataclass(frozen=True)
class KafkaStoreSettings:
    """Where and how one store keeps its topic.

    ``partitions`` None means the store's default (offsets 25, status 5; the config topic always has 1);
    ``partitions``/``replication_factor`` -1 mean the broker's default. ``topic_config`` becomes the
    topic's configs on creation (``cleanup.policy`` is forced to ``compact``). ``client_config`` is passed
    to every librdkafka client as is (security settings); client ids are ``<group_id>[-<client_id>]-<role>``.
    """

    topic: str
    bootstrap_servers: str = "localhost:9092"
    group_id: str = "connect"
    client_id: str | None = None
    partitions: int | None = None
    replication_factor: int = 3
    topic_config: Mapping[str, str] = field(default_factory=dict)
    client_config: Mapping[str, Any] = field(default_factory=dict)
    isolation_level: str = "read_uncommitted"
    timeout: float = READ_WRITE_TIMEOUT

    def client_id_for(self, role: str) -> str:
        base = f"{self.group_id}-" if self.group_id else ""
        if self.client_id and self.client_id.strip():
            base += f"{self.client_id}-"
        return base + role

    def librdkafka(self) -> dict[str, Any]:
        return {"bootstrap.servers": self.bootstrap_servers, **self.client_config}


def new_log(
    settings: KafkaStoreSettings,
    spec: TopicSpec,
    role: str,
    on_record: Callable[[LogRecord], None],
    producer_config: Mapping[str, Any],
) -> KafkaBasedLog:
    return KafkaBasedLog(
        spec,
        on_record,
        settings.librdkafka(),
        settings.client_id_for(role),
        producer_config=producer_config,
        consumer_config={"isolation.level": settings.isolation_level},
        start_timeout=max(settings.timeout, 60.0),
    )


def utf8_key(record: LogRecord, topic: str) -> str | None:
    if record.key is None:
        log.warning("Ignoring a keyless record at %s-%d offset %d", topic, record.partition, record.offset)
        return None
    try:
        return record.key.decode("utf-8")
    except UnicodeDecodeError:
        log.warning(
            "Ignoring a record with a non-UTF-8 key at %s-%d offset %d",
            topic,
            record.partition,
            record.offset,
        )
        return None
