"""Distributed mode with real worker processes: ``kill -9`` of a follower and of the leader, a fourth worker,
forwarding under load, a soak.

Every worker is a ``python -m cdc.cli distributed <file>`` subprocess on its own REST port, all with one
``group.id`` and internal topics under the ``kafka`` fixture's prefix. The work is seven
``FileStreamSource`` connectors (one task each: seven connectors and seven tasks) tailing files that a
thread of the test keeps appending numbered lines to; a consumer then proves that no line was lost
(duplicates are allowed: at least once) and that no task re-read its file from the start (its offsets
survived).

The group's member bytes are decoded here with a decoder written from the layouts of the reference
(``connect-and-debezium.md`` §4.2), not with ``cdc.worker.distributed.protocol``.

Requests during rebalances answer 2xx, 404 or 409, never 5xx: the first test hammers every worker while a
follower is killed, the second hammers the followers while the leader is killed. Until the group notices
that death (``session.timeout.ms``), a follower's forward to the dead leader finds no one; it waits for the
rebalance and re-sends the request to the new leader within the request timeout (answering 409 only if
none is known by then). A create that the dead leader wrote just before dying is re-sent too, and then
answers 409 "already exists": the hammer counts it as possibly created.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests
from faultkit import group_worker_props

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SESSION_TIMEOUT_MS = 6000
MAX_DELAY_MS = 2000
FAILOVER_BUDGET_S = (SESSION_TIMEOUT_MS + MAX_DELAY_MS) / 1000 + 10
FILES = 7  # seven connectors with one task each: 3 + 2 + 2 over three workers
LINE_INTERVAL_S = 0.05  # every file gets a line this often
HTTP_TIMEOUT_S = 100.0  # above the REST layer's own 90 s

T = TypeVar("T")


# ----------------------------------------------------------------------------------- independent decoder
class _Bytes:
    """Big-endian Kafka primitives (§4.2): STRING = int16 length + UTF-8, NULLABLE_BYTES = int32 length
    (-1 = null), ARRAY = int32 count (-1 = null) + items."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        assert 0 <= n <= len(self.data) - self.pos, f"truncated: {n} bytes wanted at {self.pos}"
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def int64(self) -> int:
        return int(struct.unpack(">q", self._take(8))[0])

    def string(self) -> str:
        return self._take(self.int16()).decode("utf-8")

    def nullable_bytes(self) -> bytes | None:
        n = self.int32()
        return None if n == -1 else self._take(n)

    def left(self) -> int:
        return len(self.data) - self.pos


def _connector_assignments(buf: _Bytes) -> set[str] | None:
    """ARRAY<connector:STRING, tasks:ARRAY<int32>>; task -1 is the connector itself. Names: ``conn`` for
    a connector, ``conn-<i>`` for a task (as the REST status keys below)."""
    count = buf.int32()
    if count == -1:
        return None
    out: set[str] = set()
    for _ in range(count):
        connector = buf.string()
        tasks = buf.int32()
        for _ in range(max(tasks, 0)):
            task = buf.int32()
            out.add(connector if task == -1 else f"{connector}-{task}")
    return out


def decode_connect_assignment(data: bytes) -> dict[str, Any]:
    buf = _Bytes(data)
    out: dict[str, Any] = {
        "version": buf.int16(),
        "error": buf.int16(),
        "leader": buf.string(),
        "leader_url": buf.string(),
        "config_offset": buf.int64(),
    }
    out["assignment"] = _connector_assignments(buf)
    if out["version"] >= 1:
        out["revoked"] = _connector_assignments(buf)
        out["delay"] = buf.int32()
    assert buf.left() == 0, f"{buf.left()} bytes after the assignment"
    return out


def decode_connect_subscription(data: bytes) -> dict[str, Any]:
    buf = _Bytes(data)
    out: dict[str, Any] = {"version": buf.int16(), "url": buf.string(), "config_offset": buf.int64()}
    if out["version"] >= 1:
        raw = buf.nullable_bytes()
        out["allocation"] = None if raw is None else decode_connect_assignment(raw)
    assert buf.left() == 0, f"{buf.left()} bytes after the subscription"
    return out


def _describe_group_raw(bootstrap: str, group: str) -> Any:
    """DescribeGroups through kafka-python's connection manager, member bytes left undecoded."""
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


