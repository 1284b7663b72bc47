"""``KafkaStatusBackingStore``: connector, task and topic statuses on the status topic.

Records (compact JSON, UTF-8 keys), as Kafka's ``KafkaStatusBackingStore`` writes them:

* ``status-connector-<n>``, ``status-task-<n>-<i>``:
  ``{"state":..,"trace":..,"worker_id":..,"generation":..}``; DESTROYED is a tombstone, and a
  connector tombstone also forgets the connector's task statuses.
* ``status-topic-<topic>:connector-<n>``:
  ``{"topic":{"name":..,"connector":..,"task":..,"discoverTimestamp":..}}``; a topic reset is a tombstone.

``put`` is asynchronous: the producer has ``retries=0`` and the store re-sends on a retriable error unless
the status was deleted, the worker's generation moved on, or (for ``put_safe``) a newer write superseded
it. The cache changes only when a record is read back from the topic, as in Connect; :meth:`refresh`
reads to the end when a caller needs its own writes. Each connector or task status read is announced
to the store's update listener (on the reader thread), every worker's alike.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future

from confluent_kafka import KafkaError, KafkaException

from cdc.api.errors import DataError
from cdc.worker.stores import records as r
from cdc.worker.stores.base import ConnectorStatus, StatusBackingStore, TaskId, TaskStatus, TopicStatus
from cdc.worker.stores.kafka_log import LogRecord, RecordMetadata
from cdc.worker.stores.kafka_settings import KafkaStoreSettings, new_log, utf8_key
from cdc.worker.stores.topics import TopicSpec

__all__ = ["KafkaStatusBackingStore"]

log = logging.getLogger(__name__)


class _Entry:
    """A cached status and the sequence of our latest write of it (a retry of an older write is dropped)."""

    __slots__ = ("deleted", "sequence", "value")

    def __init__(self) -> None:
        self.value: ConnectorStatus | TaskStatus | None = None
        self.sequence = 0
        self.deleted = False


class KafkaStatusBackingStore(StatusBackingStore):
    """Connector, task and topic statuses on the status topic (default 5 partitions)."""

    def __init__(self, settings: KafkaStoreSettings) -> None:
        self.settings = settings
        self._lock = threading.RLock()
        self._connectors: dict[str, _Entry] = {}
        self._tasks: dict[str, dict[int, _Entry]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}
        self._generation = 0
        spec = TopicSpec(
            settings.topic,
            5 if settings.partitions is None else settings.partitions,
            settings.replication_factor,
            "status.storage.topic",
            "connector and task statuses",
            settings.topic_config,
        )
        # retries=0: the store retries itself, and drops a retry that a newer status made stale.
        self.log = new_log(settings, spec, "statuses", self._on_record, {"retries": 0})

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self.log.stop()

    def flush(self) -> None:
        self.log.flush(self.settings.timeout)

    def refresh(self, timeout: float = 30.0) -> None:
        """Read the topic to its end (the cache then includes every status written before the call)."""
        self.log.read_to_end(timeout)

    # --------------------------------------------------------------------------------------------- writes

    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        self._send(status, safe=False)

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        self._send(status, safe=True)

    def _entry(self, status: ConnectorStatus | TaskStatus) -> _Entry:
        if isinstance(status, ConnectorStatus):
            return self._connectors.setdefault(status.connector, _Entry())
        return self._tasks.setdefault(status.id.connector, {}).setdefault(status.id.task, _Entry())

    def _send(self, status: ConnectorStatus | TaskStatus, safe: bool) -> None:
        with self._lock:
            self._generation = status.generation
            entry = self._entry(status)
            if safe and not r.can_write_safely(entry.value, status):
                return
            entry.sequence += 1
            sequence = entry.sequence
        if isinstance(status, ConnectorStatus):
            key = r.connector_status_key(status.connector)
        else:
            key = r.task_status_key(status.id)
        value = r.encode_status(status)

        def still_wanted() -> bool:
            with self._lock:
                if entry.deleted or status.generation != self._generation:
                    return False
                return not safe or (r.can_write_safely(entry.value, status) and entry.sequence == sequence)

        self._send_retrying(key, value, still_wanted)

    def _send_retrying(self, key: str, value: bytes | None, still_wanted: Callable[[], bool]) -> None:
        future = self.log.send(key.encode("utf-8"), value)

        def done(f: Future[RecordMetadata]) -> None:
            exc = f.exception()
            if exc is None:
                return
            err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
            if isinstance(err, KafkaError) and err.retriable() and still_wanted():
                log.debug("Retrying the status write of %s after %s", key, err)
                self._send_retrying(key, value, still_wanted)
            else:
                log.error("Failed to write status update %s: %s", key, exc)

        future.add_done_callback(done)

    def put_topic(self, status: TopicStatus) -> None:
        self._send_retrying(
            r.topic_status_key(status.topic, status.connector), r.encode_topic_status(status), lambda: True
        )

    def delete_topic(self, connector: str, topic: str) -> None:
        self._send_retrying(r.topic_status_key(topic, connector), None, lambda: True)

    # ---------------------------------------------------------------------------------------------- reads

    def _on_record(self, record: LogRecord) -> None:
        key = utf8_key(record, self.log.topic)
        if key is None:
            return
        try:
            if key.startswith(r.CONNECTOR_STATUS_PREFIX):
                self._read_connector(key, record.value)
            elif key.startswith(r.TASK_STATUS_PREFIX):
                self._read_task(key, record.value)
            elif key.startswith(r.TOPIC_STATUS_PREFIX):
                self._read_topic(key, record.value)
            else:
                log.warning("Discarding status record with unknown key %r", key)
        except DataError as exc:
            log.warning("Discarding status record %r: %s", key, exc)

    def _read_connector(self, key: str, raw: bytes | None) -> None:
        connector = r.parse_connector_status_key(key)
        if connector is None:
            log.warning("Discarding record with invalid connector status key %r", key)
            return
        if raw is None:
            with self._lock:  # a connector tombstone forgets its tasks too, as Connect does
                removed = self._connectors.pop(connector, None)
                if removed is not None:
                    removed.deleted = True
                for entry in self._tasks.pop(connector, {}).values():
                    entry.deleted = True
            return
        status = r.decode_connector_status(connector, r.decode_json(raw))
        with self._lock:
            self._connectors.setdefault(connector, _Entry()).value = status
        self._announce(status)

    def _read_task(self, key: str, raw: bytes | None) -> None:
        task = r.parse_task_status_key(key)
        if task is None:
            log.warning("Discarding record with invalid task status key %r", key)
            return
        if raw is None:
            with self._lock:
                removed = self._tasks.get(task.connector, {}).pop(task.task, None)
                if removed is not None:
                    removed.deleted = True
            return
        status = r.decode_task_status(task, r.decode_json(raw))
        with self._lock:
            self._tasks.setdefault(task.connector, {}).setdefault(task.task, _Entry()).value = status
        self._announce(status)

    def _read_topic(self, key: str, raw: bytes | None) -> None:
        parsed = r.parse_topic_status_key(key)
        if parsed is None:
            log.warning("Discarding record with invalid topic status key %r", key)
            return
        topic, connector = parsed
        with self._lock:
            if raw is None:
                self._topics.get(connector, {}).pop(topic, None)
            else:
                self._topics.setdefault(connector, {})[topic] = r.decode_topic_status(r.decode_json(raw))

    def get(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            entry = self._connectors.get(connector)
            value = entry.value if entry is not None else None
            return value if isinstance(value, ConnectorStatus) else None

    def get_task(self, task: TaskId) -> TaskStatus | None:
        with self._lock:
            entry = self._tasks.get(task.connector, {}).get(task.task)
            value = entry.value if entry is not None else None
            return value if isinstance(value, TaskStatus) else None

    def get_all(self, connector: str) -> list[TaskStatus]:
        with self._lock:
            tasks = self._tasks.get(connector, {})
            return [v for i in sorted(tasks) if isinstance(v := tasks[i].value, TaskStatus)]

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self._connectors)

    def get_topic(self, connector: str, topic: str) -> TopicStatus | None:
        with self._lock:
            return self._topics.get(connector, {}).get(topic)

    def get_all_topics(self, connector: str) -> list[TopicStatus]:
        with self._lock:
            return list(self._topics.get(connector, {}).values())
