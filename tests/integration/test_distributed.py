"""Distributed mode on the real broker: three (then four) in-process workers in one Connect group.

Each worker is a full runtime from :func:`cdc.worker.runtime.build_distributed` (Kafka stores, REST
server, herder, :class:`GroupMembership`) on its own REST port, all with one ``group.id`` and this test's
own internal topics. A "crash" closes a worker's group sockets without LeaveGroup (as ``kill -9`` would)
and stops its tasks without a goodbye to the others.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from faultkit import group_worker_props

from cdc.api import SourceConnector, SourceRecord, SourceTask
from cdc.config import ConfigDef
from cdc.plugins import registry
from cdc.worker.distributed.membership import GroupMembership
from cdc.worker.distributed.protocol import decode_assignment, decode_subscription
from cdc.worker.runtime import ConnectRuntime, build_distributed

pytestmark = pytest.mark.integration

SESSION_TIMEOUT_MS = 6000
MAX_DELAY_MS = 2000


class CountingTask(SourceTask):
    """Emits ``<connector>-<task>-<n>`` with offset ``{"n": n}``, resuming from the committed offset."""

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.partition = {"connector": props["name"], "task": props["task.index"]}
        self._stop = threading.Event()
        stored = self.context.offset_storage_reader().offset(self.partition) if self.context else None
        self.n = int(stored["n"]) + 1 if stored else 0

    def poll(self) -> list[SourceRecord] | None:
        if self._stop.wait(0.05):
            return None
        record = SourceRecord(
            self.topic,
            None,
            None,
            None,
            None,
            f"{self.partition['connector']}-{self.partition['task']}-{self.n}",
            source_partition=self.partition,
            source_offset={"n": self.n},
        )
        self.n += 1
        return [record]

    def stop(self) -> None:
        self._stop.set()


class CountingConnector(SourceConnector):
    def config(self) -> ConfigDef:
        return ConfigDef()

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[SourceTask]:
        return CountingTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task.index": str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass


registry.register("test.distributed.CountingConnector", CountingConnector)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    def __init__(self, bootstrap: str, prefix: str) -> None:
        self.bootstrap = bootstrap
        self.prefix = prefix
        self.group = f"{prefix}connect"
        self.workers: dict[str, ConnectRuntime] = {}

    def props(self, port: int) -> dict[str, str]:
        return group_worker_props(
            self.bootstrap, self.group, self.prefix, port, SESSION_TIMEOUT_MS, MAX_DELAY_MS
        )

    def start_worker(self) -> str:
        port = _free_port()
        runtime = build_distributed(self.props(port))
        runtime.start()
        self.workers[runtime.url] = runtime
        return runtime.url

    def crash(self, url: str) -> None:
        """Vanish as a killed worker does: no LeaveGroup, no REST; tasks stop without a word."""
        runtime = self.workers.pop(url)
        membership = runtime.herder.membership
        assert isinstance(membership, GroupMembership)
        membership.crash()
        runtime.rest.stop()
        runtime.herder.stop()

    def stop_all(self) -> None:
        for url in list(self.workers):
            runtime = self.workers.pop(url)
            with contextlib.suppress(Exception):  # keep stopping the others
                runtime.stop()

    def any_url(self) -> str:
        return next(iter(self.workers))

    def status(self, name: str, via: str | None = None) -> dict[str, Any]:
        response = requests.get(f"{(via or self.any_url()).rstrip('/')}/connectors/{name}/status", timeout=10)
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    def running_tasks(self, names: list[str], via: str | None = None) -> dict[str, str]:
        """task → worker_id of every RUNNING task (and connector, as ``name``)."""
        out: dict[str, str] = {}
        for name in names:
            try:
                status = self.status(name, via)
            except requests.RequestException:
                continue
            if status["connector"]["state"] == "RUNNING":
                out[name] = status["connector"]["worker_id"]
            for task in status["tasks"]:
                if task["state"] == "RUNNING":
                    out[f"{name}-{task['id']}"] = task["worker_id"]
        return out


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last}")


def _worker_id(url: str) -> str:
    return url.split("//", 1)[1].rstrip("/")


def _task_counts(running: dict[str, str], names: list[str], workers: list[str]) -> dict[str, int]:
    counts = Counter({_worker_id(w): 0 for w in workers})
    for key, worker in running.items():
        if key not in names:
            counts[worker] += 1
    return dict(counts)


@pytest.fixture
def cluster(kafka: Any) -> Iterator[Cluster]:
    c = Cluster(kafka.bootstrap_servers, kafka.prefix)
    try:
        yield c
    finally:
        c.stop_all()


def test_three_workers_spread_survive_a_crash_and_take_in_a_fourth(cluster: Cluster, kafka: Any) -> None:
    started = time.monotonic()
    urls = [cluster.start_worker() for _ in range(3)]
    topic = kafka.topic("data")
    names = [f"count-{i}" for i in range(3)]
    total_tasks = 7  # 3 + 2 + 2

    # A POST to any worker (a follower forwards to the leader) creates the connector.
    for i, name in enumerate(names):
        config = {
            "connector.class": "test.distributed.CountingConnector",
            "tasks.max": str(3 if i == 0 else 2),
            "topic": topic,
        }
        via = urls[i % 3]

        def create(name: str = name, config: dict[str, str] = config, via: str = via) -> bool:
            r = requests.put(f"{via}connectors/{name}/config", json=config, timeout=30)
            return r.status_code in (200, 201)

        _wait(create, 60, f"creating {name}")

    def all_running() -> dict[str, str] | None:
        running = cluster.running_tasks(names)
        return running if len(running) == total_tasks + len(names) else None

    running = _wait(all_running, 60, "every connector and task RUNNING")
    counts = _task_counts(running, names, urls)
    assert len(counts) == 3 and max(counts.values()) - min(counts.values()) <= 1, counts
    t_spread = time.monotonic() - started

    # The broker sees one `connect` group with protocol `sessioned` and one member per worker, whose
    # metadata and assignment bytes decode with Connect's layouts.
    _check_group(cluster, kafka, 3)

    # Crash the busiest worker: its work is RUNNING on the others within session + delay + 10 s.
    busiest_id = max(counts, key=lambda w: counts[w])
    busiest = next(u for u in urls if _worker_id(u) == busiest_id)
    lost = sorted(k for k, w in running.items() if w == busiest_id)
    crash_at = time.monotonic()
    cluster.crash(busiest)
    survivors = [u for u in urls if u != busiest]

    def moved() -> dict[str, str] | None:
        now = cluster.running_tasks(names, survivors[0])
        ok = len(now) == total_tasks + len(names) and busiest_id not in now.values()
        return now if ok else None

    budget = (SESSION_TIMEOUT_MS + MAX_DELAY_MS) / 1000 + 10
    after_crash = _wait(moved, budget, f"{lost} RUNNING elsewhere")
    t_failover = time.monotonic() - crash_at
    # GET on any survivor shows the same assignment; nothing of the config is lost.
    assert cluster.running_tasks(names, survivors[1]) == after_crash
    for name in names:
        assert requests.get(f"{survivors[1]}connectors/{name}/config", timeout=10).json()["topic"] == topic

    # A fourth worker joins and gets work; tasks that stay on their worker are never restarted.
    before = dict(after_crash)
    fourth = cluster.start_worker()

    def fourth_busy() -> dict[str, str] | None:
        now = cluster.running_tasks(names, survivors[0])
        ok = len(now) == total_tasks + len(names) and _worker_id(fourth) in now.values()
        return now if ok else None

    after_join = _wait(fourth_busy, 60, "the fourth worker running something")
    workers = [*survivors, fourth]
    counts = _task_counts(after_join, names, workers)
    assert max(counts.values()) - min(counts.values()) <= 1, counts
    stayed = {k for k, w in before.items() if after_join.get(k) == w}
    assert stayed, "every task moved"
    _check_group(cluster, kafka, 3)

    # No record lost: every task's sequence has no gap (duplicates are allowed: at least once).
    time.sleep(1.5)
    messages = kafka.read_to_end(topic)
    seen: dict[str, set[int]] = {}
    for msg in messages:
        value = msg.value().decode().strip('"')
        source, _, n = value.rpartition("-")
        seen.setdefault(source, set()).add(int(n))
    assert len(seen) == total_tasks
    for source, numbers in seen.items():
        assert numbers == set(range(max(numbers) + 1)), f"{source} lost records"
    total = time.monotonic() - started
    print(f"\nspread in {t_spread:.1f} s, failover in {t_failover:.1f} s, total {total:.1f} s")


def _check_group(cluster: Cluster, kafka: Any, members: int) -> None:
    # confluent-kafka's describe_consumer_groups refuses a `connect` group ("is not a consumer group"),
    # kafka-python's admin decodes member bytes as the consumer protocol's: send DescribeGroups directly.
    def described() -> Any:
        group = _describe_group_raw(cluster.bootstrap, cluster.group)
        return group if len(group.members) == members and group.group_state == "Stable" else None

    raw = _wait(described, 30, f"a stable group of {members}")
    assert raw.protocol_type == "connect" and raw.protocol_data == "sessioned"
    urls = set()
    leaders = set()
    for member in raw.members:
        sub = decode_subscription(bytes(member.member_metadata))
        assignment = decode_assignment(bytes(member.member_assignment))
        assert sub.version == 2 and sub.config_offset >= 0
        assert assignment.version == 2 and assignment.error == 0
        urls.add(sub.url)
        leaders.add(assignment.leader_url)
    assert urls == set(cluster.workers)
    assert len(leaders) == 1 and leaders <= urls


def _describe_group_raw(bootstrap: str, group: str) -> Any:
    """DescribeGroups through kafka-python's connection manager, member bytes left undecoded (its admin
    helper would try to decode them as the consumer protocol's)."""
    from kafka import KafkaAdminClient
    from kafka.protocol.admin import DescribeGroupsRequest

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:

        async def describe() -> Any:
            coordinators = await admin._find_coordinator_ids([group])
            request = DescribeGroupsRequest(groups=[group], include_authorized_operations=False)
            return await admin._manager.send(request, node_id=coordinators[group])

        response = admin._manager.run(describe)
    finally:
        admin.close()
    (described,) = response.groups
    return described
