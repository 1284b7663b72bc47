"""Include lists that match nothing, against real MariaDB (issue 26, item 4).

- Validate (``PUT /connector-plugins/…/config/validate``, the shared stack's MariaDB, an in-process
  standalone worker) answers an error on ``table.include.list`` / ``database.include.list`` when they match
  no table / database, and ``POST /connectors`` answers 400 and creates nothing; lists that match, and
  ``include.list.unmatched.mode=warn``, validate clean on those keys.
- A task started with such a list (a MariaDB of the test's own, where a session holds a table's write
  lock, so a global read lock would wait ``snapshot.lock.timeout.ms`` and then fall back to table locks)
  logs a WARN naming the list and snapshots without waiting for any lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from cdc.mysql.task import MySqlSourceTask
from cdc.worker.runtime import ConnectRuntime
from tests.integration.inprocess import NoOffsetsContext, standalone
from tests.integration.private_mariadb import PrivateMariaDb

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


def _config(db: Any, **overrides: str) -> dict[str, str]:
    return {
        "connector.class": CLASS,
        "name": "lists",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.password": db.password,
        "database.server.id": "5124",
        "topic.prefix": "lists",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **overrides,
    }


def _validate(worker: ConnectRuntime, config: dict[str, str]) -> dict[str, list[str]]:
    base = worker.url.rstrip("/")
    response = requests.put(f"{base}/connector-plugins/{CLASS}/config/validate", json=config, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    return {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}


@pytest.mark.honours("database.include.list", "table.include.list")
def test_lists_matching_nothing_are_refused_at_validate_and_create(
    worker: ConnectRuntime, mysql_db: Any
) -> None:
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE orders (id INT PRIMARY KEY)")
    typo = _config(mysql_db, **{"database.include.list": db, "table.include.list": f"{db}.orderz"})
    errors = _validate(worker, typo)
    assert list(errors) == ["table.include.list"], errors
    message = errors["table.include.list"][0]
    assert f"table.include.list '{db}.orderz' matches no table" in message, message
    assert f"{db}.orders" in message and "include.list.unmatched.mode=warn" in message, message
    base = worker.url.rstrip("/")
    response = requests.post(f"{base}/connectors", json={"name": "lists", "config": typo}, timeout=60)
    assert response.status_code == 400, response.text
    assert response.json()["error_code"] == 400 and "matches no table" in response.json()["message"]
    assert requests.get(f"{base}/connectors", timeout=30).json() == []
    response = requests.put(f"{base}/connectors/lists/config", json=typo, timeout=60)
    assert response.status_code == 400, response.text

    no_db = _config(mysql_db, **{"database.include.list": f"{db}_nosuch"})
    errors = _validate(worker, no_db)
    assert list(errors) == ["database.include.list"], errors
    assert f"database.include.list '{db}_nosuch' matches no database" in errors["database.include.list"][0]

    # The right lists, an existing empty database, and the mode that accepts them all validate clean.
    assert _validate(worker, _config(mysql_db, **{"table.include.list": f"{db}\\.ord.*"})) == {}
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("DROP TABLE orders")
    assert _validate(worker, _config(mysql_db, **{"database.include.list": db})) == {}
    later = {**typo, "include.list.unmatched.mode": "warn"}
    assert _validate(worker, later) == {}
    response = requests.post(f"{base}/connectors", json={"name": "lists", "config": later}, timeout=60)
    assert response.status_code == 201, response.text


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDb]:
    db = PrivateMariaDb(tmp_path_factory.mktemp("mariadb-lists"))
    db.start()
    try:
        yield db
    finally:
        db.stop()


def test_a_task_with_a_list_matching_nothing_warns_and_locks_nothing(
    server: PrivateMariaDb, caplog: pytest.LogCaptureFixture
) -> None:
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS app")
        cur.execute("CREATE TABLE IF NOT EXISTS app.orders (id INT PRIMARY KEY)")
    config = _config(
        server,
        **{
            "database.include.list": "app",
            "table.include.list": "app.orderz",
            "include.list.unmatched.mode": "warn",
            "snapshot.lock.timeout.ms": "4000",
            "snapshot.mode": "initial_only",
        },
    )
    holder = server.connect()
    task = MySqlSourceTask()
    try:
        with holder.cursor() as cur:
            cur.execute("LOCK TABLES app.orders WRITE")  # a global read lock would wait for this
        caplog.set_level(logging.INFO)
        started = time.monotonic()
        task.initialize(NoOffsetsContext())
        task.start(config)
        deadline = time.monotonic() + 30
        while "Snapshot completed" not in caplog.text and time.monotonic() < deadline:
            task.poll()
        elapsed = time.monotonic() - started
    finally:
        task.stop()
        holder.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("table.include.list 'app.orderz' matches no table" in w for w in warnings), warnings
    assert any("the snapshot takes no lock" in w for w in warnings), warnings
    assert "Snapshot completed: 0 rows from 0 tables" in caplog.text, caplog.text[-3000:]
    assert "Global read lock not allowed" not in caplog.text
    assert elapsed < 4, elapsed  # did not wait for the lock held on app.orders
