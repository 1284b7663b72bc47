"""Interchange with Kafka's own MirrorMaker 2 (connect-mirror from Maven Central, dedicated mode), live.

* **Byte for byte**: the same flow (source alias ``s``, the same source topic and committed group on the
  shared broker) mirrored by Java's MirrorMaker into one private cluster and by ``cdc mirror-maker`` into
  another; the data topic's offset syncs, the final checkpoints and the source task's final Connect offsets
  must be the same bytes (keys and values), the heartbeats the same key (but for the target alias, which
  must differ: both flows' offset syncs live on the source cluster, in ``mm2-offset-syncs.<target>.internal``)
  and the same version and layout (their timestamps differ).
* **Handover**: one flow run by Java, then by cdc, then by Java again, each stopped with SIGTERM and more
  records produced between: the target topic holds every source record once, in order, with its key, value,
  headers and timestamp; each side resumed from the other's Connect offsets.

Cluster ``s`` is the shared broker (unique topic and group names per run); targets are private one-node
clusters of the test's own. ~3-4 minutes: marked slow.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from faultkit import PrivateKafka

from bench.mirror.capture import (
    RawRecord,
    checkpoints_topic,
    connect_offsets_topic,
    offset_syncs_topic,
    read_topic,
    source_offsets,
)
from bench.mirror.processes import CdcMirrorMaker, JavaMirrorMaker, MirrorMakerProcess, mm2_properties

if TYPE_CHECKING:  # the fixtures' types; conftest is no module to import at run time
    from tests.conftest import Stack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

CACHE = Path.home() / ".cache" / "cdc"
PARTITIONS = 2
FAST = {  # seconds, not minutes: the defaults are MM2's, only the intervals are shortened
    "emit.checkpoints.interval.seconds": "1",
    "emit.heartbeats.interval.seconds": "1",
    "refresh.groups.interval.seconds": "2",
    "refresh.topics.interval.seconds": "5",
    "offset.flush.interval.ms": "1000",
}


@pytest.fixture
def names() -> dict[str, str]:
    tag = uuid.uuid4().hex[:8]
    return {"topic": f"mm2x-{tag}", "group": f"mm2x-g-{tag}", "source": f"s{tag}"}


@pytest.fixture
def private_kafka(tmp_path: Path) -> Iterator[Callable[[str], PrivateKafka]]:
    started: list[PrivateKafka] = []

    def start(name: str) -> PrivateKafka:
        broker = PrivateKafka(tmp_path / name).start()
        started.append(broker)
        return broker

    yield start
    for broker in started:
        if broker.proc is not None and broker.proc.poll() is None:
            broker.proc.kill()
            broker.proc.wait(30)


def _produce(bootstrap: str, topic: str, start: int, count: int) -> None:
    # timestamps of the producer's choosing (kept by the mirror), recent: the brokers' retention is 7 days
    base = int(time.time() * 1000) - 600_000
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": "lz4", "linger.ms": 5})
    for i in range(start, start + count):
        producer.produce(
            topic,
            key=f"k{i}".encode(),
            value=(f"v{i}-" * 20).encode(),
            partition=i % PARTITIONS,
            headers=[("n", str(i).encode()), ("empty", b"")],
            timestamp=base + i,
        )
    assert producer.flush(30) == 0


def _commit(bootstrap: str, group: str, topic: str, offsets: list[int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(
            offsets=[TopicPartition(topic, p, o) for p, o in enumerate(offsets)], asynchronous=False
        )
    finally:
        consumer.close()


def _create(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(60)


def _wait(mm: MirrorMakerProcess, what: str, predicate: Callable[[], bool], timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mm.check()
        if predicate():
            return
        time.sleep(1.0)
    raise AssertionError(f"{what} not reached in {timeout:.0f} s; see {mm.log}")


def _latest(records: list[RawRecord]) -> dict[bytes | None, bytes | None]:
    out: dict[bytes | None, bytes | None] = {}
    for record in records:
        out[record.key] = record.value
    return out


def _strings(*parts: str) -> bytes:
    """Kafka's protocol STRING fields: a 2-byte length and UTF-8."""
    return b"".join(len(p.encode()).to_bytes(2, "big") + p.encode() for p in parts)


