"""Writes a batch: tables created and evolved first, then every statement in one database transaction.

* **Tables.** The first time a layout is written, the table is looked up (``describe``); a missing one
  is created when ``auto.create``/``schema.evolution=basic`` allow it, a missing column added (always
  nullable, with the field's default) when ``auto.evolve`` does. A field whose type the existing column
  cannot take (a string into an INT column) is not altered: the records are refused naming the table,
  the column and the DDL that would be needed. DDL is committed on its own (MySQL commits DDL anyway).
* **Data.** One transaction per batch; commit, then the offsets may be committed. A connection or
  transient error (lost connection, deadlock, lock timeout) rolls back and retries the whole batch on a
  new connection, ``max.retries`` times ``retry.backoff.ms`` apart, then fails the task. Any other error
  rolls back too, and the batch is written again one change at a time inside savepoints to find the
  records at fault; those go to the errant record reporter (the dead letter queue with
  ``errors.tolerance=all``, else the task fails naming them) and the rest is committed. So a batch is
  never half-written and no offset is committed for a row not in the database.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from cdc.api.errors import ConnectError, DataError
from cdc.jdbc.tables import TableId
from cdc.jdbcsink.buffer import ChangeBuffer, Group
from cdc.jdbcsink.changes import Change, Layout, Op, where
from cdc.jdbcsink.plan import InsertMode, SinkPlan
from cdc.jdbcsink.sql import ExistingColumn, SinkSql
from cdc.jdbcsink.types import compatible

__all__ = ["BatchWriter", "RecordRefused"]

log = logging.getLogger(__name__)

Report = Callable[[Change, BaseException], None]


class RecordRefused(ConnectError):
    """The database (or the table's shape) refused one record."""


class _TableState:
    def __init__(self, columns: list[ExistingColumn]) -> None:
        self.columns = {c[0]: c for c in columns}
        self.lower = {c[0].lower(): c for c in columns}
        self.checked: set[int] = set()

    def find(self, name: str) -> ExistingColumn | None:
        return self.columns.get(name) or self.lower.get(name.lower())


class BatchWriter:
    def __init__(self, plan: SinkPlan, sql: SinkSql, stopping: threading.Event | None = None) -> None:
        self.plan = plan
        self.sql = sql
        self.stopping = stopping or threading.Event()
        self._conn: Any = None
        self._tables: dict[TableId, _TableState | None] = {}
        self._unique: dict[TableId, list[tuple[str, ...]]] = {}

    # -- connection ----------------------------------------------------------------------------------
    def connection(self) -> Any:
        if self._conn is None:
            self._conn = self.sql.dialect.connect_with_retries(
                self.plan.connection_attempts, self.plan.connection_backoff_ms, self.stopping.is_set
            )
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                log.debug("Closing the sink's connection failed", exc_info=True)
            self._conn = None

    def _drop_connection(self) -> None:
        try:
            if self._conn is not None:
                self._conn.rollback()
        except Exception:
            log.debug("Rollback on a broken connection failed", exc_info=True)
        self.close()
        self._tables.clear()  # the DDL may or may not have happened: look again
        self._unique.clear()

    def known_unique_keys(self, table: TableId) -> list[tuple[str, ...]] | None:
        """The table's secondary unique keys when already looked up (no database access), else None."""
        return self._unique.get(table)

    def unique_keys(self, table: TableId) -> list[tuple[str, ...]]:
        """The table's secondary unique keys (looked up once; none when the table does not exist yet: the
        sink creates tables with a primary key only)."""
        found = self._unique.get(table)
        if found is None:
            conn = self.connection()
            try:
                found = self.sql.unique_keys(conn, table)
                conn.commit()
            except Exception as exc:
                self._rollback(conn)
                if self._transient(exc):
                    raise
                found = []  # no such table
            self._unique[table] = found
        return found

    # -- the batch -----------------------------------------------------------------------------------
    def write(self, buffer: ChangeBuffer, report: Report) -> None:
        """Write ``buffer`` (then cleared); ``report`` gets each refused change (it raises to fail)."""
        if not len(buffer):
            return
        attempt = 0
        while True:
            try:
                self._write_once(buffer, report)
                buffer.clear()
                return
            except RecordRefused:
                raise
            except Exception as exc:
                if not self._transient(exc):
                    raise
                attempt += 1
                self._drop_connection()
                if attempt > self.plan.max_retries or self.stopping.is_set():
                    raise ConnectError(
                        f"Writing {len(buffer)} record(s) to {self.sql.dialect.describe_url()} failed "
                        f"after {attempt} attempt(s): {exc}"
                    ) from exc
                log.warning(
                    "Writing a batch failed (%s); retrying in %d ms (%d/%d)",
                    exc,
                    self.plan.retry_backoff_ms,
                    attempt,
                    self.plan.max_retries,
                )
                self.stopping.wait(self.plan.retry_backoff_ms / 1000)

    def _transient(self, exc: BaseException) -> bool:
        if isinstance(exc, ConnectError) and not isinstance(exc, DataError):
            return "Could not connect" in str(exc)
        return self.sql.transient(exc)

    def _write_once(self, buffer: ChangeBuffer, report: Report) -> None:
        conn = self.connection()
        groups = list(buffer.groups())
        groups = self._ensure_tables(conn, groups, report)
        try:
            for group in groups:
                self._run_group(conn, group)
            conn.commit()
            return
        except Exception as exc:
            self._rollback(conn)
            if self._transient(exc):
                raise
            first = exc
        log.info("A batch of %d record(s) was refused (%s); finding the records at fault", len(buffer), first)
        self._write_one_by_one(conn, groups, report)

    def _rollback(self, conn: Any) -> None:
        try:
            conn.rollback()
        except Exception:
            log.debug("Rollback failed", exc_info=True)

    def _write_one_by_one(self, conn: Any, groups: list[Group], report: Report) -> None:
        refused: list[tuple[Change, BaseException]] = []
        try:
            for group in groups:
                for change in group.changes:
                    self.sql.savepoint(conn, "cdc_row")
                    try:
                        self._run_group(conn, Group(group.op, group.layout, [change]))
                    except Exception as exc:
                        if self._transient(exc):
                            raise
                        self.sql.rollback_to(conn, "cdc_row")
                        refused.append((change, exc))
            for change, error in refused:
                report(change, self._refusal(change, error))
            conn.commit()
        except BaseException:
            self._rollback(conn)
            raise

    def _refusal(self, change: Change, exc: BaseException) -> RecordRefused:
        column = _column_named(exc) or _too_long(change, exc)
        detail = f" (column {column})" if column else ""
        error = RecordRefused(
            f"Table {change.layout.table.unquoted()} refused the record at {where(change.record)}{detail}: "
            f"{str(exc).strip()}"
        )
        error.__cause__ = exc
        return error

    # -- statements ----------------------------------------------------------------------------------
    def _run_group(self, conn: Any, group: Group) -> None:
        sql, layout = self.sql, group.layout
        table = layout.table
        state = self._tables.get(table)
        if group.op is Op.TRUNCATE:
            if state is not None:
                sql.run(conn, sql.truncate(table))
            return
        keys = [self._column_name(state, k.name) for k in layout.keys]
        if group.op is Op.DELETE:
            if state is None:
                return  # no table, nothing to delete
            per = sql.rows_per_statement(len(keys))
            for start in range(0, len(group.changes), per):
                chunk = group.changes[start : start + per]
                params = [v for c in chunk for v in c.key]
                sql.run(conn, sql.delete(table, keys, len(chunk)), params)
            return
        values = [self._column_name(state, v.name) for v in layout.values]
        if self.plan.insert_mode is InsertMode.UPDATE:
            if not values:
                return
            if not sql.multi_row_update:
                rows = [(*c.row, *c.key) for c in group.changes]
                sql.run_many(conn, sql.update(table, keys, values), rows)
                return
            per = sql.rows_per_statement(len(keys) + len(values))
            for start in range(0, len(group.changes), per):
                chunk = group.changes[start : start + per]
                params = [v for c in chunk for v in (*c.key, *c.row)]
                sql.run(conn, sql.update_rows(table, keys, values, len(chunk)), params)
            return
        width = len(keys) + len(values)
        per = sql.rows_per_statement(width)
        upsert = self.plan.insert_mode is InsertMode.UPSERT and bool(keys)
        for start in range(0, len(group.changes), per):
            chunk = group.changes[start : start + per]
            params = [v for c in chunk for v in (*c.key, *c.row)]
            statement = (
                sql.upsert(table, keys, values, len(chunk))
                if upsert
                else sql.insert(table, [*keys, *values], len(chunk))
            )
            sql.run(conn, statement, params)

    def _column_name(self, state: _TableState | None, name: str) -> str:
        if state is None:
            return name
        found = state.find(name)
        return found[0] if found is not None else name

    # -- tables --------------------------------------------------------------------------------------
    def _ensure_tables(self, conn: Any, groups: list[Group], report: Report) -> list[Group]:
        """Create and evolve the tables the upserts need; groups whose records cannot be written are
        reported and left out."""
        kept = []
        for group in groups:
            table = group.layout.table
            if table not in self._tables:
                self._tables[table] = self._describe(conn, table)
            if group.op is not Op.UPSERT:
                kept.append(group)
                continue
            try:
                self._ensure(conn, group.layout)
                kept.append(group)
            except RecordRefused as exc:
                for change in group.changes:
                    report(change, RecordRefused(f"{exc} (record at {where(change.record)})"))
        return kept

    def _describe(self, conn: Any, table: TableId) -> _TableState | None:
        columns = self.sql.describe(conn, table)
        self._commit_quietly(conn)
        return None if columns is None else _TableState(columns)

    def _commit_quietly(self, conn: Any) -> None:
        conn.commit()

    def _ensure(self, conn: Any, layout: Layout) -> None:
        table = layout.table
        state = self._tables.get(table)
        if state is not None and id(layout) in state.checked:
            return
        if state is None:
            if not self.plan.auto_create:
                raise RecordRefused(
                    f"Table {table.unquoted()} is missing and auto-creation is disabled"
                    + (" (schema.evolution=none)" if self.plan.flavour == "debezium" else "")
                )
            ddl = self.sql.create_table(table, layout.keys, layout.values)
            self._ddl(conn, table, ddl, None)
            state = self._describe(conn, table)
            if state is None:
                raise RecordRefused(f"Table {table.unquoted()} was created but cannot be found: {ddl}")
            self._tables[table] = state
        missing = [c for c in layout.columns if state.find(c.name) is None]
        if missing:
            if not self.plan.auto_evolve:
                raise RecordRefused(
                    f"Table {table.unquoted()} is missing fields ({', '.join(c.name for c in missing)}) and "
                    "auto-evolution is disabled"
                )
            for column in missing:
                if column in layout.keys:
                    raise RecordRefused(
                        f"Cannot evolve table {table.unquoted()}: the key column {column.name} is new; a "
                        "key change needs the primary key altered by hand (ALTER TABLE "
                        f"{self.sql.table_sql(table)} ADD {column.name} … and a new PRIMARY KEY)"
                    )
                self._ddl(conn, table, self.sql.add_column(table, column), column.name)
            state = self._describe(conn, table)
            assert state is not None
            self._tables[table] = state
        for column in layout.columns:
            existing = state.find(column.name)
            if existing is not None and not compatible(column.family, existing[1]):
                raise RecordRefused(
                    f"Cannot evolve table {table.unquoted()}: column {existing[0]} is {existing[1]} and the "
                    f"field is now {column.family}; it would need "
                    f"ALTER TABLE {self.sql.table_sql(table)} ALTER COLUMN {self.sql.ident(existing[0])} "
                    f"TYPE {column.sql_type}, a change cdc does not apply"
                )
        state.checked.add(id(layout))

    def _ddl(self, conn: Any, table: TableId, ddl: str, column: str | None) -> None:
        log.info("Applying DDL to %s: %s", table.unquoted(), ddl)
        try:
            self.sql.run(conn, ddl)
            conn.commit()
        except Exception as exc:
            self._rollback(conn)
            if self._transient(exc):
                raise
            what = f"column {column}" if column else "the table"
            raise RecordRefused(f"Table {table.unquoted()}, {what}: {ddl} failed: {exc}") from exc


_LENGTH = re.compile(r"character(?: varying)?\((\d+)\)")


def _too_long(change: Change, exc: BaseException) -> str | None:
    """The column whose value is longer than the length PostgreSQL's "value too long for type character
    varying(n)" names (the only refusal it does not name a column for)."""
    found = _LENGTH.search(str(exc))
    if found is None:
        return None
    limit = int(found.group(1))
    names = [c.name for c in change.layout.values]
    longer = [n for n, v in zip(names, change.row, strict=True) if isinstance(v, str) and len(v) > limit]
    return ", ".join(longer) or None


def _column_named(exc: BaseException) -> str | None:
    """The column a database error names, when the driver says (psycopg's diagnostics)."""
    diag = getattr(exc, "diag", None)
    name = getattr(diag, "column_name", None) if diag is not None else None
    return str(name) if name else None
