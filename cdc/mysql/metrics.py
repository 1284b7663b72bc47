"""Debezium's snapshot and streaming metrics, under their JMX attribute names.

Each connector task owns one :class:`SnapshotMetrics` and one :class:`StreamingMetrics`; they register
in :data:`REGISTRY`, which the worker's ``/metrics`` endpoint renders in Prometheus' text format as
``debezium_mysql_<context>_<Attribute>{server="<prefix>"}`` (the MBean
``debezium.mysql:type=connector-metrics,context=…,server=…`` flattened). :class:`SignalMetrics` is cdc's own:
the signals received and skipped (``cdc_mysql_signals_*_total{server}``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from cdc.history.model import TableId
from cdc.metrics import REGISTRY, MetricsRegistry, Reading
from cdc.mysql.converting import converting_failures
from cdc.mysql.lag_stats import LagStatistics

__all__ = ["REGISTRY", "MetricsRegistry", "SignalMetrics", "SnapshotMetrics", "StreamingMetrics"]


class SnapshotMetrics:
    def __init__(self, server: str) -> None:
        self.server = server
        self.total_table_count = 0
        self.remaining_table_count = 0
        self.rows: dict[str, int] = {}
        self.running = False
        self.completed = False
        self.aborted = False
        self.skipped = False
        self.holding_global_lock = False
        self._started = 0.0
        self._ended = 0.0
        self.captured_tables: list[str] = []
        # The incremental snapshot's progress (Debezium's SnapshotChangeEventSourceMetrics attributes).
        self.paused = False
        self.chunk_id = ""
        self.chunk_from = ""
        self.chunk_to = ""
        self.table_from = ""
        self.table_to = ""
        self.estimated_rows: dict[str, int] = {}
        """InnoDB's row estimate per table, read as the data snapshot begins (for progress and ETA)."""
        REGISTRY.register("snapshot", server, self, extra=_Estimates(self))

    def start(self, tables: list[TableId]) -> None:
        self.captured_tables = [str(t) for t in tables]
        self.total_table_count = self.remaining_table_count = len(tables)
        self.running, self.completed = True, False
        self._started = time.monotonic()

    def start_incremental(self, tables: list[TableId]) -> None:
        """A new incremental snapshot: its progress starts from nothing (not the previous one's)."""
        self.start(tables)
        self.aborted = self.paused = False
        self.rows = {}
        self.estimated_rows = {}
        self.chunk_id = self.chunk_from = self.chunk_to = self.table_from = self.table_to = ""

    def add_tables(self, tables: list[TableId]) -> None:
        self.captured_tables += [str(t) for t in tables]
        self.total_table_count += len(tables)
        self.remaining_table_count += len(tables)

    def chunk(
        self,
        chunk_id: str,
        first: list[Any],
        last: list[Any],
        table_to: list[Any] | None,
        table: TableId,
        rows: int,
    ) -> None:
        """A chunk was read: its id and key range, the table's end key, the table's rows so far."""
        self.chunk_id = chunk_id
        self.chunk_from, self.chunk_to = str(first), str(last)
        self.table_to = str(table_to) if table_to is not None else ""
        if not self.table_from or self.rows.get(str(table), 0) == 0:
            self.table_from = str(first)
        self.rows[str(table)] = rows

    def rows_scanned(self, table: TableId, count: int) -> None:
        self.rows[str(table)] = count

    def table_done(self, table: TableId) -> None:
        self.remaining_table_count = max(0, self.remaining_table_count - 1)

    def complete(self) -> None:
        self.running, self.completed = False, True
        self._ended = time.monotonic()
        self._clear_chunk()

    def abort(self) -> None:
        self.running, self.aborted = False, True
        self._ended = time.monotonic()
        self._clear_chunk()

    def _clear_chunk(self) -> None:
        """No chunk is being read: the last one's texts would stay on /metrics as if it still were."""
        self.chunk_id = self.chunk_from = self.chunk_to = self.table_from = self.table_to = ""

    def attributes(self) -> dict[str, Any]:
        end = self._ended if not self.running else time.monotonic()
        return {
            "TotalTableCount": self.total_table_count,
            "RemainingTableCount": self.remaining_table_count,
            "SnapshotRunning": self.running,
            "SnapshotCompleted": self.completed,
            "SnapshotAborted": self.aborted,
            "SnapshotSkipped": self.skipped,
            "SnapshotDurationInSeconds": int(end - self._started) if self._started else 0,
            "HoldingGlobalLock": self.holding_global_lock,
            "RowsScanned": dict(self.rows),
            "TotalNumberOfEventsSeen": sum(self.rows.values()),
            "SnapshotPaused": self.paused,
            "CapturedTables": list(self.captured_tables),
            "ChunkId": self.chunk_id,
            "ChunkFrom": self.chunk_from,
            "ChunkTo": self.chunk_to,
            "TableFrom": self.table_from,
            "TableTo": self.table_to,
        }