# ------------------------------------------------------------------------------------------- the cluster
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(predicate: Callable[[], T | None], timeout: float, what: str, every: float = 0.25) -> T:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except requests.RequestException as exc:
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last}")


@dataclass
class WorkerProcess:
    port: int
    props: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def worker_id(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        assert self.proc is None
        self.starts += 1
        with open(self.log, "ab") as out:
            out.write(f"\n===== start #{self.starts} at {time.time():.3f} =====\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cdc.cli", "distributed", str(self.props)],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=REPO,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )

    def kill9(self) -> None:
        proc, self.proc = self.proc, None
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ready(self) -> bool:
        try:
            return requests.get(self.url, timeout=5).status_code == 200
        except requests.RequestException:
            return False


class Appender(threading.Thread):
    """Appends ``<file>:<n>`` lines to every file, one per file every LINE_INTERVAL_S."""

    def __init__(self, files: list[Path]) -> None:
        super().__init__(name="appender", daemon=True)
        self.files = files
        self.counts = [0] * len(files)
        self._halt = threading.Event()
        for path in files:
            path.touch()

    def run(self) -> None:
        handles = [open(path, "a", encoding="ascii") for path in self.files]  # noqa: SIM115
        try:
            while not self._halt.wait(LINE_INTERVAL_S):
                for i, handle in enumerate(handles):
                    handle.write(f"{i}:{self.counts[i]}\n")
                    handle.flush()
                    self.counts[i] += 1
        finally:
            for handle in handles:
                handle.close()

    def stop(self) -> list[int]:
        self._halt.set()
        self.join(10)
        return list(self.counts)


