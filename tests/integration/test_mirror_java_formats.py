"""cdc's MM2 records and Connect partitions compared with the bytes Kafka's own classes write.

Compiles ``tests/fixtures/mirror/MirrorFormats.java`` against ``connect-mirror`` from Maven Central (the jars
``bench/jars.py`` fetched into ``~/.cache/cdc/peers/mirror-*``; skipped when none is there) and compares, for
the same inputs, the key and value bytes of OffsetSync, Checkpoint and Heartbeat, and the JSON of the Connect
partitions and offsets the tasks hand over.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cdc.mirror.protocol import (
    Checkpoint,
    Heartbeat,
    OffsetSync,
    source_offset,
    source_partition,
)

REPO = Path(__file__).resolve().parents[2]


def _libs() -> Path | None:
    cache = Path(os.environ.get("CDC_CACHE", str(Path.home() / ".cache" / "cdc"))) / "peers"
    found = sorted(cache.glob("mirror-*/libs/connect-mirror-[0-9]*.jar"))
    return found[-1].parent if found else None


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    libs = _libs()
    if libs is None or shutil.which("javac") is None:
        pytest.skip("no connect-mirror jars in ~/.cache/cdc/peers (bench/jars.py fetches them) or no javac")
    out = tmp_path_factory.mktemp("mirror-java")
    classpath = f"{libs}/*"
    source = REPO / "tests" / "fixtures" / "mirror" / "MirrorFormats.java"
    subprocess.run(["javac", "-cp", classpath, "-d", str(out), str(source)], check=True, timeout=180)
    return ["java", "-cp", f"{out}:{classpath}", "org.apache.kafka.connect.mirror.MirrorFormats"]


def _run(java: list[str], *args: str) -> list[str]:
    return subprocess.run(
        [*java, *args], check=True, timeout=120, capture_output=True, text=True
    ).stdout.split()


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize(
    ("topic", "partition", "up", "down"),
    [("orders", 3, 1000, 998), ("é-ü.t", 0, 0, -1), ("t", 2**31 - 1, 2**62, 7)],
)
def test_offset_sync(java: list[str], topic: str, partition: int, up: int, down: int) -> None:
    key, value = _run(java, "offset-sync", topic, str(partition), str(up), str(down))
    sync = OffsetSync(topic, partition, up, down)
    assert (sync.record_key().hex(), sync.record_value().hex()) == (key, value)


@pytest.mark.parametrize("metadata", ["", "meta data ✓"])
def test_checkpoint(java: list[str], metadata: str) -> None:
    key, value, *partition = _run(java, "checkpoint", "billing", "east.orders", "2", "500", "480", metadata)
    cp = Checkpoint("billing", "east.orders", 2, 500, 480, metadata)
    assert (cp.record_key().hex(), cp.record_value().hex()) == (key, value)
    assert _compact(cp.connect_partition()) == " ".join(partition)


def test_heartbeat(java: list[str]) -> None:
    key, value, partition = _run(java, "heartbeat", "east", "west", "1732755600123")
    hb = Heartbeat("east", "west", 1732755600123)
    assert (hb.record_key().hex(), hb.record_value().hex()) == (key, value)
    from cdc.mirror.protocol import heartbeat_partition

    assert _compact(heartbeat_partition("east", "west")) == partition


def test_source_partition_and_offset(java: list[str]) -> None:
    partition, offset = _run(java, "source-partition", "east", "orders", "5", "41")
    assert _compact(source_partition("east", "orders", 5)) == partition
    assert _compact(source_offset(41)) == offset
