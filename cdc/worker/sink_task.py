"""The sink task loop: consume (group ``connect-<name>``) → convert → transform → put → commit.

Offsets are committed to Kafka only after the task's ``pre_commit`` (which flushes by default)
returns them, every ``offset.flush.interval.ms`` and when partitions are revoked or the task stops.
Records the error handler skips go to the dead-letter queue when one is configured. The consumer's
``error_cb`` fails the task when the brokers refuse its credentials or it hits a fatal error
(:func:`cdc.kafka.failures.client_failure`); a broker away is only logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition

from cdc.api.connector import ErrantRecordReporter, SinkTask, SinkTaskContext
from cdc.api.errors import ConnectError
from cdc.api.plugins import Converter, HeaderConverter
from cdc.api.records import Headers, SinkRecord
from cdc.kafka.failures import ClientErrors, client_failure, client_failure_message, create_topic_if_missing
from cdc.worker.internal_topics import refusal as internal_refusal
from cdc.worker.metrics import SinkTaskMetrics
from cdc.worker.source_task import Chain
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.task import TaskStatusListener, WorkerTask
from cdc.worker.tolerance import ErrorHandler, Stage

__all__ = ["DeadLetterQueueReporter", "ReserializedRecord", "SinkTaskSettings", "WorkerSinkTask"]

log = logging.getLogger(__name__)


def _header_items(msg: Message | ReserializedRecord) -> list[tuple[str, str | bytes | None]]:
    raw = msg.headers()
    if raw is None:
        return []
    return list(raw.items()) if isinstance(raw, dict) else list(raw)


_TS_TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}


@dataclass
class SinkTaskSettings:
    consumer: dict[str, Any]
    topics: list[str]
    topics_regex: str = ""
    flush_interval_ms: int = 60000
    batch_size: int = 500
    internal_topics: frozenset[str] = frozenset()
    """The worker's internal topics: a subscription assigned one fails the task (:mod:`.internal_topics`)."""


def create_dlq_topic(admin_settings: dict[str, Any], topic: str, replication_factor: int) -> None:
    """Create the dead letter queue ``topic`` unless it exists (Connect's ``DeadLetterQueueReporter``)."""
    try:
        created = create_topic_if_missing(
            admin_settings, topic, 1, replication_factor, owner=f"dead letter queue {topic}"
        )
    except ConnectError:
        raise  # refused credentials, named
    except Exception as exc:
        raise ConnectError(f"Could not initialize dead letter queue with topic={topic}: {exc}") from exc
    if created:
        log.info("Created dead letter queue topic %s (replication factor %s)", topic, replication_factor)


class DeadLetterQueueReporter:
    """Writes the original bytes of a failed record to the DLQ topic, with error context headers.

    The topic is created first if missing, as Connect does (one partition,
    ``errors.deadletterqueue.topic.replication.factor``; a failure fails the task with Connect's "Could
    not initialize dead letter queue"). A record the DLQ does not acknowledge (within the producer's
    ``delivery.timeout.ms``, else 30 s), or refused credentials (the producer's ``error_cb``), fail the
    task: the record is neither in the DLQ nor committed, so the restarted task meets it again. (Kafka
    Connect logs "Could not produce message to dead letter queue" and commits past it; a skipped record
    in neither place is a loss.)"""

    def __init__(
        self,
        producer_settings: dict[str, Any],
        topic: str,
        context_headers: bool,
        connector: str,
        task: int,
        admin_settings: dict[str, Any] | None = None,
        replication_factor: int = 3,
    ) -> None:
        if admin_settings is not None:
            create_dlq_topic(admin_settings, topic, replication_factor)
        self.errors = ClientErrors(f"{connector}-{task} (dead letter queue)", "producer")
        self.producer = Producer({**producer_settings, "error_cb": self.errors})
        # the producer's own delivery timeout bounds the wait (its callback then reports _MSG_TIMED_OUT)
        timeout_ms = producer_settings.get("delivery.timeout.ms", producer_settings.get("message.timeout.ms"))
        self.timeout = int(timeout_ms) / 1000 + 5 if timeout_ms is not None else 30.0
        self.topic = topic
        self.context_headers = context_headers
        self.connector = connector
        self.task = task

    def report(self, stage: str, origin: str, error: BaseException, record: Any) -> None:
        msg = record if isinstance(record, Message | ReserializedRecord) else getattr(record, "_raw", None)
        if not isinstance(msg, Message | ReserializedRecord):
            return
        headers: list[tuple[str, str | bytes | None]] = list(_header_items(msg))
        if self.context_headers:
            prefix = "__connect.errors."
            headers += [
                (prefix + "topic", (msg.topic() or "").encode()),
                (prefix + "partition", str(msg.partition()).encode()),
                (prefix + "offset", str(msg.offset()).encode()),
                (prefix + "connector.name", self.connector.encode()),
                (prefix + "task.id", str(self.task).encode()),
                (prefix + "stage", stage.encode()),
                (prefix + "class.name", origin.encode()),
                (prefix + "exception.class.name", type(error).__name__.encode()),
                (prefix + "exception.message", str(error).encode()),
            ]
        failed: list[Any] = []

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                failed.append(err)

        self.producer.produce(
            self.topic, key=msg.key(), value=msg.value(), headers=headers, on_delivery=delivered
        )
        left = self.producer.flush(self.timeout)
        self.errors.check()
        if left or failed:
            reason = failed[0].str() if failed else f"not acknowledged within {self.timeout:g} s"
            raise ConnectError(
                f"Could not produce message to dead letter queue. topic={self.topic}: {reason}"
            )


