"""The initial snapshot, Debezium's procedure (global read lock path, ``minimal`` locking by default).

1. REPEATABLE READ and lock timeouts; 2. find the captured tables; 3. ``FLUSH TABLES WITH READ LOCK``
(``LOCK TABLES FOR BACKUP`` under ``minimal_percona``; table locks where neither is allowed); 4. ``START
TRANSACTION WITH CONSISTENT SNAPSHOT``; 5. the binlog position (and GTID set) under the lock; 6. every
table's ``SHOW CREATE TABLE`` into the model and the history; 7. unlock (``minimal``, ``minimal_percona``);
8. stream each table's rows as ``op=r`` events through an unbuffered cursor, so memory stays bounded;
9. commit. Every record carries the position of step 5 with ``"snapshot": "INITIAL"`` in its offset; the
position without the flag is committed by the snapshot's last record (or a final heartbeat record when
there is none), so an interrupted snapshot is redone.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from cdc.api.records import SourceRecord
from cdc.history.model import TableId
from cdc.mysql.capture import CaptureContext
from cdc.mysql.connection import buffered_cursor
from cdc.mysql.connection import connect as _connect
from cdc.mysql.events import SourcePosition
from cdc.mysql.filters import BUILTIN_DATABASES
from cdc.mysql.metrics import SnapshotMetrics
from cdc.mysql.notifications import hash_set_order
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.parallel_snapshot import ChunkReaders
from cdc.mysql.snapshot_order import order_by_row_count
from cdc.mysql.table_list import list_databases, tables_in
from cdc.snapshot.chunks import TablePlan

__all__ = ["ConnectionFactory", "SnapshotResult", "Snapshotter"]

log = logging.getLogger(__name__)

FETCH_ROWS = 2000
# Debezium's SnapshotLock statements: minimal_percona takes Percona Server's (and MySQL 8's) backup lock,
# which blocks DDL but not writes to InnoDB tables; where the server does not know it (MariaDB: a syntax
# error) the snapshot falls back to table locks, as Debezium's does.
_GLOBAL_LOCK = {"minimal_percona": "LOCK TABLES FOR BACKUP"}
_MINIMAL = ("minimal", "minimal_percona")  # released once the schema is read


class ConnectionFactory(Protocol):
    """Opens a connection to the captured server (DB-API); ``streaming``: one that reads rows with
    unbuffered cursors (:func:`cdc.mysql.connection.connect`)."""

    def __call__(self, *, streaming: bool = False) -> Any: ...


@dataclass
class SnapshotResult:
    offset: BinlogOffset
    tables: list[TableId]
    rows: int


class Snapshotter:
    """Takes the initial snapshot through the shared :class:`CaptureContext`.

    ``connect`` opens its connections (default: :func:`cdc.mysql.connection.connect` on the connector's
    server): the one that reads, and the one :meth:`interrupt` kills its query from; a unit test gives one
    that answers from a script. ``emit_schema_changes``: False for a run that only takes the position and
    the schema (the Spark engine's start, whose records go nowhere).
    """

    def __init__(
        self,
        ctx: CaptureContext,
        metrics: SnapshotMetrics,
        emit_schema_changes: bool = True,
        connect: ConnectionFactory | None = None,
    ) -> None:
        self.settings = ctx.settings
        self.connect: ConnectionFactory = connect or partial(_connect, ctx.settings)
        self.schema = ctx.schema
        self.events = ctx.events
        self.filters = ctx.filters
        self.emit = ctx.emit
        self.notifier = ctx.notifier
        self._captured: list[TableId] = []  # the run's captured tables (its notifications name them)
        self.stopping = ctx.stopping
        self.mariadb = ctx.mariadb
        self.metrics = metrics
        self.schema_events = ctx.schema_events if emit_schema_changes else None
        self.locking = self.settings.snapshot_locking_mode.lower()

    # -- the procedure -------------------------------------------------------------------------------
    def run(self, data: bool = True) -> SnapshotResult:
        delay = self.settings.snapshot_delay_ms
        if delay and self.stopping.wait(delay / 1000):
            raise InterruptedError("stopped before the snapshot began")
        conn = self.connect(streaming=True)
        self._connection_id = int(conn.thread_id())
        self.notify("STARTED")
        try:
            result = self._run(conn, data)
            self.notify("COMPLETED", offset=result.offset.to_dict())
            return result
        except BaseException:
            self.notify("ABORTED")
            raise
        finally:
            with contextlib.suppress(Exception):  # best effort
                conn.close()

    def _run(self, conn: Any, data: bool) -> SnapshotResult:
        cur = conn.cursor()
        timeout_s = max(1, self.settings.snapshot_lock_timeout_ms // 1000)
        cur.execute(f"SET SESSION lock_wait_timeout = {timeout_s}")
        cur.execute(f"SET SESSION innodb_lock_wait_timeout = {timeout_s}")
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        table_locks = False
        locking = self.locking
        if locking != "none" and not self._anything_to_lock(cur):
            # The include lists match nothing (the task's start said so): locking every schema would
            # stall the server's writers for no table at all.
            log.warning("No table is captured: the snapshot takes no lock")
            locking = "none"
        if locking != "none":
            try:
                self.metrics.holding_global_lock = True
                cur.execute(_GLOBAL_LOCK.get(locking, "FLUSH TABLES WITH READ LOCK"))
            except Exception as exc:
                self.metrics.holding_global_lock = False
                log.warning("Global read lock not allowed (%s); using table locks instead", exc)
                table_locks = True
        # Under the global lock the table list cannot change; with table locks it is read first.
        databases, all_tables = self._discover(cur)
        captured = [t for t in all_tables if self.filters.table(t)]
        # The signal table's schema is captured, its rows are not snapshotted (Debezium's prepareTables).
        signals = self.filters.signal_table
        to_read = [t for t in captured if self.filters.snapshot_table(t) and t != signals]
        self._captured = captured
        self.metrics.start(captured)
        log.info(
            "Snapshot of %d tables in %d databases (locking mode %s%s)",
            len(captured),
            len(databases),
            locking,
            ", table locks" if table_locks else "",
        )
        delayed: list[TableId] = []
        if table_locks:
            # The data is read under these locks: a transaction would release them (and UNLOCK TABLES
            # would commit it), so no consistent-snapshot transaction on this path, as in Debezium.
            # Only the captured tables are locked; under table locks MySQL refuses statements on other
            # tables (error 1100), so the others' CREATE TABLE is read once the locks are released
            # (Debezium's two-phase schema snapshot).
            delayed = [t for t in all_tables if not self.filters.table(t)]
            if captured:
                cur.execute("FLUSH TABLES " + ", ".join(t.sql() for t in captured) + " WITH READ LOCK")
        else:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        offset = self._position(cur)
        position = offset.with_(snapshot=True).position()
        self._record_schema(cur, databases, all_tables, position, set(delayed))
        readers = self._open_readers() if data else None  # while the lock holds (parallel_snapshot.py)
        if locking in _MINIMAL and not table_locks and self.metrics.holding_global_lock:
            cur.execute("UNLOCK TABLES")
            self.metrics.holding_global_lock = False
            log.info("Released the global read lock after %d tables' schemas", len(all_tables))
        rows = 0
        last: SourceRecord | None = None
        try:
            if data:
                rows, last = self._read_tables(conn, to_read, offset, readers)
        finally:
            if readers is not None:
                readers.close()
        if not table_locks:
            cur.execute("COMMIT")
        if self.metrics.holding_global_lock or table_locks:
            cur.execute("UNLOCK TABLES")
            self.metrics.holding_global_lock = False
        for table in delayed:  # their schema after the data, as Debezium's second phase writes it
            cur.execute(f"SHOW CREATE TABLE {table.sql()}")
            held = self._snapshot_ddl(str(_one(cur)[1]), table.database, position, hold=True)
            if held is not None:
                if last is not None and not self.emit([last]):
                    raise InterruptedError("snapshot interrupted")
                last = held
        # The snapshot's last record carries the completed offset (no snapshot flag): once it is
        # committed, a restart streams instead of snapshotting again.
        if last is not None and not self.emit(
            [_remark(last, "last").new_record(source_offset=offset.to_dict())]
        ):
            raise InterruptedError("snapshot interrupted")
        self.metrics.complete()
        return SnapshotResult(offset, to_read, rows)

    def notify(
        self, kind: str, data: dict[str, str] | None = None, offset: dict[str, Any] | None = None
    ) -> None:
        """An initial-snapshot notification (notification.enabled.channels, cdc.mysql.notifications)."""
        if self.notifier is not None:
            self.notifier.initial(kind, data, offset)

    def interrupt(self) -> None:
        """Abort a statement the snapshot is blocked in (a lock wait, a long SELECT) so stop is prompt."""
        connection_id = getattr(self, "_connection_id", None)
        if connection_id is None:
            return
        try:
            conn = self.connect()
            try:
                with conn.cursor() as cur:
                    cur.execute(f"KILL QUERY {int(connection_id)}")
            finally:
                conn.close()
        except Exception as exc:
            log.debug("Could not interrupt the snapshot's query: %s", exc)

    def _anything_to_lock(self, cur: Any) -> bool:
        """Whether any captured table exists now (read before the lock, so it may change by the time
        the lock is taken: only the case of nothing at all skips the lock)."""
        _databases, tables = self._discover(cur)
        return any(self.filters.table(t) for t in tables)

    def _discover(self, cur: Any) -> tuple[list[str], list[TableId]]:
        """The databases whose schema the snapshot records and their tables: the captured databases', or,
        under Debezium's default (neither ``store.only.captured.databases.ddl`` nor ``…tables.ddl``), every
        database's but the built-in ones (Debezium's ``eligibleForSchemaDataCollectionFilter``). A database
        dropped by another client after the listing is skipped with a warning, as Debezium skips it
        (:mod:`cdc.mysql.table_list`)."""
        every = not (self.schema.only_captured_dbs or self.schema.only_captured_tables)
        databases = [
            db
            for db in list_databases(cur)
            if self.filters.database(db)
            or (every and not (self.filters.ignore_builtin and db.lower() in BUILTIN_DATABASES))
        ]
        readable: list[str] = []
        tables: list[TableId] = []
        for db in databases:
            found = tables_in(cur, db)
            if found is not None:
                readable.append(db)
                tables.extend(found)
        return readable, tables

    def _position(self, cur: Any) -> BinlogOffset:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
        cur.fetchall()
        if row is None:
            raise RuntimeError("SHOW MASTER STATUS returned nothing: is the binary log enabled?")
        file, pos = str(row[0]), int(row[1])
        gtids: str | None = None
        if self.mariadb:
            cur.execute("SELECT @@GLOBAL.gtid_binlog_pos")
            gtids = str(_one(cur)[0] or "") or None
        elif len(row) > 4 and row[4]:
            gtids = str(row[4]).replace("\n", "")
        return BinlogOffset(file=file, pos=pos, gtids=gtids, ts_sec=int(time.time()))

    def _record_schema(
        self,
        cur: Any,
        databases: list[str],
        tables: list[TableId],
        position: dict[str, Any],
        delayed: set[TableId],
    ) -> None:
        """The schema as Debezium's snapshot records it, in the history and the schema change topic: the
        server's character set, a DROP TABLE IF EXISTS per table, then per database DROP/CREATE DATABASE,
        USE and each table's SHOW CREATE TABLE."""
        cur.execute("SELECT @@character_set_server, @@collation_server")
        charset, collation = _one(cur)
        self._snapshot_ddl(f"SET character_set_server={charset}, collation_server={collation}", "", position)
        recorded = {
            db: [
                t
                for t in tables
                if t.database == db and (not self.schema.only_captured_tables or self.filters.table(t))
            ]
            for db in databases
        }
        # Debezium groups the tables whose schema it records by database: a database without a table has
        # no DROP/CREATE DATABASE in the snapshot
        recorded = {db: ts for db, ts in recorded.items() if ts}
        for db, db_tables in recorded.items():
            for table in db_tables:
                self._snapshot_ddl(f"DROP TABLE IF EXISTS {table.sql()}", db, position)
        for db, db_tables in recorded.items():
            quoted = f"`{db.replace('`', '``')}`"
            self._snapshot_ddl(f"DROP DATABASE IF EXISTS {quoted}", db, position)
            cur.execute(
                "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA "
                "WHERE SCHEMA_NAME = %s",
                (db,),
            )
            db_charset, db_collation = _one(cur)
            self._snapshot_ddl(
                f"CREATE DATABASE {quoted} CHARSET {db_charset} COLLATE {db_collation}", db, position
            )
            self._snapshot_ddl(f"USE {quoted}", db, position)
            for table in db_tables:
                if table not in delayed:
                    cur.execute(f"SHOW CREATE TABLE {table.sql()}")
                    self._snapshot_ddl(str(_one(cur)[1]), db, position)

    def _snapshot_ddl(
        self, ddl: str, database: str, position: dict[str, Any], hold: bool = False
    ) -> SourceRecord | None:
        """Apply and record one snapshot statement; write it to the schema change topic too (``hold``: all
        but its last record, which is returned)."""
        changes = self.schema.apply_ddl(ddl, database, position)
        if self.schema_events is None:
            return None
        pos = SourcePosition(file=position["file"], pos=position["pos"])
        records = self.schema_events.records(ddl, database, changes, pos, position, snapshot="true")
        held = records.pop() if hold and records else None
        if records and not self.emit(records):
            raise InterruptedError("snapshot interrupted")
        return held

    def _open_readers(self) -> ChunkReaders | None:
        """``snapshot.max.threads`` > 1: the reader connections, opened in the snapshot's consistent view."""
        threads = self.settings.snapshot_max_threads
        if threads <= 1:
            return None
        multiplier = self.settings.snapshot_max_threads_multiplier
        legacy = self.settings.legacy_snapshot_max_threads
        return ChunkReaders.open(
            lambda: self.connect(streaming=True), threads, self.stopping, multiplier, legacy
        )

    def _batches(
        self,
        conn: Any,
        table: Any,
        select: str,
        plan: TablePlan | None,
        readers: ChunkReaders | None,
        estimate: int | None = None,
    ) -> Iterator[list[Any]]:
        """The table's rows, ``snapshot.fetch.size`` (else ``FETCH_ROWS``) at a time, each batch emitted as
        it comes: from the parallel readers when there are, else from one SELECT on the snapshot's
        connection: unbuffered, or buffered (read whole, the statement done at once) for a table InnoDB
        estimates at most ``min.row.count.to.stream.results`` rows (not 0), as Debezium streams only the
        larger tables."""
        fetch = self.settings.snapshot_fetch_size or FETCH_ROWS
        if readers is not None and plan is not None:
            yield from readers.batches(table, plan, select, fetch)
            return
        small = self.settings.min_row_count_to_stream_results
        buffered = small > 0 and estimate is not None and estimate <= small
        cur = buffered_cursor(conn) if buffered else conn.cursor()
        try:
            cur.execute(select)
            while rows := cur.fetchmany(fetch):
                yield rows
        finally:
            cur.close()

    def _select(self, table_id: TableId) -> str:
        """The table's snapshot SELECT: its ``snapshot.select.statement.overrides`` one, else all rows."""
        return self.settings.select_override(str(table_id)) or f"SELECT * FROM {table_id.sql()}"

    def _read_tables(
        self, conn: Any, tables: list[TableId], offset: BinlogOffset, readers: ChunkReaders | None = None
    ) -> tuple[int, SourceRecord | None]:
        """Every row as a read event; the last one is returned, not emitted (the caller marks it)."""
        total = 0
        snapshot_offset = offset.with_(snapshot=True).to_dict()
        pos = SourcePosition(file=offset.file, pos=offset.pos, server_id=0)
        pending: SourceRecord | None = None
        first_overall = True
        self.metrics.estimated_rows = estimated_rows(conn, tables)
        tables = order_by_row_count(
            tables,
            self.metrics.estimated_rows,
            self.settings.snapshot_tables_order_by_row_count,
            self.settings.override_tables,
        )
        plans: dict[str, TablePlan] = {}
        if readers is not None:
            known = [t for t in (self.schema.table(i) for i in tables) if t is not None]
            selects = {str(t): self._select(t) for t in tables}
            plans = readers.plan(conn, known, self.settings.override_tables, selects)
        for t_index, table_id in enumerate(tables):
            table = self.schema.table(table_id)
            if table is None:
                log.warning("No schema for %s; skipping it in the snapshot", table_id)
                continue
            ts = self.events.schema_for(table)
            select = self._select(table_id)
            log.info("Exporting data from table '%s' (%d of %d tables)", table_id, t_index + 1, len(tables))
            # Debezium names the tables read in a HashSet's order here, and the captured ones, sorted, below.
            reading = ",".join(hash_set_order([str(t) for t in tables]))
            progress = {"current_collection_in_progress": str(table_id), "data_collections": reading}
            self.notify("IN_PROGRESS", progress, snapshot_offset)
            first_in_table = True
            count = 0
            source = self.events.snapshot_sources(pos, table_id)
            started = time.monotonic()
            estimate = self.metrics.estimated_rows.get(str(table_id))
            for rows in self._batches(conn, table, select, plans.get(str(table_id)), readers, estimate):
                if self.stopping.is_set():
                    raise InterruptedError("snapshot interrupted")
                now_ms = int(time.time() * 1000)
                batch: list[SourceRecord] = []
                for row in rows:
                    marker = "true"
                    if first_overall:
                        marker, first_overall = "first", False
                    elif first_in_table:
                        marker = "first_in_data_collection"
                    first_in_table = False
                    record = self.events.read(ts, row, source(now_ms, marker), snapshot_offset)
                    if pending is not None:
                        batch.append(pending)
                    pending = record
                count += len(rows)
                self.metrics.rows_scanned(table_id, count)
                if batch and not self.emit(batch):
                    raise InterruptedError("snapshot interrupted")
            if pending is not None and count:
                # The table's last row is marked once we know it is the last one.
                pending = _remark(pending, "last_in_data_collection")
            total += count
            self.metrics.table_done(table_id)
            captured = ",".join(sorted(str(t) for t in self._captured or tables))
            done = {"scanned_collection": str(table_id), "data_collections": captured}
            self.notify(
                "TABLE_SCAN_COMPLETED",
                {**done, "total_rows_scanned": str(count), "status": "SUCCEEDED"},
                snapshot_offset,
            )
            elapsed = max(time.monotonic() - started, 1e-6)
            log.info(
                "Finished exporting %d records for table '%s' (%.0f rows/s)", count, table_id, count / elapsed
            )
        return total, pending


