"""The herder: one control plane for standalone and distributed mode.

Requests write the desired state to the config store (memory in standalone, the config topic in
distributed mode); a single herder thread then *reconciles*: it compares what the config snapshot and
this worker's assignment ask for with what runs, and starts, stops, reconfigures or restarts connectors
and tasks until they match. Standalone and distributed differ only in their stores and their
:class:`~cdc.worker.membership.Membership` — which is why this is one class and not two (Connect has
two herders that duplicate much of this logic).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from cdc import __version__
from cdc.api.errors import ConnectError, DataError
from cdc.api.offsets import check_offset_map, offset_key, partition_key
from cdc.worker import validation
from cdc.worker.config import CONNECTOR_CLASS_CONFIG, NAME_CONFIG
from cdc.worker.errors import (
    AlreadyExistsError,
    BadRequestError,
    ForbiddenError,
    NotFoundError,
    NotLeaderError,
)
from cdc.worker.herder import Herder, PutResult
from cdc.worker.membership import Membership
from cdc.worker.names import name_error, printable
from cdc.worker.offsets import decode_offset, encode_offset
from cdc.worker.rest.loggers import Loggers
from cdc.worker.settings import ConnectorSettings
from cdc.worker.stores.base import (
    ClusterConfigState,
    ConfigBackingStore,
    ConnectorStatus,
    OffsetBackingStore,
    RestartRequest,
    SessionKey,
    State,
    StatusBackingStore,
    TargetState,
    TaskId,
    TaskStatus,
    TopicStatus,
)
from cdc.worker.worker import Worker, connector_kind

__all__ = ["KAFKA_COMPAT_VERSION", "ConnectHerder"]

log = logging.getLogger(__name__)

KAFKA_COMPAT_VERSION = "4.4.0"
JSON = dict[str, Any]


class ConnectHerder(Herder):
    def __init__(
        self,
        worker_factory: Callable[[ConnectHerder], Worker],
        config_store: ConfigBackingStore,
        status_store: StatusBackingStore,
        offset_store: OffsetBackingStore,
        membership: Membership,
        kafka_cluster_id: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.config_store = config_store
        self.status_store = status_store
        self.offset_store = offset_store
        self.membership = membership
        self.loggers = Loggers()  # shared with the REST API's /admin/loggers
        self._cluster_id_fn = kafka_cluster_id
        self._cluster_id: str | None = None
        self.worker = worker_factory(self)
        self.settings = self.worker.settings
        self.worker_id = self.worker.worker_id
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="herder", daemon=True)
        self._lock = threading.RLock()
        # What runs, with the config each instance was started with.
        self._running_connectors: dict[str, dict[str, str]] = {}
        self._connector_targets: dict[str, TargetState] = {}
        self._running_tasks: dict[TaskId, dict[str, str]] = {}
        self._needs_reconfig: set[str] = set()
        self._restart_connectors: set[str] = set()
        self._restart_tasks: set[TaskId] = set()
        self._pending_restarts: list[RestartRequest] = []

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        self.status_store.set_update_listener(self._status_read)
        self.status_store.start()
        self.offset_store.start()
        self.config_store.set_update_listener(self)
        self.config_store.start()
        self._thread.start()

    def wait_started(self, timeout: float) -> bool:
        return self._started.wait(timeout)

    def stop(self) -> None:
        self.membership.prepare_to_stop()  # no more rebalances: this worker stops its work, then leaves
        self._stopping.set()
        self._wake.set()
        self._thread.join(60)
        self.worker.stop()
        # The UNASSIGNED statuses just written are in the status topic before the group rebalances (Connect
        # flushes them before a rebalance too): none can land after the next owner's RUNNING, and the others
        # read them before the coordinator tells them of the departure (Membership.rebalance_expected).
        try:
            self.status_store.flush()
        except Exception:
            log.warning("Could not flush the statuses before leaving the group", exc_info=True)
        self.membership.stop()
        for store in (self.config_store, self.status_store, self.offset_store):
            try:
                store.stop()
            except Exception:
                log.exception("Error stopping %s", store)

    def _run(self) -> None:
        try:
            self._reconcile()
        except Exception:
            log.exception("Herder failed its first reconciliation")
        self._started.set()
        log.info("Herder started")
        while not self._stopping.is_set():
            self._wake.wait(1.0)
            self._wake.clear()
            if self._stopping.is_set():
                break
            try:
                self.membership.poll(0)
                self._reconcile()
            except Exception:
                log.exception("Unexpected error in the herder's tick")
                self._stopping.wait(1.0)

    def wake(self) -> None:
        self._wake.set()

    def _status_read(self, status: ConnectorStatus | TaskStatus) -> None:
        """The status store took in ``status`` (its reader thread). Another worker that gives up a connector
        or task writes UNASSIGNED for it, as it stops (before it leaves the group) or after a revocation
        (before it rejoins): a rebalance is about to begin, which the membership then looks for at once.
        The records replayed while the store starts are history, not news."""
        if (
            status.state is State.UNASSIGNED
            and status.worker_id
            and status.worker_id != self.worker_id
            and self._started.is_set()
        ):
            self.membership.rebalance_expected()

    # -- config store listener ---------------------------------------------------------------------------
    def _config_updated(self) -> None:
        # A group member notes the offset of every change to the configured connectors and tasks: one read
        # after the snapshot its last assignment was computed from needs another rebalance.
        self.membership.config_updated()

    def on_connector_config_update(self, connector: str) -> None:
        self._config_updated()
        self.wake()

    def on_connector_config_remove(self, connector: str) -> None:
        self._config_updated()
        self.wake()

    def on_task_config_update(self, tasks: list[TaskId]) -> None:
        self._config_updated()
        self.wake()

    def on_connector_target_state_change(self, connector: str) -> None:
        self.wake()

    def on_session_key_update(self, key: SessionKey) -> None:
        self.wake()

    def on_restart_request(self, request: RestartRequest) -> None:
        with self._lock:
            self._pending_restarts.append(request)
        self.wake()

    def on_logging_level_update(self, namespace: str, level: str) -> None:
        try:
            self.loggers.set_level(namespace, level)
        except ValueError as exc:
            log.warning("Ignoring the cluster log level %r for %s: %s", level, namespace, exc)
            return
        log.info("Log level of %s set to %s for the whole cluster", namespace, level)

    def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        self.config_store.put_logger_level(namespace, level)

    # -- status listener (connectors and tasks report here) ----------------------------------------------
    def _put_connector(self, name: str, state: State, trace: str | None = None) -> None:
        self.status_store.put(
            ConnectorStatus(name, state, self.worker_id, self.membership.generation(), trace)
        )

    def _put_task(self, task: TaskId, state: State, trace: str | None = None, safe: bool = False) -> None:
        status = TaskStatus(task, state, self.worker_id, self.membership.generation(), trace)
        (self.status_store.put_safe if safe else self.status_store.put)(status)

    def on_connector_startup(self, connector: str) -> None:
        self._put_connector(connector, State.RUNNING)

    def on_connector_pause(self, connector: str) -> None:
        self._put_connector(connector, State.PAUSED)

    def on_connector_stop(self, connector: str) -> None:
        self._put_connector(connector, State.STOPPED)

    def on_connector_failure(self, connector: str, trace: str) -> None:
        self._put_connector(connector, State.FAILED, trace)

    def on_connector_shutdown(self, connector: str) -> None:
        self.status_store.put_safe(
            ConnectorStatus(connector, State.UNASSIGNED, self.worker_id, self.membership.generation())
        )

    def request_task_reconfiguration(self, connector: str) -> None:
        with self._lock:
            self._needs_reconfig.add(connector)
        self.wake()

    def on_startup(self, task: TaskId) -> None:
        self._put_task(task, State.RUNNING)

    def on_pause(self, task: TaskId) -> None:
        self._put_task(task, State.PAUSED)

    def on_resume(self, task: TaskId) -> None:
        self._put_task(task, State.RUNNING)

    def on_failure(self, task: TaskId, trace: str) -> None:
        self._put_task(task, State.FAILED, trace)

    def on_shutdown(self, task: TaskId) -> None:
        self._put_task(task, State.UNASSIGNED, safe=True)

    def on_topic_seen(self, topic: str, connector: str, task: int) -> None:
        if not self.settings.topic_tracking_enable:
            return
        if self.status_store.get_topic(connector, topic) is None:
            self.status_store.put_topic(TopicStatus(topic, connector, task))

    # -- reconciliation (herder thread only) -------------------------------------------------------------
    def _reconcile(self) -> None:
        snapshot = self.config_store.snapshot()
        my_connectors, my_tasks = self.membership.assignment(snapshot)
        with self._lock:
            restarts, self._pending_restarts = self._pending_restarts, []
        for request in restarts:
            self._plan_restart(request, my_connectors, my_tasks)
        removed = self._reconcile_connectors(snapshot, my_connectors)
        # Every worker generates the task configs of the connectors it runs; a follower sends them to the
        # leader, the only writer (see _write_task_configs).
        self._generate_task_configs(snapshot)
        snapshot = self.config_store.snapshot()
        my_connectors, my_tasks = self.membership.assignment(snapshot)
        self._reconcile_tasks(snapshot, my_tasks)
        # Only now that the deleted connectors' tasks have stopped (and written UNASSIGNED) may their
        # statuses be tombstoned: a tombstone followed by UNASSIGNED would leave the status of a deleted
        # task in the status topic for good.
        for name in removed:
            self._destroy_statuses(name)

    def _reconcile_connectors(self, snapshot: ClusterConfigState, mine: set[str]) -> list[str]:
        """Start, stop and retarget connectors; returns the deleted ones this worker stopped."""
        removed: list[str] = []
        for name in list(self._running_connectors):
            config = snapshot.connector_configs.get(name)
            restart = name in self._restart_connectors
            if config is None or name not in mine or config != self._running_connectors[name] or restart:
                self.worker.stop_connector(name)
                del self._running_connectors[name]
                self._connector_targets.pop(name, None)
                if config is None:
                    removed.append(name)
        self._restart_connectors.clear()
        for name in sorted(mine):
            config = snapshot.connector_configs.get(name)
            if config is None:
                continue
            target = snapshot.target_state(name) or TargetState.STARTED
            if name not in self._running_connectors:
                self._running_connectors[name] = config
                self._connector_targets[name] = target
                if self.worker.start_connector(name, config, target) and target is TargetState.STARTED:
                    with self._lock:
                        self._needs_reconfig.add(name)
            elif self._connector_targets.get(name) is not target:
                self._connector_targets[name] = target
                self.worker.set_connector_target_state(name, target)
                if target is TargetState.STARTED:
                    with self._lock:
                        self._needs_reconfig.add(name)
        return removed

    def _destroy_statuses(self, name: str) -> None:
        """Tombstones for a deleted connector's tasks, itself and its active topics (as Connect's
        ``onDeletion`` and the topic reset on deletion of KIP-558 write them)."""
        gen = self.membership.generation()
        for status in self.status_store.get_all(name):
            self.status_store.put(TaskStatus(status.id, State.DESTROYED, self.worker_id, gen))
        self.status_store.put(ConnectorStatus(name, State.DESTROYED, self.worker_id, gen))
        for topic in self.status_store.get_all_topics(name):
            self.status_store.delete_topic(name, topic.topic)

    def _generate_task_configs(self, snapshot: ClusterConfigState) -> None:
        with self._lock:
            wanted, self._needs_reconfig = self._needs_reconfig, set()
        for name in sorted(wanted):
            if name not in self._running_connectors or not self.worker.is_running(name):
                continue
            if snapshot.target_state(name) is not TargetState.STARTED:
                continue
            config = ConnectorSettings.parse(snapshot.connector_configs[name])
            max_tasks = config.tasks_max
            try:
                configs = self.worker.connector_task_configs(name, max_tasks)
            except Exception as exc:
                self.worker.fail_connector(name, exc)
                continue
            if config.tasks_max_enforce and len(configs) > max_tasks:
                self.worker.fail_connector(
                    name,
                    ConnectError(
                        f"The connector {name} has generated {len(configs)} tasks, which is greater than "
                        f"{max_tasks}, the maximum number of tasks it is configured to create. "
                    ),
                )
                continue
            current = [snapshot.task_config(t) for t in snapshot.tasks(name)]
            if current != configs or name in snapshot.inconsistent:
                log.info("Writing %d task configs for connector %s", len(configs), name)
                self._write_task_configs(name, configs)

    def _write_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        if self.membership.is_leader():
            self.config_store.put_task_configs(name, configs)
            return
        from cdc.worker.distributed.internal import send_task_configs

        leader = self.membership.leader_url()
        try:
            if leader is None:
                raise ConnectError("no leader is known")
            key = self._snapshot().session_key if self.membership.signature_required() else None
            send_task_configs(leader, name, configs, key)
        except Exception as exc:  # retried on a later tick (e.g. after a rebalance)
            log.warning("Could not send the task configs of %s to the leader: %s", name, exc)
            with self._lock:
                self._needs_reconfig.add(name)

    def _reconcile_tasks(self, snapshot: ClusterConfigState, mine: set[TaskId]) -> None:
        wanted: dict[TaskId, dict[str, str]] = {}
        for task in mine:
            config = snapshot.task_config(task)
            target = snapshot.target_state(task.connector)
            if config is not None and target is not None and target is not TargetState.STOPPED:
                wanted[task] = config
        to_stop = [
            t for t, cfg in self._running_tasks.items() if wanted.get(t) != cfg or t in self._restart_tasks
        ]
        if to_stop:
            self.worker.stop_tasks(to_stop)
            for t in to_stop:
                del self._running_tasks[t]
        self._restart_tasks.clear()
        for task, config in sorted(wanted.items()):
            target = snapshot.target_state(task.connector) or TargetState.STARTED
            if task in self._running_tasks:
                self.worker.set_task_target_state(task, target)
                continue
            connector_config = snapshot.connector_configs[task.connector]
            self._running_tasks[task] = config
            self.worker.start_task(task, connector_config, config, target)

    def _plan_restart(self, request: RestartRequest, my_connectors: set[str], my_tasks: set[TaskId]) -> None:
        name = request.connector
        if name in my_connectors:
            status = self.status_store.get(name)
            if request.restart_connector(status.state if status else None):
                self._restart_connectors.add(name)
                self._put_connector(name, State.RESTARTING)
        for task in my_tasks:
            if task.connector != name:
                continue
            tstatus = self.status_store.get_task(task)
            if request.restart_task(tstatus.state if tstatus else None):
                self._restart_tasks.add(task)
                self._put_task(task, State.RESTARTING)

    # -- helpers for requests ----------------------------------------------------------------------------
    def _snapshot(self) -> ClusterConfigState:
        return self.config_store.snapshot()

    def _require(self, name: str) -> ClusterConfigState:
        snapshot = self._snapshot()
        if not snapshot.contains(name):
            raise NotFoundError(f"Connector {name} not found")
        return snapshot

    def _require_leader(self) -> None:
        # Connect runs requests on the herder thread once it has joined the group, so a request made while
        # this worker is still joining (just started, or in a rebalance with no known leader) waits for the
        # join instead of failing with 409; REST gives up after 90 s.
        wait_s = min(self.settings.rebalance_timeout_ms / 1000, 80.0)
        deadline = time.monotonic() + wait_s
        while (
            self.membership.leader_url() is None
            and not self._stopping.is_set()
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        if not self.membership.is_leader():
            raise NotLeaderError(
                "This worker is not able to communicate with the leader of the cluster, "
                "which is required for dynamically-reconfiguring connectors.",
                self.membership.leader_url(),
            )

    def _refresh(self) -> None:
        self.config_store.refresh()

    # -- Herder API: worker ------------------------------------------------------------------------------
    def server_info(self) -> JSON:
        if self._cluster_id is None:
            try:
                self._cluster_id = self._cluster_id_fn()
            except Exception:
                self._cluster_id = None
        return {
            "version": KAFKA_COMPAT_VERSION,
            "commit": f"cdc-{__version__}",
            "kafka_cluster_id": self._cluster_id,
        }

    def health(self) -> tuple[str, str]:
        if not self._started.is_set():
            return "starting", "Worker is still starting up."
        if self._stopping.is_set() or not self._thread.is_alive():
            return "unhealthy", "Worker's herder thread is not running."
        return "healthy", "Worker has completed startup and is ready to handle requests."

    # -- connectors --------------------------------------------------------------------------------------
    def connectors(self) -> list[str]:
        return self._snapshot().connectors()

    def _info(self, name: str, snapshot: ClusterConfigState) -> JSON:
        config = snapshot.connector_configs[name]
        return {
            "name": name,
            "config": dict(config),
            "tasks": [t.to_json() for t in snapshot.tasks(name)],
            "type": connector_kind(config.get(CONNECTOR_CLASS_CONFIG)),
        }

    def connector_info(self, name: str) -> JSON:
        return self._info(name, self._require(name))

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._require(name).connector_configs[name])

    def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> PutResult:
        problem = name_error(name)
        if problem is not None:
            raise BadRequestError(f"Connector name {printable(name)} is invalid: {problem}")
        config = {k: str(v) for k, v in config.items()}
        config[NAME_CONFIG] = name
        self._check_config_size(config)
        infos = validation.validate(config, self.settings, self.settings.resolve, self._other_configs(name))
        if infos["error_count"]:
            raise BadRequestError(validation.invalid_config_message(infos))
        self._require_leader()
        with self._lock:
            exists = self._snapshot().contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            if not exists:
                self._check_connector_count()
            self.config_store.put_connector_config(name, config, None if exists else initial_state)
            self._refresh()
        self.wake()
        return PutResult(not exists, self._info(name, self._snapshot()))

    def _check_config_size(self, config: Mapping[str, str]) -> None:
        """``connector.config.max.bytes``: a config the config topic could not take is a 400 here, not a
        failed write (a 500) after validation has connected to the database."""
        limit = self.settings.connector_config_max_bytes
        size = sum(
            len(k.encode("utf-8", "surrogatepass")) + len(v.encode("utf-8", "surrogatepass"))
            for k, v in config.items()
        )
        if size > limit:
            raise BadRequestError(
                f"Connector configuration is {size} bytes, more than the {limit} this worker accepts "
                "(connector.config.max.bytes)"
            )

    def _check_connector_count(self) -> None:
        """``connectors.max``: the cap on connectors a REST user can create (0: none)."""
        limit = self.settings.connectors_max
        if limit and len(self._snapshot().connector_configs) >= limit:
            raise BadRequestError(
                f"This worker group holds {limit} connectors, its limit (connectors.max); "
                "delete one or raise the limit in the worker file"
            )

    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> JSON:
        current = self.connector_config(name)
        for key, value in patch.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = str(value)
        if current.get(NAME_CONFIG, name) != name:
            raise BadRequestError(
                f"Connector name configuration ({current.get(NAME_CONFIG)}) doesn't match "
                f"connector name in the URL ({name})"
            )
        return self.put_connector_config(name, current, True).info

    def delete_connector(self, name: str) -> None:
        snapshot = self._snapshot()
        stored = name if snapshot.contains(name) else snapshot.rejected_name(name)
        if stored is None:
            raise NotFoundError(f"Connector {name} not found")
        self._require_leader()
        self.config_store.remove_connector_config(stored)
        self._refresh()
        self.wake()

    def connector_status(self, name: str) -> JSON:
        snapshot = self._snapshot()
        status = self.status_store.get(name)
        if status is None or not snapshot.contains(name):
            raise NotFoundError(f"No status found for connector {name}")
        return {
            "name": name,
            "connector": _state_json(status.state, status.worker_id, status.trace),
            "tasks": [{"id": t.task, **self._task_state(t)} for t in snapshot.tasks(name)],
            "type": connector_kind(snapshot.connector_configs[name].get(CONNECTOR_CLASS_CONFIG)),
        }

    def _task_state(self, task: TaskId) -> JSON:
        status = self.status_store.get_task(task)
        if status is None:
            return {"state": State.UNASSIGNED.value, "worker_id": None}
        return {**_state_json(status.state, status.worker_id, status.trace), **self._progress(task)}

    def task_status(self, task: TaskId) -> JSON:
        snapshot = self._require(task.connector)
        status = self.status_store.get_task(task)
        if status is None or task not in snapshot.tasks(task.connector):
            raise NotFoundError(f"No status found for task {task}")
        return {
            "id": task.task,
            **_state_json(status.state, status.worker_id, status.trace),
            **self._progress(task),
        }

    def _progress(self, task: TaskId) -> JSON:
        """What a task running on this worker reports beyond its state
        (:meth:`cdc.api.connector.Task.progress`); a task of another worker of a cluster reports it on that
        worker's REST API."""
        running = self.worker.task(task)
        if running is None:
            return {}
        try:
            extra = running.progress()
        except Exception:  # a status answer never fails for a task's extra
            log.debug("Task %s failed to report its progress", task, exc_info=True)
            return {}
        return {k: v for k, v in extra.items() if k not in _CONNECT_TASK_KEYS}

    def task_configs(self, name: str) -> list[JSON]:
        snapshot = self._require(name)
        return [
            {"id": t.to_json(), "config": dict(snapshot.task_config(t) or {})} for t in snapshot.tasks(name)
        ]

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        snapshot = self._require(name)
        return {str(t): dict(snapshot.task_config(t) or {}) for t in snapshot.tasks(name)}

    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> JSON | None:
        snapshot = self._require(name)
        request = RestartRequest(name, only_failed=only_failed, include_tasks=include_tasks)
        self._require_leader()
        if not include_tasks and not only_failed:
            self._restart_now(request)
            return None
        plan = self.connector_status(name)
        status = self.status_store.get(name)
        if request.restart_connector(status.state if status else None):
            plan["connector"]["state"] = State.RESTARTING.value
        for task_json in plan["tasks"]:
            tstatus = self.status_store.get_task(TaskId(name, task_json["id"]))
            if request.restart_task(tstatus.state if tstatus else None):
                task_json["state"] = State.RESTARTING.value
        self._restart_now(request)
        del snapshot
        return plan

    def _restart_now(self, request: RestartRequest) -> None:
        before = self.config_store.snapshot().offset
        self.config_store.put_restart_request(request)
        self._refresh()
        # A store that records restart requests (Kafka) announces them to every worker, this one included,
        # through on_restart_request once the record is read back; one that does not (memory) leaves its
        # offset where it was, and the request is applied here.
        if self.config_store.snapshot().offset == before:
            self.on_restart_request(request)

    def restart_task(self, task: TaskId) -> None:
        snapshot = self._require(task.connector)
        if task not in snapshot.tasks(task.connector):
            raise NotFoundError(f"Task {task} not found")
        with self._lock:
            self._restart_tasks.add(task)
        self.wake()

    def _set_target(self, name: str, state: TargetState) -> None:
        self._require(name)
        self.config_store.put_target_state(name, state)
        self._refresh()
        self.wake()

    def pause_connector(self, name: str) -> None:
        self._set_target(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        self._set_target(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        self._require(name)
        self._require_leader()
        self.config_store.put_task_configs(name, [])
        self._set_target(name, TargetState.STOPPED)

    def connector_active_topics(self, name: str) -> list[str]:
        if not self.settings.topic_tracking_enable:
            raise ForbiddenError("Topic tracking is disabled.")
        self._require(name)
        return sorted({t.topic for t in self.status_store.get_all_topics(name)})

    def reset_connector_active_topics(self, name: str) -> None:
        if not self.settings.topic_tracking_enable:
            raise ForbiddenError("Topic tracking is disabled.")
        if not self.settings.topic_tracking_allow_reset:
            raise ForbiddenError("Topic tracking reset is disabled.")
        self._require(name)
        for status in self.status_store.get_all_topics(name):
            self.status_store.delete_topic(name, status.topic)

    # -- offsets -----------------------------------------------------------------------------------------
    def connector_offsets(self, name: str) -> JSON:
        snapshot = self._require(name)
        kind = connector_kind(snapshot.connector_configs[name].get(CONNECTOR_CLASS_CONFIG))
        if kind == "sink":
            return {"offsets": self._sink_offsets(name)}
        partitions = self.offset_store.connector_partitions(name)
        keys = [offset_key(name, p) for p in partitions]
        values = self.offset_store.get(keys)
        offsets = []
        for partition, key in zip(partitions, keys, strict=True):
            value = decode_offset(values.get(key))
            if value is not None:
                offsets.append({"partition": partition, "offset": value})
        return {"offsets": offsets}

    def _sink_offsets(self, name: str) -> list[JSON]:
        from confluent_kafka import ConsumerGroupTopicPartitions
        from confluent_kafka.admin import AdminClient

        from cdc.kafka.clients import client_config, to_librdkafka

        admin = AdminClient(to_librdkafka(client_config(self.settings.client_props(), "admin.")))
        futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(f"connect-{name}")])
        result = next(iter(futures.values())).result(30)
        return [
            {
                "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                "offset": {"kafka_offset": tp.offset},
            }
            for tp in result.topic_partitions
            if tp.offset >= 0
        ]

    def _require_stopped(self, name: str) -> ClusterConfigState:
        snapshot = self._require(name)
        if snapshot.target_state(name) is not TargetState.STOPPED or self._tasks_still_running(name):
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be "
                "done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return snapshot

    def _tasks_still_running(self, name: str) -> bool:
        return any(t.connector == name for t in self.worker.task_ids())

    def alter_connector_offsets(self, name: str, offsets: list[JSON]) -> str:
        snapshot = self._require_stopped(name)
        self._require_leader()
        kind = connector_kind(snapshot.connector_configs[name].get(CONNECTOR_CLASS_CONFIG))
        if kind == "sink":
            raise BadRequestError(
                "Altering the offsets of sink connectors is not supported yet by this worker"
            )
        values: dict[bytes, bytes | None] = {}
        by_partition: dict[str, Any] = {}
        for entry in offsets:
            partition = entry.get("partition")
            if not isinstance(partition, dict):
                raise BadRequestError("Source partitions may not be null")
            offset = entry.get("offset")
            if offset is not None and not isinstance(offset, dict):
                raise BadRequestError("Source offsets must be maps")
            try:
                check_offset_map("Source partition", partition)
                check_offset_map("Source offset", offset)
            except DataError as exc:
                raise BadRequestError(str(exc)) from exc
            values[offset_key(name, partition)] = encode_offset(offset)
            by_partition[partition_key(partition)] = offset
        checked = self._connector_alter_offsets(name, snapshot.connector_configs[name], by_partition)
        self.offset_store.set(values)
        return _offsets_message(checked, "altered")

    def reset_connector_offsets(self, name: str) -> str:
        snapshot = self._require_stopped(name)
        self._require_leader()
        kind = connector_kind(snapshot.connector_configs[name].get(CONNECTOR_CLASS_CONFIG))
        if kind == "sink":
            raise BadRequestError(
                "Resetting the offsets of sink connectors is not supported yet by this worker"
            )
        partitions = self.offset_store.connector_partitions(name)
        checked = self._connector_alter_offsets(
            name, snapshot.connector_configs[name], {partition_key(p): None for p in partitions}
        )
        self.offset_store.set({offset_key(name, p): None for p in partitions})
        return _offsets_message(checked, "reset")

    def _connector_alter_offsets(self, name: str, config: Mapping[str, str], offsets: dict[str, Any]) -> bool:
        """Connect's ``SourceConnector.alterOffsets`` hook on a fresh instance: the connector may refuse the
        offsets (answered 400 with its message: Connect answers 500, but the fault is the request's) and
        says whether it checked them, which picks the message of the answer."""
        from cdc.plugins import registry

        try:
            connector = registry.load(config[CONNECTOR_CLASS_CONFIG])()
            return bool(connector.alter_offsets(self.settings.resolve(dict(config)), offsets))
        except NotImplementedError as exc:
            raise BadRequestError(
                f"Failed to modify offsets for connector {name} because it doesn't support "
                "external modification of offsets"
            ) from exc
        except ConnectError as exc:
            raise BadRequestError(str(exc)) from exc

    # -- internal (distributed) --------------------------------------------------------------------------
    def internal_requests_signed(self) -> bool:
        return self.membership.signature_required()

    def verify_internal_request(self, signature: Any) -> None:
        from cdc.worker.distributed.internal import check_signature

        if self.internal_requests_signed():
            allowed = self.settings.inter_worker_verification_algorithms or ("HmacSHA256",)
            check_signature(self._snapshot().session_key, signature, list(allowed))

    def put_task_configs(self, name: str, configs: list[dict[str, str]], signature: Any = None) -> None:
        """A follower's task configs, sent to the leader (signed under the ``sessioned`` protocol)."""
        self.verify_internal_request(signature)  # first: a bad signature learns nothing about ``name``
        self._require(name)
        self._require_leader()
        self.config_store.put_task_configs(name, [dict(c) for c in configs])
        self.wake()

    # -- plugins -----------------------------------------------------------------------------------------
    def plugins(self, connectors_only: bool) -> list[JSON]:
        return validation.plugins(connectors_only)

    def plugin_config(self, plugin: str) -> list[JSON]:
        return validation.plugin_config(plugin)

    def validate_connector_config(self, config: Mapping[str, str]) -> JSON:
        props = {k: str(v) for k, v in config.items()}
        return validation.validate(
            props, self.settings, self.settings.resolve, self._other_configs(props.get(NAME_CONFIG))
        )

    def _other_configs(self, name: str | None) -> dict[str, dict[str, str]]:
        """The configs of the group's connectors other than ``name`` (which a replacing PUT validates)."""
        configs = self._snapshot().connector_configs
        return {other: dict(config) for other, config in configs.items() if other != name}

    # -- waiting helpers for tests and the CLI -----------------------------------------------------------
    def await_state(self, name: str, state: str, timeout: float = 30.0, tasks: int | None = None) -> JSON:
        deadline = time.monotonic() + timeout
        last: JSON = {}
        while time.monotonic() < deadline:
            try:
                last = self.connector_status(name)
            except NotFoundError:
                last = {}
            if (
                last
                and last["connector"]["state"] == state
                and (
                    tasks is None
                    or (len(last["tasks"]) == tasks and all(t["state"] == state for t in last["tasks"]))
                )
            ):
                return last
            time.sleep(0.1)
        raise TimeoutError(f"{name} did not reach {state}: {last}")


def _offsets_message(checked: bool, done: str) -> str:
    """Connect's answer to an offsets change: definite when the connector checked the offsets."""
    if checked:
        return f"The offsets for this connector have been {done} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {done} successfully. "
        f"However, if this connector manages offsets externally, they will need to be manually {done} in "
        "the system that the connector uses."
    )


_CONNECT_TASK_KEYS = frozenset({"id", "state", "worker_id", "trace"})


def _state_json(state: State, worker_id: str | None, trace: str | None) -> JSON:
    out: JSON = {"state": state.value, "worker_id": worker_id}
    if trace:
        out["trace"] = trace
    return out
