"""``KafkaBasedLog``: a topic read in full at start, then tailed, with writes through a producer.

The shape of Kafka Connect's class of the same name, over confluent-kafka (librdkafka):

* The consumer is *assigned* every partition (no group membership, no commits) from the beginning; a
  daemon thread polls it and hands each record to the callback, in offset order per partition.
* :meth:`KafkaBasedLog.read_to_end` asks the brokers for the end offsets *now* and blocks until the
  reader's position reaches them on every partition: everything written before the call has been
  applied when it returns (how a store reads its own writes back). The positions come from the
  records read and from partition-EOF events, so compacted gaps and transaction markers at the end of
  a partition do not stall it.
* The producer uses ``partitioner=murmur2_random`` (Java's placement for keyed records) and no
  idempotence, as Connect's internal producers do, and no linger; :meth:`KafkaBasedLog.send` returns a
  future.

The consumer's ``group.id`` is required by librdkafka even for assigned partitions; it is the log's
client id (``<group>-configs`` …), never joined and never committed to, so it cannot disturb the
Connect group itself.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from cdc.api.errors import ConnectError, RetriableError
from cdc.kafka.produce import produce
from cdc.worker.stores.topics import Backoff, TopicSpec, ensure_topic

__all__ = ["KafkaBasedLog", "LogRecord", "RecordMetadata", "StoreTimeoutError"]

log = logging.getLogger(__name__)


class StoreTimeoutError(RetriableError):
    """A read to the end of an internal topic, or a write to it, did not finish in time."""


def _retriable(exc: KafkaException) -> bool:
    err = exc.args[0] if exc.args else None
    if not isinstance(err, KafkaError):
        return False
    return bool(err.retriable()) or err.code() in (
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError._UNKNOWN_PARTITION,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        # a partition's leader moved and this broker has not caught up with its epoch yet (seen on a
        # topic just created: ListOffsets answered "Leader epoch is newer than broker epoch")
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
    )


@dataclass(frozen=True)
class LogRecord:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int


@dataclass(frozen=True)
class RecordMetadata:
    partition: int
    offset: int


class KafkaBasedLog:
    """One internal topic: read fully by :meth:`start`, tailed by a thread, written by :meth:`send`.

    ``client_config`` holds the librdkafka settings every client shares (``bootstrap.servers``, security);
    ``producer_config`` / ``consumer_config`` are added for each role. ``topic`` (a :class:`TopicSpec`)
    makes :meth:`start` create or check the topic first.
    """

    def __init__(
        self,
        topic: str | TopicSpec,
        on_record: Callable[[LogRecord], None],
        client_config: Mapping[str, Any],
        client_id: str,
        producer_config: Mapping[str, Any] | None = None,
        consumer_config: Mapping[str, Any] | None = None,
        start_timeout: float = 60.0,
    ) -> None:
        self.spec = topic if isinstance(topic, TopicSpec) else None
        self.topic = topic.name if isinstance(topic, TopicSpec) else topic
        self._on_record = on_record
        self._client_config = dict(client_config)
        self._client_id = client_id
        self._producer_config = dict(producer_config or {})
        self._consumer_config = dict(consumer_config or {})
        self._start_timeout = start_timeout
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._admin: AdminClient | None = None
        isolation = str(self._consumer_config.get("isolation.level", "read_uncommitted")).lower()
        committed = isolation == "read_committed"
        self._isolation = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._cond = threading.Condition()
        self._positions: dict[int, int] = {}  # partition -> next offset to read (-1: unknown yet)
        self._fatal: KafkaError | None = None
        self.partition_count = 0

    # ------------------------------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        deadline = time.monotonic() + self._start_timeout
        admin_config = {**self._client_config, "client.id": self._client_id}
        # one admin client (the same settings and id) creates or checks the topic, then asks end offsets
        self._admin = AdminClient(admin_config)
        if self.spec is not None:
            ensure_topic(admin_config, self.spec, self._start_timeout, admin=self._admin)
        consumer = Consumer(
            {
                **self._client_config,
                "client.id": self._client_id,
                "group.id": self._client_id,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "enable.partition.eof": True,
                **self._consumer_config,
            }
        )
        self._consumer = consumer
        partitions = self._partitions(consumer, deadline)
        self.partition_count = len(partitions)
        with self._cond:
            self._positions = dict.fromkeys(partitions, -1)
        consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in partitions])
        self._producer = Producer(
            {
                **self._client_config,
                "client.id": self._client_id,
                "partitioner": "murmur2_random",
                "enable.idempotence": False,
                "acks": "all",
                # each write is waited for (a config is read back before the REST answer, a task's RUNNING
                # before the next step): librdkafka's default 5 ms linger would only delay it
                "linger.ms": 0,
                **self._producer_config,
            }
        )
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=f"KafkaBasedLog-{self.topic}", daemon=True)
        self._thread.start()
        self.read_to_end(max(1.0, deadline - time.monotonic()))
        log.info("Started KafkaBasedLog for topic %s (%d partitions)", self.topic, self.partition_count)

    def _partitions(self, consumer: Consumer, deadline: float) -> list[int]:
        backoff = Backoff()
        while True:
            remaining = deadline - time.monotonic()
            try:
                metadata = consumer.list_topics(self.topic, timeout=max(1.0, min(remaining, 10.0)))
                found = metadata.topics.get(self.topic)
                if found is not None and found.error is None and found.partitions:
                    return sorted(found.partitions)
            except KafkaException as exc:
                if remaining <= 0:
                    raise StoreTimeoutError(f"Cannot read the metadata of topic {self.topic}: {exc}") from exc
            if remaining <= 0:
                raise ConnectError(f"Topic {self.topic} does not exist (or has no partitions)")
            backoff.sleep(deadline - time.monotonic())

    def stop(self, timeout: float = 30.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._producer is not None:
            remaining = self._producer.flush(timeout)
            if remaining:
                log.warning("%d records to %s were not delivered before stopping", remaining, self.topic)
            self._producer = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
        self._admin = None
        with self._cond:
            self._cond.notify_all()

    # ------------------------------------------------------------------------------------------- reading

    def _run(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stopping.is_set():
            try:
                if self._producer is not None:
                    self._producer.poll(0)  # serve delivery callbacks of fire-and-forget sends
                msg = consumer.poll(0.1)
                while msg is not None:
                    self._handle(msg)
                    if self._stopping.is_set():
                        break
                    msg = consumer.poll(0)
            except Exception:
                log.exception("Unexpected error in the reader thread of topic %s", self.topic)
                time.sleep(0.5)

    def _handle(self, msg: Message) -> None:
        err = msg.error()
        partition = msg.partition()
        offset = msg.offset()
        if partition is None or offset is None:
            return
        if err is not None:
            if err.code() == KafkaError._PARTITION_EOF:
                self._advance(partition, offset)
                return
            log.error("Error reading topic %s: %s", self.topic, err)
            if err.fatal():
                with self._cond:
                    self._fatal = err
                    self._cond.notify_all()
            return
        ts = msg.timestamp()
        record = LogRecord(partition, offset, msg.key(), msg.value(), ts[1] if ts else -1)
        try:
            self._on_record(record)
        except Exception:
            log.exception("Error applying record at %s-%d offset %d", self.topic, partition, offset)
        self._advance(partition, offset + 1)

    def _advance(self, partition: int, position: int) -> None:
        if position < 0:
            return
        with self._cond:
            if position > self._positions.get(partition, -1):
                self._positions[partition] = position
                self._cond.notify_all()

    def end_offsets(self, timeout: float) -> dict[int, int]:
        """The end offset of every partition (the LSO for ``read_committed``), asked of the brokers now.

        A separate admin client asks: a consumer that another thread polls never sees the answer to its
        own watermark query (the poll takes it), so ``Consumer.get_watermark_offsets`` would hang.
        """
        admin = self._admin
        if admin is None:
            raise ConnectError(f"KafkaBasedLog for topic {self.topic} is not started")
        deadline = time.monotonic() + timeout
        request = {TopicPartition(self.topic, p): OffsetSpec.latest() for p in list(self._positions)}
        backoff = Backoff()
        while True:
            remaining = deadline - time.monotonic()
            try:
                futures = admin.list_offsets(
                    request, isolation_level=self._isolation, request_timeout=max(0.5, remaining)
                )
                return {tp.partition: f.result(max(0.5, remaining) + 5).offset for tp, f in futures.items()}
            except KafkaException as exc:
                # Leadership moves (a new topic, a restarted broker) are transient: ask again.
                if remaining <= 0 or not _retriable(exc):
                    raise StoreTimeoutError(f"Cannot read the end offsets of {self.topic}: {exc}") from exc
                log.debug("Asking the end offsets of %s again: %s", self.topic, exc)
                backoff.sleep(deadline - time.monotonic())

    def read_to_end(self, timeout: float = 30.0) -> None:
        """Block until every record written to the topic before this call has been passed to the callback."""
        deadline = time.monotonic() + timeout
        ends = self.end_offsets(timeout)

        def caught_up() -> bool:
            # An empty partition (end 0) needs no reading; others report their position on EOF.
            return all(self._positions.get(p, -1) >= end for p, end in ends.items() if end > 0)

        with self._cond:
            while not caught_up():
                if self._fatal is not None:
                    raise ConnectError(f"Fatal error reading topic {self.topic}: {self._fatal}")
                if self._thread is None:
                    raise ConnectError(f"KafkaBasedLog for topic {self.topic} is stopped")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    behind = {p: (self._positions.get(p), end) for p, end in ends.items()}
                    raise StoreTimeoutError(
                        f"Timed out after {timeout:.1f}s reading to the end of topic {self.topic} "
                        f"(partition: (position, end) = {behind})"
                    )
                self._cond.wait(min(remaining, 0.5))

    # ------------------------------------------------------------------------------------------- writing

    def send(self, key: bytes | str | None, value: bytes | None) -> Future[RecordMetadata]:
        """Produce one record; the future resolves when the broker acknowledges it (or fails)."""
        producer = self._producer
        if producer is None:
            raise ConnectError(f"KafkaBasedLog for topic {self.topic} is not started")
        future: Future[RecordMetadata] = Future()

        def delivered(err: KafkaError | None, msg: Message) -> None:
            if err is not None:
                future.set_exception(KafkaException(err))
            else:
                future.set_result(RecordMetadata(msg.partition() or 0, msg.offset() or 0))

        # while the local queue is full, deliveries drain it
        produce(producer, self.topic, wait_s=0.1, key=key, value=value, on_delivery=delivered)
        # No poll here: send may run inside a delivery callback (a status retry); the reader thread and
        # wait() serve the callbacks.
        return future

    def wait(self, futures: list[Future[RecordMetadata]], timeout: float) -> list[RecordMetadata]:
        """Wait for sends to be acknowledged; raise the first failure, or :class:`StoreTimeoutError`."""
        deadline = time.monotonic() + timeout
        producer = self._producer
        while not all(f.done() for f in futures):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StoreTimeoutError(f"Timed out after {timeout:.1f}s writing to topic {self.topic}")
            # The reader thread polls this producer too and may serve our delivery first: poll(0.1) then
            # waited its full 100 ms for a callback that had already run. Short polls look at the futures
            # again soon (a poll that serves a callback returns at once).
            if producer is not None:
                producer.poll(min(remaining, 0.005))
            else:
                time.sleep(min(remaining, 0.005))
        results = []
        for f in futures:
            exc = f.exception()
            if exc is not None:
                raise ConnectError(f"Could not write to topic {self.topic}: {exc}") from exc
            results.append(f.result())
        return results

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every record sent so far has been acknowledged (or failed)."""
        if self._producer is not None and self._producer.flush(timeout):
            raise StoreTimeoutError(f"Timed out after {timeout:.1f}s flushing writes to topic {self.topic}")