def _mirror(
    kind: str, workdir: Path, props: dict[str, str]
) -> MirrorMakerProcess:  # the two contenders, started alike
    if kind == "java":
        return JavaMirrorMaker(workdir, CACHE, props, name=f"java-{workdir.name}")
    return CdcMirrorMaker(workdir, sys.executable, props, name=f"cdc-{workdir.name}")


def _run_flow(
    kind: str,
    workdir: Path,
    names: dict[str, str],
    source_bootstrap: str,
    target: str,
    target_bootstrap: str,
    expected: int,
    committed: list[int],
) -> dict[str, list[RawRecord]]:
    """Run one MirrorMaker on the flow until the target topic holds ``expected`` records, the checkpoints
    translate the group's ``committed`` offsets and have been still for a few seconds, then stop it (SIGTERM)
    and read what it wrote."""
    source, topic, group = names["source"], names["topic"], names["group"]
    props = mm2_properties(
        {source: source_bootstrap, target: target_bootstrap},
        [(source, target)],
        topics=topic,
        groups=group,
        extra=FAST,
    )
    remote = f"{source}.{topic}"
    with _mirror(kind, workdir, props) as mm:
        _wait(
            mm,
            f"{expected} records on {remote}",
            lambda: len(read_topic(target_bootstrap, remote)) >= expected,
        )

        def upstream_of(record: RawRecord) -> int:
            assert record.value is not None
            return int.from_bytes(record.value[2:10], "big")  # version, then upstream offset

        def checkpointed() -> bool:
            latest = _latest(read_topic(target_bootstrap, checkpoints_topic(source)))
            ups = sorted(upstream_of(RawRecord("", 0, 0, 0, k, v, ())) for k, v in latest.items() if v)
            return ups == sorted(committed)

        _wait(mm, "the checkpoints of the committed offsets", checkpointed)
        before = _latest(read_topic(target_bootstrap, checkpoints_topic(source)))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # still: every sync has reached the checkpoints
            time.sleep(4)
            now = _latest(read_topic(target_bootstrap, checkpoints_topic(source)))
            if now == before:
                break
            before = now
        _wait(mm, "heartbeats", lambda: bool(read_topic(target_bootstrap, "heartbeats")))
        mm.stop()
        assert mm.proc.returncode is not None
    return {
        "target": read_topic(target_bootstrap, remote),
        "syncs": read_topic(source_bootstrap, offset_syncs_topic(target)),
        "checkpoints": read_topic(target_bootstrap, checkpoints_topic(source)),
        "heartbeats": read_topic(target_bootstrap, "heartbeats"),
        "offsets": read_topic(target_bootstrap, connect_offsets_topic(source)),
    }


