"""``max.queue.size.in.bytes``: the queue is full once its records' approximate sizes reach the bound."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest

from cdc.api.records import SourceRecord
from cdc.api.schema import INT32_SCHEMA, OPTIONAL_STRING_SCHEMA, SchemaBuilder
from cdc.api.struct import Struct
from cdc.mysql.config import MySqlSettings
from cdc.mysql.queue import ChangeEventQueue
from cdc.mysql.record_size import approximate_size
from cdc.mysql.validation import validate_mysql

PROPS = {
    "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
    "database.hostname": "h",
    "database.user": "u",
    "topic.prefix": "p",
    "schema.history.internal.kafka.topic": "h",
}


def test_the_key_is_declared_and_parsed() -> None:
    errors = [e for v in validate_mysql({**PROPS, "max.queue.size.in.bytes": "1048576"}) for e in v.errors]
    assert errors == []
    assert (
        MySqlSettings.parse({**PROPS, "max.queue.size.in.bytes": "1048576"}).max_queue_size_in_bytes
        == 1048576
    )
    bad = {v.name: v.errors for v in validate_mysql({**PROPS, "max.queue.size.in.bytes": "-1"})}
    assert bad["max.queue.size.in.bytes"]


def test_approximate_size_counts_as_debezium() -> None:
    key_schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).build()
    value_schema = (
        SchemaBuilder.struct()
        .field("name", OPTIONAL_STRING_SCHEMA)
        .field("n", SchemaBuilder.bytes().name("org.apache.kafka.connect.data.Decimal").optional().build())
        .build()
    )
    record = SourceRecord(
        topic="t",
        kafka_partition=None,
        key_schema=key_schema,
        key=Struct(key_schema, [1]),
        value_schema=value_schema,
        value=Struct(value_schema, ["abc", Decimal("1.00")]),  # unscaled 100: one byte
        source_partition={"server": "p"},
        source_offset={"file": "f", "pos": 4},
    )
    # entries 3 x 100 + timestamp 8 + key (56 + 8 + 24) + value (56 + 8 + 56 + 3 + 8 + 24 + 1) + topic 1
    assert approximate_size(record) == 300 + 8 + 88 + 156 + 1


@pytest.mark.honours("max.queue.size.in.bytes")
def test_a_full_queue_by_bytes_blocks_the_producer_until_a_poll() -> None:
    queue = ChangeEventQueue(100, 10, max_bytes=1000, sizer=lambda item: 400)
    stopping = threading.Event()
    assert queue.put_all(["a", "b", "c"], stopping)  # 1200 bytes: the third fits since 800 < 1000
    done = threading.Event()

    def produce() -> None:
        queue.put_all(["d"], stopping)
        done.set()

    thread = threading.Thread(target=produce)
    thread.start()
    time.sleep(0.5)
    assert not done.is_set() and queue.bytes == 1200  # blocked: the queue holds 1200 >= 1000 bytes
    # the poll drains the queue, which unblocks the writer; as Debezium's, it then waits for a full batch
    # (or the interval) and returns the late record with the others
    assert queue.poll(1.0) == ["a", "b", "c", "d"]
    thread.join(5)
    assert done.is_set() and queue.bytes == 0
    assert ChangeEventQueue(2, 10).put_all(["x", "y"], stopping)  # bounded by records only: unchanged
