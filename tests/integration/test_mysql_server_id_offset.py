"""``database.server.id.offset``: Debezium 3.6 declares it (a LONG, default 10000) and reads it nowhere (only
``BinlogConnectorConfig`` names it; the parallel snapshot that added it to ``database.server.id`` is gone).
cdc accepts it and, the same, registers with the server as ``database.server.id``, not the sum."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from cdc.api.records import SourceRecord
from cdc.mysql.server_ids import report_host
from cdc.mysql.task import MariaDbSourceTask
from cdc.mysql.validation import validate_mysql
from tests.integration.inprocess import NoOffsetsContext

pytestmark = pytest.mark.integration


def _replicas(mysql_db: Any) -> dict[str, int]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SHOW SLAVE HOSTS")
        columns = [c[0] for c in cur.description]
        return {row[columns.index("Host")]: int(row[columns.index("Server_id")]) for row in cur.fetchall()}


@pytest.mark.honours("database.server.id.offset")
def test_the_server_id_offset_is_accepted_and_changes_no_server_id(mysql_db: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO t VALUES (1)")
    server_id = random.randint(100_000, 4_000_000)
    prefix = f"sido{random.randint(0, 10**9)}"
    props = {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(server_id),
        "database.server.id.offset": "5",
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
    }
    bad = {v.name: v.errors for v in validate_mysql({**props, "database.server.id.offset": "x"}) if v.errors}
    assert "database.server.id.offset" in bad, bad  # a LONG, as Debezium declares it
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(props)
    records: list[SourceRecord] = []
    try:
        deadline = time.monotonic() + 60
        while report_host(prefix) not in _replicas(mysql_db) and time.monotonic() < deadline:
            records += task.poll() or []
        assert _replicas(mysql_db).get(report_host(prefix)) == server_id  # not server_id + 5
        assert any(r.topic == f"{prefix}.{mysql_db.name}.t" for r in records)
    finally:
        task.stop()
