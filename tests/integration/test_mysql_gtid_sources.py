"""``gtid.source.includes`` / ``gtid.source.excludes`` on a MariaDB of the test's own (a second replication
domain must not reach the shared server's GTID state)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc.api.records import SourceRecord
from cdc.mysql.task import MariaDbSourceTask
from cdc.mysql.validation import validate_mysql
from tests.integration.inprocess import NoOffsetsContext
from tests.integration.private_mariadb import PrivateMariaDb

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDb]:
    db = PrivateMariaDb(tmp_path_factory.mktemp("mariadb-gtid-domains"))
    db.start()
    try:
        yield db
    finally:
        db.stop()


def _config(server: PrivateMariaDb, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": server.host,
        "database.port": str(server.port),
        "database.user": server.user,
        "database.password": server.password,
        "database.server.id": "4343",
        "topic.prefix": "gtidsrc",
        "database.include.list": "g",
        "snapshot.mode": "never",
        "include.schema.changes": "false",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **extra,
    }


def _poll(task: MariaDbSourceTask, until: Any, timeout: float = 60) -> list[SourceRecord]:
    import time

    out: list[SourceRecord] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not until(out):
        out += task.poll() or []
    return out


@pytest.mark.honours("gtid.source.excludes")
def test_rows_of_an_excluded_gtid_source_are_not_emitted(server: PrivateMariaDb, tmp_path: Path) -> None:
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE g")
        cur.execute("CREATE TABLE g.t (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO g.t VALUES (1)")
        cur.execute("SET SESSION gtid_domain_id = 7")
        cur.execute("INSERT INTO g.t VALUES (2)")
        cur.execute("SET SESSION gtid_domain_id = 0")
        cur.execute("INSERT INTO g.t VALUES (3)")
        cur.execute("INSERT INTO g.t VALUES (4)")
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(_config(server, **{"gtid.source.excludes": "7-.*"}))
    try:
        records = _poll(task, lambda rs: any(r.value and r.value.get("after").get("id") == 4 for r in rs))
    finally:
        task.stop()
    rows = [r for r in records if r.topic == "gtidsrc.g.t"]
    assert [r.value.get("after").get("id") for r in rows] == [1, 3, 4]
    # The excluded transaction's GTID is still completed (Debezium adds every GTID to the set).
    assert "7-1-1" in rows[-1].source_offset["gtids"]


@pytest.mark.honours("gtid.source.filter.dml.events")
def test_rows_of_an_excluded_gtid_source_are_kept_without_dml_filtering(server: PrivateMariaDb) -> None:
    """gtid.source.filter.dml.events=false: the excluded source's rows are emitted; the filter still trims
    the offsets' GTID set (Debezium's ``GtidSet.retainAll`` on the restored set)."""
    with server.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE g2")
        cur.execute("CREATE TABLE g2.t (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO g2.t VALUES (1)")
        cur.execute("SET SESSION gtid_domain_id = 8")
        cur.execute("INSERT INTO g2.t VALUES (2)")
        cur.execute("SET SESSION gtid_domain_id = 0")
        cur.execute("INSERT INTO g2.t VALUES (3)")
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    config = _config(server, **{"gtid.source.excludes": "8-.*", "gtid.source.filter.dml.events": "false"})
    task.start({**config, "database.include.list": "g2", "database.server.id": "4344"})
    try:
        records = _poll(task, lambda rs: any(r.value and r.value.get("after").get("id") == 3 for r in rs))
    finally:
        task.stop()
    rows = [r for r in records if r.topic == "gtidsrc.g2.t"]
    assert [r.value.get("after").get("id") for r in rows] == [1, 2, 3]


@pytest.mark.honours("gtid.source.includes")
def test_includes_and_excludes_together_are_refused() -> None:
    props = {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": "h",
        "database.user": "u",
        "topic.prefix": "p",
        "schema.history.internal.kafka.topic": "h",
        "gtid.source.includes": "0-1",
        "gtid.source.excludes": "7-.*",
    }
    errors = {v.name: v.errors for v in validate_mysql(props)}
    assert errors["gtid.source.excludes"] == ["Cannot specify GTID excludes when includes are provided."]
    assert errors["gtid.source.includes"] == []
