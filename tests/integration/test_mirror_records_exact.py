"""Issue 29's acceptance, *records copied exactly*, between two real clusters: every record that
``cdc mirror-maker`` copies is compared with its source record, partition by partition and offset by
offset: the same key, value, headers (order, duplicates and null values kept), timestamp and timestamp
type, in the same partition at the same offset, with nothing missing and nothing extra.

Cluster ``a`` is the stack's broker (a topic of this test's own, deleted afterwards); cluster ``b`` is the
stack's second cluster when ``CDC_KAFKA_B_BOOTSTRAP`` names it (``CDC_KAFKA_CLUSTERS=2 make up``), else a
private one-node cluster of the test's own. The records are 1 KB lz4 batches of B15's shape with the awkward
cases mixed in: null keys, null and empty values, headers with null values and repeated keys, timestamps out
of order. The small run (20 000 records) is in ``make test``; the million-record one is ``slow``
(``pytest -m slow -k million``; it prints its figures). The comparison streams a 16-byte digest per record
(key, value, headers, timestamp type and timestamp, each length-prefixed), so a million records of 1 KB
need ~100 MB of memory, not two gigabytes; the first difference is named by partition and offset.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from faultkit import PrivateKafka

from bench.mirror.processes import CdcMirrorMaker, mm2_properties

if TYPE_CHECKING:  # the fixture's type; conftest is no module to import at run time
    from tests.conftest import Stack

PARTITIONS = 6
SIZE = 1024


@pytest.fixture(scope="module")
def target_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    running = os.environ.get("CDC_KAFKA_B_BOOTSTRAP") or os.environ.get("CDC_TEST_CLUSTER_B")
    if running:
        yield running
        return
    broker = PrivateKafka(tmp_path_factory.mktemp("mm2-exact-b")).start()
    try:
        yield broker.bootstrap
    finally:
        if broker.proc is not None and broker.proc.poll() is None:
            broker.proc.kill()
            broker.proc.wait(30)


def _record(i: int, base: int, noise: bytes) -> dict[str, object]:
    """Record ``i``: B15's 1 KB lz4 shape, with one of the awkward cases every few records."""
    value: bytes | None = i.to_bytes(4, "big") + noise[i % 4096 : i % 4096 + SIZE - 4]
    if i % 101 == 3:
        value = None  # a tombstone
    elif i % 103 == 4:
        value = b""
    headers: list[tuple[str, bytes | None]] | None = None
    if i % 3 == 1:
        headers = [
            ("trace", f"t{i}".encode()),
            ("n", None),
            ("trace", b""),
            ("bin", bytes([i % 256, 0, 255])),
        ]
    elif i % 3 == 2:
        headers = [("one", b"\x00" * (i % 17))]
    return {
        "key": None if i % 7 == 0 else f"key-{i}".encode(),
        "value": value,
        "headers": headers,
        "partition": i % PARTITIONS,
        # recent (the brokers' retention), and every 11th record older than its predecessor
        "timestamp": base + i - (5000 if i % 11 == 0 else 0),
    }


def _produce(bootstrap: str, topic: str, total: int) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": "lz4",
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "acks": "all",
            "enable.idempotence": True,  # exactly one copy of each record at a known offset
        }
    )
    base = int(time.time() * 1000) - 600_000
    noise = os.urandom(4096 + SIZE)
    for i in range(total):
        while True:
            try:
                producer.produce(topic, **_record(i, base, noise))  # type: ignore[arg-type]
                break
            except BufferError:
                producer.poll(0.1)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def _digest(msg: object) -> bytes:
    """Key, value, headers, timestamp type and timestamp, each framed so that no two records collide."""
    h = hashlib.blake2b(digest_size=16)
    for part in (msg.key(), msg.value()):  # type: ignore[attr-defined]
        h.update(b"\xff" if part is None else len(part).to_bytes(4, "big") + part)
    for name, val in msg.headers() or ():  # type: ignore[attr-defined]
        raw = name.encode()
        h.update(len(raw).to_bytes(4, "big") + raw)
        h.update(b"\xff" if val is None else len(val).to_bytes(4, "big") + val)
    ts_type, ts = msg.timestamp()  # type: ignore[attr-defined]
    h.update(f"|{ts_type}|{ts}".encode())
    return h.digest()


