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

With the Spark engine for incremental snapshots, large tables are back-filled by Spark instead of chunks
(:mod:`cdc.mysql.incremental.spark_backfill`); this class hands them over and goes on once they are done.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pymysql

from cdc.api.errors import ConnectError
from cdc.api.records import Header, SourceRecord
from cdc.api.struct import Struct
from cdc.drivers import statement_refused
from cdc.history.model import TableId
from cdc.mysql.capture import CaptureContext
from cdc.mysql.events import SourcePosition, TableSchema
from cdc.mysql.incremental.chunks import ChunkReader, java_converter, java_value
from cdc.mysql.incremental.context import DataCollection, IncrementalContext
from cdc.mysql.incremental.filters import UnsafeFilterError, check_filter
from cdc.mysql.incremental.patterns import SignalPatterns
from cdc.mysql.incremental.readonly import Watermark
from cdc.mysql.incremental.window import (
    OPEN_WINDOW,
    chunk_progress,
    close_watermark,
    snapshot_source,
    watermark_time,
    window_rows,
)
from cdc.mysql.metrics import SignalMetrics, SnapshotMetrics
from cdc.mysql.snapshot import estimated_rows

if TYPE_CHECKING:
    from cdc.mysql.incremental.spark_backfill import SparkBackfill

__all__ = ["IncrementalSnapshot"]

log = logging.getLogger(__name__)


