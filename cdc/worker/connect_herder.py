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
import time
from collections.abc import Mapping
from typing import Any

from cdc import __version__
from cdc.worker import validation
from cdc.worker.config import CONNECTOR_CLASS_CONFIG, NAME_CONFIG
from cdc.worker.errors import (
    AlreadyExistsError,
    BadRequestError,
    ForbiddenError,
    NotFoundError,
)
from cdc.worker.herder import (
    JSON,
    ConnectorInfo,
    ConnectorStateInfo,
    Herder,
    PutResult,
    ServerInfo,
    TaskConfig,
)
from cdc.worker.herder_offsets import OffsetsApi
from cdc.worker.herder_status import HerderStatus
from cdc.worker.names import name_error, printable
from cdc.worker.reconciler import Reconciler
from cdc.worker.stores.base import (
    ClusterConfigState,
    RestartRequest,
    SessionKey,
    State,
    TargetState,
    TaskId,
)
from cdc.worker.stores.startup import start_stores
from cdc.worker.worker import connector_kind

__all__ = ["KAFKA_COMPAT_VERSION", "ConnectHerder"]

log = logging.getLogger(__name__)

KAFKA_COMPAT_VERSION = "4.4.0"


class ConnectHerder(HerderStatus, Reconciler, OffsetsApi, Herder):
    """The herder: the lifecycle, the config store's listener and the requests on connectors, tasks and
    plugins; the status listener, the reconciliation and the offsets API are its mixins' (see
    :mod:`cdc.worker.herder_core`)."""

    def start(self) -> None:
        # The membership connects (kafka-python's import and bootstrap) while the stores are read, mostly
        # waiting on the brokers; it joins the group at the herder thread's first poll, as before.
        self.membership.connect()
        self.status_store.set_update_listener(self._status_read)
        self.config_store.set_update_listener(self)
        try:
            start_stores([self.status_store, self.offset_store, self.config_store])
        except BaseException:
            self.membership.stop()
            raise
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

    def server_info(self) -> ServerInfo:
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

    def connectors(self) -> list[str]:
        return self._snapshot().connectors()

    def _info(self, name: str, snapshot: ClusterConfigState) -> ConnectorInfo:
        config = snapshot.connector_configs[name]
        return {
            "name": name,
            "config": dict(config),
            "tasks": [t.to_json() for t in snapshot.tasks(name)],
            "type": connector_kind(config.get(CONNECTOR_CLASS_CONFIG)),
        }

    def connector_info(self, name: str) -> ConnectorInfo:
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

    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo:
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

    def task_configs(self, name: str) -> list[TaskConfig]:
        snapshot = self._require(name)
        return [
            {"id": t.to_json(), "config": dict(snapshot.task_config(t) or {})} for t in snapshot.tasks(name)
        ]

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]:
        snapshot = self._require(name)
        return {str(t): dict(snapshot.task_config(t) or {}) for t in snapshot.tasks(name)}

    def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
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

    def await_state(
        self, name: str, state: str, timeout: float = 30.0, tasks: int | None = None
    ) -> ConnectorStateInfo:
        deadline = time.monotonic() + timeout
        last: ConnectorStateInfo | None = None
        while time.monotonic() < deadline:
            try:
                last = self.connector_status(name)
            except NotFoundError:
                last = None
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
        raise TimeoutError(f"{name} did not reach {state}: {last or {}}")
