"""The incremental cooperative assignor (KIP-415) and the eager one, as pure logic with a fake clock."""

from __future__ import annotations

from collections.abc import Iterable

from cdc.worker.distributed.assignor import AssignmentRound, IncrementalCooperativeAssignor, eager_assign
from cdc.worker.distributed.protocol import (
    CONFIG_MISMATCH,
    Assignment,
    ConnectorsAndTasks,
    WorkerSubscription,
)
from cdc.worker.stores.base import TaskId


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def configured(spec: dict[str, int]) -> ConnectorsAndTasks:
    return ConnectorsAndTasks.of(spec, [TaskId(c, i) for c, n in spec.items() for i in range(n)])


class Group:
    """Members that apply their assignments as workers do: revoke first, then add."""

    def __init__(self, max_delay_ms: int = 0, members: Iterable[str] = ()) -> None:
        self.clock = Clock()
        self.assignor = IncrementalCooperativeAssignor(max_delay_ms, self.clock)
        self.owned: dict[str, ConnectorsAndTasks] = {m: ConnectorsAndTasks() for m in members}
        self.generation = 0
        self.offsets: dict[str, int] = {}
        self.started: dict[str, list[object]] = {m: [] for m in members}
        self.stopped: dict[str, list[object]] = {m: [] for m in members}

    def join(self, member: str) -> None:
        self.owned[member] = ConnectorsAndTasks()
        self.started[member] = []
        self.stopped[member] = []

    def leave(self, member: str) -> None:
        del self.owned[member]

    def round(self, config: ConnectorsAndTasks, leader_offset: int = 0) -> AssignmentRound:
        leader = min(self.owned)
        subs = {
            m: WorkerSubscription(
                2, f"http://{m}/", self.offsets.get(m, leader_offset), Assignment(2, 0, leader, "", 0, owned)
            )
            for m, owned in self.owned.items()
        }
        last = self.generation
        self.generation += 1
        result = self.assignor.assign(leader, subs, config, leader_offset, self.generation, last, 2)
        for m, a in result.assignments.items():
            if a.failed:
                continue
            assert not (a.assigned & a.revoked).size(), "an item is both assigned and revoked"
            assert not (a.assigned & self.owned[m]).size(), "assignments name only new work"
            self.stopped[m] += sorted(a.revoked.connectors) + sorted(a.revoked.tasks)
            self.started[m] += sorted(a.assigned.connectors) + sorted(a.assigned.tasks)
            self.owned[m] = (self.owned[m] - a.revoked) | a.assigned
        return result

    def settle(self, config: ConnectorsAndTasks, rounds: int = 6) -> AssignmentRound:
        """Rounds until nothing is revoked (members rejoin after a revocation, as Connect's do)."""
        result = self.round(config)
        for _ in range(rounds):
            if not any(not a.revoked.is_empty() for a in result.assignments.values()) and result.delay == 0:
                return result
            self.clock.now += result.delay / 1000.0
            result = self.round(config)
        return result

    def all_owned(self) -> list[object]:
        out: list[object] = []
        for owned in self.owned.values():
            out += list(owned.connectors) + list(owned.tasks)
        return out


def assert_balanced(group: Group, config: ConnectorsAndTasks) -> None:
    everything = group.all_owned()
    assert len(everything) == len(set(everything)), "something runs twice"
    assert set(everything) == set(config.connectors) | set(config.tasks), "something is not running"
    c = [len(o.connectors) for o in group.owned.values()]
    t = [len(o.tasks) for o in group.owned.values()]
    assert max(c) - min(c) <= 1, c
    assert max(t) - min(t) <= 1, t


def test_first_join_spreads_connectors_and_tasks_separately() -> None:
    g = Group(members=["w1", "w2", "w3"])
    config = configured({"a": 4, "b": 3})
    result = g.round(config)
    assert_balanced(g, config)
    assert all(a.revoked.is_empty() and a.delay == 0 for a in result.assignments.values())
    assert all(a.leader == "w1" and a.leader_url == "http://w1/" for a in result.assignments.values())


