"""The herder as the status listener of connectors and tasks, and its status answers.

Connectors and tasks report their state changes here (Connect's ``ConnectorStatus.Listener`` and
``TaskStatus.Listener``); each becomes a record of the status store, stamped with this worker's id and the
group generation. The REST status answers (``GET /connectors/{name}/status``, a task's status) read them back.
"""

from __future__ import annotations

from cdc.worker.config import CONNECTOR_CLASS_CONFIG
from cdc.worker.errors import (
    NotFoundError,
)
from cdc.worker.herder import JSON, ConnectorStateInfo, StateInfo
from cdc.worker.herder_core import HERDER_LOG, HerderCore
from cdc.worker.stores.base import (
    ConnectorStatus,
    State,
    TaskId,
    TaskStatus,
    TopicStatus,
)
from cdc.worker.worker import connector_kind

__all__ = ["HerderStatus"]

log = HERDER_LOG  # the herder's logger (herder_core.HERDER_LOG says why)


class HerderStatus(HerderCore):
    """Status listener and status answers (a mixin of :class:`~cdc.worker.connect_herder.ConnectHerder`)."""

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

    def connector_status(self, name: str) -> ConnectorStateInfo:
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


_CONNECT_TASK_KEYS = frozenset({"id", "state", "worker_id", "trace"})


def _state_json(state: State, worker_id: str | None, trace: str | None) -> StateInfo:
    out: StateInfo = {"state": state.value, "worker_id": worker_id}
    if trace:
        out["trace"] = trace
    return out
