"""``event.converting.failure.handling.mode`` on a value its column's converter cannot convert."""

from __future__ import annotations

import logging

import pytest

from cdc.api.errors import ConnectError
from cdc.history.model import Column, Table, TableId
from cdc.mysql.config import MySqlSettings
from cdc.mysql.converting import converting_failures
from cdc.mysql.events import EventFactory
from cdc.mysql.validation import validate_mysql

PROPS = {
    "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
    "database.hostname": "h",
    "database.user": "u",
    "topic.prefix": "p",
    "schema.history.internal.kafka.topic": "h",
}


def _schema(mode: str | None):  # type: ignore[no-untyped-def]
    props = dict(PROPS) if mode is None else {**PROPS, "event.converting.failure.handling.mode": mode}
    factory = EventFactory(MySqlSettings.parse(props))
    table = Table(
        TableId("db", "t"),
        (
            Column("id", 1, "INT", "INT", 4, optional=False),
            Column("d", 2, "DECIMAL", "DECIMAL(5,2)", 3, length=5, scale=2),
            Column("v", 3, "VARCHAR", "VARCHAR(10)", 12, length=10),
        ),
        ("id",),
    )
    return factory.schema_for(table)


GOOD = [1, None, "x"]
BAD = [1, "not a number", "x"]  # a value of another type than the column's (a schema out of step)


def test_fail_stops_with_the_column_named() -> None:
    ts = _schema("fail")
    assert ts.value(GOOD).get("v") == "x"
    with pytest.raises(
        ConnectError, match=r"Failed to properly convert data value for 'db.t.d' of type DECIMAL"
    ):
        ts.value(BAD)


@pytest.mark.parametrize(
    ("mode", "level"), [(None, logging.WARNING), ("warn", logging.WARNING), ("skip", logging.DEBUG)]
)
@pytest.mark.honours("event.converting.failure.handling.mode")
def test_warn_and_skip_write_null_and_log(
    mode: str | None, level: int, caplog: pytest.LogCaptureFixture
) -> None:
    ts = _schema(mode)
    before = converting_failures.count
    with caplog.at_level(logging.DEBUG, logger="cdc.mysql.converting"):
        value = ts.value(BAD)
    assert [value.get("id"), value.get("d"), value.get("v")] == [1, None, "x"]
    assert converting_failures.count == before + 1
    logged = [
        r for r in caplog.records if "Failed to properly convert data value for 'db.t.d'" in r.getMessage()
    ]
    assert [r.levelno for r in logged] == [level]


def test_unknown_mode_is_refused() -> None:
    errors = {
        v.name: v.errors for v in validate_mysql({**PROPS, "event.converting.failure.handling.mode": "x"})
    }
    assert errors["event.converting.failure.handling.mode"]
    ok = {
        v.name: v.errors for v in validate_mysql({**PROPS, "event.converting.failure.handling.mode": "WARN"})
    }
    assert ok["event.converting.failure.handling.mode"] == []
