"""The statements of the sink, per database family, and how each family's errors are classified.

A batch's rows go out as multi-row statements: ``INSERT … VALUES (…), (…) …`` with the family's upsert
clause (PostgreSQL and SQLite ``ON CONFLICT (key) DO UPDATE SET c = excluded.c``, MariaDB/MySQL ``ON
DUPLICATE KEY UPDATE c = VALUES(c)``), deletes as ``DELETE … WHERE key IN (…)`` (row values for
composite keys), sized under each driver's bind-parameter limit. UPDATE mode is a multi-row ``UPDATE …
JOIN`` on MySQL, and ``executemany`` of a one-row UPDATE elsewhere (pipelined by psycopg, in process for
SQLite).

Connections come from :mod:`cdc.jdbc.dialects` (the JDBC source's), so the URL, credentials, session time
zone and driver choice are the same for both directions.
"""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
from collections.abc import Sequence
from typing import Any

from cdc.jdbc.dialects import Dialect
from cdc.jdbc.tables import TableId, quote_identifier
from cdc.jdbcsink.types import ColumnSpec

__all__ = ["ExistingColumn", "SinkSql", "sink_sql"]

ExistingColumn = tuple[str, str, bool]
"""(name as the database spells it, its type, nullable)."""

_MYSQL_TRANSIENT = {1040, 1205, 1213, 2002, 2003, 2006, 2013, 2055}


