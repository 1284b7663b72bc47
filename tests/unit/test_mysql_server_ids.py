"""``database.server.id`` conflicts among a worker group's connector configs, and the server's words."""

from __future__ import annotations

from cdc.mysql.server_ids import group_conflicts, is_same_id_error, report_host

MYSQL = "io.debezium.connector.mysql.MySqlConnector"


def _is_binlog(name: str) -> bool:
    return name in (MYSQL, "io.debezium.connector.mariadb.MariaDbConnector")


def test_the_same_id_on_the_same_server_is_a_conflict() -> None:
    others = {
        "a": {"connector.class": MYSQL, "database.hostname": "localhost", "database.server.id": "7"},
        "b": {"connector.class": MYSQL, "database.hostname": "db2", "database.server.id": "7"},
        "c": {
            "connector.class": "FileStreamSource",
            "database.hostname": "127.0.0.1",
            "database.server.id": "7",
        },
        "d": {
            "connector.class": MYSQL,
            "database.hostname": "127.0.0.1",
            "database.server.id": "${file:x:y}",
        },
        "e": {"connector.class": MYSQL, "database.hostname": "127.0.0.1", "database.port": "3307"},
    }
    [message] = group_conflicts(7, "127.0.0.1", 3306, others, _is_binlog)
    assert "connector 'a'" in message and "'b'" not in message and "(for example 8)" in message
    assert group_conflicts(8, "127.0.0.1", 3306, others, _is_binlog) == []
    # Without the key the id is cdc's default, 5400: two such connectors on one server conflict.
    defaults = {"x": {"connector.class": MYSQL, "database.hostname": "127.0.0.1"}}
    assert group_conflicts(5400, "localhost", 3306, defaults, _is_binlog)


def test_the_servers_same_id_disconnect_is_recognised() -> None:
    assert is_same_id_error(4052, "A slave with the same server_uuid/server_id is already connected")
    mysql = "A slave with the same server_uuid/server_id as this slave has connected to the master; the first"
    assert is_same_id_error(1236, mysql)
    assert not is_same_id_error(1236, "Could not find first log file name in binary log index file")
    assert report_host("x" * 100) == "cdc:" + "x" * 56
