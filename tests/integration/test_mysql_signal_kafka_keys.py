"""The Kafka signal channel's consumer keys against the real broker: ``signal.kafka.poll.timeout.ms`` (how
long one read waits for a signal) and ``signal.consumer.*`` (Java consumer settings, here
``signal.consumer.max.poll.records``: how many records one read takes, as Debezium's ``consumer.poll``)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from cdc.mysql.config import MySqlSettings
from cdc.mysql.signals.channels import KafkaChannel
from cdc.mysql.signals.record import SignalError

pytestmark = pytest.mark.integration


def _channel(kafka: Any, topic: str, **extra: str) -> KafkaChannel:
    prefix = topic + "-p"
    props = {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": "127.0.0.1",
        "database.user": "cdc",
        "database.password": "cdc",
        "database.server.id": "5401",
        "topic.prefix": prefix,
        "signal.enabled.channels": "kafka",
        "signal.kafka.topic": topic,
        "signal.kafka.bootstrap.servers": kafka.bootstrap_servers,
        "signal.kafka.groupId": topic + "-group",
        **extra,
    }
    return KafkaChannel(MySqlSettings.parse(props), {"bootstrap.servers": kafka.bootstrap_servers})


def _reads(channel: KafkaChannel, want: int, timeout: float = 30) -> list[int]:
    """The number of signals each read returned until ``want`` were read."""
    sizes: list[int] = []
    deadline = time.monotonic() + timeout
    while sum(sizes) < want and time.monotonic() < deadline:
        got = len(channel.read())
        if got or sum(sizes):
            sizes.append(got)
    return sizes


@pytest.mark.honours("signal.consumer.max.poll.records")
def test_max_poll_records_bounds_the_signals_one_read_takes(kafka: Any) -> None:
    topic = kafka.create_topic("signals")
    producer = kafka.producer()
    for i in range(5):
        body = {"id": f"s{i}", "type": "log", "data": {"message": str(i)}}
        producer.produce(topic, key=topic + "-p", value=json.dumps(body))
    producer.flush(10)
    one = _channel(
        kafka, topic, **{"signal.consumer.max.poll.records": "2", "signal.kafka.poll.timeout.ms": "500"}
    )
    try:
        sizes = _reads(one, 5)
    finally:
        one.close()
    assert sum(sizes) == 5 and max(sizes) == 2, sizes
    every = _channel(
        kafka, topic, **{"signal.kafka.groupId": topic + "-other", "signal.kafka.poll.timeout.ms": "2000"}
    )
    try:
        assert _reads(every, 5)[0] == 5  # Java's default (500): the five at once
    finally:
        every.close()
    with pytest.raises(SignalError, match=r"signal\.consumer\.max\.poll\.records"):
        _channel(kafka, topic, **{"signal.consumer.max.poll.records": "0"})


@pytest.mark.honours("signal.kafka.poll.timeout.ms")
def test_poll_timeout_is_how_long_a_read_waits_for_a_signal(kafka: Any) -> None:
    topic = kafka.create_topic("signals")
    took = []
    for timeout_ms in ("0", "1500"):
        channel = _channel(
            kafka,
            topic,
            **{"signal.kafka.poll.timeout.ms": timeout_ms, "signal.kafka.groupId": topic + timeout_ms},
        )
        try:
            channel.read()  # the first read joins the partition
            started = time.monotonic()
            assert channel.read() == []
            took.append(time.monotonic() - started)
        finally:
            channel.close()
    assert took[0] < 0.5 and took[1] >= 1.4, took
