"""The herder thread's reconciliation: what runs is made to match what is asked for.

Each tick compares the config snapshot and this worker's assignment with the connectors and tasks running
here, and starts, stops, retargets or restarts them; the connectors this worker runs generate their task
configs, which the leader alone writes (a follower sends them to it). Restart requests are planned here.
"""

from __future__ import annotations

from cdc.api.errors import ConnectError
from cdc.worker.herder_core import HERDER_LOG, HerderCore
from cdc.worker.settings import ConnectorSettings
from cdc.worker.stores.base import (
    ClusterConfigState,
    ConnectorStatus,
    RestartRequest,
    State,
    TargetState,
    TaskId,
    TaskStatus,
)

__all__ = ["Reconciler"]

log = HERDER_LOG  # the herder's logger (herder_core.HERDER_LOG says why)


class Reconciler(HerderCore):
    """Reconciliation (a mixin of :class:`~cdc.worker.connect_herder.ConnectHerder`; herder thread only)."""

    def _run(self) -> None:
        try:
            self._reconcile()
        except Exception:
            log.exception("Herder failed its first reconciliation")
        self._started.set()
        log.info("Herder started")
        # The first tick comes at once: its poll is what starts the group membership (the join), and until
        # the worker has joined, a POST /connectors waits for it; a 1 s wait here was 1 s added to that.
        first = True
        while not self._stopping.is_set():
            if not first:
                self._wake.wait(1.0)
            first = False
            self._wake.clear()
            if self._stopping.is_set():
                break
            try:
                self.membership.poll(0)
                self._reconcile()
            except Exception:
                log.exception("Unexpected error in the herder's tick")
                self._stopping.wait(1.0)

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
