"""``connect.keep.alive.interval.ms`` is a REST user's key: its smallest value must not make the server send
binlog heartbeats thousands of times a second (the heartbeat asked for is at least 100 ms apart), nor make
every connection time out at once (the read timeout is at least twice the heartbeat)."""

from __future__ import annotations

import pytest

from cdc.mysql.binlog_source import binlog_reader_factory
from cdc.mysql.config import MySqlSettings
from cdc.mysql.offsets import BinlogOffset

BASE = {
    "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
    "database.hostname": "127.0.0.1",
    "database.user": "cdc",
    "database.password": "cdc",
    "database.server.id": "5401",
    "topic.prefix": "p",
}


@pytest.mark.parametrize(
    ("interval_ms", "heartbeat_s", "read_timeout_s"),
    [("1", 0.1, 0.2), ("500", 0.4, 0.8), ("1500", 1.0, 2.0), ("60000", 1.0, 60.0)],
)
def test_the_heartbeat_and_read_timeout_have_floors(
    interval_ms: str, heartbeat_s: float, read_timeout_s: float
) -> None:
    settings = MySqlSettings.parse({**BASE, "connect.keep.alive.interval.ms": interval_ms})
    reader = binlog_reader_factory(settings)(BinlogOffset("binlog.000001", 4))  # not connected yet
    try:
        assert reader.slave_heartbeat == pytest.approx(heartbeat_s)  # type: ignore[attr-defined]
        connection = reader._BinLogStreamReader__connection_settings  # type: ignore[attr-defined]
        assert connection["read_timeout"] == pytest.approx(read_timeout_s)
    finally:
        reader.close()


def test_without_keep_alive_there_is_no_read_timeout() -> None:
    settings = MySqlSettings.parse({**BASE, "connect.keep.alive": "false"})
    reader = binlog_reader_factory(settings)(BinlogOffset("binlog.000001", 4))
    try:
        assert "read_timeout" not in reader._BinLogStreamReader__connection_settings  # type: ignore[attr-defined]
        assert reader.slave_heartbeat == 1.0  # type: ignore[attr-defined]
    finally:
        reader.close()
