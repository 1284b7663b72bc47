"""The Kafka schema history's timing keys, each shown acting against the real broker (or a loopback port
that accepts connections and never answers): ``schema.history.internal.kafka.query.timeout.ms``,
``…create.timeout.ms`` and ``…recovery.poll.interval.ms``, Debezium's KafkaSchemaHistory settings."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from cdc.history import HistoryRecord, SchemaHistoryError, Tables, history_from_config
from cdc.history.kafka_store import KafkaSchemaHistory
from cdc.mysql.ddl import DdlParser
from cdc.mysql.positions import BinlogPositionComparator

pytestmark = pytest.mark.integration

SOURCE = {"server": "keys"}


def _history(topic: str, servers: str, **extra: str) -> KafkaSchemaHistory:
    history = history_from_config(
        {
            "schema.history.internal.kafka.topic": topic,
            "schema.history.internal.kafka.bootstrap.servers": servers,
            **extra,
        }
    )
    assert isinstance(history, KafkaSchemaHistory)
    return history


@pytest.fixture
def silent_broker() -> Iterator[str]:
    """A loopback port that accepts TCP connections and never answers a Kafka request."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()


@pytest.mark.honours("schema.history.internal.kafka.query.timeout.ms")
def test_query_timeout_bounds_the_wait_for_the_brokers_metadata(kafka: Any, silent_broker: str) -> None:
    took = []
    for timeout_ms in ("600", "2500"):
        history = _history(
            kafka.topic("q"), silent_broker, **{"schema.history.internal.kafka.query.timeout.ms": timeout_ms}
        )
        started = time.monotonic()
        with pytest.raises(SchemaHistoryError, match="Cannot list topics"):
            history.storage_exists()
        took.append(time.monotonic() - started)
    assert 0.5 <= took[0] < 2.0, took
    assert took[1] >= 2.4, took


@pytest.mark.honours("schema.history.internal.kafka.create.timeout.ms")
def test_create_timeout_bounds_the_wait_for_the_topic_creation(kafka: Any) -> None:
    """A creation the broker cannot confirm within the timeout is an error naming the topic; with
    Debezium's default (30 s) the same creation succeeds."""
    short = _history(
        kafka.topic("c"), kafka.bootstrap_servers, **{"schema.history.internal.kafka.create.timeout.ms": "1"}
    )
    with pytest.raises(SchemaHistoryError, match=f"Cannot create the schema history topic {short.topic}"):
        short.initialize_storage()
    default = _history(
        kafka.topic("c"),
        kafka.bootstrap_servers,
        **{"schema.history.internal.kafka.create.timeout.ms": "30000"},
    )
    default.initialize_storage()
    deadline = time.monotonic() + 10
    while not default.storage_exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert default.storage_exists()


def _topic_ending_in_a_commit_marker(kafka: Any) -> str:
    """A history topic whose last offset is a transaction's commit marker, which no consumer receives: the
    recovery keeps polling for it until its attempts run out (as Debezium's does)."""
    history = _history(kafka.topic("r"), kafka.bootstrap_servers)
    history.initialize_storage()
    ddl = "CREATE TABLE a (id INT)"
    changes = DdlParser("db").apply(Tables(), ddl, "db")
    record = HistoryRecord(
        SOURCE, {"file": "b.000001", "pos": 5}, ts_ms=1, database_name="db", ddl=ddl, table_changes=changes
    )
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": history.topic})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(history.topic, record.to_text())
    producer.commit_transaction(30)
    # the commit returns once the coordinator has decided; the marker reaches the partition a moment later
    # (on an idle broker, after this function would return: the recovery then ended at the record)
    deadline = time.monotonic() + 30
    while history._watermarks()[1] < 2:
        assert time.monotonic() < deadline, "the commit marker never reached the history topic"
        time.sleep(0.05)
    return history.topic


@pytest.mark.honours("schema.history.internal.kafka.recovery.poll.interval.ms")
def test_recovery_polls_at_the_interval_for_each_attempt(kafka: Any) -> None:
    topic = _topic_ending_in_a_commit_marker(kafka)
    took = []
    for interval_ms in ("150", "900"):
        history = _history(
            topic,
            kafka.bootstrap_servers,
            **{
                "schema.history.internal.kafka.recovery.poll.interval.ms": interval_ms,
                "schema.history.internal.kafka.recovery.attempts": "3",
            },
        )
        started = time.monotonic()
        with pytest.raises(
            SchemaHistoryError, match=r"increase the value for .*recovery\.poll\.interval\.ms"
        ):
            history.recover(
                {"file": "b.000001", "pos": 100},
                Tables(),
                DdlParser("db"),
                BinlogPositionComparator(),
                source=SOURCE,
            )
        took.append(time.monotonic() - started)
    assert 0.4 <= took[0] < 2.0, took  # three empty polls of 150 ms
    assert took[1] >= 2.6, took  # three of 900 ms