class ReserializedRecord:
    """A record a sink task reported (KIP-610) as the dead letter queue writes it: the key, value and
    headers converted back to bytes with the task's converters (what Connect's
    ``WorkerErrantRecordReporter`` does for a record it no longer holds the consumed bytes of), at the
    topic, partition and offset the record was consumed from. The same methods as a consumed
    :class:`~confluent_kafka.Message`, so :class:`DeadLetterQueueReporter` writes either."""

    def __init__(self, record: SinkRecord, owner: WorkerSinkTask) -> None:
        self._topic = record.original_topic or record.topic
        self._partition = (
            record.original_kafka_partition
            if record.original_kafka_partition is not None
            else record.kafka_partition or 0
        )
        self._offset = (
            record.original_kafka_offset if record.original_kafka_offset is not None else record.kafka_offset
        )
        self._key = owner.key_converter.from_connect_data(record.topic, record.key_schema, record.key)
        self._value = owner.value_converter.from_connect_data(record.topic, record.value_schema, record.value)
        self._headers: list[tuple[str, str | bytes | None]] = [
            (h.key, owner.header_converter.from_connect_header(record.topic, h.key, h.schema, h.value))
            for h in record.headers
        ]

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes | None:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> list[tuple[str, str | bytes | None]]:
        return self._headers


class _ErrantReporter(ErrantRecordReporter):
    """``errors.tolerance`` applied to a record the task could not write (stage ``TASK_PUT``)."""

    def __init__(self, owner: WorkerSinkTask) -> None:
        self.owner = owner

    def report(self, record: SinkRecord, error: BaseException) -> None:
        def failed() -> None:
            raise error

        owner = self.owner
        owner.errors.execute(
            Stage.TASK_PUT, type(owner.task).__name__, failed, ReserializedRecord(record, owner)
        )


class _Context(SinkTaskContext):
    def __init__(self, owner: WorkerSinkTask, config: dict[str, str]) -> None:
        self.owner = owner
        self._config = config

    def configs(self) -> dict[str, str]:
        return self._config

    def offset(self, offsets: Any) -> None:
        self.owner.rewind.update(offsets)

    def request_commit(self) -> None:
        self.owner.commit_requested = True

    def assignment(self) -> set[tuple[str, int]]:
        return set(self.owner.assigned)

    def pause(self, *partitions: tuple[str, int]) -> None:
        if self.owner.consumer is not None:
            self.owner.consumer.pause([TopicPartition(t, p) for t, p in partitions])

    def resume(self, *partitions: tuple[str, int]) -> None:
        if self.owner.consumer is not None:
            self.owner.consumer.resume([TopicPartition(t, p) for t, p in partitions])

    def errant_record_reporter(self) -> ErrantRecordReporter:
        return _ErrantReporter(self.owner)