def test_stable_group_gets_empty_assignments() -> None:
    g = Group(members=["w1", "w2"])
    config = configured({"a": 4})
    g.round(config)
    again = g.round(config)
    assert all(a.assigned.is_empty() and a.revoked.is_empty() for a in again.assignments.values())


def test_new_worker_gets_work_by_revoke_then_assign() -> None:
    g = Group(members=["w1", "w2"])
    config = configured({"a": 3, "b": 3})
    g.round(config)
    before = {m: o for m, o in g.owned.items()}
    g.join("w3")
    first = g.round(config)
    # Round 1: the most loaded give up their excess; nothing is assigned to w3 yet.
    assert first.assignments["w3"].assigned.is_empty()
    revoked = sum(a.revoked.size() for a in first.assignments.values())
    assert revoked > 0
    second = g.round(config)
    assert second.assignments["w3"].assigned.size() == revoked
    assert_balanced(g, config)
    # Work that stayed was never stopped.
    for m in ("w1", "w2"):
        kept = before[m] & g.owned[m]
        assert not set(g.stopped[m]) & (set(kept.connectors) | set(kept.tasks))


def test_departed_worker_work_is_held_for_the_delay_then_redistributed() -> None:
    g = Group(max_delay_ms=2000, members=["w1", "w2", "w3"])
    config = configured({"a": 3, "b": 3})
    g.round(config)
    lost = g.owned["w3"]
    g.leave("w3")
    held = g.round(config)
    assert held.delay == 2000
    assert all(a.delay == 2000 and a.assigned.is_empty() for a in held.assignments.values())
    g.clock.now += 1.5
    still = g.round(config)
    assert 0 < still.delay <= 500
    assert not (set(g.all_owned()) & (set(lost.connectors) | set(lost.tasks)))
    g.clock.now += still.delay / 1000.0
    done = g.settle(config)
    assert done.delay == 0
    assert_balanced(g, config)


def test_worker_rejoining_within_the_delay_gets_its_work_back() -> None:
    g = Group(max_delay_ms=10000, members=["w1", "w2", "w3"])
    config = configured({"a": 3, "b": 3})
    g.round(config)
    lost = g.owned["w3"]
    g.leave("w3")
    g.round(config)
    g.join("w3-restarted")
    back = g.round(config)
    assert back.assignments["w3-restarted"].assigned == lost
    assert back.delay == 0
    assert_balanced(g, config)


def test_zero_delay_reassigns_lost_work_at_once() -> None:
    g = Group(max_delay_ms=0, members=["w1", "w2", "w3"])
    config = configured({"a": 2, "b": 4})
    g.round(config)
    g.leave("w2")
    result = g.settle(config)
    assert result.delay == 0
    assert_balanced(g, config)


def test_connectors_added_and_removed() -> None:
    g = Group(members=["w1", "w2", "w3"])
    config = configured({"a": 2})
    g.round(config)
    bigger = configured({"a": 2, "b": 5, "c": 1})
    g.settle(bigger)
    assert_balanced(g, bigger)
    smaller = configured({"b": 5, "c": 1})
    result = g.round(smaller)
    revoked = set()
    for a in result.assignments.values():
        revoked |= set(a.revoked.connectors) | set(a.revoked.tasks)
    assert {"a", TaskId("a", 0), TaskId("a", 1)} <= revoked
    g.settle(smaller)
    assert_balanced(g, smaller)


def test_task_count_shrinks() -> None:
    g = Group(members=["w1", "w2"])
    g.round(configured({"a": 4}))
    result = g.settle(configured({"a": 2}))
    assert TaskId("a", 3) not in g.all_owned()
    assert result.delay == 0
    assert_balanced(g, configured({"a": 2}))


