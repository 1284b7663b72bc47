"""The Kafka stores against the real broker: exact record bytes, partition placement, topic checks.

Each test gets its own topic names from the ``kafka`` fixture (deleted afterwards); the tests fail, never
skip, when the broker is down.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cdc.api.errors import ConfigError
from cdc.api.offsets import offset_key
from cdc.kafka.murmur2 import partition_for
from cdc.worker.stores.base import (
    ConnectorStatus,
    RestartRequest,
    SessionKey,
    State,
    TargetState,
    TaskId,
    TaskStatus,
    TopicStatus,
)
from cdc.worker.stores.kafka import (
    KafkaConfigBackingStore,
    KafkaOffsetBackingStore,
    KafkaStatusBackingStore,
    KafkaStoreSettings,
    create_kafka_stores,
)
from cdc.worker.stores.memory import RecordingConfigListener

pytestmark = pytest.mark.integration

Stopper = Callable[[Any], Any]


@pytest.fixture
def started(kafka: Any) -> Iterator[Stopper]:
    """Start a store and stop it after the test."""
    stores: list[Any] = []

    def start(store: Any) -> Any:
        store.start()
        stores.append(store)
        return store

    yield start
    for store in reversed(stores):
        store.stop()


def settings(kafka: Any, name: str, **kw: Any) -> KafkaStoreSettings:
    return KafkaStoreSettings(
        topic=kafka.topic(name), bootstrap_servers=kafka.bootstrap_servers, replication_factor=1, **kw
    )


def raw(kafka: Any, topic: str) -> list[tuple[int, str, bytes | None]]:
    return [(m.partition(), m.key().decode(), m.value()) for m in kafka.read_to_end(topic)]


def topic_config(kafka: Any, topic: str) -> dict[str, str]:
    from confluent_kafka.admin import ConfigResource

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    entries = kafka.admin.describe_configs([resource])[resource].result(30)
    return {k: v.value for k, v in entries.items()}


def partitions_of(kafka: Any, topic: str) -> int:
    return len(kafka.admin.list_topics(topic=topic, timeout=10).topics[topic].partitions)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


# ------------------------------------------------------------------------------------------------ configs


def test_config_store_writes_connects_exact_records(kafka: Any, started: Stopper) -> None:
    store = started(KafkaConfigBackingStore(settings(kafka, "configs", partitions=7)))
    topic = store.log.topic
    assert partitions_of(kafka, topic) == 1  # a partitions setting is ignored for the config topic
    assert topic_config(kafka, topic)["cleanup.policy"] == "compact"
    listener = RecordingConfigListener()
    store.set_update_listener(listener)

    name = "mysql_cdc_ops_source_avro_01"
    config = {"connector.class": "io.debezium.connector.mysql.MySqlConnector", "tasks.max": "1"}
    store.put_connector_config(name, config)
    store.put_task_configs(name, [{"task.class": "T", "n": "0"}])
    store.put_target_state(name, TargetState.PAUSED)
    store.put_connector_config(name, {**config, "tasks.max": "2"}, TargetState.STOPPED)
    store.put_target_state(name, TargetState.STARTED)
    store.put_restart_request(RestartRequest(name, only_failed=True, include_tasks=True))
    key = SessionKey(b"0123456789abcdef", "HmacSHA256", 1700000000000)
    store.put_session_key(key)
    store.remove_connector_config(name)

    props = '{"connector.class":"io.debezium.connector.mysql.MySqlConnector","tasks.max":"%s"}'
    assert raw(kafka, topic) == [
        (0, f"connector-{name}", b'{"properties":' + (props % "1").encode() + b"}"),
        (0, f"task-{name}-0", b'{"properties":{"task.class":"T","n":"0"}}'),
        (0, f"commit-{name}", b'{"tasks":1}'),
        (0, f"target-state-{name}", b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (0, f"target-state-{name}", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        (0, f"connector-{name}", b'{"properties":' + (props % "2").encode() + b"}"),
        (0, f"target-state-{name}", b'{"state":"STARTED","state.v2":"STARTED"}'),
        (0, f"restart-connector-{name}", b'{"include-tasks":true,"only-failed":true}'),
        (
            0,
            "session-key",
            b'{"key":"MDEyMzQ1Njc4OWFiY2RlZg==","algorithm":"HmacSHA256","creation-timestamp":1700000000000}',
        ),
        (0, f"connector-{name}", None),
        (0, f"target-state-{name}", None),
    ]
    snapshot = store.snapshot()
    assert snapshot.connectors() == []
    assert snapshot.offset == 11  # Connect's config offset: the position after the last record read
    assert snapshot.session_key == key
    wait_for(lambda: ("remove", name) in listener.calls)
    assert listener.calls == [
        ("update", name),
        ("tasks", [TaskId(name, 0)]),
        ("target", name),
        ("target", name),
        ("update", name),
        ("target", name),
        ("restart", RestartRequest(name, only_failed=True, include_tasks=True)),
        ("session", key),
        ("remove", name),
    ]


def test_second_config_store_sees_the_same_snapshot(kafka: Any, started: Stopper) -> None:
    first = started(KafkaConfigBackingStore(settings(kafka, "configs")))
    first.put_connector_config("a", {"k": "v"}, TargetState.PAUSED)
    first.put_task_configs("a", [{"t": "0"}, {"t": "1"}])
    first.put_connector_config("b", {"k": "w"})
    first.put_task_configs("b", [])
    first.put_connector_config("gone", {})
    first.remove_connector_config("gone")

    second = started(KafkaConfigBackingStore(settings(kafka, "configs", client_id="other")))
    assert second.snapshot() == first.snapshot()
    snap = second.snapshot()
    assert snap.connectors() == ["a", "b"]
    assert snap.target_state("a") is TargetState.PAUSED and snap.target_state("b") is TargetState.STARTED
    assert snap.tasks("a") == [TaskId("a", 0), TaskId("a", 1)] and snap.tasks("b") == []

    # A write by one is seen by the other once it reads to the end (or its listener says so).
    listener = RecordingConfigListener()
    second.set_update_listener(listener)
    first.put_target_state("b", TargetState.STOPPED)
    wait_for(lambda: ("target", "b") in listener.calls)
    assert second.snapshot().target_state("b") is TargetState.STOPPED


def test_config_topic_with_several_partitions_is_refused(kafka: Any) -> None:
    topic = kafka.create_topic("configs", partitions=2, config={"cleanup.policy": "compact"})
    store = KafkaConfigBackingStore(settings(kafka, "configs"))
    with pytest.raises(ConfigError, match=f"'{topic}'.*config.storage.topic.*single partition.*found 2"):
        store.start()


@pytest.mark.parametrize(
    "store_class", [KafkaConfigBackingStore, KafkaOffsetBackingStore, KafkaStatusBackingStore]
)
def test_non_compacted_internal_topic_is_refused(kafka: Any, store_class: type) -> None:
    topic = kafka.create_topic("internal", partitions=1, config={"cleanup.policy": "delete"})
    store = store_class(settings(kafka, "internal"))
    with pytest.raises(ConfigError, match=f"'{topic}'.*cleanup.policy=compact.*cleanup.policy=delete"):
        store.start()


def test_existing_compacted_topic_is_used_as_it_is(kafka: Any, started: Stopper) -> None:
    kafka.create_topic("offsets", partitions=3, config={"cleanup.policy": "compact"})
    store = started(KafkaOffsetBackingStore(settings(kafka, "offsets")))
    assert store.log.partition_count == 3


# ------------------------------------------------------------------------------------------------ offsets


def test_offsets_land_on_java_partitions_and_round_trip(kafka: Any, started: Stopper) -> None:
    store = started(
        KafkaOffsetBackingStore(settings(kafka, "offsets", topic_config={"segment.ms": "600000"}))
    )
    topic = store.log.topic
    assert partitions_of(kafka, topic) == 25
    config = topic_config(kafka, topic)
    assert config["cleanup.policy"] == "compact" and config["segment.ms"] == "600000"

    avro = b'["mysql_cdc_ops_source_avro_01",{"server":"mysqlavro"}]'
    jdbc = b'["mysql_jdbc_om_source_00",{"protocol":"1","table":"om.customers"}]'
    many = {offset_key("c", {"p": i}): b'{"o":%d}' % i for i in range(40)}
    store.set(
        {avro: b'{"ts_sec":1,"file":"binlog.000006","pos":2030242}', jdbc: b'{"incrementing":8}', **many}
    )
    placed = {m.key(): m.partition() for m in kafka.read_to_end(topic)}
    assert placed[avro] == 0 and placed[jdbc] == 8  # the partitions users saw Kafka Connect use
    assert all(placed[k] == partition_for(k, 25) for k in placed)
    assert len(set(placed.values())) > 10

    assert store.get([jdbc, b"missing"]) == {jdbc: b'{"incrementing":8}', b"missing": None}
    store.set({jdbc: None})
    assert store.get([jdbc]) == {jdbc: None}
    assert len(store.connector_partitions("c")) == 40
    assert store.connector_partitions("mysql_jdbc_om_source_00") == []

    again = started(KafkaOffsetBackingStore(settings(kafka, "offsets", client_id="again")))
    assert again.get([avro, jdbc]) == {avro: b'{"ts_sec":1,"file":"binlog.000006","pos":2030242}', jdbc: None}


def test_librdkafka_murmur2_random_matches_partition_for(kafka: Any) -> None:
    topic = kafka.create_topic("placement", partitions=7)
    producer = kafka.producer(partitioner="murmur2_random")
    keys = [f"key-{i}".encode() for i in range(100)] + ["ключ-é".encode(), b""]
    for key in keys:
        producer.produce(topic, key=key, value=b"v")
    assert producer.flush(30) == 0
    placed = {m.key(): m.partition() for m in kafka.read_to_end(topic)}
    assert set(placed) == set(keys)
    assert placed == {k: partition_for(k, 7) for k in keys}


# ------------------------------------------------------------------------------------------------- status


def test_status_records_and_tombstones(kafka: Any, started: Stopper) -> None:
    store = started(KafkaStatusBackingStore(settings(kafka, "status")))
    topic = store.log.topic
    assert partitions_of(kafka, topic) == 5
    name = "mysql_cdc_ops_source_avro_01"
    store.put(ConnectorStatus(name, State.RUNNING, "127.0.1.1:8083", 2))
    store.put(TaskStatus(TaskId(name, 0), State.RUNNING, "127.0.1.1:8083", 2))
    store.put_topic(TopicStatus("mysqlavro", name, 0, 1700000000123))
    store.flush()
    store.refresh()
    assert store.get(name) == ConnectorStatus(name, State.RUNNING, "127.0.1.1:8083", 2)
    assert store.get_all(name) == [TaskStatus(TaskId(name, 0), State.RUNNING, "127.0.1.1:8083", 2)]
    assert store.get_topic(name, "mysqlavro") == TopicStatus("mysqlavro", name, 0, 1700000000123)
    store.delete_topic(name, "mysqlavro")
    store.put(TaskStatus(TaskId(name, 0), State.DESTROYED, "127.0.1.1:8083", 2))
    store.put(ConnectorStatus(name, State.DESTROYED, "127.0.1.1:8083", 2))
    store.flush()
    store.refresh()
    assert store.get(name) is None and store.get_all(name) == [] and store.get_all_topics(name) == []

    running = b'{"state":"RUNNING","trace":null,"worker_id":"127.0.1.1:8083","generation":2}'
    records = sorted(raw(kafka, topic), key=lambda rec: (rec[1], rec[2] is None))
    assert records == [
        (3, f"status-connector-{name}", running),
        (3, f"status-connector-{name}", None),
        (3, f"status-task-{name}-0", running),
        (3, f"status-task-{name}-0", None),
        (
            4,
            f"status-topic-mysqlavro:connector-{name}",
            b'{"topic":{"name":"mysqlavro","connector":"mysql_cdc_ops_source_avro_01","task":0,'
            b'"discoverTimestamp":1700000000123}}',
        ),
        (4, f"status-topic-mysqlavro:connector-{name}", None),
    ]


def test_status_safe_write_rule(kafka: Any, started: Stopper) -> None:
    store = started(KafkaStatusBackingStore(settings(kafka, "status")))
    other = started(KafkaStatusBackingStore(settings(kafka, "status", client_id="other")))
    task = TaskId("c", 0)
    store.put(TaskStatus(task, State.RUNNING, "w1:8083", 5))
    store.flush()
    other.refresh()
    # An older generation from another worker is dropped; the same worker or a newer generation wins.
    other.put_safe(TaskStatus(task, State.UNASSIGNED, "w2:8083", 4))
    other.flush()
    other.refresh()
    assert other.get_task(task) == TaskStatus(task, State.RUNNING, "w1:8083", 5)
    other.put_safe(TaskStatus(task, State.RUNNING, "w2:8083", 6))
    other.flush()
    store.refresh()
    assert store.get_task(task) == TaskStatus(task, State.RUNNING, "w2:8083", 6)
    store.put_safe(TaskStatus(task, State.FAILED, "w1:8083", 5))  # older generation: dropped
    store.flush()
    store.refresh()
    assert store.get_task(task) == TaskStatus(task, State.RUNNING, "w2:8083", 6)
    assert [m.value() for m in kafka.read_to_end(store.log.topic)] == [
        b'{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":5}',
        b'{"state":"RUNNING","trace":null,"worker_id":"w2:8083","generation":6}',
    ]


# ------------------------------------------------------------------------------------------------ factory


def test_factory_from_worker_properties(kafka: Any, started: Stopper) -> None:
    worker = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "group.id": "connect",
        "client.id": "w1",
        "config.storage.topic": kafka.topic("connect-configs"),
        "offset.storage.topic": kafka.topic("connect-offsets"),
        "status.storage.topic": kafka.topic("connect-status"),
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "-1",
        "offset.storage.partitions": "3",
        "status.storage.partitions": "2",
        "config.storage.min.insync.replicas": "1",
        "security.protocol": "PLAINTEXT",
        "producer.acks": "1",  # for connectors' producers, not the internal ones
    }
    stores = create_kafka_stores(worker)
    assert stores.configs.log._client_id == "connect-w1-configs"
    assert stores.offsets.log._client_id == "connect-w1-offsets"
    assert stores.statuses.log._client_id == "connect-w1-statuses"
    for store in stores:
        started(store)
    assert partitions_of(kafka, worker["config.storage.topic"]) == 1
    assert partitions_of(kafka, worker["offset.storage.topic"]) == 3
    assert partitions_of(kafka, worker["status.storage.topic"]) == 2
    assert topic_config(kafka, worker["config.storage.topic"])["min.insync.replicas"] == "1"
    stores.configs.put_connector_config("x", {"a": "b"})
    assert stores.configs.snapshot().connectors() == ["x"]


def test_factory_requires_the_distributed_keys() -> None:
    with pytest.raises(ConfigError, match=r"group\.id"):
        create_kafka_stores({"config.storage.topic": "c"})
    with pytest.raises(ConfigError, match=r"status\.storage\.topic"):
        create_kafka_stores({"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o"})


# ---------------------------------------------------------------------------------- standalone file vs Java

JAVA_ROUND_TRIP = r"""
import java.io.*;
import java.util.*;