class IncrementalSnapshot:
    """Reads chunks when told (signals, window closes) and keeps the window the streamer de-duplicates."""

    def __init__(
        self,
        ctx: CaptureContext,
        metrics: SnapshotMetrics,
        context: IncrementalContext,
        signals: SignalMetrics | None = None,
    ) -> None:
        settings = ctx.settings
        self.signals = signals if signals is not None else SignalMetrics(settings.prefix)
        """Where a table whose chunk query the server refuses is reported (as a skipped signal)."""
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
        self.window: dict[tuple[Any, ...], tuple[Struct | None, Sequence[Any]]] = {}
        """The chunk's rows not changed since the window opened, by message key values: (key, row)."""
        self._window_schema: TableSchema | None = None
        self.chunks = ChunkReader(settings)
        self._open_time = ""
        self.rows_scanned: dict[str, int] = {}
        self.spark: SparkBackfill | None = None
        self._ctx = ctx
        self.notifier = ctx.notifier

    def use_spark(
        self, props: dict[str, str], worker_clients: dict[str, str], headers: Sequence[Header]
    ) -> SparkBackfill:
        """Large tables are back-filled by the Spark engine from now on (``incremental.snapshot.engine``);
        ``headers``: the task's Debezium context headers, on the Spark records too."""
        from cdc.mysql.incremental.spark_backfill import SparkBackfill

        self.spark = SparkBackfill(
            self._ctx,
            self.context,
            self.metrics,
            self.chunks,
            props,
            worker_clients,
            snapshot_source,
            headers,
        )
        self.spark.on_done = self._spark_done
        return self.spark

    def _spark_done(self, table: TableId) -> None:
        self._next_collection(table)
        self.read_chunk()

    def close(self) -> None:
        if self.spark is not None:
            self.spark.close()
        self.chunks.close()

    def on_idle(self) -> None:
        """Between transactions: the Spark back-fill's turn (its end, its windows)."""
        if self.spark is not None:
            self.spark.on_idle()

    def on_row_images(self, table_id: TableId, images: Sequence[Sequence[Any]]) -> None:
        if self.spark is not None:
            self.spark.on_row_images(table_id, images)

    # -- actions ------------------------------------------------------------------------------------------
    def resume_on_start(self) -> None:
        """After a restart with a snapshot in the offsets: read a new chunk after the last row sent."""
        if self.context.running and not self.context.paused:
            log.info(
                "Incremental snapshot in progress (%s); reading a new chunk on start",
                ", ".join(str(c.table) for c in self.context.collections),
            )
            self.metrics.start_incremental([c.table for c in self.context.collections])
            self._estimate([c.table for c in self.context.collections])
            self.read_chunk()

    def execute(
        self,
        correlation_id: str,
        patterns: list[str],
        conditions: list[tuple[str, str]],
        surrogate_key: str,
    ) -> None:
        """``execute-snapshot`` (incremental): queue the tables; start reading unless a snapshot runs.
        A pattern past its time budget, an unsafe filter or no table at all: raises, nothing is queued."""
        matching = SignalPatterns()
        tables = []
        for table in self.expand(patterns, matching):
            if self.captured(table):
                tables.append(table)
            else:
                log.warning(
                    "Incremental snapshot '%s': table '%s' is not captured; skipped", correlation_id, table
                )
        collections = []
        for table in tables:
            condition = next(
                (f for pattern, f in conditions if matching.fullmatch(pattern, str(table), True)), ""
            )
            collections.append(DataCollection(table, check_filter(condition), surrogate_key))
        if not collections:
            raise ConnectError(f"incremental snapshot: no captured table matches {patterns}")
        was_running = self.context.running
        self.context.add(collections, correlation_id)
        log.info(
            "Incremental snapshot '%s' of %s queued%s",
            correlation_id,
            ", ".join(str(c.table) for c in collections),
            " after the running one" if was_running else "",
        )
        if not was_running:
            self.rows_scanned.clear()
            self._notify("STARTED", {"data_collections": self._collections()})
            self.metrics.start_incremental([c.table for c in self.context.collections])
            self._estimate([c.table for c in self.context.collections])
            self.read_chunk()
        else:
            self.metrics.add_tables([c.table for c in collections])
            self._estimate([c.table for c in collections])

    def _estimate(self, tables: list[TableId]) -> None:
        """InnoDB's row estimates of the tables to read: the total of the progress and ETA ``/ui`` shows
        (as the initial snapshot's). Only a display: a failure to read them stops nothing."""
        try:
            found = estimated_rows(self.chunks.connection(), tables)
            self.metrics.estimated_rows = {**self.metrics.estimated_rows, **found}  # read by /metrics
        except pymysql.MySQLError as exc:
            log.debug("No row estimates for the incremental snapshot's progress: %s", exc)

    def stop(self, patterns: list[str]) -> None:
        if not self.context.running:
            log.warning("No incremental snapshot is running; stop-snapshot ignored")
            return
        if not patterns:
            log.info("Stopping the incremental snapshot")
            if self.spark is not None:
                self.spark.cancel()
            correlation = self.context.correlation_id
            self.window.clear()
            self.context.clear()
            self.metrics.abort()
            self._notify("ABORTED", correlation_id=correlation)
            return
        current = self.context.current
        correlation = self.context.correlation_id
        named = self.expand(patterns, SignalPatterns())
        stopped = []
        for table in named:
            if current is not None and table == current.table:
                continue
            if self.context.remove(table):
                stopped.append(str(table))
                log.info("Removed '%s' from the incremental snapshot", table)
        if current is not None and any(t == current.table for t in named):
            log.info("Removed '%s' (being read) from the incremental snapshot", current.table)
            if self.spark is not None:
                self.spark.cancel()
            self.window.clear()
            self.metrics.table_done(current.table)
            stopped.append(str(current.table))
            self.context.next_collection()
            if not self.context.running:
                self.metrics.abort()
        self._notify("ABORTED", {"data_collections": ",".join(stopped)}, correlation)

    def pause(self) -> None:
        if self.context.running and not self.context.paused:
            log.info("Pausing the incremental snapshot")
            self.context.paused = True
            self.metrics.paused = True
            self._notify("PAUSED", {"data_collections": self._collections()})

    def resume(self) -> None:
        if self.context.running and self.context.paused:
            log.info("Resuming the incremental snapshot")
            self.context.paused = False
            self.metrics.paused = False
            self._notify("RESUMED", {"data_collections": self._collections()})
            self.read_chunk()

    def expand(self, patterns: list[str], matching: SignalPatterns | None = None) -> list[TableId]:
        """The tables ``patterns`` name among the known ones (:meth:`SignalPatterns.expand`)."""
        matching = matching if matching is not None else SignalPatterns()
        return matching.expand(patterns, sorted(self.schema.tables.tables, key=str))

    def progress(self) -> dict[str, Any] | None:
        """The running snapshot for the task's REST status (None when none runs): its signal, the tables
        still to read (the current one first), whether it is paused, and the current table's progress as
        Debezium's metrics show it (``ChunkId``, ``ChunkFrom``, ``ChunkTo``, ``TableFrom``, ``TableTo``,
        ``RowsScanned``). Called from another thread: it reads, and copies before it reads."""
        tables = [str(c.table) for c in list(self.context.collections)]
        if not tables:
            return None
        metrics = self.metrics
        return {
            "signal_id": self.context.correlation_id,
            "tables": tables,
            "table": tables[0],
            "paused": self.context.paused,
            "chunk": metrics.chunk_id,
            "chunk_from": metrics.chunk_from,
            "chunk_to": metrics.chunk_to,
            "table_from": metrics.table_from,
            "table_to": metrics.table_to,
            "rows_scanned": metrics.rows.get(tables[0], 0),
        }

    # -- windows (called by the streamer as the watermarks arrive) -----------------------------------------
    def open_window(self, signal_id: str) -> None:
        if self.spark is not None and self.spark.expects(signal_id):
            self.spark.open_window(signal_id)
            return
        if not self.context.expects(signal_id):
            log.debug(
                "Window open '%s' is not the current chunk's (%s); ignored", signal_id, self.context.chunk_id
            )
            return
        self.context.window_open = True

    def close_window(self, signal_id: str, close_record: SourceRecord) -> None:
        if self.spark is not None and self.spark.expects(signal_id):
            self.spark.close_window(signal_id, close_record)
            return
        if not self.context.expects(signal_id):
            log.debug("Window close '%s' is not the current chunk's; ignored", signal_id)
            return
        self.context.window_open = False
        self._send_window(close_record)
        self.read_chunk()

    def deduplicate(self, table_id: TableId, records: list[SourceRecord]) -> None:
        """Streamed changes inside the window: their keys leave the buffer."""
        if self.spark is not None:
            self.spark.deduplicate(table_id, records)
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
        self._send(dict(close_record.source_offset or {}), snapshot_source(close_record, current.table))

    def _send(self, base_offset: dict[str, Any], source: Struct) -> None:
        """The window's rows as ``op=r`` records at ``base_offset``, each offset naming its row's key."""
        current = self.context.current
        ts = self._window_schema
        if not self.window or current is None or ts is None:
            self.window.clear()
            return
        columns = ts.table.columns
        keys = [(i, java_converter(columns[i])) for i in self.chunks.query_index(ts.table, current)]
        context, read = self.context, self.events.read_keyed
        window_offset = context.store(dict(base_offset))
        out: list[SourceRecord] = []
        for key, row in self.window.values():
            sent = [row[i] if java is None else java(row[i]) for i, java in keys]
            out.append(read(ts, row, key, source, context.store_row(window_offset, sent)))
        self.window.clear()
        if not self.emit(out):
            raise InterruptedError("stopping")

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
        if self.spark is not None and self.spark.takes_current():
            return
        self.chunks.reconnect_if_lost()
        chunk_id = self.context.start_chunk()
        self._open_time = watermark_time()
        if not self.read_only:
            assert self.signal_table is not None
            self.chunks.insert_signal(
                self.signal_table, chunk_id + "-open", OPEN_WINDOW, {"openWindowTimestamp": self._open_time}
            )
        while self.context.running:
            if self.stopping.is_set():
                raise InterruptedError("stopping")
            current = self.context.current
            assert current is not None
            table = self.schema.table(current.table)
            if table is None:
                log.warning("Incremental snapshot: no schema for table '%s'; skipping it", current.table)
                self._next_collection(current.table, "UNKNOWN_SCHEMA")
                continue
            columns = self.chunks.query_columns(table, current)
            if not columns:
                log.warning(
                    "Incremental snapshot of '%s' skipped: the table has no primary key", current.table
                )
                self._next_collection(current.table, "NO_PRIMARY_KEY")
                continue
            if self.context.maximum_key is None:
                try:
                    self.context.maximum_key = self.chunks.maximum_key(table, current, columns)
                except Exception as exc:
                    # A bad additional condition, a dropped table: this table is skipped, as Debezium does.
                    self._table_failed(current.table, "maximum key", exc)
                    continue
                if self.context.maximum_key is None:
                    log.info("Incremental snapshot of table '%s' finished: it is empty", current.table)
                    self._next_collection(current.table, "EMPTY")
                    continue
                log.info(
                    "Incremental snapshot of table '%s' will end at key %s",
                    current.table,
                    self.context.maximum_key,
                )
            ts = self.events.schema_for(table)
            try:
                rows = self.chunks.read(
                    table, current, columns, self.context.chunk_end, self.context.maximum_key
                )
            except Exception as exc:
                # The filter errs on some row only, the server's statement time limit: the next chunk, and
                # the chunk after a restart, would fail the same way; the table is skipped.
                self._table_failed(current.table, "chunk", exc)
                continue
            if not rows:
                log.info(
                    "Incremental snapshot of table '%s' finished: %d rows",
                    current.table,
                    self.rows_scanned.get(str(current.table), 0),
                )
                self._next_collection(current.table, "SUCCEEDED")
                continue
            self._window_schema = ts
            index = self.chunks.query_index(table, current)
            self.window = window_rows(ts, rows)
            first, last = rows[0], rows[-1]
            self.context.chunk_end = [java_value(last[i], table.columns[i]) for i in index]
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
            self._notify_chunk(str(current.table))
            break
        if self.read_only:
            # The high watermark: the window closes once the stream has passed it (close_if_reached).
            self._high = self.chunks.server_watermark() if self.context.running else None
            self.context.window_open = self._high is not None
        else:
            assert self.signal_table is not None
            close_watermark(self.chunks, self.signal_table, chunk_id, self._open_time, self.insert_delete)

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

    def _table_failed(self, table: TableId, query: str, exc: Exception) -> None:
        """``table``'s ``query`` failed: skipped and reported when the server refused the statement (it
        would fail again, after any restart, since the offsets carry the filter); else ``exc`` is raised
        (a lost connection: the task retries)."""
        if not (isinstance(exc, UnsafeFilterError) or statement_refused(exc)):
            raise exc
        signal_id = self.context.correlation_id or ""
        log.error(
            "Incremental snapshot '%s' of '%s' skipped: its %s query failed: %s", signal_id, table, query, exc
        )
        self.signals.skip(signal_id, "execute-snapshot", "incremental", f"{table}: {exc}")
        self._next_collection(table, "SQL_EXCEPTION")

    def _next_collection(self, table: TableId, status: str | None = None) -> None:
        """``table`` is done (``status``: how its scan ended, for the TABLE_SCAN_COMPLETED notification)."""
        if status is not None:
            scanned = {"scanned_collection": str(table), "data_collections": self._collections()}
            rows = str(self.rows_scanned.get(str(table), 0))
            self._notify("TABLE_SCAN_COMPLETED", {**scanned, "total_rows_scanned": rows, "status": status})
        correlation = self.context.correlation_id
        self.metrics.table_done(table)
        self.context.next_collection()
        if not self.context.running:
            log.info("Incremental snapshot completed")
            self.metrics.complete()
            self._notify("COMPLETED", correlation_id=correlation)

    # -- notification.enabled.channels (cdc.mysql.notifications) ---------------------------------------------
    def _collections(self) -> str:
        return ",".join(str(c.table) for c in self.context.collections)

    def _notify(
        self, kind: str, data: dict[str, str] | None = None, correlation_id: str | None = None
    ) -> None:
        if self.notifier is not None:
            self.notifier.incremental(kind, correlation_id or self.context.correlation_id, data)

    def _notify_chunk(self, table: str) -> None:
        """IN_PROGRESS after a chunk was read: its table, the table's maximum key and the chunk's last key."""
        if self.notifier is None:
            return
        context = self.context
        self._notify(
            "IN_PROGRESS", chunk_progress(self._collections(), table, context.maximum_key, context.chunk_end)
        )