def test_duplicates_are_revoked_from_every_claimant_then_reassigned() -> None:
    g = Group(members=["w1", "w2"])
    config = configured({"a": 2})
    g.round(config)
    task = next(iter(g.owned["w1"].tasks))
    g.owned["w2"] = g.owned["w2"] | ConnectorsAndTasks.of([], [task])
    result = g.round(config)
    assert task in result.assignments["w1"].revoked.tasks and task in result.assignments["w2"].revoked.tasks
    g.settle(config)
    assert_balanced(g, config)


def test_config_mismatch_when_leader_is_behind() -> None:
    g = Group(members=["w1", "w2"])
    g.offsets = {"w1": 5, "w2": 9}
    result = g.round(configured({"a": 1}), leader_offset=5)
    for a in result.assignments.values():
        assert a.error == CONFIG_MISMATCH and a.config_offset == 9 and a.assigned.is_empty()
    assert all(o.is_empty() for o in g.owned.values())


def test_consecutive_revoking_rounds_back_off() -> None:
    g = Group(max_delay_ms=5000, members=["w1"])
    config = configured({"a": 8})
    g.round(config)
    g.join("w2")
    first = g.round(config)
    assert first.assignments["w1"].revoked.size() == 4
    # Before the revoked work was handed out, another worker joined: a second revoking round is due.
    g.join("w3")
    second = g.round(config)
    assert second.delay >= 1 and all(a.revoked.is_empty() for a in second.assignments.values())
    g.clock.now += second.delay / 1000.0
    g.settle(config)
    assert_balanced(g, config)


def test_new_leader_without_memory_takes_allocations_as_previous() -> None:
    g = Group(max_delay_ms=3000, members=["w1", "w2", "w3"])
    config = configured({"a": 3})
    g.round(config)
    g.assignor = IncrementalCooperativeAssignor(3000, g.clock)
    g.leave("w1")  # the leader died; w2 leads now and knows nothing of w1's work: it is simply unassigned
    result = g.settle(config)
    assert result.delay == 0
    assert_balanced(g, config)


def test_leader_allocations_view() -> None:
    g = Group(members=["w1", "w2"])
    g.round(configured({"a": 2}))
    assert g.assignor.allocations() == g.owned


def test_eager_assigns_everything_round_robin() -> None:
    subs = {m: WorkerSubscription(0, f"http://{m}/", 3) for m in ("w2", "w1", "w3")}
    config = configured({"a": 4, "b": 3})
    result = eager_assign("w1", subs, config, 3)
    union = ConnectorsAndTasks()
    for a in result.assignments.values():
        assert a.version == 0 and a.leader == "w1" and a.config_offset == 3
        union = union | a.assigned
    assert union == config
    counts = [len(a.assigned.tasks) for a in result.assignments.values()]
    assert max(counts) - min(counts) <= 1
    behind = eager_assign("w1", subs, config, 2)
    assert all(a.error == CONFIG_MISMATCH for a in behind.assignments.values())


# -- GroupMembership's handshake with the herder (no Kafka: join results are fed in directly) ----------------
class FakeCoordinator:
    def __init__(self) -> None:
        self.rejoins = 0

    def request_rejoin(self) -> None:
        self.rejoins += 1

    def need_rejoin(self) -> bool:
        return False

    def poll_heartbeat(self) -> None:
        pass

    def ensure_active_group(self, timeout_ms: int | None = None) -> bool:
        return True

    def take_results(self) -> list[object]:
        return []


def _membership() -> tuple[object, FakeCoordinator]:
    from cdc.worker.distributed.membership import GroupMembership, GroupSettings
    from cdc.worker.stores.memory import MemoryConfigBackingStore

    store = MemoryConfigBackingStore()
    store.put_connector_config("a", {"connector.class": "x"})
    store.put_task_configs("a", [{}, {}])
    member = GroupMembership("http://me/", store, GroupSettings("g"), {})
    coordinator = FakeCoordinator()
    member._coordinator = coordinator  # type: ignore[assignment]
    return member, coordinator


