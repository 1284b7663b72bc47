"""``CDC_KAFKA_BROKERS=3 make up``: three KRaft nodes, topics replicated 3 times with min.insync.replicas 2;
``make down`` stops all three. ``CDC_KAFKA_CLUSTERS=2 make up``: a second, independent cluster (MirrorMaker
2's target) beside the first; ``make status`` shows it and ``make down`` stops it.

On a **private** stack (``CDC_STACK_DIR`` a fresh /tmp directory, ``CDC_STACK_SERVICES=kafka``, six free
consecutive ports from ``CDC_KAFKA_PORT``), never the shared one on 9092. 20 to 60 s.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from cdc.kafka.failures import describe_topic_configs

# the stack scripts' multi-broker and second-cluster modes (about 50 s of JVM start-ups): make test-all, so
# that make test stays under 30 minutes; the mirror tests use the second cluster when it is up
pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def _free_run(count: int) -> int:
    """The first of ``count`` consecutive free ports."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = int(s.getsockname()[1])
        if base + count >= 65535:
            continue
        free = True
        for port in range(base, base + count):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    free = False
                    break
        if free:
            return base
    raise AssertionError(f"no {count} consecutive free ports")


def _ours(directory: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if str(directory).encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
    return pids


def test_three_brokers_replicate_and_stop_together() -> None:
    directory = Path(tempfile.mkdtemp(prefix="cdc-kc-", dir="/tmp"))
    base = _free_run(6)
    env = {
        **os.environ,
        "CDC_STACK_DIR": str(directory),
        "CDC_STACK_SERVICES": "kafka",
        "CDC_STACK_BACKEND": "local",
        "CDC_KAFKA_BROKERS": "3",
        "CDC_KAFKA_PORT": str(base),
        # the SSL listeners (node n on this port + 10(n-1)), away from the shared broker's 9095
        "CDC_KAFKA_SSL_PORT": str(_free_run(21)),
        "CDC_KAFKA_HEAP": "256m",
    }

    def make(target: str) -> str:
        done = subprocess.run(
            ["make", "-s", "-C", str(REPO), target], env=env, capture_output=True, text=True, timeout=400
        )
        assert done.returncode == 0, f"make {target}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    try:
        out = make("up")
        bootstrap = ",".join(f"127.0.0.1:{base + 2 * n}" for n in range(3))
        assert f"3 nodes on {bootstrap}" in out, out
        env_out = subprocess.run(
            [str(REPO / "scripts" / "stack.sh"), "env"], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert f"CDC_KAFKA_BOOTSTRAP={bootstrap}" in env_out, env_out

        admin = AdminClient({"bootstrap.servers": bootstrap})
        assert sorted(admin.list_topics(timeout=30).brokers) == [1, 2, 3]
        for future in admin.create_topics([NewTopic("replicated", 1)], request_timeout=60).values():
            future.result(60)  # no replication factor given: the cluster's default
        # a topic just created may still be missing from a broker's metadata: ask until it has it
        deadline = time.monotonic() + 30
        while not (partitions := admin.list_topics("replicated", timeout=30).topics["replicated"].partitions):
            assert time.monotonic() < deadline, "topic 'replicated' has no partition in the metadata"
            time.sleep(0.2)
        partition = partitions[0]
        config = describe_topic_configs(admin, "replicated", 30)  # asks again until every broker knows it
        assert len(partition.replicas) == 3, partition.replicas
        assert config["min.insync.replicas"].value == "2"

        make("down")
        assert _ours(directory) == []
    finally:
        for pid in _ours(directory):  # only ours: they name the private directory
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)


def test_second_cluster_is_independent_and_stops_with_the_stack() -> None:
    directory = Path(tempfile.mkdtemp(prefix="cdc-kb-", dir="/tmp"))
    base = _free_run(4)
    ssl = _free_run(2)
    env = {
        **os.environ,
        "CDC_STACK_DIR": str(directory),
        "CDC_STACK_SERVICES": "kafka",
        "CDC_STACK_BACKEND": "local",
        "CDC_STACK_REGISTRY": "0",
        "CDC_KAFKA_CLUSTERS": "2",
        "CDC_KAFKA_PORT": str(base),
        "CDC_KAFKA_CONTROLLER_PORT": str(base + 1),
        "CDC_KAFKA_B_PORT": str(base + 2),  # its controller on the port after
        "CDC_KAFKA_SSL_PORT": str(ssl),
        "CDC_KAFKA_B_SSL_PORT": str(ssl + 1),
        "CDC_KAFKA_HEAP": "256m",
    }
    env.pop("CDC_KAFKA_BROKERS", None)

    def make(target: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["make", "-s", "-C", str(REPO), target],
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=400,
        )

    a, b = f"127.0.0.1:{base}", f"127.0.0.1:{base + 2}"
    try:
        up = make("up")
        assert up.returncode == 0, f"make up:\n{up.stdout}\n{up.stderr}"
        assert f"the second cluster, on {b}, controller on 127.0.0.1:{base + 3}" in up.stdout, up.stdout
        assert (directory / "kafka-b" / "data" / "meta.properties").is_file()
        assert (directory / "run" / "kafka_b.pid").is_file()
        env_out = subprocess.run(
            [str(REPO / "scripts" / "stack.sh"), "env"], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert f"CDC_KAFKA_BOOTSTRAP={a}" in env_out and f"CDC_KAFKA_B_BOOTSTRAP={b}" in env_out, env_out

        admin_a = AdminClient({"bootstrap.servers": a})
        admin_b = AdminClient({"bootstrap.servers": b})
        id_a = admin_a.describe_cluster(request_timeout=30).result(30).cluster_id
        id_b = admin_b.describe_cluster(request_timeout=30).result(30).cluster_id
        assert id_a and id_b and id_a != id_b  # two clusters, not two listeners of one
        for future in admin_b.create_topics([NewTopic("only-on-b", 2)], request_timeout=60).values():
            future.result(60)
        deadline = time.monotonic() + 30
        while "only-on-b" not in admin_b.list_topics(timeout=30).topics:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert "only-on-b" not in admin_a.list_topics(timeout=30).topics

        again = make("up")  # idempotent: both left alone
        assert again.returncode == 0 and "kafka_b: already running" in again.stdout, again.stdout

        # status and down find the second cluster by its pid file, without the variable
        status = make("status", CDC_KAFKA_CLUSTERS="1")
        assert status.returncode == 0, f"make status:\n{status.stdout}\n{status.stderr}"
        assert "kafka_b: up (pid" in status.stdout and b in status.stdout, status.stdout
        down = make("down", CDC_KAFKA_CLUSTERS="1")
        assert down.returncode == 0, f"make down:\n{down.stdout}\n{down.stderr}"
        assert "kafka_b: stopping" in down.stdout, down.stdout
        assert _ours(directory) == []
        assert not (directory / "run" / "kafka_b.pid").exists()
    finally:
        for pid in _ours(directory):  # only ours: they name the private directory
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)