class _Estimates:
    """``cdc_mysql_snapshot_estimated_rows{server,table}``: not Debezium's (it only logs the estimate)."""

    def __init__(self, metrics: SnapshotMetrics) -> None:
        self.metrics = metrics

    def readings(self) -> Iterator[Reading]:
        for table, rows in sorted(self.metrics.estimated_rows.items()):
            yield Reading(
                "cdc_mysql_snapshot_estimated_rows",
                rows,
                {"server": self.metrics.server, "table": table},
                "InnoDB's row estimate of a table the snapshot reads (information_schema.tables.table_rows)",
            )


class StreamingMetrics:
    def __init__(self, server: str, statistics: bool = True, advanced: bool = False) -> None:
        self.server = server
        self.advanced = advanced
        """internal.advanced.metrics.enable: change events by table (Debezium's ActivityMonitoringMeter)."""
        self.by_table: dict[str, dict[str, int]] = {"c": {}, "u": {}, "d": {}}
        self.lag = LagStatistics(statistics)
        """The lags' min/max/average and (statistics.metrics.enabled) quantiles (:mod:`.lag_stats`)."""
        self.connected = False
        self.events_seen = 0
        self.creates = 0
        self.updates = 0
        self.deletes = 0
        self.filtered = 0
        self.committed_transactions = 0
        self.disconnects = 0
        self.skipped_events = 0
        self.erroneous_events = 0
        """Events event.processing.failure.handling.mode skipped or failed on (Debezium's counter)."""
        self.partial_row_images: dict[str, int] = {}
        """Rows events with partial images (binlog_row_image=MINIMAL) by table, whatever the mode did."""
        self.unavailable_values = 0
        """BLOB/TEXT values a NOBLOB image left out, emitted as unavailable.value.placeholder."""
        self.statement_events: dict[str, int] = {}
        """Statement-based DML (binlog_format=STATEMENT/MIXED) on captured tables, by table: not captured."""
        self.binlog_filename = ""
        self.binlog_position = 0
        self.gtid_set = ""
        self.last_event_ts_ms = 0
        self.millis_behind_source = -1
        self.last_transaction_id: str | None = None
        REGISTRY.register("streaming", server, self, extra=_StreamingProblems(self))

    def event(self, source_ts_ms: int) -> None:
        self.events_seen += 1
        now = int(time.time() * 1000)
        self.last_event_ts_ms = now
        if source_ts_ms:
            self.millis_behind_source = max(0, now - source_ts_ms)
            self.lag.record(self.millis_behind_source)

    def events(self, source_ts_ms: int, count: int) -> None:
        """``count`` change events of one binlog event (one clock read for all of them)."""
        if count <= 0:
            return
        self.events_seen += count
        now = int(time.time() * 1000)
        self.last_event_ts_ms = now
        if source_ts_ms:
            self.millis_behind_source = max(0, now - source_ts_ms)
            self.lag.record(self.millis_behind_source, count)

    def table_events(self, kind: str, table: str, count: int) -> None:
        """``count`` change events of ``kind`` (c, u, d) on ``table`` (only with :attr:`advanced`)."""
        counts = self.by_table[kind]
        counts[table] = counts.get(table, 0) + count

    def attributes(self) -> dict[str, Any]:
        since = int(time.time() * 1000) - self.last_event_ts_ms if self.last_event_ts_ms else -1
        return {
            "Connected": self.connected,
            "TotalNumberOfEventsSeen": self.events_seen,
            "TotalNumberOfCreateEventsSeen": self.creates,
            "TotalNumberOfUpdateEventsSeen": self.updates,
            "TotalNumberOfDeleteEventsSeen": self.deletes,
            "NumberOfEventsFiltered": self.filtered,
            "NumberOfCommittedTransactions": self.committed_transactions,
            "NumberOfDisconnects": self.disconnects,
            "NumberOfSkippedEvents": self.skipped_events,
            "BinlogFilename": self.binlog_filename,
            "NumberOfErroneousEvents": self.erroneous_events,
            "NumberOfConvertingFailures": converting_failures.count,
            "BinlogPosition": self.binlog_position,
            "GtidSet": self.gtid_set,
            "MilliSecondsBehindSource": self.millis_behind_source,
            "MilliSecondsSinceLastEvent": since,
            **self.lag.attributes(),
            # by table: empty (no series) unless internal.advanced.metrics.enable
            "NumberOfCreateEventsSeen": dict(self.by_table["c"]),
            "NumberOfUpdateEventsSeen": dict(self.by_table["u"]),
            "NumberOfDeleteEventsSeen": dict(self.by_table["d"]),
        }


