"""The source task loop, written once: poll → transform → convert → produce → offset flush.

Delivery is at-least-once: an offset is committed only after Kafka acknowledged every record
submitted before it (``producer.flush()`` precedes each offset commit), and the final flush on stop
commits what was acknowledged. A failed delivery fails the task before its offsets are committed.

Offsets are committed every ``offset.flush.interval.ms`` even while ``poll`` blocks (FileStreamSource
waits up to a second for new lines): as Connect's ``SourceTaskOffsetCommitter`` does, a committer thread
commits on schedule, but only while the task thread is inside ``poll`` or paused — the two share a lock
that the task thread holds from the end of a poll through sending its records, so the producer is never
flushed while it is being fed. Without it, records sent just after a commit waited for the next poll to
return (a second later) before their offsets were committed, and a kill -9 replayed a second's worth.
The producer's ``error_cb`` fails the task when the brokers refuse its credentials or it hits a fatal error
(:func:`cdc.kafka.failures.client_failure`), as Connect's task fails with
``SaslAuthenticationException``: librdkafka alone retries a refused SASL handshake for ever, and the task
would stay RUNNING delivering nothing. A broker away (``_TRANSPORT``, ``_ALL_BROKERS_DOWN``) is only logged.
While the producer's queue is full the send loop waits for room, but not past a stop: the records not yet
handed over are dropped with their offsets (a restarted task polls them again).

The exactly-once variant (:class:`cdc.worker.exactly_once.ExactlyOnceWorkerSourceTask`) changes only the
hooks: ``uses_committer`` (no committer thread: offsets ride in the transactions), ``_begin_batch``
(open a transaction), ``_batch_dispatched`` (commit it at the transaction boundary), ``_final_commit``
and ``commit_offsets``.

"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer

from cdc.api.connector import SourceTask, SourceTaskContext, TransactionContext
from cdc.api.errors import ConnectError, RetriableError
from cdc.api.plugins import Converter, HeaderConverter
from cdc.api.records import SourceRecord
from cdc.api.schema import Type
from cdc.converters.header_bytes import HeaderBytes
from cdc.kafka.failures import ClientErrors
from cdc.kafka.produce import produce
from cdc.logs import in_context
from cdc.worker import record_trace
from cdc.worker.internal_topics import refusal as internal_refusal
from cdc.worker.metrics import SourceTaskMetrics
from cdc.worker.offsets import OffsetWriter, StoreOffsetReader
from cdc.worker.stores.base import TargetState, TaskId
from cdc.worker.task import TaskStatusListener, WorkerTask
from cdc.worker.tolerance import ErrorHandler, Stage

__all__ = ["IdentityChain", "SourceTaskSettings", "WorkerSourceTask"]

log = logging.getLogger(__name__)


class _StoppedWhileQueueFull(Exception):
    """The task was asked to stop while its send loop waited for room in the producer's queue."""


class Chain(Protocol):
    def apply(self, record: Any) -> Any: ...


class IdentityChain:
    """The chain of a connector with no ``transforms``: records as they are (the send loop's byte
    pass-through needs to know there is nothing to apply)."""

    def apply(self, record: Any) -> Any:
        return record


@dataclass
class SourceTaskSettings:
    producer: dict[str, Any]
    flush_interval_ms: int = 60000
    flush_timeout_ms: int = 5000
    topic_seen: Callable[[str], None] | None = None
    ensure_topic: Callable[[str], None] | None = None
    worker_clients: Callable[[], dict[str, str]] | None = None
    """What the task context's ``worker_client_config`` answers (built when a task asks)."""
    internal_topics: frozenset[str] = frozenset()
    """The worker's internal topics: a record bound for one fails the task (:mod:`.internal_topics`)."""
    file_refusal: Callable[[str], str | None] | None = None
    """The worker's ``connector.file.allowed.paths`` (:meth:`.file_paths.FilePolicy.refusal`)."""


