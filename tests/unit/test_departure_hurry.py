"""A departing worker is learnt sooner than a heartbeat: the pieces, without Kafka.

A stopping worker writes UNASSIGNED for its tasks and connectors before it leaves the group; the others'
herders read those records and ask their membership to hurry its heartbeats (``HeartbeatHurry``), so that
the coordinator's ``REBALANCE_IN_PROGRESS`` comes back within a tenth of a second instead of at the next
``heartbeat.interval.ms``. The integration test (tests/integration/test_distributed_departure.py) times it
on the broker.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from cdc.worker.connect_herder import ConnectHerder
from cdc.worker.distributed.coordinator import HeartbeatHurry, _HurriableHeartbeat
from cdc.worker.distributed.membership import GroupMembership, GroupSettings
from cdc.worker.membership import SoloMembership
from cdc.worker.settings import WorkerSettings
from cdc.worker.stores.base import ConnectorStatus, State, TaskId, TaskStatus
from cdc.worker.stores.memory import (
    MemoryConfigBackingStore,
    MemoryOffsetBackingStore,
    MemoryStatusBackingStore,
)
from cdc.worker.worker import Worker


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_window_leaves_the_regular_wait() -> None:
    hurry = HeartbeatHurry(FakeClock())
    assert not hurry.active()
    assert hurry.wait(since_last=0.5, regular=2.5) == 2.5


def test_a_window_shortens_the_wait_until_it_closes() -> None:
    clock = FakeClock()
    hurry = HeartbeatHurry(clock)
    hurry.hurry(interval=0.1, duration=3.0)
    assert hurry.active()
    assert hurry.wait(since_last=0.0, regular=3.0) == pytest.approx(0.1)
    assert hurry.wait(since_last=0.04, regular=2.96) == pytest.approx(0.06)
    assert hurry.wait(since_last=0.5, regular=2.5) == 0.0  # overdue: send now
    assert hurry.wait(since_last=0.0, regular=0.05) == 0.05  # the regular heartbeat is sooner anyway
    clock.now += 3.0
    assert not hurry.active()
    assert hurry.wait(since_last=0.0, regular=3.0) == 3.0


def test_another_announcement_extends_the_window_and_keeps_the_shorter_interval() -> None:
    clock = FakeClock()
    hurry = HeartbeatHurry(clock)
    hurry.hurry(interval=0.1, duration=3.0)
    clock.now += 2.0
    hurry.hurry(interval=0.5, duration=3.0)
    clock.now += 2.0  # 4 s after the first, 2 s after the second
    assert hurry.active()
    assert hurry.wait(since_last=0.0, regular=3.0) == pytest.approx(0.1)
    clock.now += 1.0
    assert not hurry.active()
    hurry.hurry(interval=0.5, duration=1.0)  # a new window takes its own interval
    assert hurry.wait(since_last=0.0, regular=3.0) == pytest.approx(0.5)


def test_kafka_pythons_heartbeat_timer_follows_the_window() -> None:
    hurry = HeartbeatHurry()
    beat = _HurriableHeartbeat(
        hurry, group_id="g", heartbeat_interval_ms=3000, session_timeout_ms=10000, retry_backoff_ms=100
    )
    beat.sent_heartbeat()
    assert beat.time_to_next_heartbeat() > 2.0  # heartbeat.interval.ms as usual
    hurry.hurry(interval=0.1, duration=30.0)
    assert beat.time_to_next_heartbeat() <= 0.1
    time.sleep(0.12)
    assert beat.should_heartbeat()
    beat.sent_heartbeat()
    assert 0.0 < beat.time_to_next_heartbeat() <= 0.1
    beat.fail_heartbeat()  # after a failure kafka-python's retry.backoff.ms applies, hurried or not
    assert beat.time_to_next_heartbeat() <= 0.1


class RecordingCoordinator:
    def __init__(self) -> None:
        self.hurries: list[tuple[float, float]] = []

    def hurry_heartbeats(self, interval: float, duration: float) -> None:
        self.hurries.append((interval, duration))


def test_the_membership_hurries_for_one_heartbeat_interval() -> None:
    settings = GroupSettings(group_id="g", heartbeat_interval_ms=3000)
    membership = GroupMembership("http://w1:8083", MemoryConfigBackingStore(), settings, {})
    membership.rebalance_expected()  # not connected yet: nothing to hurry, no error
    coordinator = RecordingCoordinator()
    membership._coordinator = coordinator  # type: ignore[assignment]
    membership.rebalance_expected()
    assert coordinator.hurries == [(0.1, 3.0)]
    membership.prepare_to_stop()  # leaving: no point
    membership.rebalance_expected()
    assert coordinator.hurries == [(0.1, 3.0)]


def test_a_short_heartbeat_interval_is_never_lengthened() -> None:
    settings = GroupSettings(group_id="g", session_timeout_ms=300, heartbeat_interval_ms=50)
    membership = GroupMembership("http://w1:8083", MemoryConfigBackingStore(), settings, {})
    coordinator = RecordingCoordinator()
    membership._coordinator = coordinator  # type: ignore[assignment]
    membership.rebalance_expected()
    assert coordinator.hurries == [(0.05, 0.05)]


class ExpectingMembership(SoloMembership):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.expected = 0

    def rebalance_expected(self) -> None:
        self.expected += 1


@pytest.fixture
def herder() -> Iterator[tuple[ConnectHerder, MemoryStatusBackingStore, ExpectingMembership]]:
    from cdc.worker.config import STANDALONE_DEF

    props = {
        "bootstrap.servers": "127.0.0.1:1",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }
    parsed = STANDALONE_DEF.parse({**props, "offset.storage.file.filename": "/nonexistent"})
    settings = WorkerSettings.from_parsed(dict(props), parsed, "127.0.0.1:8083")
    offsets = MemoryOffsetBackingStore()
    statuses = MemoryStatusBackingStore()
    membership = ExpectingMembership("http://127.0.0.1:8083/")
    h = ConnectHerder(
        lambda hd: Worker(settings, offsets, hd, hd, hd.on_topic_seen),
        MemoryConfigBackingStore(),
        statuses,
        offsets,
        membership,
    )
    statuses.put(TaskStatus(TaskId("before", 0), State.UNASSIGNED, "127.0.0.1:8084", 1))
    h.start()
    assert h.wait_started(10)
    yield h, statuses, membership
    h.stop()


def test_the_herder_expects_a_rebalance_when_another_worker_gives_up_work(
    herder: tuple[ConnectHerder, MemoryStatusBackingStore, ExpectingMembership],
) -> None:
    h, statuses, membership = herder
    assert h.worker_id == "127.0.0.1:8083"
    assert membership.expected == 0  # written before the herder started: history
    statuses.put(TaskStatus(TaskId("c", 0), State.RUNNING, "127.0.0.1:8084", 2))
    statuses.put(TaskStatus(TaskId("c", 1), State.UNASSIGNED, h.worker_id, 2))  # our own
    statuses.put(ConnectorStatus("c", State.FAILED, "127.0.0.1:8084", 2, "trace"))
    assert membership.expected == 0
    statuses.put_safe(TaskStatus(TaskId("c", 0), State.UNASSIGNED, "127.0.0.1:8084", 2))
    statuses.put_safe(ConnectorStatus("c", State.UNASSIGNED, "127.0.0.1:8084", 2))
    assert membership.expected == 2
    statuses.put_safe(TaskStatus(TaskId("c", 0), State.UNASSIGNED, "127.0.0.1:8085", 1))  # lost: older
    assert membership.expected == 2
