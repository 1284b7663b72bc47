"""The incremental snapshot's SQL: key columns, the table's maximum key, chunk reads (one, or N ranges at
once on N connections), the watermark rows, and the connections they use.

Chunks are read in key order after the last key read and up to the table's maximum key, with Debezium's
key-order condition over several columns (``(k1 > ?) OR (k1 = ? AND k2 > ?) …``) and the signal's
``additional-conditions`` filter. Key values are kept as Connector/J hands them to Debezium (``BIGINT`` and
``INT UNSIGNED`` as ``Long``), so the offsets carry the Java types Debezium writes.

Chunks are read on connections of their own, made as the initial snapshot makes its reading connection
(:func:`cdc.mysql.connection.connect` with ``streaming``: mysqlclient's C client when installed, the same
Python values as PyMySQL at a fraction of the decoding time, and the GIL released while the server is
awaited), so are the chunk boundaries; the watermarks and the maximum key go through one PyMySQL
connection. Parallel ranges are read by a pool of ``incremental.snapshot.parallelism`` threads kept for
the task's life.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pymysql

from cdc.api.errors import ConnectError
from cdc.history.model import Column, Table, TableId
from cdc.logs import in_context
from cdc.mysql.config import MySqlSettings
from cdc.mysql.connection import connect
from cdc.mysql.incremental.context import DataCollection
from cdc.mysql.incremental.filters import where_clause
from cdc.mysql.incremental.javaser import JavaLong
from cdc.mysql.incremental.readonly import Watermark, read_watermark

__all__ = ["ChunkReader", "java_converter", "java_value"]

Keys = list[Any]

IDLE_CHECK_S = 1.0
"""Connections idle this long are pinged before the next chunk."""


class ChunkReader:
    def __init__(self, settings: MySqlSettings) -> None:
        self.settings = settings
        self.chunk_size = settings.incremental_snapshot_chunk_size
        self.parallelism = settings.incremental_snapshot_parallelism
        self._conn: Any = None
        self._readers: list[Any] = []
        self._pool: ThreadPoolExecutor | None = None
        self._used = 0.0

    # -- connections ------------------------------------------------------------------------------------
    def connection(self) -> Any:
        if self._conn is None:
            self._conn = connect(self.settings)
        return self._conn

    def _reader_connections(self, n: int) -> list[Any]:
        while len(self._readers) < n:
            self._readers.append(connect(self.settings, streaming=True))
        return self._readers[:n]

    def reconnect_if_lost(self) -> None:
        """The connections idle between chunks (a pause, a quiet binlog): replace dropped ones. Between
        chunks that follow each other closely they are not asked (a round trip each, every window)."""
        now = time.monotonic()
        idle, self._used = now - self._used, now
        if idle < IDLE_CHECK_S:
            return
        if self._conn is not None and not _alive(self._conn):
            self._conn = None
        self._readers = [conn for conn in self._readers if _alive(conn)]

    def close(self) -> None:
        for conn in [self._conn, *self._readers]:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        self._conn, self._readers = None, []
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    # -- watermarks ---------------------------------------------------------------------------------------
    def insert_signal(self, table: TableId, signal_id: str, kind: str, data: dict[str, str]) -> None:
        with self.connection().cursor() as cur:
            cur.execute(
                f"INSERT INTO {table.sql()} VALUES (%s, %s, %s)",
                (signal_id, kind, json.dumps(data, separators=(", ", ": "))),
            )

    def delete_signal(self, table: TableId, signal_id: str) -> None:
        with self.connection().cursor() as cur:
            cur.execute(f"DELETE FROM {table.sql()} WHERE id = %s", (signal_id,))

    def server_watermark(self) -> Watermark:
        return read_watermark(self.connection())

    # -- keys ------------------------------------------------------------------------------------------------
    @staticmethod
    def query_columns(table: Table, collection: DataCollection) -> list[Column]:
        """The columns chunks are ordered by: the surrogate key, or the primary key."""
        names = [collection.surrogate_key] if collection.surrogate_key else list(table.primary_key)
        by_name = {c.name: c for c in table.columns}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise ConnectError(f"Incremental snapshot of {table.id}: no column {missing[0]} (surrogate-key)")
        return [by_name[n] for n in names]

    def query_index(self, table: Table, collection: DataCollection) -> list[int]:
        names = [c.name for c in table.columns]
        return [names.index(c.name) for c in self.query_columns(table, collection)]

    def maximum_key(self, table: Table, collection: DataCollection, columns: list[Column]) -> Keys | None:
        order = ", ".join(f"{_quote(c.name)} DESC" for c in columns)
        select = ", ".join(_quote(c.name) for c in columns)
        conn = self.connection()
        where = where_clause(conn, "", (), collection.condition)
        query = (
            f"SELECT {select} FROM {table.id.sql()}".encode() + where + f" ORDER BY {order} LIMIT 1".encode()
        )
        with conn.cursor() as cur:
            cur.execute(query)  # bytes, no arguments: nothing in the filter is formatted
            row = cur.fetchone()
        if row is None:
            return None
        return [java_value(v, c) for v, c in zip(row, columns, strict=True)]

    # -- rows ------------------------------------------------------------------------------------------------
    def read(
        self,
        table: Table,
        collection: DataCollection,
        columns: list[Column],
        lower: Keys | None,
        maximum: Keys | None,
    ) -> list[Sequence[Any]]:
        """The next chunk(s) after ``lower``: ``parallelism`` ranges read at once, in key order."""
        if self.parallelism <= 1:
            return self._select(
                table,
                collection,
                columns,
                (lower, None, maximum),
                self.chunk_size,
                self._reader_connections(1)[0],
            )
        # One key-only scan gives the N ranges' boundaries; each range is then read on its own connection.
        bounds = self._boundaries(table, collection, columns, lower, maximum)
        if not bounds:
            return []
        ranges: list[tuple[Keys | None, Keys | None, Keys | None]] = []
        start = lower
        for end in bounds:
            ranges.append((start, end, maximum))
            start = end
        conns = self._reader_connections(len(ranges))

        def read(job: tuple[tuple[Keys | None, Keys | None, Keys | None], Any]) -> list[Sequence[Any]]:
            return self._select(table, collection, columns, job[0], None, job[1])

        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.parallelism, thread_name_prefix="incremental-chunk")
        parts = list(self._pool.map(in_context(read), zip(ranges, conns, strict=True)))
        return [row for part in parts for row in part]

    def _boundaries(
        self,
        table: Table,
        collection: DataCollection,
        columns: list[Column],
        lower: Keys | None,
        maximum: Keys | None,
    ) -> list[Keys]:
        """The last key of each of the next ``parallelism`` chunks (fewer at the table's end)."""
        conn = self._reader_connections(1)[0]
        where = _where(conn, columns, (lower, None, maximum), collection.condition)
        keys = ", ".join(_quote(c.name) for c in columns)
        limit = self.chunk_size * self.parallelism
        head, tail = f"SELECT {keys} FROM {table.id.sql()}", f" ORDER BY {keys} LIMIT {limit}"
        with conn.cursor() as cur:
            cur.execute(head.encode() + where + tail.encode())
            rows = cur.fetchall()
        if not rows:
            return []
        out = [list(rows[i]) for i in range(self.chunk_size - 1, len(rows), self.chunk_size)]
        if len(rows) % self.chunk_size:
            out.append(list(rows[-1]))
        return out

    @staticmethod
    def _select(
        table: Table,
        collection: DataCollection,
        columns: list[Column],
        bounds: tuple[Keys | None, Keys | None, Keys | None],
        limit: int | None,
        conn: Any,
    ) -> list[Sequence[Any]]:
        where = _where(conn, columns, bounds, collection.condition)
        order = ", ".join(_quote(c.name) for c in columns)
        tail = f" ORDER BY {order}" + (f" LIMIT {limit}" if limit is not None else "")
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM {table.id.sql()}".encode() + where + tail.encode())
            return list(cur.fetchall())


def _where(
    conn: Any, columns: list[Column], bounds: tuple[Keys | None, Keys | None, Keys | None], condition: str
) -> bytes:
    """``WHERE`` after ``lower`` (exclusive), up to ``upper`` and ``maximum`` (inclusive), and the filter,
    as the statement's bytes (:func:`~cdc.mysql.incremental.filters.where_clause`: the key values escaped
    by ``conn``, the filter checked and never formatted)."""
    lower, upper, maximum = bounds
    parts: list[str] = []
    params: list[Any] = []
    names = [c.name for c in columns]
    if lower is not None:
        sql, p = greater_than(names, lower)
        parts.append(sql)
        params += p
    for bound in (upper, maximum):
        if bound is not None:
            sql, p = greater_than(names, bound)
            parts.append(f"NOT {sql}")
            params += p
    return where_clause(conn, " AND ".join(parts), params, condition)


def greater_than(names: list[str], values: Sequence[Any]) -> tuple[str, list[Any]]:
    """``(k1 > ?) OR (k1 = ? AND k2 > ?) …``: key order over several columns, as Debezium writes it,
    with ``%s`` placeholders (a ``%`` in a column name doubled, for
    :func:`~cdc.mysql.incremental.filters.bind`)."""
    terms: list[str] = []
    params: list[Any] = []
    quoted = [_quote(name).replace("%", "%%") for name in names]
    for i in range(len(names)):
        parts = [f"{quoted[j]} = %s" for j in range(i)] + [f"{quoted[i]} > %s"]
        terms.append("(" + " AND ".join(parts) + ")")
        params += [_plain(v) for v in values[: i + 1]]
    return "(" + " OR ".join(terms) + ")", params


def java_value(value: Any, column: Column) -> Any:
    """A key value as Connector/J would hand it to Debezium: BIGINT and INT UNSIGNED are ``Long``."""
    convert = java_converter(column)
    return value if convert is None else convert(value)


def java_converter(column: Column) -> Callable[[Any], Any] | None:
    """What :func:`java_value` does to ``column``'s values (None: nothing), decided once per column."""
    name = column.type_name.upper()
    if name.startswith("BIGINT") or (name.startswith("INT") and "UNSIGNED" in column.type_expression.upper()):
        return _as_long
    return None


def _as_long(value: Any) -> Any:
    return JavaLong(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _alive(conn: Any) -> bool:
    """Whether ``conn`` (PyMySQL's or MySQLdb's) still answers; a dropped one is closed, to be replaced."""
    try:
        if isinstance(conn, pymysql.connections.Connection):
            conn.ping(False)  # PyMySQL's default would reconnect
        else:
            conn.ping()  # MySQLdb: never reconnects unless asked to
        return True
    except Exception:  # pymysql.MySQLError, MySQLdb.Error: whichever driver's, the connection is gone
        with contextlib.suppress(Exception):
            conn.close()
        return False


def _plain(value: Any) -> Any:
    return int(value) if isinstance(value, JavaLong) else value


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
