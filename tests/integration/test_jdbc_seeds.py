"""Each seed JDBC config, unchanged, through a real standalone worker against the seed tables.

The seed tables are recreated by the stack's own provisioning (``scripts/stack.sh seed-tables``: the users'
``kafkadb.sql`` after ``seed-tables.sql``, as ``make up`` runs them on a fresh stack) as the seed users'
server created them: with ``explicit_defaults_for_timestamp`` off (MySQL 5.7's default), so ``modified
TIMESTAMP`` is NOT NULL — their records show it non-optional. (MariaDB 10.11 defaults to on, which makes
the column nullable; then ``validate.non.null`` refuses the timestamp seeds, as Confluent's connector
would.) The one substitution
is the password of ``jdbc-incrementing-multitask.json``: its misspelt ``connecftion.password`` is ignored
(kept in the config to show it), so ``connection.password`` is added for the stack's ``connect_dev``.

The standalone worker's offsets are read from its file; ``test_seed_offsets_in_connect_offsets`` runs two
seeds on a distributed worker and reads the connect-offsets topic (25 partitions, the default): the key
``["<connector>",{"protocol":"1","table":"<db>.<table>"}]`` on the partition Java's murmur2 picks (8
for ``mysql_jdbc_om_source_00``, as the seed's users saw), the value in Confluent's shape.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
import requests
from confluent_kafka import Consumer, TopicPartition

from cdc.kafka.murmur2 import partition_for
from cdc.worker.properties import load_properties
from cdc.worker.runtime import ConnectRuntime, build_distributed, build_standalone
from cdc.worker.stores.file import read_offset_file

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
# the repo's byte-identical copies of ../shared/reference/seed-configs (tests/unit/test_properties.py
# compares them with the originals when those are beside the clone)
SEEDS = REPO / "tests" / "fixtures" / "seed-configs"
SEED_TOPICS = [
    "mysql-customers",
    "mysql-products",
    "mysql-orders",
    "mysql-multitab1",
    "mysql-multitab2",
    "mysql_om_customers",
]
TS = {"type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp", "version": 1}


def _admin() -> Any:
    return pymysql.connect(host="127.0.0.1", port=3306, user="cdc", password="cdc", autocommit=True)


@pytest.fixture
def seed_tables(stack: Any, kafka: Any) -> None:
    # The stack's own provisioning (what `make up` / `make demo` run on a fresh stack), recreating them empty.
    run = subprocess.run(
        [str(REPO / "scripts" / "stack.sh"), "seed-tables"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    with _admin() as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT table_name, is_nullable FROM information_schema.columns "
            "WHERE table_schema = 'kafkadb' AND column_name = 'modified' ORDER BY table_name"
        )
        assert cur.fetchall() == (("customers", "NO"), ("products", "NO"))  # as the seeds' server made them
        cur.execute("USE kafkadb")
        cur.execute("INSERT INTO customers(name, email) VALUES ('jyp', 'ypjeong@kafka.com')")
        cur.execute("INSERT INTO products(name) VALUES ('computer')")
        cur.execute("INSERT INTO orders(name, product) VALUES ('jyp', 'computer')")
        cur.execute("INSERT INTO multitab1(name) VALUES ('one')")
        cur.execute("INSERT INTO multitab2(name) VALUES ('two')")
        cur.execute("INSERT INTO om.customers(name) VALUES ('a'), ('b')")
    topics = kafka.admin.list_topics(timeout=10).topics
    stale = [t for t in SEED_TOPICS if t in topics]
    if stale:
        for future in kafka.admin.delete_topics(stale, operation_timeout=30).values():
            future.result(timeout=30)
        deadline = time.monotonic() + 30
        while (
            any(t in kafka.admin.list_topics(timeout=10).topics for t in stale)
            and time.monotonic() < deadline
        ):
            time.sleep(0.2)


def _delete_seed_topics(kafka: Any) -> None:
    for topic in SEED_TOPICS:  # the seed topics are not under the test's prefix
        if topic in kafka.admin.list_topics(timeout=10).topics:
            kafka.admin.delete_topics([topic], operation_timeout=30)[topic].result(timeout=30)


@pytest.fixture
def worker(tmp_path: Path, kafka: Any, seed_tables: None) -> Iterator[ConnectRuntime]:
    runtime = build_standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
        }
    )
    runtime.start()
    stopped = False

    def stop() -> None:
        nonlocal stopped
        if not stopped:
            stopped = True
            runtime.stop()

    runtime.stop_once = stop  # type: ignore[attr-defined]
    try:
        yield runtime
    finally:
        stop()
        _delete_seed_topics(kafka)


def _messages(kafka: Any, topic: str, count: int, timeout: float = 60) -> list[Any]:
    deadline = time.monotonic() + timeout
    messages: list[Any] = []
    while time.monotonic() < deadline:
        if topic in kafka.admin.list_topics(timeout=10).topics:
            messages = kafka.read_to_end(topic, timeout=30)
            if len(messages) >= count:
                return [json.loads(m.value()) for m in messages]
        time.sleep(0.5)
    pytest.fail(f"{topic}: {len(messages)} messages after {timeout} s, expected {count}")


def _create(worker: ConnectRuntime, name: str, config: dict[str, Any]) -> list[dict[str, Any]]:
    base = worker.url.rstrip("/")
    response = requests.post(f"{base}/connectors", json={"name": name, "config": config}, timeout=30)
    assert response.status_code in (200, 201), response.text
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = requests.get(f"{base}/connectors/{name}/status", timeout=30).json()
        tasks = status.get("tasks", [])
        assert status.get("connector", {}).get("state") != "FAILED", status
        assert all(t["state"] != "FAILED" for t in tasks), tasks
        if tasks and all(t["state"] == "RUNNING" for t in tasks):
            response = requests.get(f"{base}/connectors/{name}/tasks", timeout=30)
            assert response.ok, response.text
            return list(response.json())
        time.sleep(0.3)
    pytest.fail(f"{name} not running: {status}")


def _offsets(worker: ConnectRuntime, path: Path, key: bytes, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            stored = read_offset_file(path)
            if key in stored:
                return dict(json.loads(stored[key]))
        time.sleep(0.3)
    pytest.fail(f"offset {key!r} not in {path}: {read_offset_file(path) if path.exists() else None}")


@pytest.mark.parametrize(
    "seed, topic, table",
    [
        ("jdbc-timestamp-incrementing.properties", "mysql-customers", "customers"),
        ("jdbc-timestamp.properties", "mysql-products", "products"),
        ("jdbc-incrementing.properties", "mysql-orders", "orders"),
    ],
)
def test_single_table_seed(
    worker: ConnectRuntime, kafka: Any, tmp_path: Path, seed: str, topic: str, table: str
) -> None:
    props = load_properties(SEEDS / seed)
    name = props.pop("name")
    tasks = _create(worker, name, props)
    assert len(tasks) == 1
    config = tasks[0]["config"]
    assert config["tables"] == f"`kafkadb`.`{table}`"
    assert config["task.class"] == "io.confluent.connect.jdbc.source.JdbcSourceTask"
    assert config["connection.url"] == props["connection.url"]

    (message,) = _messages(kafka, topic, 1)
    schema, payload = message["schema"], message["payload"]
    assert schema["type"] == "struct" and schema["name"] == table and schema["optional"] is False
    fields = {f["field"]: {k: v for k, v in f.items() if k != "field"} for f in schema["fields"]}
    if table == "customers":  # exactly the seed's record (jdbc-queries.md)
        assert schema["fields"] == [
            {"type": "int32", "optional": False, "field": "id"},
            {"type": "string", "optional": False, "field": "name"},
            {"type": "string", "optional": False, "field": "email"},
            {**TS, "field": "created"},
            {**TS, "field": "modified"},
        ]
        assert payload["id"] == 1 and payload["name"] == "jyp" and payload["email"] == "ypjeong@kafka.com"
        assert isinstance(payload["created"], int) and payload["created"] > 1_600_000_000_000
    elif table == "products":
        assert fields["created"] == TS and fields["modified"] == TS
        assert payload["seq"] == 1 and payload["name"] == "computer"
    else:
        assert payload == {"seq": 1, "name": "jyp", "product": "computer"}

    # one more row between polls; TIMESTAMP columns keep whole seconds and timestamp mode reads only rows
    # later than the last one read, so a row inserted within the first row's second would never be read
    if table != "orders":
        time.sleep(1.1)
    with _admin() as conn, conn.cursor() as cur:
        if table == "customers":
            cur.execute("INSERT INTO kafkadb.customers(name, email) VALUES ('kim', 'kim@kafka.com')")
        elif table == "products":
            cur.execute("INSERT INTO kafkadb.products(name) VALUES ('mouse')")
        else:
            cur.execute("INSERT INTO kafkadb.orders(name, product) VALUES ('kim', 'mouse')")
    messages = _messages(kafka, topic, 2)
    assert len(messages) == 2

    key = json.dumps([name, {"protocol": "1", "table": f"kafkadb.{table}"}], separators=(",", ":")).encode()
    worker.stop_once()  # type: ignore[attr-defined]
    offset = _offsets(worker, tmp_path / "offsets", key)
    if table == "customers":
        assert (
            list(offset) == ["timestamp_nanos", "incrementing", "timestamp"] and offset["incrementing"] == 2
        )
    elif table == "products":
        assert list(offset) == ["timestamp_nanos", "timestamp"] and offset["timestamp_nanos"] == 0
        assert offset["timestamp"] == messages[-1]["payload"]["modified"]
    else:
        assert offset == {"incrementing": 2}


def test_multi_table_seed_gives_two_tasks(worker: ConnectRuntime, kafka: Any) -> None:
    props = load_properties(SEEDS / "jdbc-multi-incrementing.properties")
    name = props.pop("name")
    tasks = _create(worker, name, props)
    assert [t["config"]["tables"] for t in tasks] == ["`kafkadb`.`multitab1`", "`kafkadb`.`multitab2`"]
    assert [t["id"] for t in tasks] == [{"connector": name, "task": 0}, {"connector": name, "task": 1}]
    assert _messages(kafka, "mysql-multitab1", 1)[0]["payload"] == {"id": 1, "name": "one"}
    assert _messages(kafka, "mysql-multitab2", 1)[0]["payload"] == {"id": 1, "name": "two"}


def test_multitask_json_seed(worker: ConnectRuntime, kafka: Any, tmp_path: Path) -> None:
    seed = json.loads((SEEDS / "jdbc-incrementing-multitask.json").read_text())
    config = {**seed["config"], "connection.password": "connect_dev"}  # the seed's key is misspelt
    tasks = _create(worker, seed["name"], config)
    assert [t["config"]["tables"] for t in tasks] == ["`om`.`customers`"]
    messages = _messages(kafka, "mysql_om_customers", 2)
    assert [m["payload"]["customer_id"] for m in messages] == [1, 2]
    worker.stop_once()  # type: ignore[attr-defined]
    key = b'["mysql_jdbc_om_source_00",{"protocol":"1","table":"om.customers"}]'
    assert _offsets(worker, tmp_path / "offsets", key) == {"incrementing": 2}


@pytest.fixture
def distributed_worker(kafka: Any, seed_tables: None) -> Iterator[ConnectRuntime]:
    prefix = kafka.prefix
    runtime = build_distributed(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": prefix + "group",
            "config.storage.topic": prefix + "configs",
            "offset.storage.topic": prefix + "offsets",  # 25 partitions, the default
            "status.storage.topic": prefix + "status",
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
        }
    )
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()
        _delete_seed_topics(kafka)


def _offset_records(
    kafka: Any, topic: str, key: bytes, until: Callable[[Any], bool], timeout: float = 30
) -> list[Any]:
    """The records of ``key`` in the offsets topic, each as (partition, value), once the last one's value
    satisfies ``until`` (or after ``timeout``)."""
    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": kafka.prefix + "r",
            "enable.auto.commit": False,
        }
    )
    deadline = time.monotonic() + timeout
    try:
        while True:
            found = []
            for partition in sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions):
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
                if high <= low:
                    continue
                consumer.assign([TopicPartition(topic, partition, low)])
                got = 0
                while got < high - low and time.monotonic() < deadline:
                    msg = consumer.poll(0.5)
                    if msg is not None and not msg.error():
                        got += 1
                        if msg.key() == key:
                            found.append((msg.partition(), json.loads(msg.value())))
            if (found and until(found[-1][1])) or time.monotonic() > deadline:
                return found
            time.sleep(0.5)
    finally:
        consumer.close()


@pytest.mark.parametrize(
    "seed", ["jdbc-incrementing-multitask.json", "jdbc-timestamp-incrementing.properties"]
)
def test_seed_offsets_in_connect_offsets(distributed_worker: ConnectRuntime, kafka: Any, seed: str) -> None:
    if seed.endswith(".json"):
        body = json.loads((SEEDS / seed).read_text())
        name, config = body["name"], {**body["config"], "connection.password": "connect_dev"}
        topic, table, rows = "mysql_om_customers", "om.customers", 2
    else:
        config = load_properties(SEEDS / seed)
        name = config.pop("name")
        topic, table, rows = "mysql-customers", "kafkadb.customers", 1
    _create(distributed_worker, name, config)
    messages = _messages(kafka, topic, rows)

    key = json.dumps([name, {"protocol": "1", "table": table}], separators=(",", ":")).encode()
    records = _offset_records(
        kafka, kafka.prefix + "offsets", key, lambda value: value.get("incrementing") == rows
    )
    assert records, f"no record of {key!r} in connect-offsets"
    assert {partition for partition, _ in records} == {partition_for(key, 25)}
    value = records[-1][1]
    if name == "mysql_jdbc_om_source_00":
        assert partition_for(key, 25) == 8  # where the seed's users saw it
        assert value == {"incrementing": 2}
    else:
        assert list(value) == ["timestamp_nanos", "incrementing", "timestamp"]
        assert value["incrementing"] == 1 and value["timestamp"] == messages[-1]["payload"]["modified"]
