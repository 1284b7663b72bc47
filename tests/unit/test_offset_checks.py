"""The connectors' offset checks for ``PATCH /connectors/{name}/offsets``: shape, types, the field named."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdc.api.errors import InvalidOffsetError
from cdc.jdbc.connector import JdbcSourceConnector
from cdc.mysql.connector import MySqlConnector

MYSQL_PROPS = {"topic.prefix": "shop"}
GOOD_BINLOG = {"file": "mysql-bin.000003", "pos": 154, "row": 1, "event": 2, "gtids": "0-1-42", "ts_sec": 1}


def alter(connector: Any, props: dict[str, str], partition: dict[str, Any], offset: Any) -> bool:
    return bool(connector.alter_offsets(props, {json.dumps(partition): offset}))


def test_binlog_offsets_are_checked() -> None:
    c = MySqlConnector()
    assert alter(c, MYSQL_PROPS, {"server": "shop"}, GOOD_BINLOG)
    assert alter(
        c,
        MYSQL_PROPS,
        {"server": "shop"},
        {**GOOD_BINLOG, "gtids": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"},
    )
    assert alter(c, MYSQL_PROPS, {"server": "shop"}, {"file": "b.000001", "pos": "4"})  # as Debezium's loader
    assert alter(c, MYSQL_PROPS, {"server": "shop"}, None) is False  # a tombstone: nothing to check
    for offset, field in [
        ({"pos": 4}, "file"),
        ({"file": "b.1"}, "pos"),
        ({"file": "b.1", "pos": "abc"}, "pos"),
        ({"file": "b.1", "pos": -1}, "pos"),
        ({"file": 7, "pos": 4}, "file"),
        ({"file": "b.1", "pos": 4, "row": 1.5}, "row"),
        ({"file": "b.1", "pos": 4, "gtids": "nonsense"}, "gtids"),
        ({"file": "b.1", "pos": 4, "snapshot": "maybe"}, "snapshot"),
    ]:
        with pytest.raises(InvalidOffsetError, match=f"'{field}'") as err:
            alter(c, MYSQL_PROPS, {"server": "shop"}, offset)
        assert err.value.field == field
    with pytest.raises(InvalidOffsetError, match="'server'"):
        alter(c, MYSQL_PROPS, {"server": "other"}, GOOD_BINLOG)


@pytest.mark.parametrize(
    ("mode", "good", "bad", "field"),
    [
        ("incrementing", {"incrementing": 10}, {"incrementing": "ten"}, "incrementing"),
        ("incrementing", {"incrementing": 10}, {"timestamp": 5}, "incrementing"),
        (
            "timestamp",
            {"timestamp": 1_700_000_000_000, "timestamp_nanos": 5},
            {"timestamp_nanos": 5},
            "timestamp",
        ),
        (
            "timestamp",
            {"timestamp": 1},
            {"timestamp": 1, "timestamp_nanos": 2_000_000_000},
            "timestamp_nanos",
        ),
        ("timestamp+incrementing", {"timestamp": 1, "incrementing": 2}, {"timestamp": 1}, "incrementing"),
        (
            "timestamp+incrementing",
            {"timestamp": 1, "incrementing": 2},
            {"incrementing": 2, "timestamp": True},
            "timestamp",
        ),
        (
            "incrementing",
            {"incrementing": 3, "incrementing_gaps": "1@100,2@200"},
            {"incrementing": 3, "incrementing_gaps": "x"},
            "incrementing_gaps",
        ),
    ],
)
def test_jdbc_offsets_are_checked_per_mode(
    mode: str, good: dict[str, Any], bad: dict[str, Any], field: str
) -> None:
    c, props = JdbcSourceConnector(), {"mode": mode}
    partition = {"protocol": "1", "table": "shop.orders"}
    assert alter(c, props, partition, good)
    with pytest.raises(InvalidOffsetError, match=f"'{field}'"):
        alter(c, props, partition, bad)


def test_jdbc_partitions_are_checked() -> None:
    c, props = JdbcSourceConnector(), {"mode": "incrementing"}
    assert alter(c, props, {"query": "query"}, {"incrementing": 1})
    assert alter(c, props, {"table": "orders"}, {"incrementing": 1})  # the legacy v0 partition
    with pytest.raises(InvalidOffsetError, match="'table'"):
        alter(c, props, {"protocol": "1"}, {"incrementing": 1})
    with pytest.raises(InvalidOffsetError, match="'protocol'"):
        alter(c, props, {"protocol": "2", "table": "a.b"}, {"incrementing": 1})
