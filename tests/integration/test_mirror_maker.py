"""MirrorMaker 2's connectors in a real cdc worker process, between two real clusters.

Cluster ``A`` is the stack's broker (127.0.0.1:9092), cluster ``B`` a private single-node KRaft cluster of
this module's own (:class:`kafka_cluster.KafkaCluster`). The standalone worker's brokers are B's, so the
A→B flows write through the worker's producer as Connect does; the B→A flow of the active/active tests
sends its records to A with ``producer.override.bootstrap.servers``. Aliases are unique per test, topics
carry the test's prefix, and the topic filter selects only them (A is shared with other tests).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from kafka_cluster import KafkaCluster

from cdc.mirror.protocol import Checkpoint, Heartbeat, OffsetSync
from tests.e2e import worker_process
from tests.e2e.worker_process import WorkerProcess, free_port, put_connectors, seed_properties, wait_for

workers = worker_process.workers  # the fixture: worker processes killed after the test

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


@pytest.fixture(scope="module")
def cluster_b(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    running = os.environ.get(
        "CDC_TEST_CLUSTER_B"
    )  # a cluster already up (e.g. CDC_KAFKA_CLUSTERS=2's second)
    if running:
        reuse = KafkaCluster.__new__(KafkaCluster)
        reuse.nodes, reuse.bootstrap = [], running
        yield reuse
        return
    cluster = KafkaCluster(tmp_path_factory.mktemp("mm2-b"), nodes=1).start()
    try:
        yield cluster
    finally:
        cluster.kill()


def _worker(
    tmp_path: Path, bootstrap: str, workers: list[WorkerProcess], connector: dict[str, str] | None = None
) -> WorkerProcess:
    """A standalone worker on ``bootstrap``; ``connector`` (with its ``name``) is given as a properties file
    on the command line, so that a restarted worker runs it again (REST-created ones are not kept)."""
    port = free_port()
    props = seed_properties(
        "connect-standalone.properties",
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": bootstrap,
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "1000",
        },
        {"listeners": f"http://127.0.0.1:{port}"},
    )
    args = ["standalone", str(props)]
    if connector is not None:
        path = tmp_path / "connector.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in connector.items()), encoding="utf-8")
        args.append(str(path))
    worker = WorkerProcess(args, port, tmp_path / "worker.log")
    workers.append(worker)
    return worker.start()


def _flow(
    kind: str, source: str, target: str, src: str, dst: str, prefix: str, **extra: str
) -> dict[str, str]:
    return {
        "connector.class": f"org.apache.kafka.connect.mirror.Mirror{kind}Connector",
        "source.cluster.alias": source,
        "target.cluster.alias": target,
        "source.cluster.bootstrap.servers": src,
        "target.cluster.bootstrap.servers": dst,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "topics": f".*{re.escape(prefix)}.*",
        "groups": f"{re.escape(prefix)}.*",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "heartbeats.replication.enabled": "false",
        "refresh.topics.interval.seconds": "2",
        "sync.topic.configs.interval.seconds": "2",
        "refresh.groups.interval.seconds": "2",
        "emit.checkpoints.interval.seconds": "1",
        "sync.group.offsets.interval.seconds": "1",
        "offset.lag.max": "10",
        "tasks.max": "2",
        **extra,
    }


def _read(bootstrap: str, topic: str, timeout: float = 30) -> list[Any]:
    """Every record of ``topic`` up to its end now."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    meta = admin.list_topics(timeout=10).topics.get(topic)  # not topic=: that would auto-create it
    if meta is None or meta.error is not None:
        return []
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "mm2-test-reader", "enable.auto.commit": False}
    )
    try:
        wanted, assignment = {}, []
        for p in meta.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            if high > low:
                wanted[p] = high
                assignment.append(TopicPartition(topic, p, low))
        out: list[Any] = []
        if not assignment:
            return out
        consumer.assign(assignment)
        deadline = time.monotonic() + timeout
        while wanted and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                if msg.error() is None:
                    out.append(msg)
                    if msg.offset() + 1 >= wanted.get(msg.partition(), 0):
                        wanted.pop(msg.partition(), None)
        assert not wanted, f"{topic}: partitions {sorted(wanted)} not read"
        return out
    finally:
        consumer.close()


