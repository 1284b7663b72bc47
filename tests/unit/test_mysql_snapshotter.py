"""``Snapshotter`` on a scripted server: Debezium's procedure, statement by statement, and its records.

The connection factory hands the snapshotter a fake DB-API connection that answers each statement from
a script (two databases, one of them captured, a table of three rows and an empty one) and logs what was
asked. The snapshot must lock, open the consistent snapshot, read the position under the lock, record
the schema, unlock (``minimal``), then read the captured tables' rows as ``op=r`` records marked
first/true/last as Debezium marks them, every offset at the locked position with the snapshot flag, but
the last record's, which carries the completed position.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from test_mysql_streamer import CONFIG

from cdc.api.records import SourceRecord
from cdc.history.model import TableId
from cdc.history.store import MemorySchemaHistory
from cdc.mysql.capture import CaptureContext
from cdc.mysql.config import MySqlSettings
from cdc.mysql.metrics import REGISTRY, SnapshotMetrics
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.snapshot import Snapshotter

CREATE_T = "CREATE TABLE `t` (`id` int(11) NOT NULL, `name` varchar(20) DEFAULT NULL, PRIMARY KEY (`id`))"
CREATE_E = "CREATE TABLE `e` (`id` int(11) NOT NULL, PRIMARY KEY (`id`))"
CREATE_X = "CREATE TABLE `x` (`id` int(11) NOT NULL, PRIMARY KEY (`id`))"
ROWS = [(1, "a"), (2, "b"), (3, "c")]


class FakeServer:
    """Opens scripted connections; ``log`` holds (connection number, statement) in order."""

    def __init__(self) -> None:
        self.log: list[tuple[int, str]] = []
        self.opened: list[bool] = []  # each connection's ``streaming``

    def __call__(self, *, streaming: bool = False) -> FakeServer.Connection:
        self.opened.append(streaming)
        return FakeServer.Connection(self, len(self.opened))

    def answer(self, sql: str) -> list[tuple[Any, ...]]:
        if sql == "SHOW DATABASES":
            return [("db",), ("other",), ("mysql",)]
        if sql.startswith("SHOW FULL TABLES IN `db`"):
            return [("t",), ("e",)]
        if sql.startswith("SHOW FULL TABLES IN"):
            return [("x",)]
        if sql == "SHOW MASTER STATUS":
            return [("bin.000003", 1234, "", "")]
        if sql == "SELECT @@GLOBAL.gtid_binlog_pos":
            return [("0-1-42",)]
        if sql.startswith("SELECT @@character_set_server"):
            return [("utf8mb4", "utf8mb4_general_ci")]
        if "information_schema.SCHEMATA" in sql:
            return [("utf8mb4", "utf8mb4_general_ci")]
        if sql == "SHOW CREATE TABLE `db`.`t`":
            return [("t", CREATE_T)]
        if sql == "SHOW CREATE TABLE `db`.`e`":
            return [("e", CREATE_E)]
        if sql == "SHOW CREATE TABLE `other`.`x`":
            return [("x", CREATE_X)]
        if "information_schema.tables" in sql:
            return [("db", "t", 3), ("db", "e", 0)]
        if sql == "SELECT * FROM `db`.`t`":
            return list(ROWS)
        return []

    class Connection:
        def __init__(self, server: FakeServer, number: int) -> None:
            self.server = server
            self.number = number
            self.closed = False

        def thread_id(self) -> int:
            return 70 + self.number

        def cursor(self) -> FakeServer.Cursor:
            return FakeServer.Cursor(self)

        def close(self) -> None:
            self.closed = True

    class Cursor:
        def __init__(self, conn: FakeServer.Connection) -> None:
            self.conn = conn
            self.rows: list[tuple[Any, ...]] = []

        def __enter__(self) -> FakeServer.Cursor:
            return self

        def __exit__(self, *_: object) -> None:
            self.close()

        def execute(self, sql: str, args: Any = None) -> None:
            self.conn.server.log.append((self.conn.number, sql))
            self.rows = self.conn.server.answer(sql)

        def fetchone(self) -> tuple[Any, ...] | None:
            return self.rows.pop(0) if self.rows else None

        def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
            out, self.rows = self.rows[:size], self.rows[size:]
            return out

        def fetchall(self) -> list[tuple[Any, ...]]:
            out, self.rows = self.rows, []
            return out

        def close(self) -> None:
            pass


@pytest.fixture
def snapshot() -> Iterator[tuple[list[SourceRecord], FakeServer, Snapshotter, Any]]:
    settings = MySqlSettings.parse(CONFIG)
    out: list[SourceRecord] = []

    def emit(records: list[SourceRecord]) -> bool:
        out.extend(records)
        return True

    ctx = CaptureContext.build(settings, MemorySchemaHistory(), emit, threading.Event(), mariadb=True)
    server = FakeServer()
    snapshotter = Snapshotter(ctx, SnapshotMetrics(settings.prefix), connect=server)
    try:
        result = snapshotter.run(data=True)
        yield out, server, snapshotter, result
    finally:
        REGISTRY.unregister("snapshot", settings.prefix)


def test_the_procedure_locks_reads_the_position_under_the_lock_and_unlocks_after_the_schema(
    snapshot: tuple[list[SourceRecord], FakeServer, Snapshotter, Any],
) -> None:
    _out, server, _snapshotter, result = snapshot
    assert server.opened == [True]  # one connection, reading rows unbuffered
    statements = [sql for _, sql in server.log]
    at = {sql: i for i, sql in reversed(list(enumerate(statements)))}  # first occurrence
    assert statements[:3] == [
        "SET SESSION lock_wait_timeout = 10",
        "SET SESSION innodb_lock_wait_timeout = 10",
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    ]
    assert (
        at["FLUSH TABLES WITH READ LOCK"]
        < at["START TRANSACTION WITH CONSISTENT SNAPSHOT"]
        < at["SHOW MASTER STATUS"]
        < at["SHOW CREATE TABLE `db`.`e`"]
        < at["UNLOCK TABLES"]
        < at["SELECT * FROM `db`.`t`"]
        < at["COMMIT"]
    )
    # Debezium's default (store.only.captured.databases.ddl=false): the other database's schema is recorded
    # too, the built-in one's is not, and only the captured tables' rows are read
    assert "SHOW CREATE TABLE `other`.`x`" in statements
    assert not any("`mysql`" in sql for sql in statements if sql.startswith("SHOW CREATE"))
    assert not any("`other`" in sql for sql in statements if sql.startswith("SELECT * FROM"))
    assert result.offset == BinlogOffset("bin.000003", 1234, "0-1-42", ts_sec=result.offset.ts_sec)
    assert result.tables == [TableId("db", "t"), TableId("db", "e")] and result.rows == 3


def test_rows_are_read_events_marked_and_offset_as_debezium_writes_them(
    snapshot: tuple[list[SourceRecord], FakeServer, Snapshotter, Any],
) -> None:
    out, _server, _snapshotter, result = snapshot
    changes = [r for r in out if r.topic == "fake"]
    ddls = [r.value.get("ddl") for r in changes]
    assert ddls.index(CREATE_T) < ddls.index(CREATE_E) and CREATE_X in ddls
    rows = [r for r in out if r.topic == "fake.db.t"]
    assert [(r.value.get("op"), r.key.get("id")) for r in rows] == [("r", 1), ("r", 2), ("r", 3)]
    assert [r.value.get("source").get("snapshot") for r in rows] == ["first", "true", "last"]
    flagged = {"ts_sec": result.offset.ts_sec, "file": "bin.000003", "pos": 1234, "gtids": "0-1-42"}
    assert [dict(r.source_offset) for r in rows[:2]] == [{**flagged, "snapshot": "INITIAL"}] * 2
    assert dict(rows[2].source_offset) == flagged  # the completed snapshot: a restart streams from here
    assert [list(r.source_offset) for r in rows[:2]] == [["ts_sec", "file", "pos", "gtids", "snapshot"]] * 2


def test_interrupt_kills_the_reading_query_from_a_connection_of_its_own(
    snapshot: tuple[list[SourceRecord], FakeServer, Snapshotter, Any],
) -> None:
    _out, server, snapshotter, _result = snapshot
    snapshotter.interrupt()
    assert server.opened == [True, False]
    assert server.log[-1] == (2, "KILL QUERY 71")