@dataclass
class Cluster:
    kafka: Any
    tmp: Path
    workers: list[WorkerProcess] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.prefix = self.kafka.prefix
        self.group = f"{self.prefix}connect"
        self.topic = self.kafka.create_topic("lines", partitions=3)
        self.status_topic = f"{self.prefix}status"
        self.names = [f"fs-{i}" for i in range(FILES)]
        self.files = [self.tmp / f"input-{i}.txt" for i in range(FILES)]
        self.configs = {
            name: {
                "connector.class": "FileStreamSource",
                "tasks.max": "1",
                "file": str(path),
                "topic": self.topic,
                "batch.size": "200",
            }
            for name, path in zip(self.names, self.files, strict=True)
        }

    def add_worker(self) -> WorkerProcess:
        port = _free_port()
        props = self.tmp / f"worker-{port}.properties"
        lines = group_worker_props(
            self.kafka.bootstrap_servers, self.group, self.prefix, port, SESSION_TIMEOUT_MS, MAX_DELAY_MS
        )
        lines["worker.unsync.backoff.ms"] = "5000"
        props.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
        worker = WorkerProcess(port, props, self.tmp / f"worker-{port}.log")
        self.workers.append(worker)
        worker.start()
        return worker

    def live(self) -> list[WorkerProcess]:
        return [w for w in self.workers if w.alive()]

    def stop_all(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(Exception):
                worker.stop()

    @contextlib.contextmanager
    def logs_on_failure(self) -> Iterator[None]:
        try:
            yield
        except BaseException:
            print("\n" + self.logs_tail())  # the workers' last words, next to the failure
            raise

    def logs_tail(self, lines: int = 40) -> str:
        out = []
        for worker in self.workers:
            with contextlib.suppress(OSError):
                text = worker.log.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {worker.worker_id} ---\n" + "\n".join(text))
        return "\n".join(out)

    # -- REST views ------------------------------------------------------------------------------------
    def running(self, via: WorkerProcess, names: list[str] | None = None) -> dict[str, str]:
        """``fs-i`` (connector) and ``fs-i-0`` (task) → worker id, for what is RUNNING."""
        names = names or self.names
        r = requests.get(f"{via.url}connectors", params={"expand": "status"}, timeout=HTTP_TIMEOUT_S)
        r.raise_for_status()
        out: dict[str, str] = {}
        for name, item in r.json().items():
            if name not in names:
                continue
            status = item["status"]
            if status["connector"]["state"] == "RUNNING":
                out[name] = status["connector"]["worker_id"]
            for task in status["tasks"]:
                if task["state"] == "RUNNING":
                    out[f"{name}-{task['id']}"] = task["worker_id"]
        return out

    def all_running(self, via: WorkerProcess, exclude: str | None = None) -> dict[str, str] | None:
        now = self.running(via)
        ok = len(now) == 2 * len(self.names) and (exclude is None or exclude not in now.values())
        return now if ok else None

    def task_counts(self, running: dict[str, str], workers: list[WorkerProcess]) -> dict[str, int]:
        counts = Counter({w.worker_id: 0 for w in workers})
        for key, worker_id in running.items():
            if key not in self.names:
                counts[worker_id] += 1
        return dict(counts)

    # -- the broker's view --------------------------------------------------------------------------------
    def group_view(self, members: int) -> dict[str, dict[str, Any]]:
        """url → decoded subscription and assignment of each member of a Stable group of ``members``."""
        group = _describe_group_raw(self.kafka.bootstrap_servers, self.group)
        if len(group.members) != members or group.group_state != "Stable":
            return {}
        assert group.protocol_type == "connect", group.protocol_type
        assert group.protocol_data == "sessioned", group.protocol_data
        out = {}
        for member in group.members:
            sub = decode_connect_subscription(bytes(member.member_metadata))
            assignment = decode_connect_assignment(bytes(member.member_assignment))
            out[sub["url"]] = {"member_id": member.member_id, "sub": sub, "assignment": assignment}
        return out

    def check_group(self, workers: list[WorkerProcess]) -> str:
        """The group on the broker matches ``workers`` and what REST says runs where; the leader's URL."""
        expected = {w.url for w in workers}

        def consistent() -> tuple[dict[str, dict[str, Any]], dict[str, str]] | None:
            view = self.group_view(len(workers))
            running = self.all_running(workers[0])
            if not view or running is None or set(view) != expected:
                return None
            for url, member in view.items():
                sub, assignment = member["sub"], member["assignment"]
                allocation = sub["allocation"]
                held = set() if allocation is None else set(allocation["assignment"] or ())
                now = (held - set(assignment["revoked"] or ())) | set(assignment["assignment"] or ())
                worker_id = url.split("//", 1)[1].rstrip("/")
                if now != {k for k, w in running.items() if w == worker_id}:
                    return None
            return view, running

        view, _running = _wait(consistent, 60, "the group's bytes to match the REST view", every=1.0)
        leaders = set()
        for member in view.values():
            sub, assignment = member["sub"], member["assignment"]
            assert sub["version"] == 2 and sub["config_offset"] >= 0, sub
            assert assignment["version"] == 2 and assignment["error"] == 0, assignment
            assert assignment["delay"] >= 0
            leaders.add((assignment["leader"], assignment["leader_url"]))
        assert len(leaders) == 1, leaders
        ((leader_id, leader_url),) = leaders
        assert view[leader_url]["member_id"] == leader_id
        return leader_url

    # -- the data --------------------------------------------------------------------------------------------
    def check_lines(self, counts: list[int], timeout: float = 60) -> dict[str, int]:
        """Every appended line reached the topic; the first line of each file exactly once (offsets were
        never lost: a task that restarted from scratch would send it again)."""

        def complete() -> tuple[Counter[str], list[str]] | None:
            seen: Counter[str] = Counter(json.loads(m.value()) for m in self.kafka.read_to_end(self.topic))
            missing = [
                f"{i}:{n}" for i, count in enumerate(counts) for n in range(count) if f"{i}:{n}" not in seen
            ]
            return (seen, missing) if not missing else None

        try:
            seen, _ = _wait(complete, timeout, "every appended line in the topic", every=2.0)
        except AssertionError:
            seen = Counter(json.loads(m.value()) for m in self.kafka.read_to_end(self.topic))
            missing = {i: [n for n in range(c) if f"{i}:{n}" not in seen] for i, c in enumerate(counts)}
            raise AssertionError(
                f"lines lost: { {i: (len(m), m[:10]) for i, m in missing.items() if m} }"
            ) from None
        firsts = {i: seen[f"{i}:0"] for i in range(len(counts))}
        assert all(n == 1 for n in firsts.values()), f"a task re-read its file from the start: {firsts}"
        return {
            "lines": sum(counts),
            "records": sum(seen.values()),
            "duplicates": sum(seen.values()) - len(seen),
        }


@pytest.fixture
def cluster(kafka: Any, tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(kafka, tmp_path)
    try:
        yield c
    finally:
        c.stop_all()


def _create(cluster: Cluster, via: WorkerProcess, name: str) -> int:
    r = requests.post(
        f"{via.url}connectors", json={"name": name, "config": cluster.configs[name]}, timeout=HTTP_TIMEOUT_S
    )
    return r.status_code


def _start_cluster(cluster: Cluster, n: int) -> tuple[list[WorkerProcess], Appender]:
    workers = [cluster.add_worker() for _ in range(n)]
    _wait(lambda: all(w.ready() for w in workers), 90, "the workers' REST servers", every=0.5)
    appender = Appender(cluster.files)
    appender.start()
    return workers, appender


# ------------------------------------------------------------------------------------------------ the tests
# 40 s: make test keeps the leader's kill -9 here and test_distributed.py's crash and fourth worker
@pytest.mark.slow
def test_kill_9_a_fourth_worker_and_requests_during_rebalances(cluster: Cluster) -> None:
    started = time.monotonic()
    workers, appender = _start_cluster(cluster, 3)
    with cluster.logs_on_failure():
        try:
            _run_kill_join_hammer(cluster, workers, started)
        finally:
            counts = appender.stop()
        stats = cluster.check_lines(counts)
    print(f"data: {stats}; total {time.monotonic() - started:.1f} s")


def _run_kill_join_hammer(cluster: Cluster, workers: list[WorkerProcess], started: float) -> None:
    # The group forms; every create goes to a follower, which forwards it to the leader.
    _wait(lambda: cluster.group_view(3), 90, "a stable group of three", every=1.0)
    leader_url = next(iter(cluster.group_view(3).values()))["assignment"]["leader_url"]
    followers = [w for w in workers if w.url != leader_url]
    assert len(followers) == 2, (leader_url, [w.url for w in workers])
    for i, name in enumerate(cluster.names):
        assert _create(cluster, followers[i % 2], name) == 201, name
    running = _wait(lambda: cluster.all_running(workers[0]), 90, "every connector and task RUNNING")
    counts = cluster.task_counts(running, workers)
    assert max(counts.values()) - min(counts.values()) <= 1, counts
    leader_url = cluster.check_group(workers)
    t_spread = time.monotonic() - started

    # kill -9 the worker with the most tasks: its work RUNNING on the two others within the budget.
    time.sleep(1.5)  # a few offset commits
    busiest = max(workers, key=lambda w: (counts[w.worker_id], w.url == leader_url))
    lost = sorted(k for k, w in running.items() if w == busiest.worker_id)
    killed_at = time.monotonic()
    busiest.kill9()
    survivors = [w for w in workers if w is not busiest]
    after_kill = _wait(
        lambda: cluster.all_running(survivors[0], exclude=busiest.worker_id),
        FAILOVER_BUDGET_S,
        f"{lost} of the killed worker RUNNING on the others",
        every=0.2,
    )
    t_failover = time.monotonic() - killed_at
    # Any survivor shows the new assignment; no configuration is lost.
    assert _wait(lambda: cluster.running(survivors[1]) == after_kill or None, 10, "the same view elsewhere")
    for via in survivors:
        listed = requests.get(f"{via.url}connectors", timeout=HTTP_TIMEOUT_S).json()
        assert sorted(listed) == sorted(cluster.names)
        for name in cluster.names:
            config = requests.get(f"{via.url}connectors/{name}/config", timeout=HTTP_TIMEOUT_S).json()
            assert config == {**cluster.configs[name], "name": name}

    # A fourth worker joins: some work moves to it, and what stays is never stopped (no status record
    # at all, neither UNASSIGNED nor RUNNING, for it from the join on).
    cluster.check_group(survivors)
    time.sleep(1.0)
    marks = _status_marks(cluster)
    fourth = cluster.add_worker()
    joined_at = time.monotonic()
    members = [*survivors, fourth]

    def fourth_busy() -> dict[str, str] | None:
        now = cluster.all_running(survivors[0])
        return now if now is not None and fourth.worker_id in now.values() else None

    _wait(fourth_busy, 90, "the fourth worker running something")
    leader_url = cluster.check_group(members)  # only a leader's departure would change it
    after_join = _wait(fourth_busy, 30, "a stable assignment")
    t_join = time.monotonic() - joined_at
    counts = cluster.task_counts(after_join, members)
    assert max(counts.values()) - min(counts.values()) <= 1, counts
    stayed = sorted(k for k, w in after_kill.items() if after_join[k] == w)
    moved = sorted(k for k, w in after_kill.items() if after_join[k] != w)
    assert stayed and moved, (stayed, moved)
    time.sleep(1.0)
    history = _status_history_since(cluster, marks)
    touched = sorted(k for k in stayed if history.get(k))
    assert not touched, f"tasks that stayed were stopped or restarted: { {k: history[k] for k in touched} }"
    assert all(history.get(k) for k in moved if k not in cluster.names), (moved, history)

    # Requests during rebalances: creates, deletes and status calls on every worker while the creates and
    # deletes make the group rebalance, and a follower is killed (the leader: the next test): 2xx, 404 or
    # 409, never 5xx.
    hammer_at = time.monotonic()
    hammer = Hammer(cluster, members)
    hammer.start()
    time.sleep(6)
    victim = next(w for w in members if w.url != leader_url)
    hammer.drop(victim)
    victim.kill9()
    time.sleep(10)
    hammer.stop()
    t_hammer = time.monotonic() - hammer_at
    alive = [w for w in members if w is not victim]
    assert hammer.created, "no connector was created during the hammering"
    assert not hammer.failures, f"{len(hammer.failures)} failed requests: {hammer.failures[:10]}"
    hammer.clean_up(alive[0])

    def leftovers() -> list[list[str]]:
        listed = [requests.get(f"{w.url}connectors", timeout=HTTP_TIMEOUT_S).json() for w in alive]
        return [sorted(set(names) - set(cluster.names)) for names in listed]

    try:
        _wait(lambda: not any(leftovers()) or None, 60, "the clean-up")
    except AssertionError:
        raise AssertionError(f"connectors left (refused creates that took effect?): {leftovers()}") from None
    final = _wait(
        lambda: cluster.all_running(alive[0], exclude=victim.worker_id),
        60,
        "every connector and task RUNNING after the hammering",
    )
    assert set(final.values()) <= {w.worker_id for w in alive}
    print(
        f"\nspread in {t_spread:.1f} s, failover in {t_failover:.1f} s (budget {FAILOVER_BUDGET_S:.0f} s), "
        f"fourth worker busy in {t_join:.1f} s ({len(moved)} moved, {len(stayed)} stayed), "
        f"hammer {t_hammer:.1f} s: {Counter(hammer.codes)}"
    )


def test_kill_9_the_leader_while_followers_forward_requests(cluster: Cluster) -> None:
    started = time.monotonic()
    workers, appender = _start_cluster(cluster, 3)
    with cluster.logs_on_failure():
        try:
            _run_leader_kill_hammer(cluster, workers, started)
        finally:
            counts = appender.stop()
        stats = cluster.check_lines(counts)
    print(f"data: {stats}; total {time.monotonic() - started:.1f} s")


def _run_leader_kill_hammer(cluster: Cluster, workers: list[WorkerProcess], started: float) -> None:
    _wait(lambda: cluster.group_view(3), 90, "a stable group of three", every=1.0)
    leader_url = next(iter(cluster.group_view(3).values()))["assignment"]["leader_url"]
    leader = next(w for w in workers if w.url == leader_url)
    followers = [w for w in workers if w is not leader]
    for i, name in enumerate(cluster.names):
        assert _create(cluster, followers[i % 2], name) == 201, name
    _wait(lambda: cluster.all_running(workers[0]), 90, "every connector and task RUNNING")
    t_spread = time.monotonic() - started

    # The hammer asks only the followers, so that every create and delete is forwarded to the leader; the
    # leader dies under it. Until the group has a new leader, forwards find no one: they wait and are
    # re-sent to the new leader (2xx, 404, 409), never a 5xx.
    hammer = Hammer(cluster, followers)
    hammer.start()
    time.sleep(3)
    killed_at = time.monotonic()
    leader.kill9()
    time.sleep(12)
    hammer.stop()
    assert hammer.created, "no connector was created during the hammering"
    assert not hammer.failures, f"{len(hammer.failures)} failed requests: {hammer.failures[:10]}"
    created_after = [
        t for t, _, method, code in hammer.answers if method == "POST" and code == 201 and t > killed_at
    ]
    assert created_after, "no create succeeded after the leader was killed"
    waited = max(d for t, d, _, _ in hammer.answers if t + d > killed_at)
    hammer.clean_up(followers[0])

    def leftovers() -> list[list[str]]:
        listed = [requests.get(f"{w.url}connectors", timeout=HTTP_TIMEOUT_S).json() for w in followers]
        return [sorted(set(names) - set(cluster.names)) for names in listed]

    try:
        _wait(lambda: not any(leftovers()) or None, 60, "the clean-up")
    except AssertionError:
        raise AssertionError(f"connectors left (refused creates that took effect?): {leftovers()}") from None
    final = _wait(
        lambda: cluster.all_running(followers[0], exclude=leader.worker_id),
        60,
        "every connector and task RUNNING on the survivors",
    )
    assert set(final.values()) <= {w.worker_id for w in followers}
    new_leader = cluster.check_group(followers)
    assert new_leader != leader_url
    print(
        f"\nspread in {t_spread:.1f} s; leader killed, longest request across it {waited:.1f} s, "
        f"{len(created_after)} creates after it; hammer: {Counter(hammer.codes)}; 409s: {hammer.conflicts}"
    )


@pytest.mark.slow  # a 70 s soak: make test-all
def test_soak_kill_9_and_restart_every_15_s(cluster: Cluster) -> None:
    with cluster.logs_on_failure():
        _soak(cluster)


def _soak(cluster: Cluster) -> None:
    started = time.monotonic()
    workers, appender = _start_cluster(cluster, 3)
    try:
        _wait(lambda: cluster.group_view(3), 90, "a stable group of three", every=1.0)
        for i, name in enumerate(cluster.names):
            assert _create(cluster, workers[i % 3], name) == 201, name
        _wait(lambda: cluster.all_running(workers[0]), 90, "every connector and task RUNNING")
        time.sleep(1.5)
        soak_at = time.monotonic()
        kills = 0
        recoveries: list[float | None] = []  # per kill: the restarted worker back in a stable group
        while time.monotonic() - soak_at < 60:
            victim = workers[kills % len(workers)]
            members_before = {m["member_id"] for m in (cluster.group_view(3) or {}).values()}
            killed_at = time.monotonic()
            victim.kill9()
            victim.start()  # the same port and worker id
            kills += 1
            slot_end = soak_at + 15 * kills
            recovered = functools.partial(_rejoined, cluster, workers, victim, members_before)
            try:
                _wait(recovered, max(0.5, slot_end - time.monotonic()), "recovery", every=0.5)
                recoveries.append(round(time.monotonic() - killed_at, 1))
            except AssertionError:
                recoveries.append(None)  # not within the 15 s slot: the next kill comes anyway
            time.sleep(max(0.0, slot_end - time.monotonic()))
        settled_at = time.monotonic()
        final = _wait(
            lambda: _rejoined(cluster, workers, None, set()),
            FAILOVER_BUDGET_S + 30,
            "every connector and task RUNNING after the soak",
            every=0.5,
        )
        t_settle = time.monotonic() - settled_at
        assert set(final.values()) <= {w.worker_id for w in workers}
        cluster.check_group(workers)
    finally:
        counts = appender.stop()
    stats = cluster.check_lines(counts)
    total = time.monotonic() - started
    print(
        f"\nsoak: {kills} kills in {settled_at - soak_at:.0f} s (recovered after {recoveries} s), "
        f"all RUNNING {t_settle:.1f} s later, "
        f"spread {cluster.task_counts(final, workers)}; data: {stats}; total {total:.1f} s"
    )


# ------------------------------------------------------------------------------------------------ helpers
def _rejoined(
    cluster: Cluster, workers: list[WorkerProcess], restarted: WorkerProcess | None, members_before: set[str]
) -> dict[str, str] | None:
    """Every connector and task RUNNING once the group is stable with every worker in it, ``restarted``
    as a new member (the statuses of its killed incarnation carry the same worker id)."""
    view = cluster.group_view(len(workers))
    if not view or set(view) != {w.url for w in workers}:
        return None
    if restarted is not None and view[restarted.url]["member_id"] in members_before:
        return None
    return cluster.all_running(next(w for w in workers if w is not restarted))


def _status_marks(cluster: Cluster) -> dict[int, int]:
    marks: dict[int, int] = {}
    for message in cluster.kafka.read_to_end(cluster.status_topic):
        marks[message.partition()] = max(marks.get(message.partition(), 0), message.offset() + 1)
    return marks


def _status_history_since(cluster: Cluster, marks: dict[int, int]) -> dict[str, list[str]]:
    """``fs-i`` / ``fs-i-0`` → the states written to the status topic since ``marks``."""
    out: dict[str, list[str]] = {}
    for message in cluster.kafka.read_to_end(cluster.status_topic):
        if message.offset() < marks.get(message.partition(), 0):
            continue
        key = message.key().decode()
        value = json.loads(message.value()) if message.value() else {"state": "tombstone"}
        for prefix in ("status-connector-", "status-task-"):
            if key.startswith(prefix):
                out.setdefault(key[len(prefix) :], []).append(f"{value['state']}@{value.get('worker_id')}")
    return out


class Hammer:
    """Threads that create, query and delete connectors on every worker until stopped."""

    def __init__(self, cluster: Cluster, targets: list[WorkerProcess], threads: int = 4) -> None:
        self.cluster = cluster
        self.targets = list(targets)
        self.codes: list[int] = []
        self.answers: list[tuple[float, float, str, int]] = []  # sent at, took, method, status
        self.conflicts: list[str] = []  # the 409s: method, path, message
        self.failures: list[str] = []
        self.created: set[str] = set()
        self.deleted: set[str] = set()
        self.uncertain: set[str] = set()
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(threads)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._halt.set()
        for thread in self._threads:
            thread.join(HTTP_TIMEOUT_S + 10)

    def drop(self, worker: WorkerProcess) -> None:
        with self._lock:
            self.targets.remove(worker)

    def _target(self, n: int) -> WorkerProcess:
        with self._lock:
            return self.targets[n % len(self.targets)]

    def _call(self, target: WorkerProcess, method: str, path: str, ok: tuple[int, ...], **kw: Any) -> int:
        sent = time.monotonic()
        try:
            r = requests.request(method, f"{target.url}{path}", timeout=HTTP_TIMEOUT_S, **kw)
        except requests.RequestException as exc:
            if target in self.targets:  # a dead worker's refusals are not the cluster's answers
                with self._lock:
                    self.failures.append(f"{method} {target.url}{path}: {exc}")
            return -1
        with self._lock:
            self.codes.append(r.status_code)
            self.answers.append((sent, time.monotonic() - sent, method, r.status_code))
            if r.status_code not in ok:
                self.failures.append(f"{method} {target.url}{path}: {r.status_code} {r.text[:300]}")
            elif r.status_code == 409:
                self.conflicts.append(f"{method} {path}: {r.text[:200]}")
        if method == "POST" and r.status_code == 409 and "already exists" in r.text:
            return -2  # names are never reused: a create re-sent after its first attempt took effect
        return r.status_code

    def _run(self, thread: int) -> None:
        n = 0
        while not self._halt.is_set():
            name = f"hammer-{thread}-{n}"
            config = {
                "connector.class": "FileStreamSource",
                "tasks.max": "1",
                "topic": self.cluster.topic,
                "file": str(self.cluster.tmp / f"{name}.txt"),
            }
            code = self._call(
                self._target(n + thread),
                "POST",
                "connectors",
                (201, 409),
                json={"name": name, "config": config},
            )
            with self._lock:
                if code == 201:
                    self.created.add(name)
                elif code in (-1, -2):  # sent to a worker killed before it answered: created or not
                    self.uncertain.add(name)
            self._call(self._target(n + thread + 1), "GET", f"connectors/{name}/status", (200, 404, 409))
            self._call(
                self._target(n + thread + 2), "GET", "connectors", (200, 409), params={"expand": "status"}
            )
            if code == 201:
                for _ in range(20):
                    code = self._call(
                        self._target(n + thread + 3), "DELETE", f"connectors/{name}", (204, 404, 409)
                    )
                    if code in (204, 404):
                        with self._lock:
                            self.deleted.add(name)
                        break
                    time.sleep(0.5)
            n += 1

    def clean_up(self, via: WorkerProcess) -> None:
        """Delete what a refused delete left behind, and what a create that got no answer (its worker was
        killed) may have created; anything else left is a create that was refused but took effect."""

        def gone(name: str) -> bool | None:
            r = requests.delete(f"{via.url}connectors/{name}", timeout=HTTP_TIMEOUT_S)
            return r.status_code in (204, 404) or None

        for name in sorted((self.created - self.deleted) | self.uncertain):
            _wait(functools.partial(gone, name), 60, f"deleting {name}")