public class RoundTrip {
    public static void main(String[] args) throws Exception {
        Map<byte[], byte[]> read;
        try (ObjectInputStream in = new ObjectInputStream(new FileInputStream(args[0]))) {
            @SuppressWarnings("unchecked") Map<byte[], byte[]> m = (Map<byte[], byte[]>) in.readObject();
            read = m;
        }
        TreeMap<String, String> sorted = new TreeMap<>();
        HashMap<byte[], byte[]> out = new HashMap<>();
        for (Map.Entry<byte[], byte[]> e : read.entrySet()) {
            sorted.put(new String(e.getKey(), "UTF-8"), new String(e.getValue(), "UTF-8"));
            out.put(e.getKey(), (new String(e.getValue(), "UTF-8") + "!").getBytes("UTF-8"));
        }
        for (Map.Entry<String, String> e : sorted.entrySet())
            System.out.println(e.getKey() + "=" + e.getValue());
        try (ObjectOutputStream os = new ObjectOutputStream(new FileOutputStream(args[1]))) {
            os.writeObject(out);
        }
    }
}
"""


def test_offsets_file_round_trips_through_java(tmp_path: Any) -> None:
    """Java's ObjectInputStream reads the file we write, and we read the one Java writes back."""
    import shutil
    import subprocess

    from cdc.worker.stores.file import FileOffsetBackingStore, read_offset_file

    java = shutil.which("java")
    if java is None:
        pytest.skip("no JDK on this machine")
    source = tmp_path / "RoundTrip.java"
    source.write_text(JAVA_ROUND_TRIP)
    ours, theirs = tmp_path / "ours.offsets", tmp_path / "theirs.offsets"
    offsets = {
        offset_key("inv", {"server": f"db{i}"}): b'{"pos":%d,"file":"binlog.000006"}' % i for i in range(30)
    }
    offsets[b'["\xc3\xa9t\xc3\xa9",{"k":"v"}]'] = "ü".encode()
    store = FileOffsetBackingStore(ours)
    store.start()
    store.set(offsets)
    result = subprocess.run(
        [java, str(source), str(ours), str(theirs)], capture_output=True, text=True, timeout=120, check=True
    )
    expected = sorted(f"{k.decode()}={v.decode()}" for k, v in offsets.items())
    assert sorted(result.stdout.splitlines()) == expected
    assert read_offset_file(theirs) == {k: v + b"!" for k, v in offsets.items()}
