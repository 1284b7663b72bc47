"""Streaming without ``binlog_row_metadata=FULL``: the same events as with FULL, from the schema history.

A MariaDB of the test's own starts with ``binlog_row_metadata=MINIMAL`` (MySQL 8's and RDS's default). The
same workload — the table of every type (``tests/fixtures/mysql/all_types.sql``), its rows, updates,
deletes, and a column renamed and added by ALTER — runs three times, in three databases, with the server's
setting switched to MINIMAL, NO_LOG (MariaDB's default) and FULL before each. The connector streams the
whole binlog (``snapshot.mode=never``, the schema built from the DDL events) and the three databases'
change events must be equal, field by field, values and schemas; the streamer must have filled the MINIMAL
and NO_LOG table maps in from its model (and left FULL's alone).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc.mysql.task import MariaDbSourceTask
from tests.integration.inprocess import NoOffsetsContext
from tests.integration.private_mariadb import PrivateMariaDb

pytestmark = pytest.mark.integration

SQL = (Path(__file__).resolve().parent.parent / "fixtures" / "mysql" / "all_types.sql").read_text()
MODES = ("MINIMAL", "NO_LOG", "FULL")


def _statements(text: str) -> list[str]:
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*\n", body) if s.strip()]


CREATE = _statements(SQL.split("-- @@ROWS")[0])
ROWS = _statements(SQL.split("-- @@ROWS")[1])
CHANGES = [
    "UPDATE all_types SET c_varchar = 'changed ✓', c_int_u = 4294967295, c_enum = 'c', c_set = 'y' "
    "WHERE id = 1",
    "UPDATE all_types SET id = 10 WHERE id = 2",
    "DELETE FROM all_types WHERE id = 3",
    "ALTER TABLE all_types RENAME COLUMN c_varchar TO c_renamed, "
    "ADD COLUMN c_added TINYINT UNSIGNED DEFAULT 7",
    # every value given: a CURRENT_TIMESTAMP default would differ between the three databases' runs
    "INSERT INTO all_types (id, c_date_nn, c_ts_default, c_renamed, c_added, c_enum) "
    "VALUES (20, '2001-02-03', '2020-01-01 00:00:00', 'after', 250, 'a')",
    "UPDATE all_types SET c_renamed = 'again', c_added = 255 WHERE id = 20",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDb]:
    db = PrivateMariaDb(tmp_path_factory.mktemp("mariadb-minimal"), {"binlog_row_metadata": "MINIMAL"})
    db.start()
    try:
        yield db
    finally:
        db.stop()


def _workload(server: PrivateMariaDb, database: str, mode: str) -> None:
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute(f"SET GLOBAL binlog_row_metadata = {mode}")
        cur.execute(f"CREATE DATABASE {database}")
    with server.connect(database=database) as conn, conn.cursor() as cur:  # a new session: the new setting
        cur.execute("SELECT @@binlog_row_metadata")
        assert cur.fetchone()[0] == mode
        for statement in CREATE:
            cur.execute(statement)
        cur.execute("SET @base = 0")
        for statement in ROWS:
            cur.execute(statement)
        for statement in CHANGES:
            cur.execute(statement)


def _shape(record: Any) -> tuple[Any, ...]:
    """A record without what must differ between databases (names, positions, times)."""
    value = record.value
    images = []
    if value is not None:
        for side in ("before", "after"):
            image = value.get(side)
            images.append(None if image is None else (image.schema.fields, list(image.values)))
        images.append(value.get("op"))
    key = None if record.key is None else (record.key.schema.fields, list(record.key.values))
    return key, tuple(images)


@pytest.mark.honours(
    "database.hostname",
    "database.port",
    "database.user",
    "database.password",
    "database.server.id",
    "database.include.list",
)
@pytest.mark.parametrize("at_stream", ["MINIMAL", "FULL"])
def test_minimal_and_no_log_metadata_stream_the_same_events_as_full(
    server: PrivateMariaDb, at_stream: str
) -> None:
    """``at_stream``: the server's setting when the connector connects (mysql-replication reads the
    optional metadata only when it is FULL then; the binlog holds events of all three either way)."""
    databases = {mode: f"meta_{at_stream.lower()}_{mode.lower()}" for mode in MODES}
    for mode, database in databases.items():
        _workload(server, database, mode)
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute(f"SET GLOBAL binlog_row_metadata = {at_stream}")

    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(
        {
            "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
            "database.hostname": server.host,
            "database.port": str(server.port),
            "database.user": server.user,
            "database.password": server.password,
            "database.server.id": "4242",
            "topic.prefix": f"meta{at_stream}",
            "database.include.list": ",".join(databases.values()),
            "snapshot.mode": "never",
            "include.schema.changes": "false",
            "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        }
    )
    per_db: dict[str, list[Any]] = {db: [] for db in databases.values()}
    expected = 4 + 1 + 2 + 1 + 1 + 1  # inserts, update, key change (delete + create), delete, insert, update
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and any(len(r) < expected for r in per_db.values()):
            for record in task.poll() or []:
                database = record.topic.split(".")[1]
                if database in per_db and record.value is not None:
                    per_db[database].append(record)
        assert task.streamer is not None
        completed = task.streamer.table_maps.completed
    finally:
        task.stop()

    shapes = {db: [_shape(r) for r in records] for db, records in per_db.items()}
    full = shapes[databases["FULL"]]
    assert len(full) >= expected, f"only {len(full)} events from the FULL database"
    ops = [s[1][-1] for s in full]
    assert ops.count("c") >= 6 and "u" in ops and "d" in ops, ops
    renamed = [s for s in full if s[1][1] is not None and "c_renamed" in [f.name for f in s[1][1][0]]]
    assert renamed, "no event after the RENAME COLUMN names the new column"
    for mode in ("MINIMAL", "NO_LOG"):
        assert shapes[databases[mode]] == full, f"{mode} differs from FULL"
    # MINIMAL and NO_LOG table maps (one per table version and mode at least) were filled from the model.
    assert completed >= 4, completed
