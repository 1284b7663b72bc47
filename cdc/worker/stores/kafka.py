"""The Kafka stores: offsets, configs and statuses on Connect's internal topics, in Connect's formats.

A cdc worker and a Kafka Connect worker can share these topics: keys, values, partition placement
(Java's murmur2) and the read/write protocol follow Kafka's ``Kafka{Offset,Config,Status}BackingStore``.

* :class:`KafkaOffsetBackingStore` — keys and values are the raw bytes given (``["conn",{..}]`` JSON);
  ``get`` reads to the end first; ``set`` waits for every write to be acknowledged.
* :class:`KafkaConfigBackingStore` — records decoded by :class:`~cdc.worker.stores.config_state.ConfigLog`;
  every write reads the topic back to its end before returning, so the snapshot includes it. The
  listener is called on the reader thread (never before :meth:`start` returns), outside the store's lock.
* :class:`KafkaStatusBackingStore` — ``put`` is asynchronous (retried on retriable errors unless a newer
  status superseded it); the cache changes only when the record is read back, as in Connect.

:func:`create_kafka_stores` builds all three from a worker config (the ``.properties`` keys).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, NamedTuple

from confluent_kafka import KafkaException

from cdc.api.errors import ConfigError, ConnectError, DataError
from cdc.api.offsets import parse_offset_key, partition_key
from cdc.kafka.clients import to_librdkafka
from cdc.kafka.murmur2 import partition_for
from cdc.worker.stores import records as r
from cdc.worker.stores.base import (
    ClusterConfigState,
    ConfigBackingStore,
    ConfigUpdateListener,
    OffsetBackingStore,
    RestartRequest,
    SessionKey,
    TargetState,
    TaskId,
)
from cdc.worker.stores.config_state import ConfigLog, Notification
from cdc.worker.stores.kafka_log import LogRecord, RecordMetadata
from cdc.worker.stores.kafka_settings import MAX_INT, KafkaStoreSettings, new_log, utf8_key
from cdc.worker.stores.kafka_status import KafkaStatusBackingStore
from cdc.worker.stores.topics import TopicSpec

__all__ = [
    "KafkaConfigBackingStore",
    "KafkaOffsetBackingStore",
    "KafkaStatusBackingStore",
    "KafkaStoreSettings",
    "KafkaStores",
    "create_kafka_stores",
]

log = logging.getLogger(__name__)

# ------------------------------------------------------------------------------------------------ offsets


class KafkaOffsetBackingStore(OffsetBackingStore):
    """Source offsets on the offsets topic (default 25 partitions), keyed by ``["conn",{partition}]``."""

    def __init__(self, settings: KafkaStoreSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes] = {}
        self._partitions: dict[str, dict[str, dict[str, Any]]] = {}
        spec = TopicSpec(
            settings.topic,
            25 if settings.partitions is None else settings.partitions,
            settings.replication_factor,
            "offset.storage.topic",
            "source connector offsets",
            settings.topic_config,
        )
        self.log = new_log(settings, spec, "offsets", self._on_record, {"delivery.timeout.ms": MAX_INT})

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self.log.stop()

    def _on_record(self, record: LogRecord) -> None:
        if record.key is None:
            return
        with self._lock:
            if record.value is None:
                self._data.pop(record.key, None)
            else:
                self._data[record.key] = record.value
            try:
                connector, partition = parse_offset_key(record.key)
            except DataError:
                return  # not a source offset key (Connect keeps such records but cannot list them)
            if partition is None:
                return
            known = self._partitions.setdefault(connector, {})
            if record.value is None:
                known.pop(partition_key(partition), None)
            else:
                known[partition_key(partition)] = partition

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        self.log.read_to_end(self.settings.timeout)
        with self._lock:
            return {key: self._data.get(key) for key in keys}

    def set(self, values: Mapping[bytes, bytes | None], timeout: float = 30.0) -> None:
        futures = [self.log.send(key, value) for key, value in values.items()]
        self.log.wait(futures, timeout)

    def placement(self) -> Callable[[bytes], tuple[str, int]]:
        return self._place

    def _place(self, key: bytes) -> tuple[str, int]:
        """Where ``key`` goes: this topic, on the partition Java's default partitioner picks. An exactly-once
        task's transactional producer writes its offsets there itself, inside its transactions."""
        return self.log.topic, partition_for(key, self.log.partition_count)

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(p) for p in self._partitions.get(connector, {}).values()]

    def refresh(self, timeout: float = 30.0) -> None:
        self.log.read_to_end(timeout)