class SinkSql:
    """The SQL of one family; ``conn`` arguments are DB-API connections from :attr:`dialect`."""

    family = "generic"
    placeholder = "%s"
    max_params = 30000
    max_rows = 1000
    multi_row_update = False
    """Whether UPDATE mode has a multi-row statement (:meth:`update_rows`) rather than ``executemany``."""

    def __init__(self, dialect: Dialect, quote: bool) -> None:
        self.dialect = dialect
        self.quote = quote
        self.geometry_type: str | None = None
        """PostgreSQL with PostGIS: the ``geometry`` type's name as DDL writes it (found by
        :meth:`find_geometry_type` at the task's start); None where geometry lands as WKB bytes."""

    def find_geometry_type(self, conn: Any, schema: str | None) -> str | None:
        """The database's spatial type for Debezium's geometry values, if it has one beyond the family's
        own (MariaDB/MySQL's GEOMETRY is always there): PostgreSQL's PostGIS ``geometry``."""
        return None

    # -- names ---------------------------------------------------------------------------------------
    def fold(self, name: str) -> str:
        """How the database stores an unquoted name (PostgreSQL lowers it)."""
        return name

    def ident(self, name: str) -> str:
        # An unquoted name is written quoted in the case the database folds it to: the same object,
        # and a reserved word (``order``) still parses.
        return quote_identifier(name if self.quote else self.fold(name), self.dialect.quote_char)

    def table_id(self, text: str) -> TableId:
        parts = [p for p in text.split(".") if p]
        if not parts:
            raise ValueError(f"Empty table name {text!r}")
        if len(parts) == 1:
            return TableId(None, None, parts[0])
        return self._qualified(parts)

    def _qualified(self, parts: list[str]) -> TableId:
        return TableId(None, parts[-2], parts[-1])

    def table_sql(self, table: TableId) -> str:
        return ".".join(self.ident(p) for p in table.parts())

    def literal(self, value: Any) -> str:
        """A DEFAULT clause's literal."""
        if value is None:
            return "NULL"
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, int | float | decimal.Decimal):
            return str(value)
        if isinstance(value, bytes):
            return "X'" + value.hex() + "'"
        if isinstance(value, dt.date | dt.time | dt.timedelta):
            value = str(value)
        return "'" + str(value).replace("'", "''") + "'"

    # -- DML -----------------------------------------------------------------------------------------
    def marks(self, count: int) -> list[str]:
        """The parameter markers of a statement with ``count`` parameters, in order."""
        return [self.placeholder] * count

    def _values(self, width: int, rows: int) -> str:
        marks = self.marks(width * rows)
        return ",".join("(" + ",".join(marks[i : i + width]) + ")" for i in range(0, len(marks), width))

    def rows_per_statement(self, width: int) -> int:
        return max(1, min(self.max_rows, self.max_params // max(1, width)))

    def insert(self, table: TableId, columns: Sequence[str], rows: int) -> str:
        cols = ",".join(self.ident(c) for c in columns)
        return f"INSERT INTO {self.table_sql(table)} ({cols}) VALUES {self._values(len(columns), rows)}"

    def upsert(self, table: TableId, keys: Sequence[str], columns: Sequence[str], rows: int) -> str:
        raise NotImplementedError

    def update(self, table: TableId, keys: Sequence[str], columns: Sequence[str]) -> str:
        marks = iter(self.marks(len(columns) + len(keys)))
        sets = ",".join(f"{self.ident(c)}={next(marks)}" for c in columns)
        where = " AND ".join(f"{self.ident(k)}={next(marks)}" for k in keys)
        return f"UPDATE {self.table_sql(table)} SET {sets} WHERE {where}"

    def update_rows(self, table: TableId, keys: Sequence[str], columns: Sequence[str], rows: int) -> str:
        raise NotImplementedError

    def delete(self, table: TableId, keys: Sequence[str], rows: int) -> str:
        if len(keys) == 1:
            where = f"{self.ident(keys[0])} IN (" + ",".join(self.marks(rows)) + ")"
        else:
            cols = "(" + ",".join(self.ident(k) for k in keys) + ")"
            where = f"{cols} IN ({self._values(len(keys), rows)})"
        return f"DELETE FROM {self.table_sql(table)} WHERE {where}"

    def truncate(self, table: TableId) -> str:
        return f"TRUNCATE TABLE {self.table_sql(table)}"

    # -- DDL -----------------------------------------------------------------------------------------
    def create_table(self, table: TableId, keys: Sequence[ColumnSpec], values: Sequence[ColumnSpec]) -> str:
        cols = [c.ddl(self.ident, self.literal, True) for c in keys]
        cols += [c.ddl(self.ident, self.literal, False) for c in values]
        if keys:
            cols.append("PRIMARY KEY(" + ",".join(self.ident(k.name) for k in keys) + ")")
        return f"CREATE TABLE {self.table_sql(table)} (\n" + ",\n".join(cols) + ")"

    def add_column(self, table: TableId, column: ColumnSpec) -> str:
        added = ColumnSpec(column.name, column.sql_type, column.family, True, column.default, column.convert)
        return f"ALTER TABLE {self.table_sql(table)} ADD {added.ddl(self.ident, self.literal, False)}"

    def describe(self, conn: Any, table: TableId) -> list[ExistingColumn] | None:
        """The table's columns, or None when it does not exist."""
        raise NotImplementedError

    def unique_keys(self, conn: Any, table: TableId) -> list[tuple[str, ...]]:
        """The table's unique indexes and constraints other than its primary key (their column names):
        the batch must not collapse changes across a conflict on one of them."""
        raise NotImplementedError

    # -- errors --------------------------------------------------------------------------------------
    def transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the connection's or the moment's (retry the batch) rather than the data's."""
        return False

    def savepoint(self, conn: Any, name: str) -> None:
        self.run(conn, f"SAVEPOINT {name}")

    def rollback_to(self, conn: Any, name: str) -> None:
        self.run(conn, f"ROLLBACK TO SAVEPOINT {name}")

    def run(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> None:
        cur = conn.cursor()
        try:
            cur.execute(sql, params) if params else cur.execute(sql)
        finally:
            cur.close()

    def run_many(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        cur = conn.cursor()
        try:
            cur.executemany(sql, rows)
        finally:
            cur.close()


class PostgresSql(SinkSql):
    """Statements use PostgreSQL's own ``$n`` markers through psycopg's ``RawCursor``: psycopg would
    otherwise parse every multi-row statement (thousands of ``%s``) on each execution, as it caches only
    short queries — a third of the sink's CPU."""

    family = "postgresql"

    def fold(self, name: str) -> str:
        return name.lower()

    def find_geometry_type(self, conn: Any, schema: str | None) -> str | None:
        # PostGIS installs ``geometry`` in the schema its extension was created in: Debezium's sink names
        # it by ``dialect.postgres.postgis.schema``; Confluent's has no such key (the search path decides)
        name = quote_identifier(schema, '"') + ".geometry" if schema else "geometry"
        with conn.cursor() as cur:
            cur.execute("SELECT to_regtype(%s)::text", (name,))
            row = cur.fetchone()
        conn.rollback()
        return name if row and row[0] else None

    def marks(self, count: int) -> list[str]:
        return [f"${i}" for i in range(1, count + 1)]

    def run(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> None:
        import psycopg

        with psycopg.RawCursor(conn) as cur:
            cur.execute(sql, params or None)

    def run_many(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        import psycopg

        with psycopg.RawCursor(conn) as cur:
            cur.executemany(sql, rows)

    def upsert(self, table: TableId, keys: Sequence[str], columns: Sequence[str], rows: int) -> str:
        base = self.insert(table, [*keys, *columns], rows)
        conflict = ",".join(self.ident(k) for k in keys)
        if not columns:
            return f"{base} ON CONFLICT ({conflict}) DO NOTHING"
        sets = ",".join(f"{self.ident(c)}=EXCLUDED.{self.ident(c)}" for c in columns)
        return f"{base} ON CONFLICT ({conflict}) DO UPDATE SET {sets}"

    def describe(self, conn: Any, table: TableId) -> list[ExistingColumn] | None:
        schema = table.schema
        sql = (
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull"
            " FROM pg_attribute a WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0"
            " AND NOT a.attisdropped ORDER BY a.attnum"
        )
        name = self.table_sql(TableId(None, schema, table.name))
        cur = conn.cursor()
        try:
            cur.execute("SELECT to_regclass(%s) IS NOT NULL", (name,))
            exists = cur.fetchone()[0]
            if not exists:
                return None
            cur.execute(sql, (name,))
            return [(str(r[0]), str(r[1]), bool(r[2])) for r in cur.fetchall()]
        finally:
            cur.close()

    def unique_keys(self, conn: Any, table: TableId) -> list[tuple[str, ...]]:
        name = self.table_sql(TableId(None, table.schema, table.name))
        cur = conn.cursor()
        try:
            cur.execute(
                "SELECT array_agg(a.attname::text ORDER BY k.ord) FROM pg_index i"
                " CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)"
                " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum"
                " WHERE i.indrelid = to_regclass(%s) AND i.indisunique AND NOT i.indisprimary"
                " GROUP BY i.indexrelid",
                (name,),
            )
            return [tuple(r[0]) for r in cur.fetchall()]
        finally:
            cur.close()

    def transient(self, exc: BaseException) -> bool:
        import psycopg

        return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


class MySql(SinkSql):
    family = "mysql"
    max_params = 60000
    multi_row_update = True

    def update_rows(self, table: TableId, keys: Sequence[str], columns: Sequence[str], rows: int) -> str:
        # executemany would send one UPDATE per row: a join with the rows as a derived table instead, keys
        # compared by the database (its collation), rows whose key is absent left alone
        names = [*keys, *columns]
        first = "SELECT " + ",".join(f"{self.placeholder} AS {self.ident(n)}" for n in names)
        other = " UNION ALL SELECT " + ",".join([self.placeholder] * len(names))
        derived = first + other * (rows - 1)
        on = " AND ".join(f"`__t`.{self.ident(k)} = `__v`.{self.ident(k)}" for k in keys)
        sets = ",".join(f"`__t`.{self.ident(c)} = `__v`.{self.ident(c)}" for c in columns)
        return f"UPDATE {self.table_sql(table)} AS `__t` JOIN ({derived}) AS `__v` ON {on} SET {sets}"

    def _qualified(self, parts: list[str]) -> TableId:
        return TableId(parts[-2], None, parts[-1])

    def upsert(self, table: TableId, keys: Sequence[str], columns: Sequence[str], rows: int) -> str:
        base = self.insert(table, [*keys, *columns], rows)
        updated = columns or keys[:1]  # a key-only table: a no-op update keeps the statement valid
        sets = ",".join(f"{self.ident(c)}=VALUES({self.ident(c)})" for c in updated)
        return f"{base} ON DUPLICATE KEY UPDATE {sets}"

    def describe(self, conn: Any, table: TableId) -> list[ExistingColumn] | None:
        sql = (
            "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE = 'YES' FROM information_schema.COLUMNS"
            " WHERE TABLE_SCHEMA = COALESCE(%s, DATABASE()) AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION"
        )
        cur = conn.cursor()
        try:
            cur.execute(sql, (table.catalog, table.name))
            rows = cur.fetchall()
        finally:
            cur.close()
        conn.commit()  # the read opened a snapshot: the next batch must see committed DDL
        if not rows:
            return None
        return [(_text(r[0]), _text(r[1]), bool(r[2])) for r in rows]

    def unique_keys(self, conn: Any, table: TableId) -> list[tuple[str, ...]]:
        cur = conn.cursor()
        try:
            cur.execute(
                "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS"
                " WHERE TABLE_SCHEMA = COALESCE(%s, DATABASE()) AND TABLE_NAME = %s AND NON_UNIQUE = 0"
                " AND INDEX_NAME <> 'PRIMARY' ORDER BY INDEX_NAME, SEQ_IN_INDEX",
                (table.catalog, table.name),
            )
            rows = cur.fetchall()
        finally:
            cur.close()
        conn.commit()
        keys: dict[str, list[str]] = {}
        for index, column in rows:
            keys.setdefault(_text(index), []).append(_text(column))
        return [tuple(c) for c in keys.values()]

    def transient(self, exc: BaseException) -> bool:
        code = exc.args[0] if getattr(exc, "args", None) else None
        if isinstance(code, int) and code in _MYSQL_TRANSIENT:
            return True
        return type(exc).__name__ in ("InterfaceError",) or "Lost connection" in str(exc)


class SqliteSql(SinkSql):
    family = "sqlite"
    placeholder = "?"
    max_params = 30000

    def upsert(self, table: TableId, keys: Sequence[str], columns: Sequence[str], rows: int) -> str:
        base = self.insert(table, [*keys, *columns], rows)
        conflict = ",".join(self.ident(k) for k in keys)
        if not columns:
            return f"{base} ON CONFLICT ({conflict}) DO NOTHING"
        sets = ",".join(f"{self.ident(c)}=excluded.{self.ident(c)}" for c in columns)
        return f"{base} ON CONFLICT ({conflict}) DO UPDATE SET {sets}"

    def truncate(self, table: TableId) -> str:
        return f"DELETE FROM {self.table_sql(table)}"

    def describe(self, conn: Any, table: TableId) -> list[ExistingColumn] | None:
        rows = conn.execute(f"PRAGMA table_info({self.table_sql(table)})").fetchall()
        if not rows:
            return None
        return [(str(r[1]), str(r[2]), not r[3] and not r[5]) for r in rows]

    def unique_keys(self, conn: Any, table: TableId) -> list[tuple[str, ...]]:
        out = []
        for index in conn.execute(f"PRAGMA index_list({self.table_sql(table)})").fetchall():
            # (seq, name, unique, origin, partial): origin pk is the primary key
            if index[2] and index[3] != "pk":
                info = conn.execute(f"PRAGMA index_info({self.ident(str(index[1]))})").fetchall()
                out.append(tuple(str(r[2]) for r in sorted(info)))
        return out

    def transient(self, exc: BaseException) -> bool:
        text = str(exc).lower()
        return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)


def sink_sql(dialect: Dialect, quote: bool) -> SinkSql:
    classes: dict[str, type[SinkSql]] = {"postgresql": PostgresSql, "mysql": MySql, "sqlite": SqliteSql}
    return classes[dialect.name](dialect, quote)