def _one(cur: Any) -> Any:
    """The first row, with the rest of an unbuffered result read so the connection stays usable."""
    row = cur.fetchone()
    cur.fetchall()
    return row


def _remark(record: SourceRecord, marker: str) -> SourceRecord:
    """The same record with ``source.snapshot`` set to ``marker``, by Debezium's precedence: the last of a
    table is ``last`` (of the snapshot) or ``last_in_data_collection`` even when it is also the first
    (a one-row table, as Debezium 3.5 marks it), else ``first``/``first_in_data_collection``, else true."""
    value = record.value
    source = value.get("source")
    if marker not in ("last", "last_in_data_collection") and source.get("snapshot") != "true":
        return record
    new_source = type(source)(source.schema, list(source.values))
    new_source.values[source.schema.field("snapshot").index] = marker
    new_value = type(value)(value.schema, list(value.values))
    new_value.values[value.schema.field("source").index] = new_source
    return record.new_record(value=new_value)


def estimated_rows(conn: Any, tables: list[TableId]) -> dict[str, int]:
    """InnoDB's row estimates of the tables (``information_schema.tables.table_rows``, as Debezium logs
    them before it reads a table): the total the snapshot's progress and ETA are measured against."""
    if not tables:
        return {}
    wanted = {(t.database, t.table): str(t) for t in tables}
    databases = sorted({t.database for t in tables})
    cur = conn.cursor()
    try:
        cur.execute(
            "SELECT table_schema, table_name, table_rows FROM information_schema.tables "
            f"WHERE table_schema IN ({', '.join(['%s'] * len(databases))})",
            databases,
        )
        rows = cur.fetchall()
    finally:
        cur.close()
    return {wanted[(db, name)]: int(n or 0) for db, name, n in rows if (db, name) in wanted}
