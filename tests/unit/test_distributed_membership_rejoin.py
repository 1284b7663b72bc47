"""GroupMembership asks for another rebalance when the config changed after the leader's snapshot.

The leader computes an assignment from the config topic as of some offset; a connector created or a
task-config commit read after that offset (e.g. while the SyncGroup round trip was under way) is not in the
assignment, and must trigger another rebalance on its own. A fake coordinator drives the membership's turns
deterministically; the config store is the in-memory one (its offset counts the writes).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cdc.worker.distributed.coordinator import JoinResult
from cdc.worker.distributed.membership import GroupMembership, GroupSettings, configured_work
from cdc.worker.distributed.protocol import Assignment, ConnectorsAndTasks, ConnectProtocol
from cdc.worker.stores.base import RestartRequest, SessionKey, TargetState, TaskId
from cdc.worker.stores.memory import MemoryConfigBackingStore

LEADER = "member-1"
URL = "http://w1:8083"


class FakeCoordinator:
    """The part of WorkerCoordinator the membership thread uses; a join runs ``during_join`` (what the
    config topic receives while the leader's assignment is on its way) and then completes with the
    assignment the leader computed *before* it."""

    def __init__(self) -> None:
        self.rejoin_needed = True
        self.rejoin_requests = 0
        self.generation = 0
        self.pending: list[JoinResult] = []
        self.next_assignment: Callable[[int], Assignment] | None = None
        self.during_join: Callable[[], None] = lambda: None

    def need_rejoin(self) -> bool:
        return self.rejoin_needed

    def request_rejoin(self) -> None:
        self.rejoin_needed = True
        self.rejoin_requests += 1

    def ensure_active_group(self, timeout_ms: int | None = None) -> bool:
        if not self.rejoin_needed:
            return True
        assert self.next_assignment is not None
        self.generation += 1
        assignment = self.next_assignment(self.generation)  # the leader reads its snapshot here
        self.during_join()  # ... and a config record lands before the members complete the join
        self.during_join = lambda: None
        self.rejoin_needed = False  # kafka-python clears it when the join completes
        self.pending.append(
            JoinResult(self.generation, LEADER, ConnectProtocol.SESSIONED, assignment, True, None)
        )
        return True

    def poll_heartbeat(self) -> None:
        pass

    def take_results(self) -> list[JoinResult]:
        out, self.pending = self.pending, []
        return out

    def maybe_leave_group(self) -> None:
        pass


def leader_assigns_everything(store: MemoryConfigBackingStore) -> Callable[[int], Assignment]:
    """The assignment of a group of one: everything configured as of the leader's snapshot."""

    def assign(generation: int) -> Assignment:
        snapshot = store.snapshot()
        return Assignment(
            ConnectProtocol.SESSIONED.version,
            0,
            LEADER,
            URL,
            snapshot.offset,
            configured_work(snapshot),
        )

    return assign


class HerderListener:
    """The herder's config listener, as far as the membership is concerned."""

    def __init__(self, membership: GroupMembership) -> None:
        self.membership = membership

    def on_connector_config_update(self, connector: str) -> None:
        self.membership.config_updated()

    def on_connector_config_remove(self, connector: str) -> None:
        self.membership.config_updated()

    def on_task_config_update(self, tasks: list[TaskId]) -> None:
        self.membership.config_updated()

    def on_connector_target_state_change(self, connector: str) -> None:
        pass

    def on_session_key_update(self, key: SessionKey) -> None:
        pass

    def on_restart_request(self, request: RestartRequest) -> None:
        pass


def make_membership(
    listener: bool = True,
) -> tuple[GroupMembership, MemoryConfigBackingStore, FakeCoordinator]:
    store = MemoryConfigBackingStore()
    membership = GroupMembership(URL, store, GroupSettings(group_id="g"), {})
    if listener:
        store.set_update_listener(HerderListener(membership))
    coordinator = FakeCoordinator()
    coordinator.next_assignment = leader_assigns_everything(store)
    membership._coordinator = coordinator  # type: ignore[assignment]
    return membership, store, coordinator


def owned(membership: GroupMembership) -> tuple[set[str], set[TaskId]]:
    return membership.assignment(membership.config_store.snapshot())


def turn_until_quiet(membership: GroupMembership, coordinator: FakeCoordinator, turns: int = 5) -> None:
    for _ in range(turns):
        membership._turn()
    # The assignment is settled only if no rejoin is outstanding.
    assert not coordinator.need_rejoin()


@pytest.mark.parametrize("listener", [True, False], ids=["listener", "turns-only"])
def test_task_commit_read_after_the_leaders_snapshot_triggers_another_rebalance(listener: bool) -> None:
    membership, store, coordinator = make_membership(listener)
    store.put_connector_config("fs-6", {"connector.class": "x"})
    membership._turn()  # generation 1: the connector, no tasks yet
    assert owned(membership) == ({"fs-6"}, set())
    assert not coordinator.need_rejoin()

    # The connector generated its task config; another connector is created meanwhile, so a rebalance is
    # under way, and the task-config commit lands after the leader read its snapshot for it.
    store.put_connector_config("fs-7", {"connector.class": "x"})
    coordinator.during_join = lambda: store.put_task_configs("fs-6", [{"task.class": "x"}])
    membership._turn()  # notices fs-7, rejoins: generation 2 misses fs-6-0
    assert coordinator.generation == 2
    assert TaskId("fs-6", 0) not in owned(membership)[1]

    turn_until_quiet(membership, coordinator)
    assert coordinator.generation == 3, "the task-config commit read after the snapshot was never assigned"
    assert owned(membership) == ({"fs-6", "fs-7"}, {TaskId("fs-6", 0)})


@pytest.mark.parametrize("listener", [True, False], ids=["listener", "turns-only"])
def test_connector_created_during_the_first_join_is_assigned(listener: bool) -> None:
    membership, store, coordinator = make_membership(listener)
    coordinator.during_join = lambda: store.put_connector_config("fs-1", {"connector.class": "x"})
    turn_until_quiet(membership, coordinator)
    assert coordinator.generation == 2
    assert owned(membership) == ({"fs-1"}, set())


def test_a_change_undone_during_the_join_still_triggers_a_rebalance() -> None:
    """The work as of the leader's snapshot differed from what is configured now (the task count went
    1 -> 0 before the snapshot and back to 1 after it): the assignment lacks the task. Only the config
    listener (one call per record) sees the intermediate state."""
    membership, store, coordinator = make_membership()
    store.put_connector_config("fs-6", {"connector.class": "x"})
    store.put_task_configs("fs-6", [{"task.class": "x"}])
    membership._turn()
    assert owned(membership) == ({"fs-6"}, {TaskId("fs-6", 0)})

    store.put_task_configs("fs-6", [])  # e.g. a stop; the leader's snapshot has no task
    coordinator.during_join = lambda: store.put_task_configs("fs-6", [{"task.class": "y"}])
    membership._turn()  # generation 2 revokes fs-6-0
    assert coordinator.generation == 2

    turn_until_quiet(membership, coordinator)
    assert coordinator.generation == 3
    assert owned(membership) == ({"fs-6"}, {TaskId("fs-6", 0)})


def test_no_extra_rebalance_when_the_assignment_covers_the_config() -> None:
    membership, store, coordinator = make_membership()
    store.put_connector_config("fs-6", {"connector.class": "x"})
    membership._turn()
    store.put_task_configs("fs-6", [{"task.class": "x"}])
    membership._turn()  # the change is seen between joins: one rebalance for it
    turn_until_quiet(membership, coordinator)
    assert coordinator.generation == 2
    # Records that change no connector or task (target states, session keys) ask for no rebalance.
    store.put_target_state("fs-6", TargetState.PAUSED)
    turn_until_quiet(membership, coordinator)
    assert coordinator.generation == 2
    assert owned(membership) == ({"fs-6"}, {TaskId("fs-6", 0)})
    store.put_session_key(SessionKey(b"k" * 32, "HmacSHA256", 0))
    turn_until_quiet(membership, coordinator)
    assert coordinator.generation == 2


def test_a_change_seen_between_joins_triggers_one_rebalance() -> None:
    membership, store, coordinator = make_membership()
    membership._turn()
    assert owned(membership) == (set(), set())
    store.put_connector_config("fs-1", {"connector.class": "x"})
    store.remove_connector_config("fs-1")
    store.put_connector_config("fs-2", {"connector.class": "x"})
    turn_until_quiet(membership, coordinator)
    assert coordinator.generation == 2
    assert owned(membership) == ({"fs-2"}, set())
    assert configured_work(store.snapshot()) == ConnectorsAndTasks.of(["fs-2"])


def test_a_change_to_the_configured_work_wakes_the_membership_thread() -> None:
    """The rejoin a new connector (or its task configs) calls for starts at once, not at the membership
    thread's next tick: B10 (POST /connectors to task RUNNING) waited up to a tick twice for it."""
    membership, store, _coordinator = make_membership()
    membership._wakeup.clear()
    store.put_connector_config("fs-6", {"connector.class": "x"})
    assert membership._wakeup.is_set()
    membership._turn()
    membership._wakeup.clear()
    store.put_task_configs("fs-6", [{"task.class": "x"}])
    assert membership._wakeup.is_set()
    membership._turn()
    membership._wakeup.clear()
    # Records that change no connector or task wake nobody.
    store.put_target_state("fs-6", TargetState.PAUSED)
    store.put_session_key(SessionKey(b"k" * 32, "HmacSHA256", 0))
    assert not membership._wakeup.is_set()
