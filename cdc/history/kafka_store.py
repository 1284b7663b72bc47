"""The schema history in a Kafka topic (Debezium's ``KafkaSchemaHistory``).

* Topic: created on :meth:`initialize_storage` with 1 partition, ``cleanup.policy=delete``,
  ``retention.ms=Long.MAX_VALUE``, ``retention.bytes=-1`` and the broker's default replication factor
  (``default.replication.factor``, or 1 when it can't be read).
* :meth:`start` checks an existing topic: more than one partition only warns; a policy other than
  ``delete`` or a finite ``retention.ms`` under five years fails with a message saying what to change,
  because compaction or expiry silently loses history (reference §12.1).
* Writes are synchronous: null key, JSON value, partition 0, flushed per record.
* Recovery assigns partition 0 (no group membership, no commits), reads from the beginning to the end
  offset observed at the start, and gives up after ``recovery.attempts`` consecutive empty polls.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from cdc.history.config import HistorySettings
from cdc.history.errors import SchemaHistoryError
from cdc.history.records import HistoryRecord
from cdc.history.store import SchemaHistory
from cdc.kafka.clients import to_librdkafka
from cdc.kafka.failures import describe_topic_configs

__all__ = ["LONG_MAX", "MIN_RETENTION_MS", "KafkaSchemaHistory"]

log = logging.getLogger(__name__)

LONG_MAX = 9223372036854775807
MIN_RETENTION_MS = 5 * 365 * 24 * 3600 * 1000
"""Retention below five years fails the start: the history must outlive any offset."""


class KafkaSchemaHistory(SchemaHistory):
    def __init__(self, settings: HistorySettings) -> None:
        super().__init__(settings)
        if not settings.kafka_topic:
            raise SchemaHistoryError("schema.history.internal.kafka.topic is required for the Kafka history")
        if not settings.kafka_bootstrap_servers:
            raise SchemaHistoryError(
                "schema.history.internal.kafka.bootstrap.servers is required for the Kafka history"
            )
        self.topic = settings.kafka_topic
        self._bootstrap = settings.kafka_bootstrap_servers
        self._producer: Producer | None = None
        self._admin: AdminClient | None = None

    # -- clients --------------------------------------------------------------------------------
    def _base(self, overrides: Any) -> dict[str, Any]:
        conf = to_librdkafka(dict(overrides or {}))
        conf.setdefault("bootstrap.servers", self._bootstrap)
        return conf

    def _admin_client(self) -> AdminClient:
        if self._admin is None:
            self._admin = AdminClient(self._base(self.settings.producer))
        return self._admin

    def _producer_client(self) -> Producer:
        if self._producer is None:
            conf = self._base(self.settings.producer)
            conf.setdefault("client.id", f"{self.topic}-schemahistory")
            conf.setdefault("acks", "1")
            conf.setdefault("linger.ms", 0)
            self._producer = Producer(conf)
        return self._producer

    @property
    def _timeout_s(self) -> float:
        return self.settings.query_timeout_ms / 1000.0

    # -- storage ----------------------------------------------------------------------------------
    def _partitions(self) -> int | None:
        md = self._admin_client().list_topics(topic=self.topic, timeout=self._timeout_s)
        t = md.topics.get(self.topic)
        if t is None or (t.error is not None and t.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
            return None
        if t.error is not None:
            raise SchemaHistoryError(f"Cannot describe the schema history topic {self.topic}: {t.error}")
        return len(t.partitions)

    def storage_exists(self) -> bool:
        try:
            md = self._admin_client().list_topics(timeout=self._timeout_s)
        except KafkaException as e:
            raise SchemaHistoryError(f"Cannot list topics to find {self.topic}: {e}") from e
        return self.topic in md.topics

    def exists(self) -> bool:
        if not self.storage_exists():
            return False
        low, high = self._watermarks()
        return high > low

    def _default_replication_factor(self) -> int:
        admin = self._admin_client()
        try:
            brokers = admin.list_topics(timeout=self._timeout_s).brokers
            broker_id = str(next(iter(brokers)))
            res = ConfigResource(ConfigResource.Type.BROKER, broker_id)
            configs = admin.describe_configs([res], request_timeout=self._timeout_s)[res].result(
                timeout=self._timeout_s
            )
            entry = configs.get("default.replication.factor")
            if entry is not None and entry.value is not None:
                return int(entry.value)
        except Exception as e:
            log.warning("Cannot read the broker's default.replication.factor (%s); using 1", e)
        return 1

    def initialize_storage(self) -> None:
        if self.storage_exists():
            log.info("Schema history topic %s exists", self.topic)
            return
        rf = self._default_replication_factor()
        topic = NewTopic(
            self.topic,
            num_partitions=1,
            replication_factor=rf,
            config={
                "cleanup.policy": "delete",
                "retention.ms": str(LONG_MAX),
                "retention.bytes": "-1",
            },
        )
        futures = self._admin_client().create_topics(
            [topic], request_timeout=self.settings.create_timeout_ms / 1000.0
        )
        try:
            futures[self.topic].result(timeout=self.settings.create_timeout_ms / 1000.0)
            log.info("Created schema history topic %s (1 partition, RF %d)", self.topic, rf)
        except TimeoutError as e:  # the future's own wait (concurrent.futures.TimeoutError is this one)
            raise SchemaHistoryError(
                f"Cannot create the schema history topic {self.topic}: not confirmed within "
                f"schema.history.internal.kafka.create.timeout.ms ({self.settings.create_timeout_ms} ms)"
            ) from e
        except KafkaException as e:
            if e.args and getattr(e.args[0], "code", lambda: None)() == KafkaError.TOPIC_ALREADY_EXISTS:
                return
            raise SchemaHistoryError(f"Cannot create the schema history topic {self.topic}: {e}") from e

    def start(self) -> None:
        """Check the topic's settings (if it exists)."""
        partitions = self._partitions()
        if partitions is None:
            return
        if partitions > 1:
            log.warning(
                "The schema history topic %s has %d partitions; it should have exactly 1. Only "
                "partition 0 is read and written.",
                self.topic,
                partitions,
            )
        try:
            configs = describe_topic_configs(self._admin_client(), self.topic, self._timeout_s)
        except KafkaException as e:
            raise SchemaHistoryError(f"Cannot describe the schema history topic {self.topic}: {e}") from e
        values = {k: (v.value if v is not None else None) for k, v in configs.items()}
        check_topic_config(self.topic, values)

    # -- writing --------------------------------------------------------------------------------
    def _store(self, record: HistoryRecord) -> None:
        producer = self._producer_client()
        errors: list[str] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(str(err))

        try:
            producer.produce(
                self.topic,
                value=record.to_text().encode("utf-8"),
                key=None,
                partition=0,
                on_delivery=delivered,
            )
        except (KafkaException, BufferError) as e:
            raise SchemaHistoryError(f"Cannot write to the schema history topic {self.topic}: {e}") from e
        remaining = producer.flush(max(self._timeout_s, 30.0))
        if remaining:
            raise SchemaHistoryError(f"Timed out writing to the schema history topic {self.topic}")
        if errors:
            raise SchemaHistoryError(f"Cannot write to the schema history topic {self.topic}: {errors[0]}")

    # -- reading --------------------------------------------------------------------------------
    def _consumer(self) -> Consumer:
        conf = self._base(self.settings.consumer)
        conf.update(
            {
                # assign() needs no group, but librdkafka wants an id; nothing is ever committed
                "group.id": f"{self.topic}-schemahistory-{uuid.uuid4()}",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "enable.partition.eof": False,
            }
        )
        conf.setdefault("client.id", f"{self.topic}-schemahistory-recovery")
        return Consumer(conf)

    def _watermarks(self) -> tuple[int, int]:
        consumer = self._consumer()
        try:
            low, high = consumer.get_watermark_offsets(
                TopicPartition(self.topic, 0), timeout=self._timeout_s, cached=False
            )
            return int(low), int(high)
        except KafkaException as e:
            raise SchemaHistoryError(f"Cannot read the end offset of {self.topic}: {e}") from e
        finally:
            consumer.close()

    def _records(self) -> Iterator[HistoryRecord]:
        consumer = self._consumer()
        try:
            low, end = consumer.get_watermark_offsets(
                TopicPartition(self.topic, 0), timeout=self._timeout_s, cached=False
            )
            if end <= low:
                return
            consumer.assign([TopicPartition(self.topic, 0, low)])
            poll_s = self.settings.recovery_poll_interval_ms / 1000.0
            empty = 0
            last = low - 1
            while last < end - 1:
                msg = consumer.poll(poll_s)
                if msg is None:
                    empty += 1
                    if empty >= self.settings.recovery_attempts:
                        raise SchemaHistoryError(
                            "The database schema history couldn't be recovered. Consider to increase the "
                            "value for schema.history.internal.kafka.recovery.poll.interval.ms"
                        )
                    continue
                if msg.error() is not None:
                    raise SchemaHistoryError(f"Error reading history topic {self.topic}: {msg.error()}")
                empty = 0
                last = msg.offset() or 0
                value = msg.value()
                if value is None:
                    continue
                yield HistoryRecord.from_text(value)
        finally:
            consumer.close()

    def stop(self) -> None:
        if self._producer is not None:
            self._producer.flush(30.0)
            self._producer = None
        self._admin = None


def check_topic_config(topic: str, config: dict[str, str | None]) -> None:
    """Fail on settings that lose history: a non-delete policy or a finite retention under 5 years."""
    policy = (config.get("cleanup.policy") or "delete").strip().lower()
    if policy != "delete":
        raise SchemaHistoryError(
            f"The schema history topic {topic} has cleanup.policy={policy}; it must be 'delete' "
            f"(compaction removes history records, all of which carry a null key). "
            f"Set cleanup.policy=delete on the topic."
        )
    retention = config.get("retention.ms")
    if retention is not None and retention.strip() not in ("", "-1"):
        ms = int(retention)
        if 0 <= ms < MIN_RETENTION_MS:
            raise SchemaHistoryError(
                f"The schema history topic {topic} has retention.ms={ms}, which expires history records; set "
                f"retention.ms=-1 (or at least {MIN_RETENTION_MS}, five years) on the topic."
            )
    retention_bytes = config.get("retention.bytes")
    if retention_bytes is not None and retention_bytes.strip() not in ("", "-1"):
        log.warning(
            "The schema history topic %s has retention.bytes=%s; it should be -1 so no history "
            "record is ever deleted",
            topic,
            retention_bytes,
        )
