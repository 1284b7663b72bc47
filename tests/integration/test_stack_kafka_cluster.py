"""``CDC_KAFKA_BROKERS=3 make up``: three KRaft nodes, topics replicated 3 times with min.insync.replicas 2;
``make down`` stops all three.

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

pytestmark = pytest.mark.timeout(600)

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
