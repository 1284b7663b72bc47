"""The state every part of the herder shares, and the helpers its requests and its thread use.

:class:`~cdc.worker.connect_herder.ConnectHerder` is assembled from this core and one mixin per concern:
:class:`~cdc.worker.herder_status.HerderStatus` (the status listener and the status answers),
:class:`~cdc.worker.reconciler.Reconciler` (the herder thread's reconciliation) and
:class:`~cdc.worker.herder_offsets.OffsetsApi` (``GET/PATCH/DELETE /connectors/{name}/offsets``). Each
mixin reads the state declared here, so none needs another.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from cdc.worker.errors import (
    NotFoundError,
    NotLeaderError,
)
from cdc.worker.membership import Membership
from cdc.worker.rest.loggers import Loggers
from cdc.worker.stores.base import (
    ClusterConfigState,
    ConfigBackingStore,
    ConnectorStatus,
    OffsetBackingStore,
    RestartRequest,
    State,
    StatusBackingStore,
    TargetState,
    TaskId,
    TaskStatus,
)
from cdc.worker.worker import Worker

__all__ = ["HERDER_LOG", "HerderCore"]

# The herder's logger, whichever of its modules logs: log lines and log levels (/admin/loggers, the
# Java names mapped in docs/logging.md) stay as they were before the herder was split.
HERDER_LOG = logging.getLogger("cdc.worker.connect_herder")


class HerderCore:
    """The stores, the membership, the worker and the herder thread's bookkeeping."""

    def __init__(
        self,
        worker_factory: Callable[[Any], Worker],  # given the ConnectHerder, its listeners
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
        # notified with _wake: a request waiting for the group's leader (_require_leader) looks again at once
        self._woken = threading.Condition()
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

    def wake(self) -> None:
        self._wake.set()
        with self._woken:
            self._woken.notify_all()

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
            # the membership wakes the herder when the leader changes; 50 ms bounds a missed notification
            with self._woken:
                if self.membership.leader_url() is None:
                    self._woken.wait(0.05)
        if not self.membership.is_leader():
            raise NotLeaderError(
                "This worker is not able to communicate with the leader of the cluster, "
                "which is required for dynamically-reconfiguring connectors.",
                self.membership.leader_url(),
            )

    def _refresh(self) -> None:
        self.config_store.refresh()

    def _put_connector(self, name: str, state: State, trace: str | None = None) -> None:
        self.status_store.put(
            ConnectorStatus(name, state, self.worker_id, self.membership.generation(), trace)
        )

    def _put_task(self, task: TaskId, state: State, trace: str | None = None, safe: bool = False) -> None:
        status = TaskStatus(task, state, self.worker_id, self.membership.generation(), trace)
        (self.status_store.put_safe if safe else self.status_store.put)(status)

    def _run(self) -> None:
        """The herder thread's loop (:class:`~cdc.worker.reconciler.Reconciler`'s)."""
        raise NotImplementedError
