"""The incremental snapshot: DBLog's watermark algorithm, as Debezium runs it, with parallel chunks.

A chunk is read between two watermarks written to the signal table: ``<chunk id>-open``
(``snapshot-window-open``) is inserted, the chunk (``incremental.snapshot.chunk.size`` rows after the last
key read, in key order, at most up to the table's largest key when its snapshot began) is selected into a
buffer, then ``<chunk id>-close`` (``snapshot-window-close``) is inserted. The streamer meets both rows in
the binlog, in order with the data: between them, every streamed change to a key of the current table
removes that key from the buffer (the change is newer than, or as new as, what was read); at the close,
what is left is emitted as ``op=r`` records with ``source.snapshot=incremental``, and the next chunk is
read. So no snapshot row ever follows a newer change of its key, and streaming never stops.

Beyond Debezium, ``incremental.snapshot.parallelism=N`` reads N consecutive chunks inside one window on N
connections: the chunk boundaries come from one key-only index scan, the N ranges are selected at once,
and the window's de-duplication covers their union, so the guarantee is the same.

The state (:class:`~cdc.mysql.incremental.context.IncrementalContext`) travels in every offset while the
snapshot runs; a restarted task resumes with a new chunk after the last row sent. Chunk ids of windows
opened before a restart no longer match and their watermarks are ignored.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pymysql

from cdc.api.errors import ConnectError
from cdc.api.records import SourceRecord
from cdc.api.struct import Struct
from cdc.history.model import Column, Table, TableId
from cdc.mysql.capture import CaptureContext
from cdc.mysql.connection import connect
from cdc.mysql.events import SourcePosition, TableSchema
from cdc.mysql.incremental.context import DataCollection, IncrementalContext
from cdc.mysql.incremental.javaser import JavaLong
from cdc.mysql.incremental.readonly import Watermark, read_watermark
from cdc.mysql.metrics import SnapshotMetrics

__all__ = ["CLOSE_WINDOW", "OPEN_WINDOW", "IncrementalSnapshot"]

log = logging.getLogger(__name__)

OPEN_WINDOW = "snapshot-window-open"
CLOSE_WINDOW = "snapshot-window-close"


class IncrementalSnapshot:
    """Reads chunks when told (signals, window closes) and keeps the window the streamer de-duplicates."""

    def __init__(self, ctx: CaptureContext, metrics: SnapshotMetrics, context: IncrementalContext) -> None:
        settings = ctx.settings
        self.settings = settings
        self.schema = ctx.schema
        self.events = ctx.events
        self.emit = ctx.emit
        self.stopping = ctx.stopping
        self.metrics = metrics
        self.signal_table = ctx.filters.signal_table
        self.captured = ctx.filters.table
        self.context = context
        self.chunk_size = settings.incremental_snapshot_chunk_size
        self.parallelism = settings.incremental_snapshot_parallelism
        self.read_only = settings.read_only
        self._high: Watermark | None = None
        self.insert_delete = settings.incremental_snapshot_watermarking_strategy.lower() == "insert_delete"
        self.window: dict[tuple[Any, ...], Sequence[Any]] = {}
        self._window_schema: TableSchema | None = None
        self._conn: Any = None
        self._readers: list[Any] = []
        self._open_time = ""
        self.rows_scanned: dict[str, int] = {}

    # -- connections ------------------------------------------------------------------------------------
    def _connection(self) -> Any:
        if self._conn is None:
            self._conn = connect(self.settings)
        return self._conn

    def _reader_connections(self, n: int) -> list[Any]:
        while len(self._readers) < n:
            self._readers.append(connect(self.settings))
        return self._readers[:n]

    def close(self) -> None:
        for conn in [self._conn, *self._readers]:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        self._conn, self._readers = None, []

    # -- actions ------------------------------------------------------------------------------------------
    def resume_on_start(self) -> None:
        """After a restart with a snapshot in the offsets: read a new chunk after the last row sent."""
        if self.context.running and not self.context.paused:
            log.info(
                "Incremental snapshot in progress (%s); reading a new chunk on start",
                ", ".join(str(c.table) for c in self.context.collections),
            )
            self.metrics.start_incremental([c.table for c in self.context.collections])
            self.read_chunk()

    def execute(
        self,
        correlation_id: str,
        patterns: list[str],
        conditions: list[tuple[str, str]],
        surrogate_key: str,
    ) -> None:
        """``execute-snapshot`` (incremental): queue the tables; start reading unless a snapshot runs."""
        tables = []
        for table in self.expand(patterns):
            if self.captured(table):
                tables.append(table)
            else:
                log.warning(
                    "Incremental snapshot '%s': table '%s' is not captured; skipped", correlation_id, table
                )
        collections = []
        for table in tables:
            condition = next(
                (f for pattern, f in conditions if re.fullmatch(pattern, str(table), re.IGNORECASE)), ""
            )
            collections.append(DataCollection(table, condition, surrogate_key))
        if not collections:
            log.warning(
                "Incremental snapshot signal '%s': no captured table matches %s", correlation_id, patterns
            )
            return
        was_running = self.context.running
        self.context.add(collections, correlation_id)
        log.info(
            "Incremental snapshot '%s' of %s queued%s",
            correlation_id,
            ", ".join(str(c.table) for c in collections),
            " after the running one" if was_running else "",
        )
        if not was_running:
            self.metrics.start_incremental([c.table for c in self.context.collections])
            self.read_chunk()
        else:
            self.metrics.add_tables([c.table for c in collections])

    def stop(self, patterns: list[str]) -> None:
        if not self.context.running:
            log.warning("No incremental snapshot is running; stop-snapshot ignored")
            return
        if not patterns:
            log.info("Stopping the incremental snapshot")
            self.window.clear()
            self.context.clear()
            self.metrics.abort()
            return
        current = self.context.current
        for table in self.expand(patterns):
            if current is not None and table == current.table:
                continue
            if self.context.remove(table):
                log.info("Removed '%s' from the incremental snapshot", table)
        if current is not None and any(t == current.table for t in self.expand(patterns)):
            log.info("Removed '%s' (being read) from the incremental snapshot", current.table)
            self.window.clear()
            self.metrics.table_done(current.table)
            self.context.next_collection()
            if not self.context.running:
                self.metrics.abort()

    def pause(self) -> None:
        if self.context.running and not self.context.paused:
            log.info("Pausing the incremental snapshot")
            self.context.paused = True
            self.metrics.paused = True

    def resume(self) -> None:
        if self.context.running and self.context.paused:
            log.info("Resuming the incremental snapshot")
            self.context.paused = False
            self.metrics.paused = False
            self.read_chunk()

    def expand(self, patterns: list[str]) -> list[TableId]:
        """Names or regexes against the known tables (a name matching none is kept, as Debezium does)."""
        known = sorted(self.schema.tables.tables, key=str)
        out: list[TableId] = []
        for pattern in patterns:
            try:
                matched = [t for t in known if re.fullmatch(pattern, str(t))]
            except re.error:
                matched = []
            for table in matched or [TableId.parse(pattern)]:
                if table not in out:
                    out.append(table)
        return out

    # -- windows (called by the streamer as the watermarks arrive) -----------------------------------------
    def open_window(self, signal_id: str) -> None:
        if not self.context.expects(signal_id):
            log.debug(
                "Window open '%s' is not the current chunk's (%s); ignored", signal_id, self.context.chunk_id
            )
            return
        self.context.window_open = True

    def close_window(self, signal_id: str, close_record: SourceRecord) -> None:
        if not self.context.expects(signal_id):
            log.debug("Window close '%s' is not the current chunk's; ignored", signal_id)
            return
        self.context.window_open = False
        self._send_window(close_record)
        self.read_chunk()

    def deduplicate(self, table_id: TableId, records: list[SourceRecord]) -> None:
        """Streamed changes inside the window: their keys leave the buffer."""
        current = self.context.current
        if not self.context.window_open or not self.window or current is None or current.table != table_id:
            return
        for record in records:
            key = record.key
            if isinstance(key, Struct) and self.window.pop(tuple(key.values), None) is not None:
                log.debug("Removed %s from the window", key.values)

    def _send_window(self, close_record: SourceRecord) -> None:
        current = self.context.current
        ts = self._window_schema
        if not self.window or current is None or ts is None:
            self.window.clear()
            return
        self._send(dict(close_record.source_offset or {}), self._snapshot_source(close_record, current.table))

    def _send(self, base_offset: dict[str, Any], source: Struct) -> None:
        """The window's rows as ``op=r`` records at ``base_offset``, each offset naming its row's key."""
        current = self.context.current
        ts = self._window_schema
        if not self.window or current is None or ts is None:
            self.window.clear()
            return
        key_index = self._query_index(ts.table, current)
        out: list[SourceRecord] = []
        for row in self.window.values():
            self.context.last_sent = [_java_value(row[i], ts.table.columns[i]) for i in key_index]
            out.append(self.events.read(ts, row, source, self.context.store(dict(base_offset))))
        self.window.clear()
        if not self.emit(out):
            raise InterruptedError("stopping")

    def _snapshot_source(self, close_record: SourceRecord, table: TableId) -> Struct:
        value = close_record.value
        assert isinstance(value, Struct)
        source = value.get("source")
        values = list(source.values)
        schema = source.schema
        now_ns = time.time_ns()
        for name, new in (
            ("snapshot", "incremental"),
            ("db", table.database),
            ("table", table.table),
            ("ts_ms", now_ns // 1_000_000),
            ("ts_us", now_ns // 1000),
            ("ts_ns", now_ns),
            ("query", None),
        ):
            field = schema.field(name)
            if field is not None:
                values[field.index] = new
        return Struct(schema, values)

    # -- chunks --------------------------------------------------------------------------------------------
    def read_chunk(self) -> None:
        """Open a window, read the next chunk(s) into it, close it (or finish the tables that are done)."""
        if not self.context.running:
            return
        if self.context.paused:
            log.info("The incremental snapshot is paused")
            return
        if self.signal_table is None and not self.read_only:
            raise ConnectError("An incremental snapshot needs signal.data.collection for its watermarks")
        self._reconnect_if_lost()
        chunk_id = self.context.start_chunk()
        self._open_time = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        if not self.read_only:
            self._write_watermark(chunk_id + "-open", OPEN_WINDOW, {"openWindowTimestamp": self._open_time})
        while self.context.running:
            if self.stopping.is_set():
                raise InterruptedError("stopping")
            current = self.context.current
            assert current is not None
            table = self.schema.table(current.table)
            if table is None:
                log.warning("Incremental snapshot: no schema for table '%s'; skipping it", current.table)
                self._next_collection(current.table)
                continue
            columns = self._query_columns(table, current)
            if not columns:
                log.warning(
                    "Incremental snapshot of '%s' skipped: the table has no primary key", current.table
                )
                self._next_collection(current.table)
                continue
            if self.context.maximum_key is None:
                try:
                    self.context.maximum_key = self._maximum_key(table, current, columns)
                except pymysql.MySQLError as exc:
                    # A bad additional condition, a dropped table: this table is skipped, as Debezium does.
                    log.error(
                        "Incremental snapshot of '%s' skipped: its maximum key query failed: %s",
                        current.table,
                        exc,
                    )
                    self._next_collection(current.table)
                    continue
                if self.context.maximum_key is None:
                    log.info("Incremental snapshot of table '%s' finished: it is empty", current.table)
                    self._next_collection(current.table)
                    continue
                log.info(
                    "Incremental snapshot of table '%s' will end at key %s",
                    current.table,
                    self.context.maximum_key,
                )
            ts = self.events.schema_for(table)
            rows = self._read(table, current, columns)
            if not rows:
                log.info(
                    "Incremental snapshot of table '%s' finished: %d rows",
                    current.table,
                    self.rows_scanned.get(str(current.table), 0),
                )
                self._next_collection(current.table)
                continue
            self._window_schema = ts
            index = self._query_index(table, current)
            self.window = {_window_key(ts, row): row for row in rows}
            first, last = rows[0], rows[-1]
            self.context.chunk_end = [_java_value(last[i], table.columns[i]) for i in index]
            scanned = self.rows_scanned[str(current.table)] = self.rows_scanned.get(
                str(current.table), 0
            ) + len(rows)
            self.metrics.chunk(
                chunk_id,
                [first[i] for i in index],
                [last[i] for i in index],
                self.context.maximum_key,
                current.table,
                scanned,
            )
            log.debug(
                "Incremental snapshot chunk %s of '%s': %d rows up to key %s",
                chunk_id,
                current.table,
                len(rows),
                self.context.chunk_end,
            )
            break
        if self.read_only:
            # The high watermark: the window closes once the stream has passed it (close_if_reached).
            self._high = read_watermark(self._connection()) if self.context.running else None
            self.context.window_open = self._high is not None
        else:
            self._close_watermark(chunk_id)

    def close_if_reached(self, offset: Callable[[], dict[str, Any]]) -> None:
        """``read.only``: between transactions, emit the window once the stream has passed its high
        watermark, and read the next chunk (again at once when nothing was written meanwhile)."""
        while self.read_only and self.context.window_open and self._high is not None:
            position = offset()
            if not self._high.reached_by(position):
                return
            self.context.window_open = False
            self._high = None
            current = self.context.current
            if current is not None:
                pos = SourcePosition(
                    str(position.get("file", "")),
                    int(position.get("pos", 0)),
                    int(position.get("server_id", 0) or 0),
                    int(position.get("ts_sec", 0) or 0),
                )
                source = self.events.source(pos, current.table, int(time.time() * 1000), "incremental")
                self._send(position, source)
            self.read_chunk()

    def _reconnect_if_lost(self) -> None:
        """The chunk connections idle between chunks (a pause, a quiet binlog): revive dropped ones."""
        if self._conn is not None and not _alive(self._conn):
            self._conn = None
        self._readers = [conn for conn in self._readers if _alive(conn)]

    def _next_collection(self, table: TableId) -> None:
        self.metrics.table_done(table)
        self.context.next_collection()
        if not self.context.running:
            log.info("Incremental snapshot completed")
            self.metrics.complete()

    def _write_watermark(self, signal_id: str, kind: str, data: dict[str, str]) -> None:
        assert self.signal_table is not None
        with self._connection().cursor() as cur:
            cur.execute(
                f"INSERT INTO {self.signal_table.sql()} VALUES (%s, %s, %s)",
                (signal_id, kind, json.dumps(data, separators=(", ", ": "))),
            )

    def _close_watermark(self, chunk_id: str) -> None:
        assert self.signal_table is not None
        if self.insert_delete:
            with self._connection().cursor() as cur:
                cur.execute(f"DELETE FROM {self.signal_table.sql()} WHERE id = %s", (chunk_id + "-open",))
            return
        close_time = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        self._write_watermark(
            chunk_id + "-close",
            CLOSE_WINDOW,
            {"openWindowTimestamp": self._open_time, "closeWindowTimestamp": close_time},
        )

    @staticmethod
    def _query_columns(table: Table, collection: DataCollection) -> list[Column]:
        names = [collection.surrogate_key] if collection.surrogate_key else list(table.primary_key)
        by_name = {c.name: c for c in table.columns}
        missing = [n for n in names if n not in by_name]
        if missing:
            raise ConnectError(f"Incremental snapshot of {table.id}: no column {missing[0]} (surrogate-key)")
        return [by_name[n] for n in names]

    def _query_index(self, table: Table, collection: DataCollection) -> list[int]:
        names = [c.name for c in table.columns]
        return [names.index(c.name) for c in self._query_columns(table, collection)]

    def _maximum_key(
        self, table: Table, collection: DataCollection, columns: list[Column]
    ) -> list[Any] | None:
        order = ", ".join(f"{_quote(c.name)} DESC" for c in columns)
        where = f" WHERE {collection.condition}" if collection.condition else ""
        select = ", ".join(_quote(c.name) for c in columns)
        with self._connection().cursor() as cur:
            cur.execute(f"SELECT {select} FROM {table.id.sql()}{where} ORDER BY {order} LIMIT 1")
            row = cur.fetchone()
        if row is None:
            return None
        return [_java_value(v, c) for v, c in zip(row, columns, strict=True)]

    def _read(self, table: Table, collection: DataCollection, columns: list[Column]) -> list[Sequence[Any]]:
        """The next chunk(s) after ``chunk_end``: ``parallelism`` ranges read at once, in key order."""
        lower = self.context.chunk_end
        if self.parallelism <= 1:
            return self._select(table, collection, columns, lower, None, self.chunk_size, self._connection())
        # One key-only scan gives the N ranges' boundaries; each range is then read on its own connection.
        bounds = self._boundaries(table, collection, columns, lower)
        if not bounds:
            return []
        ranges: list[tuple[list[Any] | None, list[Any] | None]] = []
        start = lower
        for end in bounds:
            ranges.append((start, end))
            start = end
        conns = self._reader_connections(len(ranges))
        with ThreadPoolExecutor(len(ranges), thread_name_prefix="incremental-chunk") as pool:
            parts = list(
                pool.map(
                    lambda job: self._select(table, collection, columns, job[0][0], job[0][1], None, job[1]),
                    zip(ranges, conns, strict=True),
                )
            )
        return [row for part in parts for row in part]

    def _boundaries(
        self, table: Table, collection: DataCollection, columns: list[Column], lower: list[Any] | None
    ) -> list[list[Any]]:
        """The last key of each of the next ``parallelism`` chunks (fewer at the table's end)."""
        where, params = self._bounds_sql(columns, lower, None, collection.condition)
        keys = ", ".join(_quote(c.name) for c in columns)
        limit = self.chunk_size * self.parallelism
        sql = f"SELECT {keys} FROM {table.id.sql()}{where} ORDER BY {keys} LIMIT {limit}"
        with self._connection().cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
        if not rows:
            return []
        out = [list(rows[i]) for i in range(self.chunk_size - 1, len(rows), self.chunk_size)]
        if len(rows) % self.chunk_size:
            out.append(list(rows[-1]))
        return out

    def _select(
        self,
        table: Table,
        collection: DataCollection,
        columns: list[Column],
        lower: list[Any] | None,
        upper: list[Any] | None,
        limit: int | None,
        conn: Any,
    ) -> list[Sequence[Any]]:
        where, params = self._bounds_sql(columns, lower, upper, collection.condition)
        order = ", ".join(_quote(c.name) for c in columns)
        sql = f"SELECT * FROM {table.id.sql()}{where} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {limit}"
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return list(cur.fetchall())

    def _bounds_sql(
        self, columns: list[Column], lower: list[Any] | None, upper: list[Any] | None, condition: str
    ) -> tuple[str, list[Any]]:
        """``WHERE`` after ``lower`` (exclusive), up to ``upper`` and the maximum key (inclusive)."""
        parts: list[str] = []
        params: list[Any] = []
        names = [c.name for c in columns]
        if lower is not None:
            sql, p = _greater_than(names, lower)
            parts.append(sql)
            params += p
        for bound in (upper, self.context.maximum_key):
            if bound is not None:
                sql, p = _greater_than(names, bound)
                parts.append(f"NOT {sql}")
                params += p
        if condition:
            parts.append(f"({condition})")
        return (" WHERE " + " AND ".join(parts) if parts else ""), params


def _greater_than(names: list[str], values: Sequence[Any]) -> tuple[str, list[Any]]:
    """``(k1 > ?) OR (k1 = ? AND k2 > ?) …``: key order over several columns, as Debezium writes it."""
    terms: list[str] = []
    params: list[Any] = []
    for i in range(len(names)):
        parts = [f"{_quote(names[j])} = %s" for j in range(i)] + [f"{_quote(names[i])} > %s"]
        terms.append("(" + " AND ".join(parts) + ")")
        params += [_plain(v) for v in values[: i + 1]]
    return "(" + " OR ".join(terms) + ")", params


def _alive(conn: Any) -> bool:
    """Whether ``conn`` still answers (a dropped one is closed, to be replaced by a new one)."""
    try:
        conn.ping(False)
        return True
    except pymysql.MySQLError:
        with contextlib.suppress(Exception):
            conn.close()
        return False


def _window_key(ts: TableSchema, row: Sequence[Any]) -> tuple[Any, ...]:
    """The row's message key values: what a streamed change of the same row carries as its key."""
    key = ts.key(row)
    return tuple(key.values) if key is not None else tuple(row)


def _plain(value: Any) -> Any:
    return int(value) if isinstance(value, JavaLong) else value


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _java_value(value: Any, column: Column) -> Any:
    """A key value as Connector/J would hand it to Debezium: BIGINT and INT UNSIGNED are ``Long``."""
    if isinstance(value, int) and not isinstance(value, bool):
        name = column.type_name.upper()
        if name.startswith("BIGINT") or (
            name.startswith("INT") and "UNSIGNED" in column.type_expression.upper()
        ):
            return JavaLong(value)
    return value