def _join(
    member: object, generation: int, assignment: Assignment, leader: bool = False, protocol: str = "sessioned"
) -> None:
    from cdc.worker.distributed.coordinator import JoinResult
    from cdc.worker.distributed.protocol import ConnectProtocol

    result = JoinResult(generation, "me", ConnectProtocol.from_config(protocol), assignment, leader, None)
    member._complete(result)  # type: ignore[attr-defined]


def test_signatures_are_required_only_under_the_sessioned_protocol() -> None:
    from cdc.worker.distributed.membership import GroupMembership
    from cdc.worker.membership import SoloMembership

    assert SoloMembership("http://me/").signature_required() is False
    member, _ = _membership()
    assert isinstance(member, GroupMembership)
    assert member.signature_required() is False  # not joined yet
    offset = member.config_store.snapshot().offset
    _join(member, 1, Assignment(1, 0, "L", "u", offset), protocol="compatible")
    assert member.signature_required() is False
    _join(member, 2, Assignment(2, 0, "L", "u", offset))
    assert member.signature_required() is True


def test_membership_applies_revocations_and_rejoins_after_the_herder_stopped_them() -> None:
    from cdc.worker.distributed.membership import GroupMembership

    member, coordinator = _membership()
    assert isinstance(member, GroupMembership)
    snapshot = member.config_store.snapshot()
    t0, t1 = TaskId("a", 0), TaskId("a", 1)
    everything = ConnectorsAndTasks.of(["a"], [t0, t1])
    _join(member, 1, Assignment(2, 0, "L", "http://leader/", snapshot.offset, everything))
    assert member.generation() == 1 and member.leader_url() == "http://leader/" and not member.is_leader()
    member.poll(0)
    assert member.assignment(snapshot) == ({"a"}, {t0, t1})
    assert member.owner_url("a", 0) == "http://me/" and member.owner_url("b") == "http://leader/"

    _join(
        member,
        2,
        Assignment(
            2,
            0,
            "L",
            "http://leader/",
            snapshot.offset,
            ConnectorsAndTasks(),
            ConnectorsAndTasks.of([], [t1]),
        ),
    )
    member._turn()
    assert coordinator.rejoins == 0, "rejoined before the herder stopped the revoked task"
    assert member.assignment(snapshot) == ({"a"}, {t0})  # the herder's reconciliation stops a-1 here
    member._turn()
    assert coordinator.rejoins == 0
    assert member.poll(0) is True  # the next tick proves the reconciliation finished
    member._turn()
    assert coordinator.rejoins == 1


def test_membership_rejoins_after_the_delay_and_on_config_changes() -> None:
    from cdc.worker.distributed.membership import GroupMembership

    member, coordinator = _membership()
    assert isinstance(member, GroupMembership)
    clock = Clock()
    member._clock = clock
    offset = member.config_store.snapshot().offset
    _join(member, 1, Assignment(2, 0, "L", "u", offset, delay=1500))
    member._turn()
    assert coordinator.rejoins == 0
    clock.now += 1.6
    member._turn()
    assert coordinator.rejoins == 1
    member.config_store.put_connector_config("b", {"connector.class": "x"})
    member._turn()
    assert coordinator.rejoins == 2


def test_membership_config_mismatch_rejoins_and_keeps_work() -> None:
    from cdc.worker.distributed.membership import GroupMembership

    member, coordinator = _membership()
    assert isinstance(member, GroupMembership)
    offset = member.config_store.snapshot().offset
    _join(member, 1, Assignment(2, 0, "L", "u", offset, ConnectorsAndTasks.of(["a"])))
    _join(member, 2, Assignment(2, CONFIG_MISMATCH, "L", "u", offset))
    assert coordinator.rejoins == 1
    assert member.assignment(member.config_store.snapshot())[0] == {"a"}
    assert member.generation() == 1