class _Context(SourceTaskContext):
    def __init__(
        self,
        config: dict[str, str],
        reader: StoreOffsetReader,
        transactions: TransactionContext | None = None,
        worker_clients: Callable[[], dict[str, str]] | None = None,
        task_index: int = 0,
        file_refusal: Callable[[str], str | None] | None = None,
    ) -> None:
        self._config = config
        self._reader = reader
        self._transactions = transactions
        self._worker_clients = worker_clients
        self._task_index = task_index
        self._file_refusal = file_refusal

    def configs(self) -> dict[str, str]:
        return self._config

    def offset_storage_reader(self) -> StoreOffsetReader:
        return self._reader

    def transaction_context(self) -> TransactionContext | None:
        return self._transactions

    def worker_client_config(self) -> dict[str, str]:
        return self._worker_clients() if self._worker_clients is not None else {}

    def task_index(self) -> int:
        return self._task_index

    def file_refusal(self, path: str) -> str | None:
        return self._file_refusal(path) if self._file_refusal is not None else None


class WorkerSourceTask(WorkerTask):
    def __init__(
        self,
        task_id: TaskId,
        task: SourceTask,
        task_config: dict[str, str],
        listener: TaskStatusListener,
        target_state: TargetState,
        key_converter: Converter,
        value_converter: Converter,
        header_converter: HeaderConverter,
        chain: Chain,
        errors: ErrorHandler,
        offset_reader: StoreOffsetReader,
        offset_writer: OffsetWriter,
        settings: SourceTaskSettings,
    ) -> None:
        super().__init__(task_id, listener, target_state)
        self.task = task
        self.task_config = task_config
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self._header_bytes = HeaderBytes(header_converter)
        self.chain = chain
        self.errors = errors
        errors.stopping = self.stopping
        self.offset_reader = offset_reader
        self.offset_writer = offset_writer
        self.settings = settings
        # a task that overrides commit_record is told of each delivery (a closure per record), others not
        self._tells_task = type(task).commit_record is not SourceTask.commit_record
        self._passthrough = (
            isinstance(chain, IdentityChain)
            and isinstance(key_converter, Converter)
            and key_converter.passes_bytes_through
            and isinstance(value_converter, Converter)
            and value_converter.passes_bytes_through
        )
        self.producer: Producer | None = None
        self._delivery_error: KafkaError | None = None
        self._client_errors = ClientErrors(self, "producer")  # error_cb: refused credentials fail the task
        self._topics_seen: set[str] = set()
        self._task_started = False
        self._stop_lock = threading.Lock()
        self._task_stopped = False
        self.records_sent = 0
        self.metrics: SourceTaskMetrics = SourceTaskMetrics()
        # The task thread holds it from the end of a poll through sending; the committer thread takes it
        # to commit on schedule while the task thread polls (see the module docstring).
        self._commit_lock = threading.Lock()
        self._next_flush = 0.0
        self._loop_done = threading.Event()
        self._commit_error: BaseException | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def initialize(self) -> None:
        self.producer = self._new_producer()
        self.task.initialize(
            _Context(
                self.task_config,
                self.offset_reader,
                self._transaction_context(),
                self.settings.worker_clients,
                self.id.task,
                self.settings.file_refusal,
            )
        )
        self.task.start(self.task_config)
        self._task_started = True

    def _new_producer(self) -> Producer:
        """Hook: the task's producer (the exactly-once variant fences its zombies here)."""
        # error_cb is served by the producer's poll/flush: a refused login fails the task at the next
        # delivery check; a broker down is only logged (librdkafka reconnects).
        return Producer({**self.settings.producer, "error_cb": self._client_errors})

    def _transaction_context(self) -> TransactionContext | None:
        """Hook: what ``SourceTaskContext.transaction_context`` answers (None: no connector boundaries)."""
        return None

    def on_stop_requested(self) -> None:
        self._stop_task()

    def progress(self) -> Mapping[str, Any]:
        return self.task.progress()

    def _stop_task(self) -> None:
        with self._stop_lock:
            if self._task_started and not self._task_stopped:
                self._task_stopped = True
                try:
                    self.task.stop()
                except Exception:
                    log.exception("%s Error while stopping the task", self)

    def close(self) -> None:
        self._stop_task()
        if self.producer is not None:
            self.producer.flush(self.settings.flush_timeout_ms / 1000)

    # -- the loop -------------------------------------------------------------------------------------
    uses_committer = True
    """Whether offsets are also committed on schedule by a thread while ``poll`` blocks."""

    def execute(self) -> None:
        self._next_flush = time.monotonic() + self.settings.flush_interval_ms / 1000
        if self.uses_committer:
            committer = threading.Thread(
                target=in_context(self._commit_while_polling), name=f"{self.id}-offset-committer", daemon=True
            )
            committer.start()
        lock = self._commit_lock
        try:
            while not self.stopping.is_set():
                if not self.await_unpause():
                    break
                polled_at = time.monotonic()
                records = self._poll()  # without the lock: the committer may commit meanwhile
                self.metrics.polled(len(records) if records else 0, polled_at)
                with lock:
                    if self._commit_error is not None:
                        raise self._commit_error
                    if records:
                        self._begin_batch()
                        try:
                            self._send(records)
                        except _StoppedWhileQueueFull:
                            # The rest of the batch is not sent and its offsets not recorded: a restarted
                            # task polls them again (as Connect drops its unsent records on stop).
                            log.info("%s Stopped while waiting for room in the producer's queue", self)
                            break
                    assert self.producer is not None
                    self.producer.poll(0)
                    self._check_delivery()
                    self._batch_dispatched()
        finally:
            self._loop_done.set()
            with lock:  # an in-flight scheduled commit ends first
                pass
            if not self.failed:
                self._final_commit()

    def _begin_batch(self) -> None:
        """Hook: a non-empty batch is about to be sent."""

    def _batch_dispatched(self) -> None:
        """Hook: a poll's records (maybe none) were handed to the producer; commit offsets when due."""
        if time.monotonic() >= self._next_flush:
            self._commit_on_schedule()

    def _commit_on_schedule(self) -> None:
        self.commit_offsets()
        self._next_flush = time.monotonic() + self.settings.flush_interval_ms / 1000

    def _commit_while_polling(self) -> None:
        """The committer thread: commits when due, whenever the task thread is not sending."""
        while not self._loop_done.wait(max(0.01, self._next_flush - time.monotonic())):
            with self._commit_lock:
                if self._loop_done.is_set() or time.monotonic() < self._next_flush:
                    continue
                try:
                    self._commit_on_schedule()
                except BaseException as exc:
                    self._commit_error = exc
                    return

    def _final_commit(self) -> None:
        try:
            self.commit_offsets()
        except Exception:
            log.exception("%s Failed to commit offsets on stop", self)
            raise

    def _poll(self) -> list[SourceRecord] | None:
        try:
            return self.task.poll()
        except RetriableError as exc:
            log.warning("%s Retriable error while polling; will retry: %s", self, exc)
            self.stopping.wait(0.5)
            return None

    def _send(self, records: list[SourceRecord]) -> None:
        producer = self.producer
        assert producer is not None
        chain, key_conv, value_conv = self.chain, self.key_converter, self.value_converter
        # Bytes handed through as they are (no transform, converters that pass bytes unchanged, as MirrorMaker
        # and other byte-copying sources run): a record whose key and value are bytes (or None) under no
        # schema or a BYTES one skips the chain and the converters, whose answer would be the same objects.
        passthrough = self._passthrough
        written = 0
        if record_trace.enabled():
            record_trace.log_records(records)
        # A record's offset is recorded once the producer took it; a run of records of one source partition
        # map records only the last (the offset writer keeps only the latest per partition anyway, and
        # Connect checks an offset when it serialises it, at commit: the run's last is the one committed).
        run_partition: Any = None
        run_offset: Any = None
        try:
            for original in records:
                partition = original.source_partition
                if partition is not run_partition:
                    if run_partition is not None and run_offset is not None:
                        self.offset_writer.offset(run_partition, run_offset)
                    run_partition = partition
                    run_offset = None
                if not original.topic:  # OFFSET_ONLY_TOPIC: nothing to produce, only the offset to commit
                    self.task.commit_record(original, None)
                    if original.source_offset is not None:
                        run_offset = original.source_offset
                    continue
                key, value = original.key, original.value
                # Every stage at once. On any failure the record goes through the error handler stage by stage
                # (transforms and converters are pure, so re-running them is safe).
                try:
                    if (
                        passthrough
                        and (key is None or type(key) is bytes)
                        and (value is None or type(value) is bytes)
                        and (original.key_schema is None or original.key_schema.type is Type.BYTES)
                        and (original.value_schema is None or original.value_schema.type is Type.BYTES)
                    ):
                        record = original
                    else:
                        record = chain.apply(original)
                        if record is None:
                            self.task.commit_record(original, None)
                            if original.source_offset is not None:
                                run_offset = original.source_offset
                            continue
                        key = key_conv.from_connect_data(
                            record.topic, record.key_schema, record.key, record.headers
                        )
                        value = value_conv.from_connect_data(
                            record.topic, record.value_schema, record.value, record.headers
                        )
                    topic = record.topic
                    headers = self._headers(record) if record.headers else None
                except Exception:
                    converted = self._convert_slowly(original)
                    if converted is None:
                        if original.source_offset is not None:
                            run_offset = original.source_offset
                        continue
                    record, key, value, headers = converted
                    topic = record.topic
                if topic not in self._topics_seen:
                    self._first_use(topic)
                self._produce(producer, record, topic, key, value, headers, original)
                if original.source_offset is not None:
                    run_offset = original.source_offset
                written += 1
        finally:
            if run_partition is not None and run_offset is not None:
                self.offset_writer.offset(run_partition, run_offset)
        self.records_sent += len(records)
        self.metrics.written(written)

    def _headers(self, record: SourceRecord) -> list[tuple[str, bytes | None]]:
        # the bytes of headers every record carries (a source's constant headers) are converted once
        return self._header_bytes.encode(record.topic, record.headers)

    def _dropped(self, original: SourceRecord) -> None:
        """A record of ``_convert_slowly`` that the error handler dropped: only its offset counts (the
        caller records it)."""
        self.task.commit_record(original, None)

    def _convert_slowly(self, original: SourceRecord) -> tuple[SourceRecord, Any, Any, Any] | None:
        errors = self.errors
        ok, record = errors.execute(
            Stage.TRANSFORMATION, type(self.chain).__name__, lambda: self.chain.apply(original), original
        )
        if not ok or record is None:
            self._dropped(original)
            return None
        rec: SourceRecord = record
        topic = rec.topic
        ok, key = errors.execute(
            Stage.KEY_CONVERTER,
            type(self.key_converter).__name__,
            lambda: self.key_converter.from_connect_data(topic, rec.key_schema, rec.key, rec.headers),
            rec,
        )
        if not ok:
            self._dropped(original)
            return None
        ok, value = errors.execute(
            Stage.VALUE_CONVERTER,
            type(self.value_converter).__name__,
            lambda: self.value_converter.from_connect_data(topic, rec.value_schema, rec.value, rec.headers),
            rec,
        )
        if not ok:
            self._dropped(original)
            return None
        headers = None
        if rec.headers:
            ok, headers = errors.execute(
                Stage.HEADER_CONVERTER, type(self.header_converter).__name__, lambda: self._headers(rec), rec
            )
            if not ok:
                self._dropped(original)
                return None
        return rec, key, value, headers

    def _produce(
        self,
        producer: Producer,
        record: SourceRecord,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Any,
        original: SourceRecord,
    ) -> None:
        """Hand one record to the producer (the caller records its offset once this returns)."""
        on_delivery = self._make_callback(original) if self._tells_task else self._on_delivery
        partition = record.kafka_partition
        timestamp = record.timestamp
        try:  # the common case in one call (-1: the partitioner's, 0: now); a full queue waits below
            producer.produce(
                topic,
                value=value,
                key=key,
                partition=-1 if partition is None else partition,
                on_delivery=on_delivery,
                timestamp=0 if timestamp is None else timestamp,
                headers=headers or None,
            )
        except BufferError:
            kwargs: dict[str, Any] = {"key": key, "value": value, "on_delivery": on_delivery}
            if headers:
                kwargs["headers"] = headers
            if timestamp is not None:
                kwargs["timestamp"] = timestamp
            if partition is not None:
                kwargs["partition"] = partition
            # wait for room, but not past a stop
            produce(producer, topic, while_full=self._while_queue_full, **kwargs)

    def _while_queue_full(self) -> None:
        self._check_delivery()
        if self.stopping.is_set():
            raise _StoppedWhileQueueFull()

    def _make_callback(self, original: SourceRecord) -> Callable[[KafkaError | None, Any], None]:
        """The delivery callback of a record whose task wants ``commit_record`` (``_tells_task``): a
        ``partial`` (made in C, a few times cheaper per record than a closure)."""
        return partial(self._deliver_to_task, original)

    def _deliver_to_task(self, original: SourceRecord, err: KafkaError | None, msg: Any) -> None:
        if err is not None:
            if self._delivery_error is None:
                self._delivery_error = err
            return
        try:
            self.task.commit_record(original, msg)
        except Exception:
            log.exception("%s Exception thrown while calling task.commit_record()", self)

    def _on_delivery(self, err: KafkaError | None, msg: Any) -> None:
        if err is not None and self._delivery_error is None:
            self._delivery_error = err

    def _check_delivery(self) -> None:
        self._client_errors.check()
        if self._delivery_error is not None:
            err = self._delivery_error
            raise ConnectError(f"Unrecoverable exception from producer send callback: {err.str()}")

    def _first_use(self, topic: str) -> None:
        if topic in self.settings.internal_topics:  # once per topic: a transform may route anywhere
            raise ConnectError(f"A record of this task is bound for {topic}: {internal_refusal(topic)}")
        if self.settings.ensure_topic is not None:
            self.settings.ensure_topic(topic)
        if self.settings.topic_seen is not None:
            self.settings.topic_seen(topic)
        self._topics_seen.add(topic)

    stall_warning_s = 60.0
    """How long an offset commit waits for the producer before it logs a warning (then again as often)."""

    # -- offsets ------------------------------------------------------------------------------------------
    def commit_offsets(self) -> None:
        """Flush the producer, then store the offsets of everything it acknowledged."""
        producer = self.producer
        if producer is None:
            return
        snapshot = self.offset_writer.snapshot()
        timeout = self.settings.flush_timeout_ms / 1000
        started = time.monotonic()
        deadline = started + max(timeout, 1.0)
        warn_at = started + self.stall_warning_s
        while (outstanding := producer.flush(0.5)) > 0:
            self._check_delivery()
            now = time.monotonic()
            if now >= warn_at:  # a stalled producer must show in the log, not only as a task "RUNNING"
                warn_at = now + self.stall_warning_s
                log.warning(
                    "%s The producer has not delivered %d outstanding records for %.0f s: the offset "
                    "commit and the task wait for them (brokers unreachable, or the producer stalled)",
                    self,
                    outstanding,
                    now - started,
                )
            if now > deadline and self.stopping.is_set():
                self.offset_writer.restore(snapshot)
                log.error(
                    "%s Failed to flush, timed out while waiting for producer to flush outstanding messages",
                    self,
                )
                self.metrics.offset_commit(False, started)
                return
        self._check_delivery()
        if not snapshot:
            self.metrics.offset_commit(True, started)
            return
        try:
            self.offset_writer.commit(snapshot, max(timeout, 5.0))
        except RetriableError as exc:
            self.metrics.offset_commit(False, started)
            # As Connect: an offset commit that timed out (the broker away) is retried at the next flush;
            # the task goes on. Only a failure that cannot pass (the offsets file unwritable) fails it.
            self.offset_writer.restore(snapshot)
            log.warning("%s Failed to commit offsets; will retry at the next flush: %s", self, exc)
            return
        except (KafkaException, ConnectError, OSError) as exc:
            self.metrics.offset_commit(False, started)
            self.offset_writer.restore(snapshot)
            log.error("%s Failed to commit offsets: %s", self, exc)
            raise
        self.metrics.offset_commit(True, started)
        try:
            self.task.commit()
        except Exception:
            log.exception("%s Exception thrown while calling task.commit()", self)
