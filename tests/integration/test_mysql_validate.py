"""Validate and create check the server as Debezium does: a connector that cannot run is never created.

A standalone worker is driven over REST against a MariaDB of the test's own (its users, grants and binlog
settings are changed, which the shared server must not be): a wrong password, a user without the
replication grants, a server writing STATEMENT binlogs and an unreachable port each answer
``PUT /connector-plugins/…/config/validate`` with the reason on the key it concerns (``Unable to connect:
…`` on ``database.hostname``, as Debezium words it) and ``POST /connectors`` with 400, and nothing is
created; a misspelt filter and a refused key are named too. The right config validates clean.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from cdc.worker.runtime import ConnectRuntime
from tests.integration.faultkit import free_port
from tests.integration.inprocess import standalone
from tests.integration.private_mariadb import PrivateMariaDb

pytestmark = pytest.mark.integration

CLASS = "io.debezium.connector.mysql.MySqlConnector"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDb]:
    db = PrivateMariaDb(tmp_path_factory.mktemp("mariadb-validate"))
    db.start()
    try:
        yield db
    finally:
        db.stop()


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


def _config(server: PrivateMariaDb, **overrides: str) -> dict[str, str]:
    return {
        "connector.class": CLASS,
        "name": "checked",
        "database.hostname": server.host,
        "database.port": str(server.port),
        "database.user": server.user,
        "database.password": server.password,
        "database.server.id": "5123",
        "topic.prefix": "checked",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **overrides,
    }


def _validate(worker: ConnectRuntime, config: dict[str, str]) -> dict[str, list[str]]:
    base = worker.url.rstrip("/")
    response = requests.put(f"{base}/connector-plugins/{CLASS}/config/validate", json=config, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    assert body["error_count"] == sum(len(e) for e in errors.values())
    return errors


def _create_refused(worker: ConnectRuntime, config: dict[str, str], needle: str) -> None:
    base = worker.url.rstrip("/")
    name = config["name"]
    response = requests.post(f"{base}/connectors", json={"name": name, "config": config}, timeout=60)
    assert response.status_code == 400, response.text
    assert response.json()["error_code"] == 400
    assert needle in response.json()["message"]
    assert name not in requests.get(f"{base}/connectors", timeout=30).json()


def test_a_wrong_password_is_refused_at_validate_and_create(
    worker: ConnectRuntime, server: PrivateMariaDb
) -> None:
    config = _config(server, **{"database.password": "wrong"})
    errors = _validate(worker, config)
    assert list(errors) == ["database.hostname"], errors
    message = errors["database.hostname"][0]
    assert message.startswith(f"Unable to connect: Access denied for user '{server.user}'"), message
    assert "wrong" not in message
    _create_refused(worker, config, "Unable to connect: Access denied")
    # PUT …/config (create or replace) goes through the same check.
    base = worker.url.rstrip("/")
    response = requests.put(f"{base}/connectors/checked/config", json=config, timeout=60)
    assert response.status_code == 400 and "Unable to connect" in response.json()["message"]


def test_an_unreachable_server_is_refused(worker: ConnectRuntime, server: PrivateMariaDb) -> None:
    config = _config(server, **{"database.port": str(free_port())})
    errors = _validate(worker, config)
    assert errors["database.hostname"][0].startswith("Unable to connect: "), errors
    _create_refused(worker, config, "Unable to connect")


def test_missing_replication_grants_are_named_on_the_user(
    worker: ConnectRuntime, server: PrivateMariaDb
) -> None:
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute("CREATE USER IF NOT EXISTS 'reader'@'%' IDENTIFIED BY 'r'")
        cur.execute("GRANT SELECT ON *.* TO 'reader'@'%'")
    config = _config(server, **{"database.user": "reader", "database.password": "r"})
    errors = _validate(worker, config)
    assert list(errors) == ["database.user"], errors
    assert "lacks the privileges REPLICATION SLAVE, REPLICATION CLIENT" in errors["database.user"][0]
    _create_refused(worker, config, "lacks the privileges")


def test_a_statement_binlog_is_refused_on_the_host(worker: ConnectRuntime, server: PrivateMariaDb) -> None:
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute("SET GLOBAL binlog_format = 'STATEMENT'")
    try:
        errors = _validate(worker, _config(server))
    finally:
        with server.root_connection() as conn, conn.cursor() as cur:
            cur.execute("SET GLOBAL binlog_format = 'ROW'")
    assert "binlog_format is STATEMENT but must be ROW" in errors["database.hostname"][0], errors


def test_misspelt_and_refused_keys_are_named(worker: ConnectRuntime, server: PrivateMariaDb) -> None:
    config = _config(server, **{"table.include.lsit": "inventory.orders", "snapshot.query.mode": "custom"})
    errors = _validate(worker, config)
    assert "did you mean table.include.list?" in errors["table.include.lsit"][0]
    assert "'snapshot.query.mode' value 'custom' is not supported" in errors["snapshot.query.mode"][0]
    _create_refused(worker, config, "did you mean table.include.list?")


def test_the_right_config_validates_clean(worker: ConnectRuntime, server: PrivateMariaDb) -> None:
    assert _validate(worker, _config(server)) == {}
