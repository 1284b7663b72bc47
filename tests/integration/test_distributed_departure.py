"""A worker that stops is learnt by the others well within ``heartbeat.interval.ms``, on the real broker.

Two groups of three in-process workers (full runtimes from :func:`build_distributed`) at Connect's
``heartbeat.interval.ms`` (3 000) and ``session.timeout.ms`` (10 000), each running three FileStream
connectors (three connectors, three tasks). In each group one worker is stopped gracefully (it writes
UNASSIGNED for its work and leaves the group), timed from the start of its stop until both survivors have
completed the next generation (each survivor's own rebalance metrics say when).

* The baseline group runs with the survivors deaf to the status topic's news
  (``GroupMembership.rebalance_expected`` does nothing, as before the hurry existed): they learn of the
  departure at their next regular heartbeat.
* The other group runs as shipped: the departing worker's UNASSIGNED records make them heartbeat every
  0.1 s, and they learn of it at once.

So that the baseline is not a matter of luck, the stop is sent 0.2 s after the survivors' heartbeat
timers were reset (they are reset together when a generation completes, and beat every
``heartbeat.interval.ms`` from then on): unhurried, they next ask the coordinator almost a whole interval
later. Both groups are stopped at the same phase.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from faultkit import group_worker_props

from cdc.worker.distributed.membership import GroupMembership
from cdc.worker.runtime import ConnectRuntime, build_distributed

pytestmark = pytest.mark.integration

HEARTBEAT_MS = 3000  # Connect's defaults
SESSION_TIMEOUT_MS = 10000
PHASE_S = 0.2  # the stop is sent this long after the survivors' heartbeat timers were reset


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _membership(runtime: ConnectRuntime) -> GroupMembership:
    membership = runtime.herder.membership
    assert isinstance(membership, GroupMembership)
    return membership


class Group:
    def __init__(self, bootstrap: str, prefix: str, files: Path) -> None:
        self.bootstrap, self.prefix, self.files = bootstrap, prefix, files
        self.workers: list[ConnectRuntime] = []

    def start(self, size: int) -> None:
        for _ in range(size):
            port = _free_port()
            props = group_worker_props(self.bootstrap, f"{self.prefix}connect", self.prefix, port, 0, 0)
            props["session.timeout.ms"] = str(SESSION_TIMEOUT_MS)
            props["heartbeat.interval.ms"] = str(HEARTBEAT_MS)
            runtime = build_distributed(props)
            runtime.start()
            self.workers.append(runtime)

    def create(self, connectors: int) -> list[str]:
        names = []
        for i in range(connectors):
            data = self.files / f"{self.prefix}{i}.txt"
            data.write_text("a line\n")
            name = f"{self.prefix}f{i}"
            config = {
                "connector.class": "FileStreamSource",
                "file": str(data),
                "topic": f"{self.prefix}data",
                "tasks.max": "1",
            }
            url = f"{self.workers[0].url}connectors/{name}/config"
            deadline = time.monotonic() + 60
            while True:  # the group may still be forming: a 409 or a refused connection says so
                with contextlib.suppress(requests.RequestException):
                    r = requests.put(url, json=config, timeout=30)
                    if r.status_code in (200, 201):
                        break
                assert time.monotonic() < deadline, f"could not create {name}"
                time.sleep(0.25)
            names.append(name)
        return names

    def settled(self, names: list[str]) -> bool:
        """Every connector and task RUNNING, every worker running something, one generation, no rebalance
        under way."""
        members = [_membership(w) for w in self.workers]
        if len({m.generation() for m in members}) != 1 or any(m.rebalances.rebalancing for m in members):
            return False
        owners = set()
        for name in names:
            try:
                status = requests.get(f"{self.workers[0].url}connectors/{name}/status", timeout=10).json()
            except (requests.RequestException, ValueError):
                return False
            states = [status["connector"], *status.get("tasks", [])]
            if len(states) != 2 or any(s["state"] != "RUNNING" for s in states):
                return False
            owners.update(s["worker_id"] for s in states)
        return len(owners) == len(self.workers)

    def stop_all(self) -> None:
        for runtime in self.workers:
            with contextlib.suppress(Exception):
                runtime.stop()
        self.workers = []


def _wait(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.1)


def _last_completion(membership: GroupMembership) -> float:
    """When (time.monotonic) the membership last completed a rebalance."""
    return time.monotonic() - membership.rebalances.time_since_last_ms() / 1000


def _departure(group: Group, names: list[str]) -> float:
    """Stop the last worker of ``group`` at the phase described above; seconds from the start of its stop
    until both survivors completed the next generation."""
    _wait(lambda: group.settled(names), 90, "the group to settle")
    time.sleep(HEARTBEAT_MS / 1000)  # quiet: no hurry window still open from the rebalances so far
    assert group.settled(names), "the group rebalanced again while idle"
    survivors = [_membership(w) for w in group.workers[:-1]]
    completed = [m.rebalances.completed_total for m in survivors]
    reset = max(_last_completion(_membership(w)) for w in group.workers)
    interval = HEARTBEAT_MS / 1000
    beats = int((time.monotonic() - reset) / interval) + 1
    time.sleep(max(0.0, reset + beats * interval + PHASE_S - time.monotonic()))
    leaving = group.workers.pop()
    stop_at = time.monotonic()
    leaving.stop()

    def next_generation() -> bool:
        return all(m.rebalances.completed_total > c for m, c in zip(survivors, completed, strict=True))

    _wait(next_generation, SESSION_TIMEOUT_MS / 1000 + 30, "the survivors' next generation")
    return max(_last_completion(m) for m in survivors) - stop_at


@pytest.fixture
def groups(kafka: Any, tmp_path: Path) -> Iterator[tuple[Group, Group]]:
    baseline = Group(kafka.bootstrap_servers, f"{kafka.prefix}base-", tmp_path)
    hurried = Group(kafka.bootstrap_servers, f"{kafka.prefix}hurry-", tmp_path)
    try:
        yield baseline, hurried
    finally:
        baseline.stop_all()
        hurried.stop_all()


def test_survivors_learn_of_a_graceful_departure_well_within_a_heartbeat_interval(
    groups: tuple[Group, Group], monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline_group, hurried_group = groups

    with monkeypatch.context() as patched:
        patched.setattr(GroupMembership, "rebalance_expected", lambda self: None)
        baseline_group.start(3)
        names = baseline_group.create(3)
        baseline = _departure(baseline_group, names)
        baseline_group.stop_all()

    hurried_group.start(3)
    names = hurried_group.create(3)
    hurried = _departure(hurried_group, names)
    print(
        f"\nsurvivors' next generation after a graceful stop: {hurried:.2f} s hurried, "
        f"{baseline:.2f} s at the regular heartbeat (heartbeat.interval.ms {HEARTBEAT_MS})"
    )
    interval = HEARTBEAT_MS / 1000
    # Unhurried, the survivors ask the coordinator next almost an interval after the stop was sent.
    assert baseline > interval / 2, "the baseline did not wait for the survivors' heartbeat"
    # Hurried: the stop (its tasks, LeaveGroup), a heartbeat 0.1 s later at most, one join round.
    assert hurried < interval / 2, f"{hurried:.2f} s: not well within heartbeat.interval.ms"
    assert hurried < baseline / 2
