"""The JDBC sinks in a standalone worker over REST, reading real topics into the stack's PostgreSQL.

* ``GET /connector-plugins`` lists both classes as sinks; creating one with a wrong password answers 400.
* JSON with schemas, and Avro through the schema registry, land in PostgreSQL; the consumer group
  ``connect-<name>`` commits offsets only for rows in the database.
* A value the column refuses: with ``errors.tolerance=all`` it goes to the dead letter queue (stage
  ``TASK_PUT``, the record's coordinates in the headers) and the others are written; without, the task
  is FAILED with a trace naming the record, and nothing of its batch is written nor committed.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests
from confluent_kafka import Consumer, TopicPartition

from cdc.api.schema import INT32_SCHEMA, OPTIONAL_STRING_SCHEMA, Decimal, SchemaBuilder, Timestamp
from cdc.api.struct import Struct
from cdc.converters import AvroConverter
from cdc.worker.runtime import ConnectRuntime
from tests.integration.inprocess import standalone
from tests.integration.jdbc_sink_targets import Target, postgres_target

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


@pytest.fixture
def target() -> Iterator[Target]:
    yield from postgres_target()


@pytest.fixture
def worker(tmp_path: Path, kafka: Any) -> Iterator[ConnectRuntime]:
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "1000",
            "listeners": "http://127.0.0.1:0",
        }
    ) as runtime:
        yield runtime


def wait_for(check: Callable[[], T], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
        except Exception:
            result = None  # type: ignore[assignment]
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


def _json(schema: dict[str, Any], payload: Any) -> bytes:
    return json.dumps({"schema": schema, "payload": payload}).encode()


KEY_SCHEMA = {
    "type": "struct",
    "fields": [{"field": "id", "type": "int32", "optional": False}],
    "optional": False,
}
VALUE_SCHEMA = {
    "type": "struct",
    "name": "item",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int32", "optional": False},
        {"field": "name", "type": "string", "optional": True},
    ],
}


def _produce(kafka: Any, topic: str, rows: list[tuple[int, str | None]]) -> None:
    producer = kafka.producer()
    for id_, name in rows:
        value = None if name == "<tombstone>" else _json(VALUE_SCHEMA, {"id": id_, "name": name})
        producer.produce(topic, key=_json(KEY_SCHEMA, {"id": id_}), value=value)
    producer.flush(10)


def _create(
    worker: ConnectRuntime, name: str, config: dict[str, str], status: int = 201
) -> requests.Response:
    response = requests.post(
        f"{worker.url.rstrip('/')}/connectors", json={"name": name, "config": config}, timeout=60
    )
    assert response.status_code == status, response.text
    return response


def _task(worker: ConnectRuntime, name: str) -> dict[str, Any]:
    status = requests.get(f"{worker.url.rstrip('/')}/connectors/{name}/status", timeout=30).json()
    tasks = status.get("tasks") or [{}]
    return dict(tasks[0])


def _sink(target: Target, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "tasks.max": "1",
        "topics": topic,
        "connection.url": target.url,
        "connection.user": target.user,
        "connection.password": target.password,
        "table.name.format": target.table_format("items"),
        "insert.mode": "upsert",
        "pk.mode": "record_key",
        "delete.enabled": "true",
        "auto.create": "true",
        **extra,
    }


def _committed(kafka: Any, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": group})
    try:
        return int(consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset)
    finally:
        consumer.close()


def test_plugins_listed_and_a_wrong_password_refused(worker: ConnectRuntime, target: Target) -> None:
    plugins = requests.get(f"{worker.url.rstrip('/')}/connector-plugins", timeout=30).json()
    classes = {p["class"]: p["type"] for p in plugins}
    assert classes["io.confluent.connect.jdbc.JdbcSinkConnector"] == "sink"
    assert classes["io.debezium.connector.jdbc.JdbcSinkConnector"] == "sink"
    response = _create(worker, "wrong", _sink(target, "t", **{"connection.password": "nope"}), 400)
    assert response.json()["error_code"] == 400 and "connection.password" in response.json()["message"]


def test_json_records_reach_postgresql_and_offsets_follow(
    worker: ConnectRuntime, target: Target, kafka: Any
) -> None:
    topic = kafka.create_topic("items")
    _produce(kafka, topic, [(1, "a"), (2, "b"), (1, "a2"), (3, "c"), (3, "<tombstone>")])
    _create(worker, "pg-sink", _sink(target, topic))
    wait_for(lambda: [tuple(r) for r in target.rows("items")] == [(1, "a2"), (2, "b")], 60, "the rows")
    wait_for(lambda: _committed(kafka, "connect-pg-sink", topic) == 5, 30, "the committed offset")
    _produce(kafka, topic, [(4, "d"), (2, "<tombstone>")])
    wait_for(lambda: [tuple(r) for r in target.rows("items")] == [(1, "a2"), (4, "d")], 60, "the new rows")
    assert _task(worker, "pg-sink")["state"] == "RUNNING"


def test_a_refused_value_goes_to_the_dead_letter_queue(
    worker: ConnectRuntime, target: Target, kafka: Any
) -> None:
    target.execute(f"CREATE TABLE {target.table('items')} (id INT PRIMARY KEY, name VARCHAR(3))")
    topic = kafka.create_topic("items")
    dlq = kafka.topic("dlq")
    _produce(kafka, topic, [(1, "ok"), (2, "far too long"), (3, "yes")])
    config = _sink(
        target,
        topic,
        **{
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    _create(worker, "dlq-sink", config)
    wait_for(lambda: [tuple(r) for r in target.rows("items")] == [(1, "ok"), (3, "yes")], 60, "the good rows")
    dead = wait_for(lambda: kafka.read_to_end(dlq), 30, "the dead letter queue")
    assert len(dead) == 1
    assert json.loads(dead[0].value())["payload"] == {"id": 2, "name": "far too long"}
    headers = {k: v.decode() for k, v in dead[0].headers()}
    assert headers["__connect.errors.stage"] == "TASK_PUT" and headers["__connect.errors.offset"] == "1"
    assert "offset=1" in headers["__connect.errors.exception.message"]
    wait_for(lambda: _committed(kafka, "connect-dlq-sink", topic) == 3, 30, "the committed offset")
    assert _task(worker, "dlq-sink")["state"] == "RUNNING"


def test_without_tolerance_the_task_fails_naming_the_record(
    worker: ConnectRuntime, target: Target, kafka: Any
) -> None:
    target.execute(f"CREATE TABLE {target.table('items')} (id INT PRIMARY KEY, name VARCHAR(3))")
    topic = kafka.create_topic("items")
    _produce(kafka, topic, [(1, "ok"), (2, "far too long"), (3, "yes")])
    _create(worker, "failing-sink", _sink(target, topic))
    task = wait_for(lambda: (t := _task(worker, "failing-sink")).get("state") == "FAILED" and t, 60, "FAILED")
    assert f"(topic='{topic}',partition=0,offset=1" in task["trace"]
    assert "value too long" in task["trace"] and "(column name)" in task["trace"]
    assert target.rows("items") == []  # the batch was rolled back whole
    assert _committed(kafka, "connect-failing-sink", topic) < 0  # nothing committed (OFFSET_INVALID)


@pytest.fixture(scope="module")
def registry_url() -> Iterator[str]:
    """The stack's registry (``$CDC_REGISTRY_URL`` or the local Apicurio), started here when absent."""
    url = os.environ.get("CDC_REGISTRY_URL", "http://127.0.0.1:8081/apis/ccompat/v7")
    try:
        requests.get(url + "/subjects", timeout=5).raise_for_status()
        yield url
        return
    except requests.RequestException:
        pass
    script = REPO / "scripts" / "registry.sh"
    subprocess.run([str(script), "start"], check=True, timeout=600)
    url = subprocess.run([str(script), "url"], check=True, capture_output=True, text=True).stdout.strip()
    yield url
    subprocess.run([str(script), "stop"], check=False, timeout=60)