class SignalMetrics:
    """The signals a task received and the ones it skipped (``cdc_mysql_signals_received_total`` and
    ``cdc_mysql_signals_skipped_total{server}``, cdc's own: Debezium only logs a skipped signal), and the
    last one skipped, for the task's REST status. A signal is skipped when it cannot be acted on (bad JSON,
    an unsafe filter, a pattern past its time budget, a query the server refuses): it is logged, counted,
    and the stream goes on past it, so it is never acted on again."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.received = 0
        self.skipped = 0
        self.last_skipped: dict[str, str] | None = None
        self._lock = threading.Lock()

    def register(self) -> None:
        REGISTRY.add(("signals", self.server), self)

    def unregister(self) -> None:
        REGISTRY.remove(("signals", self.server))

    def skip(self, signal_id: str, kind: str, channel: str, reason: str) -> None:
        with self._lock:
            self.skipped += 1
            self.last_skipped = {"id": signal_id, "type": kind, "channel": channel, "reason": reason}

    def status(self) -> dict[str, Any] | None:
        """``{"skipped": n, "last_skipped": {id, type, channel, reason}}`` once one was skipped."""
        with self._lock:
            if not self.skipped:
                return None
            return {"skipped": self.skipped, "last_skipped": dict(self.last_skipped or {})}

    def readings(self) -> Iterator[Reading]:
        labels = {"server": self.server}
        connector = REGISTRY.connector_of(self.server)
        if connector is not None:
            labels["connector"] = connector  # as Debezium's series of the same server carry it
        yield Reading(
            "cdc_mysql_signals_received", self.received, labels, "Signals the task received", counter=True
        )
        yield Reading(
            "cdc_mysql_signals_skipped",
            self.skipped,
            labels,
            "Signals the task could not act on, logged and skipped",
            counter=True,
        )


class _StreamingProblems:
    """cdc's own counters of binlog events it cannot capture as they are (not Debezium's: it only logs)."""

    def __init__(self, metrics: StreamingMetrics) -> None:
        self.metrics = metrics

    def readings(self) -> Iterator[Reading]:
        server = self.metrics.server
        for table, count in sorted(self.metrics.partial_row_images.items()):
            yield Reading(
                "cdc_mysql_streaming_partial_row_images",
                count,
                {"server": server, "table": table},
                "Rows events with partial row images (binlog_row_image=MINIMAL), failed on or skipped",
                counter=True,
            )
        yield Reading(
            "cdc_mysql_streaming_unavailable_values",
            self.metrics.unavailable_values,
            {"server": server},
            "BLOB/TEXT values left out by binlog_row_image=NOBLOB, emitted as unavailable.value.placeholder",
            counter=True,
        )
        for table, count in sorted(self.metrics.statement_events.items()):
            yield Reading(
                "cdc_mysql_streaming_statement_events",
                count,
                {"server": server, "table": table},
                "Statement-based DML on captured tables (binlog_format not ROW): changes not captured",
                counter=True,
            )
