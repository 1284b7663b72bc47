"""The worker: runs connector instances and task threads on this process.

It knows nothing of clusters: the herder tells it what to start and stop. Its work is assembly —
plugin classes from the registry, converters from the connector's or the worker's settings, the
transformation chain, Kafka client settings, offset readers/writers — and the bookkeeping of what
runs. Config provider placeholders are resolved here, at start, and never written back: task configs
a connector generates get them back (:func:`cdc.worker.security.reverse_transform`), and failure traces
are masked (:func:`cdc.worker.security.format_trace`). Every Kafka client gets the worker's security
settings and the connector's allowed overrides (:func:`cdc.kafka.clients.connector_client_settings`).

A source task that writes to Kafka itself (the MySQL source's snapshot on Spark) asks its context for the
worker's converter, shared client and ``producer.*`` settings
(:meth:`~cdc.api.connector.SourceTaskContext.worker_client_config`, answered by
:meth:`Worker.worker_client_entries`): they never enter task configs. The ``cdc.worker.`` prefix stays
reserved: such keys coming from a connector are dropped, so they are never stored in task configs nor
shown by ``GET …/tasks``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from cdc.api.connector import Connector, ConnectorContext, SinkConnector, SourceConnector
from cdc.api.errors import ConfigError, ConnectError
from cdc.api.plugins import Converter, HeaderConverter
from cdc.kafka.clients import (
    CLIENT_SHARED_PREFIXES,
    OVERRIDE_POLICY_KEY,
    connector_client_settings,
    override_policy,
    to_librdkafka,
)
from cdc.kafka.failures import create_topic_if_missing
from cdc.kafka.recipe import CONVERTER_ROLES, converter_spec, source_producer_settings
from cdc.logs import set_context
from cdc.plugins import registry
from cdc.snapshot.spark_conf import SPARK_CONF_PREFIX, WORKER_MASTERS_KEY
from cdc.worker.config import CONNECTOR_CLASS_CONFIG
from cdc.worker.exactly_once import (
    ExactlyOnceSettings,
    ExactlyOnceWorkerSourceTask,
    exactly_once_producer,
    transactional_id,
)
from cdc.worker.file_paths import check_connector_files
from cdc.worker.metrics import WorkerMetrics
from cdc.worker.offsets import OffsetWriter, StoreOffsetReader
from cdc.worker.security import format_trace, reverse_transform
from cdc.worker.settings import (
    ConnectorSettings,
    SinkConnectorSettings,
    SourceConnectorSettings,
    WorkerSettings,
)
from cdc.worker.sink_task import DeadLetterQueueReporter, SinkTaskSettings, WorkerSinkTask
from cdc.worker.source_task import IdentityChain, SourceTaskSettings, WorkerSourceTask
from cdc.worker.stores.base import OffsetBackingStore, TargetState, TaskId
from cdc.worker.task import TaskStatusListener, WorkerTask
from cdc.worker.tolerance import ErrorHandler

__all__ = ["ConnectorStatusListener", "Worker", "WorkerSettings", "connector_kind"]

log = logging.getLogger(__name__)

WORKER_ENTRY_PREFIX = "cdc.worker."


def without_worker_entries(config: Mapping[str, str]) -> dict[str, str]:
    """``config`` without ``cdc.worker.*`` keys (the worker's own, added at task start)."""
    return {k: v for k, v in config.items() if not k.startswith(WORKER_ENTRY_PREFIX)}


class ConnectorStatusListener(Protocol):
    def on_connector_startup(self, connector: str) -> None: ...
    def on_connector_pause(self, connector: str) -> None: ...
    def on_connector_stop(self, connector: str) -> None: ...
    def on_connector_failure(self, connector: str, trace: str) -> None: ...
    def on_connector_shutdown(self, connector: str) -> None: ...
    def request_task_reconfiguration(self, connector: str) -> None: ...


def connector_kind(connector_class: str | None) -> str:
    """``source``, ``sink`` or ``unknown`` for a connector class name."""
    if not connector_class:
        return "unknown"
    try:
        cls = registry.load(connector_class)
    except ConnectError:
        return "unknown"
    if isinstance(cls, type) and issubclass(cls, SourceConnector):
        return "source"
    if isinstance(cls, type) and issubclass(cls, SinkConnector):
        return "sink"
    return "unknown"


class _ConnectorContext(ConnectorContext):
    def __init__(self, worker: Worker, name: str) -> None:
        self.worker = worker
        self.name = name

    def request_task_reconfiguration(self) -> None:
        self.worker.connector_listener.request_task_reconfiguration(self.name)

    def raise_error(self, error: BaseException) -> None:
        self.worker.fail_connector(self.name, error)

    def offset_storage_reader(self) -> StoreOffsetReader:
        return StoreOffsetReader(self.name, self.worker.offset_store)


@dataclass
class _RunningConnector:
    connector: Connector
    config: dict[str, str]
    target: TargetState
    started: bool = False
    failed: bool = False


class Worker:
    def __init__(
        self,
        settings: WorkerSettings,
        offset_store: OffsetBackingStore,
        connector_listener: ConnectorStatusListener,
        task_listener: TaskStatusListener,
        topic_seen: Callable[[str, str, int], None] | None = None,
    ) -> None:
        self.settings = settings
        self.worker_id = settings.worker_id
        self.offset_store = offset_store
        self.connector_listener = connector_listener
        self.task_listener = task_listener
        self.topic_seen = topic_seen
        self._connectors: dict[str, _RunningConnector] = {}
        self._tasks: dict[TaskId, WorkerTask] = {}
        self._lock = threading.RLock()
        self._created_topics: set[str] = set()
        self.metrics = WorkerMetrics()

    # -- connectors ------------------------------------------------------------------------------------
    def connector_names(self) -> list[str]:
        with self._lock:
            return list(self._connectors)

    def is_running(self, name: str) -> bool:
        with self._lock:
            rc = self._connectors.get(name)
            return rc is not None and rc.started and not rc.failed

    def start_connector(self, name: str, config: Mapping[str, str], target: TargetState) -> bool:
        """Create and (unless STOPPED) start a connector; False if it failed (status says why)."""
        with self._lock:
            if name in self._connectors:
                raise ConnectError(f"Connector {name} already running on this worker")
        set_context(name)
        try:
            cls = registry.load(config[CONNECTOR_CLASS_CONFIG])
            connector: Connector = cls()
            connector.initialize(_ConnectorContext(self, name))
            rc = _RunningConnector(connector, dict(config), target)
            with self._lock:
                self._connectors[name] = rc
            if target is TargetState.STOPPED:
                self.connector_listener.on_connector_stop(name)
                return True
            resolved = self.settings.resolve(dict(config))
            check_connector_files(connector, [resolved], self.settings.file_policy())
            connector.start(resolved)
            rc.started = True
            if target is TargetState.PAUSED:
                self.connector_listener.on_connector_pause(name)
            else:
                self.connector_listener.on_connector_startup(name)
            log.info("Finished creating connector %s", name)
            self.metrics.connector_started(True)
            return True
        except Exception as exc:
            log.error("Failed to start connector %s", name, exc_info=exc)
            self.metrics.connector_started(False)
            with self._lock:
                rc2 = self._connectors.get(name)
                if rc2 is not None:
                    rc2.failed = True
            self.connector_listener.on_connector_failure(name, format_trace(exc))
            return False
        finally:
            set_context(None)

    def fail_connector(self, name: str, error: BaseException) -> None:
        with self._lock:
            rc = self._connectors.get(name)
            if rc is None:
                return
            rc.failed = True
        self.connector_listener.on_connector_failure(name, format_trace(error))

    def set_connector_target_state(self, name: str, target: TargetState) -> None:
        with self._lock:
            rc = self._connectors.get(name)
            if rc is None:
                return
            previous, rc.target = rc.target, target
        if rc.failed or previous is target:
            return
        if target is TargetState.STOPPED:
            self._shutdown_connector(rc, name)
            self.connector_listener.on_connector_stop(name)
        elif target is TargetState.PAUSED:
            if not rc.started:
                self._start_existing(rc, name)
            self.connector_listener.on_connector_pause(name)
        else:
            if not rc.started:
                self._start_existing(rc, name)
            if not rc.failed:
                self.connector_listener.on_connector_startup(name)

    def _start_existing(self, rc: _RunningConnector, name: str) -> None:
        try:
            rc.connector.start(self.settings.resolve(rc.config))
            rc.started = True
        except Exception as exc:
            rc.failed = True
            self.connector_listener.on_connector_failure(name, format_trace(exc))

    def _shutdown_connector(self, rc: _RunningConnector, name: str) -> None:
        if rc.started:
            rc.started = False
            try:
                rc.connector.stop()
            except Exception:
                log.exception("Error while stopping connector %s", name)

    def stop_connector(self, name: str) -> None:
        with self._lock:
            rc = self._connectors.pop(name, None)
        if rc is None:
            return
        self._shutdown_connector(rc, name)
        if not rc.failed:
            self.connector_listener.on_connector_shutdown(name)
        log.info("Stopped connector %s", name)

    def connector_task_configs(self, name: str, max_tasks: int) -> list[dict[str, str]]:
        with self._lock:
            rc = self._connectors.get(name)
        if rc is None or not rc.started or rc.failed:
            return []
        configs = rc.connector.task_configs(max_tasks)
        task_cls = rc.connector.task_class()
        task_class_name = getattr(task_cls, "JAVA_NAME", f"{task_cls.__module__}.{task_cls.__qualname__}")
        out = []
        for cfg in configs:
            cfg = {k: str(v) for k, v in cfg.items()}
            cfg["task.class"] = task_class_name
            for key in ("topics", "topics.regex"):
                if key in rc.config:
                    cfg[key] = rc.config[key]
            out.append(cfg)
        restored = reverse_transform(rc.config, self.settings.resolve(dict(rc.config)), out)
        return [without_worker_entries(cfg) for cfg in restored]  # a reserved prefix

    def connector_class(self, name: str) -> str | None:
        """The ``connector.class`` a connector running here was started with."""
        with self._lock:
            rc = self._connectors.get(name)
        return rc.config.get(CONNECTOR_CLASS_CONFIG) if rc else None

    def connector(self, name: str) -> Connector | None:
        with self._lock:
            rc = self._connectors.get(name)
        return rc.connector if rc else None

    # -- tasks ------------------------------------------------------------------------------------------
    def task_ids(self) -> list[TaskId]:
        with self._lock:
            return list(self._tasks)

    def task(self, task_id: TaskId) -> WorkerTask | None:
        with self._lock:
            return self._tasks.get(task_id)

    def start_task(
        self,
        task_id: TaskId,
        connector_config: Mapping[str, str],
        task_config: Mapping[str, str],
        target: TargetState,
    ) -> bool:
        with self._lock:
            if task_id in self._tasks:
                raise ConnectError(f"Task already exists in this worker: {task_id}")
        try:
            worker_task = self._build_task(task_id, dict(connector_config), dict(task_config), target)
        except Exception as exc:
            log.error("Failed to start task %s", task_id, exc_info=exc)
            self.metrics.task_started(False)
            self.task_listener.on_failure(task_id, format_trace(exc))
            return False
        with self._lock:
            self._tasks[task_id] = worker_task
        worker_task.start()
        self.metrics.task_started(True)
        return True

    def set_task_target_state(self, task_id: TaskId, target: TargetState) -> None:
        t = self.task(task_id)
        if t is not None:
            t.transition_to(target)

    def stop_tasks(self, ids: list[TaskId], timeout: float | None = None) -> None:
        """Stop ``ids`` and wait for them (``task.shutdown.graceful.timeout.ms`` in total)."""
        with self._lock:
            tasks = [self._tasks.pop(i) for i in ids if i in self._tasks]
        for t in tasks:
            t.stop()
        total = timeout if timeout is not None else self.settings.task_shutdown_graceful_timeout_ms / 1000
        deadline = time.monotonic() + total
        for t in tasks:
            if not t.await_stop(max(0.0, deadline - time.monotonic())):
                log.error("Graceful stop of task %s failed.", t.id)

    def stop(self) -> None:
        self.stop_tasks(self.task_ids())
        for name in self.connector_names():
            self.stop_connector(name)

    # -- assembly -----------------------------------------------------------------------------------------
    def _converter(self, role: str, connector_config: Mapping[str, str]) -> Any:
        """A configured converter, the connector's if it names one, else the worker's (as Connect does)."""
        return converter_spec(role, connector_config, self.settings.props).build()

    def worker_client_entries(self) -> dict[str, str]:
        """What a task needs to write to Kafka as this worker does (its context's ``worker_client_config``).

        The converters as the worker would configure them when a connector names none (the class, the
        ConfigDef's default for ``header.converter``, and the ``<role>.*`` sub-settings), the brokers,
        the settings every client of the worker shares (security, SASL, SSL …) and ``producer.*``. The
        connector's own converters and ``producer.override.*`` are in its config already. Also what only
        the worker file decides: ``connector.client.config.override.policy`` (for the clients a task makes
        itself: schema history, signal consumer, Spark writers) and the Spark snapshot's
        ``snapshot.spark.conf.*`` and ``snapshot.spark.allowed.masters``.
        """
        props = self.settings.props
        out: dict[str, str] = {}
        for role in CONVERTER_ROLES:
            class_name = props.get(role) or self.settings.converter_class(role)
            if class_name:
                out[role] = str(class_name)
            out.update({k: str(v) for k, v in props.items() if k.startswith(role + ".")})
        out["bootstrap.servers"] = ",".join(self.settings.bootstrap_servers)
        out.update(
            {
                k: str(v)
                for k, v in props.items()
                if v is not None and k.startswith((*CLIENT_SHARED_PREFIXES, "producer."))
            }
        )
        # What the worker file alone decides for a task's own clients and Spark session: which client
        # settings a connector may make (cdc.kafka.clients), the Spark settings and masters
        # (cdc.snapshot.spark_conf)
        out[OVERRIDE_POLICY_KEY] = override_policy(props.get(OVERRIDE_POLICY_KEY))
        out.update(
            {
                k: str(v)
                for k, v in props.items()
                if v is not None and (k.startswith(SPARK_CONF_PREFIX) or k == WORKER_MASTERS_KEY)
            }
        )
        return out

    def _chain(self, connector_config: Mapping[str, str], parsed: ConnectorSettings) -> Any:
        if not parsed.transforms:
            return IdentityChain()
        from cdc.transforms.chain import build_chain

        return build_chain(connector_config)

    def _build_task(
        self,
        task_id: TaskId,
        connector_config: dict[str, str],
        task_config: dict[str, str],
        target: TargetState,
    ) -> WorkerTask:
        connector_config = self.settings.resolve(connector_config)
        task_config = without_worker_entries(self.settings.resolve(task_config))
        connector_cls = registry.load(connector_config[CONNECTOR_CLASS_CONFIG])
        source = issubclass(connector_cls, SourceConnector)
        parsed = (SourceConnectorSettings if source else SinkConnectorSettings).parse(connector_config)
        # a config stored under another worker file (or before the key) opens nothing outside it either
        check_connector_files(connector_cls(), [connector_config, task_config], self.settings.file_policy())
        task = connector_cls().task_class()()
        key_conv: Converter = self._converter("key.converter", connector_config)
        value_conv: Converter = self._converter("value.converter", connector_config)
        header_conv: HeaderConverter = self._converter("header.converter", connector_config)
        chain = self._chain(connector_config, parsed)
        errors = ErrorHandler.from_config(str(task_id), parsed, threading.Event())
        # what every worker task takes first, source or sink
        common = (
            task_id,
            task,
            task_config,
            self.task_listener,
            target,
            key_conv,
            value_conv,
            header_conv,
            chain,
            errors,
        )
        name = task_id.connector
        worker = self.settings

        def client(role: str) -> dict[str, Any]:
            policy = worker.connector_client_config_override_policy
            settings = connector_client_settings(self.settings.props, connector_config, role, policy)
            return to_librdkafka(settings)

        if isinstance(parsed, SourceConnectorSettings):
            producer = source_producer_settings(
                self.settings.props, connector_config, f"connector-producer-{task_id}"
            )
            settings = SourceTaskSettings(
                producer=producer,
                flush_interval_ms=worker.offset_flush_interval_ms,
                flush_timeout_ms=worker.offset_flush_timeout_ms,
                topic_seen=self._topic_tracker(name, task_id.task),
                ensure_topic=self._topic_creator(connector_config, parsed, client("admin")),
                worker_clients=self.worker_client_entries,
                internal_topics=worker.internal_topics().names,
                file_refusal=worker.file_policy().refusal,
            )
            reader, writer = StoreOffsetReader(name, self.offset_store), OffsetWriter(name, self.offset_store)
            args = (*common, reader, writer, settings)
            eos = self._exactly_once(task_id, parsed)
            if eos is None:
                return WorkerSourceTask(*args)
            settings.producer = exactly_once_producer(producer, eos.transactional_id)
            return ExactlyOnceWorkerSourceTask(*args, exactly_once=eos)
        consumer: dict[str, Any] = {
            "group.id": f"connect-{name}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "client.id": f"connector-consumer-{task_id}",
            **client("consumer"),
        }
        assert isinstance(parsed, SinkConnectorSettings)
        dlq = parsed.errors_deadletterqueue_topic_name or ""
        if dlq:
            dlq_producer = client("producer")
            errors.reporters.append(
                DeadLetterQueueReporter(
                    dlq_producer,
                    dlq,
                    parsed.errors_deadletterqueue_context_headers_enable,
                    name,
                    task_id.task,
                    admin_settings=client("admin"),
                    replication_factor=parsed.errors_deadletterqueue_topic_replication_factor,
                )
            )
        sink_settings = SinkTaskSettings(
            consumer=consumer,
            topics=[t for t in parsed.topics if t],
            topics_regex=parsed.topics_regex or "",
            flush_interval_ms=worker.offset_flush_interval_ms,
            internal_topics=worker.internal_topics().names,
        )
        return WorkerSinkTask(*common, sink_settings)

    def _exactly_once(self, task_id: TaskId, parsed: SourceConnectorSettings) -> ExactlyOnceSettings | None:
        """The exactly-once settings of a source task, or None when the worker delivers at least once.

        ``enabled`` on a distributed worker makes every source task transactional, as in Connect;
        ``preparing`` only reads committed data (the stores do that).
        """
        worker = self.settings
        if worker.exactly_once_source_support.lower() != "enabled":
            return None
        placement = self.offset_store.placement()
        if not self.settings.group_id or placement is None:
            raise ConfigError("Exactly-once source delivery needs a distributed worker (an offsets topic)")

        interval = parsed.transaction_boundary_interval_ms
        return ExactlyOnceSettings(
            transactional_id(self.settings.group_id, task_id.connector, task_id.task),
            placement,
            parsed.transaction_boundary or "poll",
            interval if interval is not None else worker.offset_flush_interval_ms,
        )

    def _topic_tracker(self, name: str, task: int) -> Callable[[str], None] | None:
        seen = self.topic_seen
        if seen is None:
            return None
        return lambda topic: seen(topic, name, task)

    def _topic_creator(
        self,
        connector_config: Mapping[str, str],
        parsed: SourceConnectorSettings,
        admin_settings: Mapping[str, Any],
    ) -> Callable[[str], None] | None:
        partitions = parsed.topic_creation_default_partitions
        replication = parsed.topic_creation_default_replication_factor
        if not self.settings.topic_creation_enable or partitions is None or replication is None:
            return None
        prefix = "topic.creation.default."
        topic_configs = {
            k[len(prefix) :]: str(v)
            for k, v in connector_config.items()
            if k.startswith(prefix) and k not in (prefix + "partitions", prefix + "replication.factor")
        }

        def ensure(topic: str) -> None:
            if topic in self._created_topics:
                return
            if create_topic_if_missing(
                admin_settings, topic, int(partitions), int(replication), topic_configs
            ):
                log.info("Created topic %s with %s partitions", topic, partitions)
            self._created_topics.add(topic)

        return ensure