def test_avro_records_through_the_registry(
    worker: ConnectRuntime, target: Target, kafka: Any, registry_url: str
) -> None:
    import datetime as dt
    import decimal

    topic = kafka.create_topic("avro")
    key_schema = SchemaBuilder.struct().name("avro.Key").field("id", INT32_SCHEMA).build()
    value_schema = (
        SchemaBuilder.struct()
        .name("avro.Value")
        .field("id", INT32_SCHEMA)
        .field("name", OPTIONAL_STRING_SCHEMA)
        .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
        .field("at", Timestamp.schema())
        .build()
    )
    keys, values = AvroConverter(), AvroConverter()
    keys.configure({"schema.registry.url": registry_url}, True)
    values.configure({"schema.registry.url": registry_url}, False)
    producer = kafka.producer()
    at = dt.datetime(2024, 5, 6, 7, 8, 9, 10000, tzinfo=dt.UTC)
    for i in (1, 2):
        value = Struct(value_schema).put("id", i).put("name", f"n{i}").put("amount", decimal.Decimal("3.10"))
        value.put("at", at)
        producer.produce(
            topic,
            key=keys.from_connect_data(topic, key_schema, Struct(key_schema).put("id", i)),
            value=values.from_connect_data(topic, value_schema, value),
        )
    producer.flush(10)
    avro = "io.confluent.connect.avro.AvroConverter"
    config = _sink(
        target,
        topic,
        **{
            "key.converter": avro,
            "key.converter.schema.registry.url": registry_url,
            "value.converter": avro,
            "value.converter.schema.registry.url": registry_url,
        },
    )
    _create(worker, "avro-sink", config)
    expected = [
        (1, "n1", decimal.Decimal("3.10"), at.replace(tzinfo=None)),
        (2, "n2", decimal.Decimal("3.10"), at.replace(tzinfo=None)),
    ]
    wait_for(lambda: [tuple(r) for r in target.rows("items")] == expected, 60, "the Avro rows")
    assert target.column_types("items")["amount"] == "numeric"