class WorkerSinkTask(WorkerTask):
    def __init__(
        self,
        task_id: TaskId,
        task: SinkTask,
        task_config: dict[str, str],
        listener: TaskStatusListener,
        target_state: TargetState,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        chain: Chain,
        errors: ErrorHandler,
        settings: SinkTaskSettings,
    ) -> None:
        super().__init__(task_id, listener, target_state)
        self.task = task
        self.task_config = task_config
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.chain = chain
        self.errors = errors
        errors.stopping = self.stopping
        self.settings = settings
        self.consumer: Consumer | None = None
        self.assigned: set[tuple[str, int]] = set()
        self.current: dict[tuple[str, int], int] = {}
        self.rewind: dict[tuple[str, int], int] = {}
        self.commit_requested = False
        self._started = False
        self._client_errors = ClientErrors(self, "consumer")  # error_cb: refused credentials fail the task
        self.metrics: SinkTaskMetrics = SinkTaskMetrics()

    def initialize(self) -> None:
        self.consumer = Consumer({**self.settings.consumer, "error_cb": self._client_errors})
        self.task.initialize(_Context(self, self.task_config))
        self.task.start(self.task_config)
        self._started = True
        topics = list(self.settings.topics)
        for topic in topics:
            if topic in self.settings.internal_topics:
                raise ConnectError(f"topics: {internal_refusal(topic)}")
        if self.settings.topics_regex:
            pattern = self.settings.topics_regex
            topics.append(pattern if pattern.startswith("^") else "^" + pattern)
        self.consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        internal = sorted({p.topic for p in partitions} & self.settings.internal_topics)
        if internal:  # a pattern stored before the check, or a topic created since: nothing of it is read
            raise ConnectError(f"This task was assigned {internal[0]}: {internal_refusal(internal[0])}")
        new = [(p.topic, p.partition) for p in partitions]
        self.assigned.update(new)
        self.task.open(new)

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        gone = [(p.topic, p.partition) for p in partitions]
        if not self.failed:
            self._commit(only=set(gone))
        self.task.close(gone)
        for tp in gone:
            self.assigned.discard(tp)
            self.current.pop(tp, None)

    def execute(self) -> None:
        consumer = self.consumer
        assert consumer is not None
        next_commit = time.monotonic() + self.settings.flush_interval_ms / 1000
        while not self.stopping.is_set():
            if not self.await_unpause():
                break
            self._apply_rewind()
            messages = consumer.consume(self.settings.batch_size, 1.0)
            self._client_errors.check()  # error_cb is served by consume
            records: list[SinkRecord] = []
            read = 0  # records read (events such as a partition's end aside)
            for msg in messages:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    if client_failure(err):
                        raise ConnectError(client_failure_message("consumer", err))
                    log.warning("%s Consumer error: %s", self, err)
                    continue
                read += 1
                record = self._convert(msg)
                tp = (msg.topic() or "", msg.partition() or 0)
                self.current[tp] = (msg.offset() or 0) + 1
                if record is not None:
                    records.append(record)
            if records or messages:
                started = time.monotonic()
                self.task.put(records)
                self.metrics.put(read, len(records), started)
                self._record_lag(consumer, {(m.topic() or "", m.partition() or 0) for m in messages})
            else:
                # an idle poll: Connect calls put with no records then too, which tells a task that
                # batches across puts (the JDBC sinks) that it has caught up and may write now
                self.task.put([])
            if self.commit_requested or time.monotonic() >= next_commit:
                self.commit_requested = False
                self._commit()
                next_commit = time.monotonic() + self.settings.flush_interval_ms / 1000

    def _record_lag(self, consumer: Consumer, partitions: set[tuple[str, int]]) -> None:
        """``sink-record-lag-max``: records between the position and the high watermark librdkafka last
        fetched (cached, no request), per partition this batch read from."""
        self.metrics.partition_count = len(self.assigned)
        for topic, partition in partitions:
            position = self.current.get((topic, partition))
            if position is None:
                continue
            _low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
            if high >= 0:
                self.metrics.record_lag.record(max(0, high - position))

    def _apply_rewind(self) -> None:
        if self.rewind and self.consumer is not None:
            for (topic, partition), offset in self.rewind.items():
                self.consumer.seek(TopicPartition(topic, partition, offset))
                self.current[(topic, partition)] = offset
            self.rewind.clear()

    def _convert(self, msg: Message) -> SinkRecord | None:
        topic = msg.topic() or ""
        headers = Headers()
        for hkey, hval in _header_items(msg):
            raw = hval.encode() if isinstance(hval, str) else hval
            sv = self.header_converter.to_connect_header(topic, hkey, raw)
            headers.add(hkey, sv.value, sv.schema)
        ok, key = self.errors.execute(
            Stage.KEY_CONVERTER,
            type(self.key_converter).__name__,
            lambda: self.key_converter.to_connect_data(topic, msg.key(), headers),
            msg,
        )
        if not ok or key is None:
            return None
        ok, value = self.errors.execute(
            Stage.VALUE_CONVERTER,
            type(self.value_converter).__name__,
            lambda: self.value_converter.to_connect_data(topic, msg.value(), headers),
            msg,
        )
        if not ok or value is None:
            return None
        ts_type, ts = msg.timestamp()
        record = SinkRecord(
            topic=topic,
            kafka_partition=msg.partition(),
            key_schema=key.schema,
            key=key.value,
            value_schema=value.schema,
            value=value.value,
            timestamp=ts if ts_type else None,
            headers=headers,
            kafka_offset=msg.offset() or 0,
            timestamp_type=_TS_TYPES.get(ts_type, "CreateTime"),
            original_topic=topic,
            original_kafka_partition=msg.partition(),
            original_kafka_offset=msg.offset(),
        )
        ok, transformed = self.errors.execute(
            Stage.TRANSFORMATION, type(self.chain).__name__, lambda: self.chain.apply(record), msg
        )
        if not ok:
            return None
        return transformed if isinstance(transformed, SinkRecord) else None

    def _commit(self, only: set[tuple[str, int]] | None = None) -> None:
        if self.consumer is None or not self.current:
            return
        offsets = {tp: o for tp, o in self.current.items() if only is None or tp in only}
        if not offsets:
            return
        committable = self.task.pre_commit(offsets)
        if committable:
            started = time.monotonic()
            try:
                self.consumer.commit(
                    offsets=[TopicPartition(t, p, o) for (t, p), o in committable.items()], asynchronous=False
                )
            except Exception:
                self.metrics.offset_commit(False, started)
                raise
            self.metrics.offset_commit(True, started)

    def progress(self) -> Mapping[str, Any]:
        return self.task.progress()

    def close(self) -> None:
        try:
            if self._started and not self.failed:
                self._commit()
        finally:
            try:
                if self.consumer is not None:
                    self.consumer.close()
            finally:
                if self._started:
                    self.task.stop()