def _digests(bootstrap: str, topic: str, ends: dict[int, int]) -> dict[int, list[bytes]]:
    """Per partition, the digest of every record at offsets 0 .. end-1, in offset order (a gap in the
    offsets fails here: the copy must sit at the same offsets as its source)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"exact-reader-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52_428_800,
        }
    )
    out: dict[int, list[bytes]] = {p: [] for p in ends}
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p, end in ends.items() if end > 0])
        left = {p for p, end in ends.items() if end > 0}
        deadline = time.monotonic() + 600
        while left and time.monotonic() < deadline:
            for msg in consumer.consume(5000, 1.0):
                if msg.error() is not None:
                    continue
                p, offset = msg.partition(), msg.offset()
                assert p is not None and offset is not None
                got = out[p]
                assert offset == len(got), f"{topic}[{p}]: offset {offset} where {len(got)} was expected"
                if offset < ends[p]:
                    got.append(_digest(msg))
                if len(got) >= ends[p]:
                    left.discard(p)
        assert not left, f"{topic}: partitions {sorted(left)} not read to their end"
    finally:
        consumer.close()
    return out


def _end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "exact-ends"})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(PARTITIONS)
        }
    except Exception:  # the remote topic not created yet
        return {}
    finally:
        consumer.close()


@contextlib.contextmanager
def _deleted(bootstrap: str, *topics: str) -> Iterator[None]:
    try:
        yield
    finally:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.delete_topics(list(topics), operation_timeout=60).values():
            with contextlib.suppress(Exception):  # a topic never created
                future.result(60)


@pytest.mark.parametrize(
    "total",
    [
        pytest.param(20_000, id="small"),
        pytest.param(1_000_000, id="million", marks=[pytest.mark.slow, pytest.mark.timeout(3600)]),
    ],
)
def test_every_record_copied_byte_for_byte(
    total: int, stack: Stack, target_cluster: str, tmp_path: Path
) -> None:
    a, b = stack.kafka_bootstrap, target_cluster
    tag = uuid.uuid4().hex[:8]
    topic, source, target = f"mm2-exact-{tag}", f"s{tag}", f"t{tag}"
    remote = f"{source}.{topic}"
    with (
        _deleted(a, topic, f"mm2-offset-syncs.{target}.internal"),
        _deleted(
            b,
            remote,
            f"{source}.checkpoints.internal",
            f"mm2-offsets.{source}.internal",
            f"mm2-configs.{source}.internal",
            f"mm2-status.{source}.internal",
        ),
    ):
        admin = AdminClient({"bootstrap.servers": a})  # kept: the future dies with its client
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(60)
        started = time.monotonic()
        _produce(a, topic, total)
        produced_s = time.monotonic() - started
        ends = _end_offsets(a, topic)
        assert sum(ends.values()) == total

        props = mm2_properties({source: a, target: b}, [(source, target)], topics=topic, groups="none")
        started = time.monotonic()
        with CdcMirrorMaker(tmp_path, sys.executable, props, name="cdc-exact") as mm:
            deadline = started + max(300, total / 2000)
            while sum(_end_offsets(b, remote).values()) < total:
                mm.check()
                assert time.monotonic() < deadline, f"{remote} not complete; see {mm.log}"
                time.sleep(0.5)
            mirrored_s = time.monotonic() - started
            cpu = mm.cpu_seconds()
        # nothing extra: the remote topic ends where the source does, partition by partition
        assert _end_offsets(b, remote) == ends

        started = time.monotonic()
        expected = _digests(a, topic, ends)
        got = _digests(b, remote, ends)
        compared_s = time.monotonic() - started
        for p in range(PARTITIONS):
            assert len(got[p]) == len(expected[p]) == ends[p]
            if got[p] != expected[p]:
                first = next(i for i, (x, y) in enumerate(zip(expected[p], got[p], strict=True)) if x != y)
                raise AssertionError(f"{remote}[{p}] offset {first} differs from {topic}[{p}] offset {first}")
        print(
            f"\n{total} records ({sum(len(d) for d in got.values())} compared, {PARTITIONS} partitions): "
            f"produced in {produced_s:.1f} s; mirrored by cdc mirror-maker in {mirrored_s:.1f} s from its "
            f"start ({total / mirrored_s:,.0f} records/s, {cpu:.1f} CPU-s); both sides read and compared in "
            f"{compared_s:.1f} s"
        )
