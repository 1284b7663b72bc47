"""Debezium's recovery and legacy snapshot keys (``config_groups_more``), shown acting on the real stack:
``gtid.ignore.on.recovery`` (a restart by binlog file and position rather than by the offset's GTID set)
and ``snapshot.new.tables`` (read by nothing in Debezium 3.6, nor in cdc)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc.mysql.task import MariaDbSourceTask
from cdc.mysql.validation import validate_mysql
from tests.integration.inprocess import NoOffsetsContext
from tests.integration.private_mariadb import PrivateMariaDb
from tests.integration.test_mysql_tuning_keys import _config, _poll_until, _StoredOffset

pytestmark = pytest.mark.integration


def _ids(rows: list[Any], table: str) -> list[int]:
    return [r.value.get("after").get("id") for r in rows if r.topic.endswith(f".{table}") and r.value]


@pytest.mark.honours("gtid.ignore.on.recovery")
def test_gtid_ignore_on_recovery_resumes_from_the_binlog_position(tmp_path: Path) -> None:
    """An offset whose file/pos is after row 1 but whose GTID set is the one before row 1 (as a failover
    or a hand-edited offset can leave it): by default the GTID set wins on MariaDB and row 1 is read
    again; with gtid.ignore.on.recovery=true the task resumes at the offset's file and position (row 2
    only) and drops the stored set, as Debezium 3.6 registers its binlog client by file and position and
    resets the offset's GTID set. On a MariaDB of the test's own: a GTID set that is not the position's
    makes cdc walk the binlog from the start of the file, which on the shared server is hundreds of MB."""
    server = PrivateMariaDb(tmp_path / "mariadb").start()
    try:
        config = {
            "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
            "database.hostname": server.host,
            "database.port": str(server.port),
            "database.user": server.user,
            "database.password": server.password,
            "database.server.id": "4344",
            "topic.prefix": "gir",
            "database.include.list": "r",
            "snapshot.mode": "no_data",
            "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
            "schema.history.internal.file.filename": str(tmp_path / "history.dat"),
        }
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE r")
            cur.execute("CREATE TABLE r.g (id INT PRIMARY KEY)")
        first = MariaDbSourceTask()  # records the table in the schema history
        first.initialize(NoOffsetsContext())
        first.start(config)
        try:
            _poll_until(first, lambda rs: any(r.source_offset.get("file") for r in rs), timeout=15)
        finally:
            first.stop()
        with server.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT @@gtid_binlog_pos")
            before = str(cur.fetchone()[0])
            cur.execute("INSERT INTO r.g VALUES (1)")
            cur.execute("SHOW MASTER STATUS")
            file, pos = cur.fetchone()[:2]
            cur.execute("SELECT @@gtid_binlog_pos")
            after_row_1 = str(cur.fetchone()[0])
            cur.execute("INSERT INTO r.g VALUES (2)")
        assert before and before != after_row_1
        seen: dict[str, list[int]] = {}
        gtids: dict[str, list[str | None]] = {}
        for ignore in ("false", "true"):
            task = MariaDbSourceTask()
            task.initialize(_StoredOffset({"file": str(file), "pos": int(pos), "gtids": before}))
            task.start({**config, "gtid.ignore.on.recovery": ignore})
            try:
                rows = _poll_until(task, lambda rs: 2 in _ids(rs, "g"), timeout=30)
            finally:
                task.stop()
            seen[ignore] = _ids(rows, "g")
            gtids[ignore] = [r.source_offset.get("gtids") for r in rows if r.topic.endswith(".g")]
    finally:
        server.stop()
    assert seen == {"false": [1, 2], "true": [2]}
    # row 2's event is at the transaction's start: the completed set before it, which is the stored one
    # by default and, once it is dropped, empty (GTIDs are tracked again from the first one read)
    assert gtids == {"false": [before, after_row_1], "true": [None]}


@pytest.mark.honours("snapshot.new.tables")
def test_snapshot_new_tables_is_accepted_and_changes_nothing(mysql_db: Any, kafka: Any) -> None:
    """Debezium 3.6 neither declares nor reads snapshot.new.tables (a Debezium 1.x key): any value passes
    validation and the snapshot is the one taken without it."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE nt (id INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("INSERT INTO nt VALUES (1, 'a'), (2, 'b')")
    seen = {}
    for value in ("off", "parallel"):
        config = {
            **_config(mysql_db, kafka.topic(f"nt{value}"), **{"snapshot.new.tables": value}),
            "snapshot.mode": "initial",
            "table.include.list": f"{mysql_db.name}.nt",
        }
        assert not [v for v in validate_mysql(config) if v.errors]
        task = MariaDbSourceTask()
        task.initialize(NoOffsetsContext())
        task.start(config)
        try:
            rows = _poll_until(task, lambda rs: len(_ids(rs, "nt")) >= 2)
        finally:
            task.stop()
        after = [r.value.get("after") for r in rows if r.topic.endswith(".nt")]
        seen[value] = [(a.get("id"), a.get("v")) for a in after]
    assert seen == {"off": [(1, "a"), (2, "b")], "parallel": [(1, "a"), (2, "b")]}