def _content(messages: list[Any]) -> dict[int, list[tuple[Any, ...]]]:
    out: dict[int, list[tuple[Any, ...]]] = {}
    for m in sorted(messages, key=lambda m: (m.partition(), m.offset())):
        headers = tuple(m.headers() or ())
        out.setdefault(m.partition(), []).append((m.key(), m.value(), headers, m.timestamp()[1]))
    return out


def _produce(bootstrap: str, topic: str, n: int, partitions: int, start: int = 0, tag: bytes = b"") -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    base = int(time.time() * 1000) - 3_600_000  # recent: the topic's retention.ms must not delete them
    for i in range(start, start + n):
        headers = [("h", f"v{i}".encode()), ("h", None), ("bin", bytes([i % 256, 0, 255]))] if i % 3 else None
        producer.produce(
            topic,
            value=None if i % 97 == 5 else tag + bytes([i % 251]) * (i % 300) + str(i).encode(),
            key=None if i % 7 == 0 else f"k{i}".encode(),
            partition=i % partitions,
            timestamp=base + i,
            headers=headers,
        )
    producer.flush(30)


def _partitions(bootstrap: str, topic: str) -> int:
    meta = (
        AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic=topic, timeout=10).topics.get(topic)
    )
    return 0 if meta is None or meta.error is not None else len(meta.partitions)


def _status(worker: WorkerProcess, name: str) -> dict[str, Any]:
    return dict(requests.get(f"{worker.url}/connectors/{name}/status", timeout=10).json())


def _running(worker: WorkerProcess, name: str, tasks: int | None = None) -> bool:
    status = _status(worker, name)
    if "connector" not in status:
        return False
    failed = [t for t in status.get("tasks", []) if t["state"] == "FAILED"]
    assert status["connector"]["state"] != "FAILED" and not failed, (status, worker.log())
    states = [t["state"] for t in status.get("tasks", [])]
    return (
        status["connector"]["state"] == "RUNNING"
        and all(s == "RUNNING" for s in states)
        and (tasks is None or len(states) == tasks)
    )


@contextlib.contextmanager
def _cleanup(bootstrap: str, needle: str) -> Iterator[None]:
    try:
        yield
    finally:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        names = [t for t in admin.list_topics(timeout=10).topics if needle in t]
        for future in admin.delete_topics(names, operation_timeout=30).values() if names else []:
            with contextlib.suppress(Exception):
                future.result(30)