# ------------------------------------------------------------------------------------------------ configs


class KafkaConfigBackingStore(ConfigBackingStore):
    """Connector and task configs, target states, restart requests and the session key (1 partition)."""

    def __init__(self, settings: KafkaStoreSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._state = ConfigLog()
        self._listener: ConfigUpdateListener | None = None
        spec = TopicSpec(
            settings.topic,
            1,
            settings.replication_factor,
            "config.storage.topic",
            "connector configurations",
            settings.topic_config,
            single_partition=True,
        )
        producer = {"delivery.timeout.ms": MAX_INT, "max.in.flight.requests.per.connection": 1}
        self.log = new_log(settings, spec, "configs", self._on_record, producer)

    def set_update_listener(self, listener: ConfigUpdateListener) -> None:
        self._listener = listener

    def start(self) -> None:
        self.log.start()
        if self.log.partition_count > 1:  # ensure_topic checks too; this covers a topic changed meanwhile
            self.log.stop()
            raise ConfigError(
                f"Topic '{self.log.topic}' supplied via the 'config.storage.topic' property is required to "
                f"have a single partition in order to guarantee consistency of connector configurations, "
                f"but found {self.log.partition_count} partitions."
            )
        with self._lock:
            self._state.started = True

    def stop(self) -> None:
        self.log.stop()

    def _on_record(self, record: LogRecord) -> None:
        key = utf8_key(record, self.log.topic)
        if key is None:
            return
        with self._lock:
            notifications = self._state.apply(key, record.value, record.offset)
        self._notify(notifications)

    def _notify(self, notifications: list[Notification]) -> None:
        listener = self._listener
        if listener is None:
            return
        for call in notifications:
            try:
                call(listener)
            except Exception:
                log.exception("Config update listener failed")

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return self._state.snapshot()

    def _write(self, records: list[tuple[str, bytes | None]], what: str, read_back: bool = True) -> None:
        try:
            futures: list[Future[RecordMetadata]] = [self.log.send(k.encode("utf-8"), v) for k, v in records]
            self.log.wait(futures, self.settings.timeout)
            if read_back:
                self.log.read_to_end(self.settings.timeout)
        except (ConnectError, KafkaException) as exc:
            raise ConnectError(f"Error writing {what} to Kafka: {exc}") from exc

    def put_connector_config(
        self, connector: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        records: list[tuple[str, bytes | None]] = []
        if target_state is not None:
            records.append((r.target_state_key(connector), r.encode_target_state(target_state)))
        records.append((r.connector_key(connector), r.encode_config(config)))
        self._write(records, "connector configuration")

    def remove_connector_config(self, connector: str) -> None:
        self._write(
            [(r.connector_key(connector), None), (r.target_state_key(connector), None)], "connector removal"
        )

    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        # Read to the end first: we should be the only writer, but must not race records still unread.
        self.refresh(self.settings.timeout)
        tasks = [(r.task_key(TaskId(connector, i)), r.encode_config(c)) for i, c in enumerate(configs)]
        if tasks:
            self._write(list(tasks), "task configurations")
        self._write([(r.commit_key(connector), r.encode_commit(len(configs)))], "task configuration commit")

    def put_target_state(self, connector: str, state: TargetState) -> None:
        # Connect only waits for the write; reading back as well makes the snapshot reflect it at once.
        self._write([(r.target_state_key(connector), r.encode_target_state(state))], "target state")

    def put_restart_request(self, request: RestartRequest) -> None:
        value = r.encode_restart_request(request)
        self._write([(r.restart_key(request.connector), value)], "restart request")

    def put_session_key(self, key: SessionKey) -> None:
        self._write([(r.SESSION_KEY_KEY, r.encode_session_key(key))], "session key")

    def put_logger_level(self, namespace: str, level: str) -> None:
        self._write([(r.logger_key(namespace), r.encode_logger_level(level))], "logger level")

    def refresh(self, timeout: float = 30.0) -> None:
        try:
            self.log.read_to_end(timeout)
        except (ConnectError, KafkaException) as exc:
            raise ConnectError(f"Error reading to the end of the config topic: {exc}") from exc


# ------------------------------------------------------------------------------------------------ factory


class KafkaStores(NamedTuple):
    offsets: KafkaOffsetBackingStore
    configs: KafkaConfigBackingStore
    statuses: KafkaStatusBackingStore


_SECURITY_PREFIXES = ("security.protocol", "sasl.", "ssl.")
_TOPIC_KEYS = ("topic", "partitions", "replication.factor")


def worker_client_config(worker: Mapping[str, Any]) -> dict[str, Any]:
    """The librdkafka settings the internal-topic clients share: the worker's plain security keys.

    As in Connect, top-level ``security.protocol``, ``sasl.*`` and ``ssl.*`` apply to every client
    (``producer.``/``consumer.``/``admin.``-prefixed keys are for connectors' clients, not these).
    Java names are translated by :func:`cdc.kafka.clients.to_librdkafka`.
    """
    return to_librdkafka({k: v for k, v in worker.items() if k.startswith(_SECURITY_PREFIXES)})


def _int(worker: Mapping[str, Any], key: str, default: int) -> int:
    value = worker.get(key)
    if value is None or str(value).strip() == "":
        return default
    try:
        return int(str(value).strip())
    except ValueError as exc:
        raise ConfigError("must be an integer", key, value) from exc


def _topic_settings(worker: Mapping[str, Any], prefix: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in worker.items():
        if key.startswith(prefix) and key[len(prefix) :] not in _TOPIC_KEYS:
            name = key[len(prefix) :]
            if name == "cleanup.policy":
                log.warning("Ignoring %s=%s: internal topics are always compacted", key, value)
                continue
            out[name] = str(value)
    return out


def create_kafka_stores(
    worker: Mapping[str, Any], client_config: Mapping[str, Any] | None = None
) -> KafkaStores:
    """The three Kafka stores of a distributed worker, from its config (the ``.properties`` keys).

    ``client_config`` replaces the librdkafka settings derived from the worker's security keys.
    """
    bootstrap = worker.get("bootstrap.servers", "localhost:9092")
    if isinstance(bootstrap, list | tuple):
        bootstrap = ",".join(str(b) for b in bootstrap)
    group_id = str(worker.get("group.id") or "").strip()
    if not group_id:
        raise ConfigError('Missing required configuration "group.id" which has no default value.')
    topics = {}
    for key in ("config.storage.topic", "offset.storage.topic", "status.storage.topic"):
        name = str(worker.get(key) or "").strip()
        if not name:
            raise ConfigError(f'Missing required configuration "{key}" which has no default value.')
        topics[key] = name
    # Transactions write the offsets (exactly-once tasks) and may write the config topic: both are read
    # committed once the worker prepares for exactly-once (``preparing``, the rolling upgrade) or runs it.
    eos_mode = str(worker.get("exactly.once.source.support", "disabled")).strip().lower()
    eos = eos_mode in ("enabled", "preparing")
    client_id = str(worker["client.id"]) if worker.get("client.id") else None
    shared = dict(client_config) if client_config is not None else worker_client_config(worker)

    def settings(
        prefix: str, partitions: int | None, isolation: str = "read_uncommitted"
    ) -> KafkaStoreSettings:
        return KafkaStoreSettings(
            topic=topics[prefix + "topic"],
            bootstrap_servers=str(bootstrap),
            group_id=group_id,
            client_id=client_id,
            partitions=partitions,
            replication_factor=_int(worker, prefix + "replication.factor", 3),
            topic_config=_topic_settings(worker, prefix),
            client_config=shared,
            isolation_level=isolation,
        )

    committed = "read_committed" if eos else "read_uncommitted"
    offsets = settings("offset.storage.", _int(worker, "offset.storage.partitions", 25), committed)
    # Connect ignores config.storage.partitions: the config topic always has one partition.
    configs = settings("config.storage.", None, committed)
    statuses = settings("status.storage.", _int(worker, "status.storage.partitions", 5))
    return KafkaStores(
        KafkaOffsetBackingStore(offsets),
        KafkaConfigBackingStore(configs),
        KafkaStatusBackingStore(statuses),
    )