def test_internal_records_byte_for_byte_with_java_mm2(
    stack: Stack, names: dict[str, str], private_kafka: Callable[[str], PrivateKafka], tmp_path: Path
) -> None:
    kafka_bootstrap = stack.kafka_bootstrap
    source, topic = names["source"], names["topic"]
    _create(kafka_bootstrap, topic)
    _produce(kafka_bootstrap, topic, 0, 600)
    committed = [170, 240]
    _commit(kafka_bootstrap, names["group"], topic, committed)

    runs = {}
    for kind in ("java", "cdc"):
        target = f"t{kind}{source[1:]}"
        broker = private_kafka(kind)
        runs[kind] = _run_flow(
            kind, tmp_path / kind, names, kafka_bootstrap, target, broker.bootstrap, 600, committed
        )
        broker.stop()
    java, cdc = runs["java"], runs["cdc"]

    # the mirrored records: same keys, values, headers, timestamps and partitions on both targets
    def content(records: list[RawRecord]) -> list[tuple[object, ...]]:
        return [(r.partition, r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]

    assert len(java["target"]) == 600
    assert content(cdc["target"]) == content(java["target"])

    # offset syncs: the same records (mm2-offset-syncs.<target>.internal, keyed by topic and partition)
    # (the `heartbeats` topic is mirrored too, but the shared broker's heartbeats come and go with every run
    # of every test: only the data topic's syncs are the same for both)
    def syncs(run: dict[str, list[RawRecord]]) -> set[tuple[bytes | None, bytes | None]]:
        return {
            (r.key, r.value) for r in run["syncs"] if r.key is not None and r.key.startswith(_strings(topic))
        }

    assert len(syncs(java)) >= PARTITIONS, "Java wrote no offset sync for each partition"
    assert syncs(cdc) == syncs(java)

    # checkpoints: the final one per (group, topic, partition), bytes of key and value
    assert len(_latest(java["checkpoints"])) == PARTITIONS
    assert _latest(cdc["checkpoints"]) == _latest(java["checkpoints"])

    # heartbeats: key = source and target alias; value = version 0 and an 8-byte timestamp
    for kind, run in runs.items():
        beats = [r for r in run["heartbeats"] if r.key == _strings(source, f"t{kind}{source[1:]}")]
        assert beats, f"{kind}: no heartbeat of the flow"
        for beat in beats:
            assert beat.value is not None and len(beat.value) == 10 and beat.value[:2] == b"\x00\x00", beat
            assert abs(int.from_bytes(beat.value[2:], "big") - time.time() * 1000) < 3_600_000
            assert beat.headers == ()

    # the source task's Connect offsets: the final record per source partition, bytes of key and value
    def task_offsets(records: list[RawRecord]) -> dict[bytes | None, bytes | None]:
        ours = [
            r
            for r in records
            if r.key and r.key.startswith(b'["MirrorSourceConnector"') and topic.encode() in r.key
        ]
        return _latest(ours)

    assert len(task_offsets(java["offsets"])) == PARTITIONS
    assert task_offsets(cdc["offsets"]) == task_offsets(java["offsets"])


def test_flow_handed_from_java_to_cdc_and_back(
    stack: Stack, names: dict[str, str], private_kafka: Callable[[str], PrivateKafka], tmp_path: Path
) -> None:
    kafka_bootstrap = stack.kafka_bootstrap
    source, topic, group = names["source"], names["topic"], names["group"]
    target = f"t{source[1:]}"
    broker = private_kafka("target")
    _create(kafka_bootstrap, topic)
    produced = 0
    resumed: dict[str, dict[tuple[str, int], int]] = {}
    for step, kind in enumerate(("java", "cdc", "java")):
        _produce(kafka_bootstrap, topic, produced, 300)
        produced += 300
        committed = [produced // 2 - 10 * (step + 1), produced // 2 - 20 * (step + 1)]
        _commit(kafka_bootstrap, group, topic, committed)
        run = _run_flow(
            kind,
            tmp_path / f"{step}-{kind}",
            names,
            kafka_bootstrap,
            target,
            broker.bootstrap,
            produced,
            committed,
        )
        resumed[f"{step}-{kind}"] = source_offsets(run["offsets"], source)

    # every source record exactly once, in order, as it was
    def content(records: list[RawRecord]) -> list[tuple[object, ...]]:
        return [(r.partition, r.timestamp, r.key, r.value, r.headers) for r in records]

    upstream = read_topic(kafka_bootstrap, topic)
    downstream = read_topic(broker.bootstrap, f"{source}.{topic}")
    assert len(upstream) == produced
    missing = set(content(upstream)) - set(content(downstream))
    assert not missing, f"{len(missing)} records missing"
    assert len(downstream) == len(upstream), f"{len(downstream) - len(upstream)} duplicates"
    assert content(downstream) == content(upstream)
    # each run committed the offset of the last record it copied, which the next run started after
    for step, offsets in enumerate(resumed.values()):
        assert offsets[(topic, 0)] == offsets[(topic, 1)] == 150 * (step + 1) - 1, offsets
