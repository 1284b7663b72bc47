"""Who does what: the assignment of connectors and tasks to this worker.

A herder asks its :class:`Membership` which connectors and tasks are this worker's, whether it leads,
and where the leader or an instance's owner is (for request forwarding). :class:`SoloMembership` is a
cluster of one (standalone mode, and a distributed worker before it joins a group); the Kafka group
protocol (``connect``) implements the same interface in :mod:`cdc.worker.distributed`.
"""

from __future__ import annotations

from typing import Protocol

from cdc.worker.metrics import RebalanceMetrics
from cdc.worker.stores.base import ClusterConfigState, TaskId

__all__ = ["Membership", "SoloMembership"]


class Membership(Protocol):
    rebalances: RebalanceMetrics
    """Rebalances this worker took part in (none in a cluster of one)."""

    def generation(self) -> int: ...

    def is_leader(self) -> bool: ...

    def leader_url(self) -> str | None: ...

    def signature_required(self) -> bool:
        """Whether workers sign their internal requests (KIP-507: the group runs the ``sessioned``
        protocol); never in a cluster of one."""
        ...

    def owner_url(self, connector: str, task: int | None = None) -> str | None: ...

    def assignment(self, snapshot: ClusterConfigState) -> tuple[set[str], set[TaskId]]:
        """The connectors and tasks this worker should run now."""
        ...

    def connect(self) -> None:
        """Start connecting to the cluster (in the background) while the herder reads its stores; the group
        is joined at the first :meth:`poll`. Nothing in a cluster of one."""
        ...

    def poll(self, timeout: float) -> bool:
        """Drive membership (heartbeats, rebalances); True if the assignment may have changed."""
        ...

    def prepare_to_stop(self) -> None:
        """The worker is about to stop its work: take part in no more rebalances (a group member)."""
        ...

    def config_updated(self) -> None:
        """A config record changed the configured connectors or tasks (the herder's config listener)."""
        ...

    def rebalance_expected(self) -> None:
        """Another worker of the group gave up a connector or task (it wrote UNASSIGNED for it): it is
        stopping and about to leave the group, or gives up revoked work and rejoins. A group member looks
        for the rebalance to come sooner than its next heartbeat would; nothing in a cluster of one.
        Called from the status store's reader thread: must not block."""
        ...

    def stop(self) -> None: ...


class SoloMembership:
    """A cluster of one: this worker leads and runs everything."""

    def __init__(self, url: str, generation: int = 0) -> None:
        self.url = url
        self._generation = generation
        self.rebalances = RebalanceMetrics()

    def generation(self) -> int:
        return self._generation

    def is_leader(self) -> bool:
        return True

    def leader_url(self) -> str | None:
        return self.url

    def signature_required(self) -> bool:
        return False

    def owner_url(self, connector: str, task: int | None = None) -> str | None:
        return self.url

    def assignment(self, snapshot: ClusterConfigState) -> tuple[set[str], set[TaskId]]:
        connectors = set(snapshot.connectors())
        tasks = {t for c in connectors for t in snapshot.tasks(c)}
        return connectors, tasks

    def poll(self, timeout: float) -> bool:
        return False

    def connect(self) -> None:
        pass

    def prepare_to_stop(self) -> None:
        pass

    def config_updated(self) -> None:
        pass

    def rebalance_expected(self) -> None:
        pass

    def stop(self) -> None:
        pass