@pytest.mark.parametrize("location", ["source", "target"])  # offset-syncs.topic.location
def test_records_configs_partitions_groups_and_heartbeats(
    location: str, kafka: Any, cluster_b: KafkaCluster, tmp_path: Path, workers: list[WorkerProcess]
) -> None:
    a, b = kafka.bootstrap_servers, cluster_b.bootstrap
    uid = uuid.uuid4().hex[:6]
    src, dst = f"src{uid}", f"dst{uid}"
    with _cleanup(a, uid), _cleanup(a, kafka.prefix):
        topic = kafka.create_topic("orders", 3, {"retention.ms": "123456789", "min.insync.replicas": "1"})
        _produce(a, topic, 3000, 3)
        group = kafka.topic("billing")
        committer = Consumer({"bootstrap.servers": a, "group.id": group, "enable.auto.commit": False})
        committed = {0: 500, 1: 1000, 2: 1}
        committer.commit(
            offsets=[TopicPartition(topic, p, o) for p, o in committed.items()], asynchronous=False
        )
        committer.close()

        worker = _worker(tmp_path, b, workers)
        at = {"offset-syncs.topic.location": location}
        put_connectors(
            worker,
            {
                "mm2-source": _flow("Source", src, dst, a, b, kafka.prefix, **at),
                "mm2-checkpoint": _flow(
                    "Checkpoint", src, dst, a, b, kafka.prefix, **at, **{"sync.group.offsets.enabled": "true"}
                ),
                "mm2-heartbeat": _flow("Heartbeat", src, dst, a, b, kafka.prefix),
            },
        )
        remote = f"{src}.{topic}"
        wait_for(lambda: _running(worker, "mm2-source", 2), 60, "the source connector's two tasks")

        # every record, byte for byte, in the same partition and order
        expected = _content(_read(a, topic))
        wait_for(lambda: sum(map(len, _content(_read(b, remote)).values())) >= 3000, 90, "3000 records on B")
        assert _content(_read(b, remote)) == expected

        # configs: the source's own settings, not the excluded ones
        config = cluster_b.topic_config(remote)
        assert config["retention.ms"] == "123456789"
        admin_a = AdminClient({"bootstrap.servers": a})
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        change = ConfigResource(
            ConfigResource.Type.TOPIC,
            topic,
            incremental_configs=[
                ConfigEntry("retention.ms", "987654321", incremental_operation=AlterConfigOpType.SET)
            ],
        )
        for f in admin_a.incremental_alter_configs([change]).values():
            f.result(30)
        wait_for(
            lambda: cluster_b.topic_config(remote)["retention.ms"] == "987654321",
            30,
            "the config change synced",
        )

        # offset syncs in Kafka's encoding, one at least every offset.lag.max records
        # (on the source named after the target, on the target named after the source, as Kafka's)
        syncs_at = (
            (a, f"mm2-offset-syncs.{dst}.internal")
            if location == "source"
            else (b, f"mm2-offset-syncs.{src}.internal")
        )
        syncs = [OffsetSync.decode(m.key(), m.value()) for m in _read(*syncs_at)]
        assert {s.topic for s in syncs} == {topic} and {s.partition for s in syncs} == {0, 1, 2}
        for p in range(3):
            ups = sorted(s.upstream_offset for s in syncs if s.partition == p)
            assert ups[0] == 0 and max(b2 - a2 for a2, b2 in itertools.pairwise(ups)) <= 11

        # checkpoints: translated, never ahead, at most offset.lag.max behind; and the group synced on B
        def checkpoints() -> dict[int, Checkpoint]:
            read = [Checkpoint.decode(m.key(), m.value()) for m in _read(b, f"{src}.checkpoints.internal")]
            return {c.partition: c for c in read if c.group == group}

        got = wait_for(
            lambda: len(checkpoints()) == 3 and checkpoints(), 60, "checkpoints of the 3 partitions"
        )
        for p, c in got.items():
            assert c.topic == remote and c.upstream_offset == committed[p]
            assert committed[p] - 10 <= c.downstream_offset <= committed[p], c

        def synced() -> dict[int, int]:
            admin_b = AdminClient({"bootstrap.servers": b})
            from confluent_kafka import ConsumerGroupTopicPartitions

            res = admin_b.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
            return {tp.partition: tp.offset for tp in res.topic_partitions if tp.offset >= 0}

        wait_for(
            lambda: synced() == {p: c.downstream_offset for p, c in got.items()},
            30,
            "the group's offsets on B",
        )

        # a new topic and a partition increase, found within refresh.topics.interval.seconds
        fresh = kafka.create_topic("fresh", 2)
        _produce(a, fresh, 50, 2, tag=b"fresh")
        for f in admin_a.create_partitions([NewPartitions(topic, 5)]).values():
            f.result(30)
        _produce(a, topic, 100, 5, start=3000)
        wait_for(lambda: _partitions(b, remote) == 5, 60, "the remote topic grown to 5 partitions")
        wait_for(lambda: len(_read(b, f"{src}.{fresh}")) == 50, 60, "the new topic's records")
        wait_for(
            lambda: _content(_read(b, remote)) == _content(_read(a, topic)),
            60,
            "the records of new partitions",
        )

        # heartbeats, in Kafka's encoding
        beats = [Heartbeat.decode(m.key(), m.value()) for m in _read(b, "heartbeats")]
        assert any(h.source_cluster_alias == src and h.target_cluster_alias == dst for h in beats)

        # the source task's Connect offsets, as Kafka's MirrorSourceTask writes them
        offsets = requests.get(f"{worker.url}/connectors/mm2-source/offsets", timeout=10).json()["offsets"]
        by_partition = {o["partition"]["partition"]: o for o in offsets if o["partition"]["topic"] == topic}
        assert list(by_partition[0]["partition"]) == ["cluster", "partition", "topic"]
        assert by_partition[0]["partition"]["cluster"] == src and by_partition[0]["offset"] == {
            "offset": 1019
        }


