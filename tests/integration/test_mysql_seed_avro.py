"""The users' seed Debezium config (Avro converters, a schema registry, RegexRouter + ExtractNewRecordState)
through a distributed worker: flat rows in ``mysqlavro-ops-customers``, Connect's offsets and status records.

The config runs as users wrote it; only the history topic gets a name of this test's own, so runs do not
share schema history. A schema registry (Apicurio, Confluent API) comes from scripts/registry.sh.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
import requests
from confluent_kafka import Consumer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from cdc.kafka.murmur2 import partition_for

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "tests" / "fixtures" / "seed-configs" / "debezium-mysql-avro.json"
TOPIC = "mysqlavro-ops-customers"


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    """The schema registry on :8081; stopped afterwards if this module started it."""
    script = str(REPO / "scripts" / "registry.sh")
    was_running = subprocess.run([script, "status"], capture_output=True, timeout=60).returncode == 0
    result = subprocess.run([script, "start"], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        pytest.fail(f"scripts/registry.sh start failed:\n{result.stdout}\n{result.stderr}")
    try:
        yield "http://localhost:8081"
    finally:
        if not was_running:
            subprocess.run([script, "stop"], capture_output=True, timeout=120)


def _end_offset(consumer: Consumer, topic: str) -> int:
    if topic not in consumer.list_topics(timeout=10).topics:
        return 0
    return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1])


def _read_from(consumer: Consumer, topic: str, start: int, wanted: int, timeout: float = 60) -> list[Any]:
    deadline = time.monotonic() + timeout
    while topic not in consumer.list_topics(timeout=10).topics and time.monotonic() < deadline:
        time.sleep(0.5)
    consumer.assign([TopicPartition(topic, 0, start)])
    out: list[Any] = []
    while len(out) < wanted and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            out.append(msg)
    return out


def _all(consumer: Consumer, topic: str) -> list[Any]:
    out = []
    metadata = consumer.list_topics(topic, timeout=10).topics[topic]
    for partition in metadata.partitions:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
        if high > low:
            consumer.assign([TopicPartition(topic, partition, low)])
            got = 0
            deadline = time.monotonic() + 30
            while got < high - low and time.monotonic() < deadline:
                msg = consumer.poll(0.5)
                if msg is not None and not msg.error():
                    out.append(msg)
                    got += 1
    return out


def test_seed_avro_config_captures_flat_rows(registry: str, kafka: Any, tmp_path: Path) -> None:
    from cdc.converters import AvroConverter
    from cdc.worker.runtime import build_distributed

    prefix = kafka.prefix
    worker = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "group.id": prefix + "group",
        "config.storage.topic": prefix + "configs",
        "offset.storage.topic": prefix + "offsets",
        "status.storage.topic": prefix + "status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.flush.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
    }
    body = json.loads(SEED.read_text())
    name = body["name"]
    body["config"]["database.history.kafka.topic"] = prefix + "schema-changes.mysql.oc"
    conn = pymysql.connect(host="127.0.0.1", user="cdc", password="cdc", database="ops", autocommit=True)
    with conn.cursor() as cur:
        cur.execute(
            # the shape `make demo` gives ops.customers (scripts/demo/run.py), so either may run first
            "CREATE TABLE IF NOT EXISTS customers (id INT AUTO_INCREMENT PRIMARY KEY, "
            "name VARCHAR(255) NOT NULL, email VARCHAR(255), balance DECIMAL(10,2) NOT NULL DEFAULT 0, "
            "updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3))"
        )
    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": prefix + "reader",
            "enable.auto.commit": False,
        }
    )
    runtime = build_distributed(worker)
    runtime.start()
    try:
        url = runtime.url.rstrip("/")
        created = requests.post(f"{url}/connectors", json=body, timeout=90)
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 90
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = requests.get(f"{url}/connectors/{name}/status", timeout=30).json()
            if status.get("tasks") and status["tasks"][0]["state"] in ("RUNNING", "FAILED"):
                break
            time.sleep(0.5)
        assert status["tasks"][0]["state"] == "RUNNING", status
        run = uuid.uuid4().hex[:8]
        # The worker's /metrics says when the snapshot is over and the binlog client connected.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            metrics = requests.get(f"{url}/metrics", timeout=30).text
            ours = {
                s.name: s.value
                for family in text_string_to_metric_families(metrics)
                for s in family.samples
                if s.labels.get("server") == "mysqlavro"
            }
            if (
                ours.get("debezium_mysql_snapshot_SnapshotCompleted") == 1
                and ours.get("debezium_mysql_streaming_Connected") == 1
            ):
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the snapshot did not complete:\n{metrics}")
        time.sleep(1)
        start = _end_offset(consumer, TOPIC)
        with conn.cursor() as cur:
            cur.execute("INSERT INTO customers (name, email) VALUES (%s, 'a@x')", (f"ann {run}",))
            ann = cur.lastrowid
            cur.execute("UPDATE customers SET email = 'ann@x' WHERE id = %s", (ann,))
            cur.execute("DELETE FROM customers WHERE id = %s", (ann,))
        messages = _read_from(consumer, TOPIC, start, 3)
        key_conv, value_conv = AvroConverter(), AvroConverter()
        key_conv.configure({"schema.registry.url": registry}, True)
        value_conv.configure({"schema.registry.url": registry}, False)
        decoded = [
            (
                key_conv.to_connect_data(TOPIC, m.key()).value,
                value_conv.to_connect_data(TOPIC, m.value()).value,
            )
            for m in messages
        ]
        assert len(decoded) == 3
        (k1, v1), (k2, v2), (k3, v3) = decoded
        assert k1.get("id") == ann and v1.get("email") == "a@x" and v1.get("name") == f"ann {run}"
        assert v1.schema.name == "mysqlavro.ops.customers.Value"  # the flat row, not the envelope
        assert k2.get("id") == ann and v2.get("email") == "ann@x"
        assert k3.get("id") == ann and v3 is None  # the delete is dropped, its tombstone kept
        time.sleep(1.5)  # an offset flush
        offsets = [
            m
            for m in _all(consumer, prefix + "offsets")
            if m.key() == json.dumps([name, {"server": "mysqlavro"}], separators=(",", ":")).encode()
        ]
        assert offsets, "no connect-offsets record for the connector"
        assert offsets[-1].partition() == partition_for(offsets[-1].key(), 25) == 0
        value = json.loads(offsets[-1].value())
        assert {"file", "pos", "ts_sec"} <= set(value)
        statuses = {m.key().decode(): m for m in _all(consumer, prefix + "status") if m.key()}
        topic_key = f"status-topic-{TOPIC}:connector-{name}"
        assert topic_key in statuses
        assert statuses[topic_key].partition() == partition_for(topic_key.encode(), 5)
        assert json.loads(statuses[f"status-task-{name}-0"].value())["state"] == "RUNNING"
        requests.delete(f"{url}/connectors/{name}", timeout=30)
    finally:
        consumer.close()
        conn.close()
        runtime.stop()
