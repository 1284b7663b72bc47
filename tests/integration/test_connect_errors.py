"""A MySQL connection pointed at the wrong port answers quickly, saying what answered (issue #26).

The stack's own services stand in for the mistakes: Kafka's port (a broker waits for its client to speak
first, so a MySQL client waiting for a greeting hung for good), PostgreSQL's (it closes after 60 s:
"Lost connection to MySQL server during query"), and a port nothing listens on. Validate and create of
the MySQL connector answer within the connect timeout (at most 10 s at validate) with the reason on
``database.hostname``; the JDBC source's connect errors, with either MySQL driver, say "Connection
refused" (mysqlclient said "(115)", EINPROGRESS) or that the server sent no MySQL greeting.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from inprocess import NoOffsetsContext

from cdc.api.errors import ConnectError
from cdc.jdbc.dialects import DRIVER_ENV
from cdc.jdbc.task import JdbcSourceTask
from cdc.worker.runtime import ConnectRuntime
from tests.integration.faultkit import free_port
from tests.integration.inprocess import standalone

pytestmark = pytest.mark.integration

CLASS = "io.debezium.connector.mysql.MySqlConnector"


@pytest.fixture
def worker(tmp_path: Path, kafka: Any) -> Iterator[ConnectRuntime]:
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "listeners": "http://127.0.0.1:0",
        }
    ) as runtime:
        yield runtime


def _config(port: int) -> dict[str, str]:
    return {
        "connector.class": CLASS,
        "name": "wrong-port",
        "database.hostname": "127.0.0.1",
        "database.port": str(port),
        "database.user": "cdc",
        "database.password": "cdc",
        "database.server.id": "5124",
        "topic.prefix": "wrong",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
    }


def _port(address: str) -> int:
    return int(address.split(",")[0].rsplit(":", 1)[1])


def _refused_quickly(worker: ConnectRuntime, port: int, needle: str, **extra: str) -> None:
    base = worker.url.rstrip("/")
    config = {**_config(port), **extra}
    started = time.monotonic()
    response = requests.put(f"{base}/connector-plugins/{CLASS}/config/validate", json=config, timeout=60)
    assert time.monotonic() - started < 12.5, "validate waited for a greeting that never comes"
    assert response.status_code == 200, response.text
    errors = {
        c["value"]["name"]: c["value"]["errors"] for c in response.json()["configs"] if c["value"]["errors"]
    }
    message = errors["database.hostname"][0]
    assert message.startswith("Unable to connect: ") and needle in message, message
    assert f"127.0.0.1:{port}" in message, message
    started = time.monotonic()
    created = requests.post(f"{base}/connectors", json={"name": "wrong-port", "config": config}, timeout=60)
    assert time.monotonic() - started < 12.5
    assert created.status_code == 400 and needle in created.json()["message"], created.text


def test_validate_against_kafka_says_no_mysql_server_answered(worker: ConnectRuntime, kafka: Any) -> None:
    _refused_quickly(worker, _port(kafka.bootstrap_servers), "sent no MySQL/MariaDB greeting")


def test_validate_against_postgresql_says_no_mysql_server_answered(
    worker: ConnectRuntime, stack: Any
) -> None:
    # the reason, within a shorter connect.timeout.ms (the 10 s cap under the default: the Kafka test above)
    _refused_quickly(worker, 5432, "it is not a MySQL or MariaDB server", **{"connect.timeout.ms": "2000"})


def test_validate_against_a_closed_port_says_connection_refused(worker: ConnectRuntime) -> None:
    _refused_quickly(worker, free_port(), "Connection refused")


@pytest.mark.parametrize("driver", ["mysqlclient", "pymysql"])
def test_jdbc_source_connect_errors_name_the_reason(
    driver: str, kafka: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if driver == "mysqlclient":
        pytest.importorskip("MySQLdb")
    monkeypatch.setenv(DRIVER_ENV, driver)
    # the greeting that never comes is waited for up to the default 10 s with mysqlclient, up to the URL's
    # connectTimeout (ms) with PyMySQL
    params, bound = ("", 15.0) if driver == "mysqlclient" else ("?connectTimeout=2000", 7.0)
    for port, needle in (
        (free_port(), "Connection refused"),
        (_port(kafka.bootstrap_servers), "no MySQL/MariaDB greeting"),
    ):
        task = JdbcSourceTask(max_wait_s=0.2)
        task.initialize(NoOffsetsContext())
        started = time.monotonic()
        with pytest.raises(ConnectError) as failure:
            task.start(
                {
                    "connection.url": f"jdbc:mariadb://127.0.0.1:{port}/db{params}",
                    "connection.user": "cdc",
                    "connection.password": "cdc",
                    "connection.attempts": "1",
                    "topic.prefix": "wrong-",
                    "mode": "bulk",
                    "tables": "t",
                }
            )
        assert time.monotonic() - started < bound
        message = str(failure.value)
        assert needle in message and "(115)" not in message, message