@pytest.mark.parametrize("policy", ["DefaultReplicationPolicy", "IdentityReplicationPolicy"])
def test_active_active_does_not_loop(
    policy: str, kafka: Any, cluster_b: KafkaCluster, tmp_path: Path, workers: list[WorkerProcess]
) -> None:
    a, b = kafka.bootstrap_servers, cluster_b.bootstrap
    uid = uuid.uuid4().hex[:6]
    alias_a, alias_b = f"a{uid}", f"b{uid}"
    identity = policy.startswith("Identity")
    with _cleanup(a, uid), _cleanup(a, kafka.prefix), _cleanup(b, kafka.prefix):
        topic = kafka.create_topic("events", 2)
        admin_b = AdminClient({"bootstrap.servers": b})  # kept alive until the future resolves
        admin_b.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
        _produce(a, topic, 200, 2, tag=b"from-a")
        _produce(b, topic, 100, 2, tag=b"from-b")
        worker = _worker(tmp_path, b, workers)
        extra = {"replication.policy.class": f"org.apache.kafka.connect.mirror.{policy}"}
        put_connectors(
            worker,
            {
                "a-to-b": _flow("Source", alias_a, alias_b, a, b, kafka.prefix, **extra),
                "b-to-a": _flow(
                    "Source",
                    alias_b,
                    alias_a,
                    b,
                    a,
                    kafka.prefix,
                    **extra,
                    **{"producer.override.bootstrap.servers": a},
                ),
            },
        )
        wait_for(lambda: _running(worker, "a-to-b") and _running(worker, "b-to-a"), 60, "both flows running")
        if identity:
            # each side ends with its own records and the other's, once: nothing copied back
            wait_for(
                lambda: len(_read(b, topic)) == 300 and len(_read(a, topic)) == 300,
                60,
                "300 records on each side",
            )
        else:
            wait_for(lambda: len(_read(b, f"{alias_a}.{topic}")) == 200, 60, "A's records on B")
            wait_for(lambda: len(_read(a, f"{alias_b}.{topic}")) == 100, 60, "B's records on A")
        time.sleep(8)  # several refresh intervals: a loop would show as more topics or more records
        if identity:
            assert len(_read(b, topic)) == 300 and len(_read(a, topic)) == 300
        else:
            assert len(_read(b, f"{alias_a}.{topic}")) == 200 and len(_read(a, f"{alias_b}.{topic}")) == 100
            on_a = AdminClient({"bootstrap.servers": a}).list_topics(timeout=10).topics
            on_b = AdminClient({"bootstrap.servers": b}).list_topics(timeout=10).topics
            assert f"{alias_b}.{alias_a}.{topic}" not in on_a and f"{alias_a}.{alias_b}.{topic}" not in on_b
        assert _running(worker, "a-to-b") and _running(worker, "b-to-a")


def test_bad_input_answers_400_naming_the_key(
    kafka: Any, tmp_path: Path, workers: list[WorkerProcess]
) -> None:
    a = kafka.bootstrap_servers
    worker = _worker(tmp_path, a, workers)
    plugins = requests.get(f"{worker.url}/connector-plugins", timeout=10).json()
    mirror = {p["class"]: p["type"] for p in plugins if ".mirror." in p["class"]}
    assert mirror == {
        f"org.apache.kafka.connect.mirror.Mirror{k}Connector": "source"
        for k in ("Source", "Checkpoint", "Heartbeat")
    }
    good = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "east",
        "target.cluster.alias": "west",
        "source.cluster.bootstrap.servers": a,
        "target.cluster.bootstrap.servers": a,
        "topics": f"{re.escape(kafka.prefix)}.*",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
    }

    def put(name: str, **changes: str) -> requests.Response:
        return requests.put(f"{worker.url}/connectors/{name}/config", json={**good, **changes}, timeout=60)

    cases = {
        "same-alias": ({"target.cluster.alias": "east"}, "target.cluster.alias: source.cluster.alias and"),
        "bad-regex": ({"topics": "orders, (unclosed"}, "topics: Invalid regular expression"),
        # the stack has one broker: Kafka's default replication factors (2 and 3) cannot be met
        "rf": (
            {"replication.factor": "2"},
            "replication.factor: Unable to replicate the partition 2 time(s)",
        ),
        "unreachable": (
            {"source.cluster.bootstrap.servers": f"127.0.0.1:{free_port()}"},
            "source.cluster.bootstrap.servers: The source cluster 'east' at 127.0.0.1:",
        ),
        "custom-filter": (
            {"topic.filter.class": "com.acme.MyFilter"},
            "topic.filter.class: Class com.acme.MyFilter",
        ),
    }
    for name, (changes, message) in cases.items():
        r = put(name, **changes)
        assert r.status_code == 400 and message in r.json()["message"], (name, r.status_code, r.text)
        assert (
            requests.get(f"{worker.url}/connectors/{name}", timeout=10).status_code == 404
        )  # nothing created
    heartbeat = {
        "name": "beats",
        "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        "source.cluster.alias": "east",
        "target.cluster.bootstrap.servers": a,
    }
    r = requests.put(
        f"{worker.url}/connector-plugins/MirrorHeartbeatConnector/config/validate", json=heartbeat, timeout=60
    )
    errors = {c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"] if c["value"]["errors"]}
    assert list(errors) == ["heartbeats.topic.replication.factor"], errors


def test_kill_9_during_replication_loses_nothing(
    kafka: Any, cluster_b: KafkaCluster, tmp_path: Path, workers: list[WorkerProcess]
) -> None:
    a, b = kafka.bootstrap_servers, cluster_b.bootstrap
    uid = uuid.uuid4().hex[:6]
    src, dst = f"k{uid}", f"l{uid}"
    with _cleanup(a, uid), _cleanup(a, kafka.prefix):
        topic = kafka.create_topic("stream", 3)
        total = 100_000
        _produce(a, topic, total, 3)
        flow = {"name": "mm2-kill", **_flow("Source", src, dst, a, b, kafka.prefix)}
        worker = _worker(tmp_path, b, workers, flow)
        remote = f"{src}.{topic}"
        offsets_file = tmp_path / "offsets"
        wait_for(
            lambda: offsets_file.exists() and offsets_file.stat().st_size > 0, 60, "a first offset commit"
        )
        worker.kill9()
        copied_before = len(_read(b, remote))
        worker.start()
        expected = _content(_read(a, topic))

        def complete() -> dict[int, list[tuple[Any, ...]]] | None:
            got = _content(_read(b, remote))
            return got if all(set(got.get(p, ())) >= set(r) for p, r in expected.items()) else None

        got = wait_for(complete, 120, "every record after the restart")
        duplicates = 0
        for partition, records in expected.items():
            copies = got[partition]
            assert set(copies) >= set(records), f"partition {partition}: records missing"
            duplicates += len(copies) - len(records)
        # nothing missing; the duplicates are the records copied after the last offset commit before the kill
        print(f"kill -9 after {copied_before} records: {duplicates} duplicates")
        assert copied_before < total, "all copied before the kill: nothing was tested"
        assert duplicates <= copied_before


def test_checkpoint_task_reads_back_its_checkpoints(kafka: Any) -> None:
    """A restarted checkpoint task starts from the checkpoints already written (Kafka's CheckpointStore)."""
    from cdc.api.connector import OffsetStorageReader, SourceTaskContext
    from cdc.mirror.checkpoint import MirrorCheckpointTask

    a = kafka.bootstrap_servers
    uid = uuid.uuid4().hex[:6]
    src = f"cps{uid}"
    group, other = kafka.topic("g1"), kafka.topic("g2")
    with _cleanup(a, uid):
        topic = f"{src}.checkpoints.internal"
        written = [
            Checkpoint(group, "x.t", 0, 10, 9, ""),
            Checkpoint(other, "x.t", 0, 10, 9, ""),
            Checkpoint(group, "x.t", 0, 20, 19, "m"),  # the newer one of the same key wins
        ]
        producer = Producer({"bootstrap.servers": a})
        for cp in written:
            producer.produce(topic, cp.record_value(), cp.record_key(), 0)
        producer.flush(30)

        class Reader(OffsetStorageReader):
            def offsets(self, partitions: Any) -> dict[str, dict[str, Any]]:
                return {}

        class Context(SourceTaskContext):
            def configs(self) -> dict[str, str]:
                return {}

            def offset_storage_reader(self) -> OffsetStorageReader:
                return Reader()

        task = MirrorCheckpointTask()
        task.initialize(Context())
        task.start(
            {
                "source.cluster.alias": src,
                "target.cluster.alias": f"cpt{uid}",
                "source.cluster.bootstrap.servers": a,
                "target.cluster.bootstrap.servers": a,
                "task.assigned.groups": group,
            }
        )
        try:
            assert task.checkpoints == {group: {("x.t", 0): written[2]}}
        finally:
            task.stop()
