"""Binlog streaming: our own ``BinlogReader`` around mysql-replication, and the event dispatcher.

mysql-replication decodes the protocol; everything about positions is ours. The library's silent
reconnect (which replays from its original position) is disabled, and :class:`Streamer` reconnects
itself from its checkpoint: the start of the current transaction plus the number of events and rows
already emitted — the same rule a restart from the committed offset follows, so neither a lost
connection nor a crash mid-transaction emits a row twice or skips one.

The counts are Debezium's, so that either connector resumes from the other's offset: ``event`` is the
number of the transaction's events completed before the current one, its GTID (or BEGIN) and every
TABLE_MAP included; ``row`` is the number of the current rows event's rows emitted (all of them after
its last row). A rows event whose index is below ``event`` is skipped on restart, the one at ``event``
loses its first ``row`` rows.

Positions are kept by file/pos, which works on both MySQL and MariaDB (mysql-replication's MariaDB GTID
positioning has a framing bug, see libraries.md); the GTID sets of completed transactions are carried
in the offsets as Debezium writes them.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import pymysqlreplication.binlogstream as _binlogstream
from pymysql.err import OperationalError
from pymysqlreplication.event import (
    GtidEvent,
    HeartbeatLogEvent,
    MariadbAnnotateRowsEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XidEvent,
)
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from cdc.api.errors import ConnectError
from cdc.api.records import SourceRecord
from cdc.api.struct import Struct
from cdc.history.model import TableId
from cdc.history.positions import GtidSet
from cdc.mysql.binlog import BinlogReader, FastGtid, FastQuery, FastRows, FastXid
from cdc.mysql.capture import CaptureContext
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import SourcePosition
from cdc.mysql.metrics import StreamingMetrics
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.row_images import ImageCheck, check_images, fill_unavailable, partial_error
from cdc.mysql.rowdecoder import RowDecoder
from cdc.mysql.server_ids import SameIdGuard, is_same_id_error, report_host
from cdc.mysql.statements import StatementDml
from cdc.mysql.stream_hooks import NO_HOOKS, StreamHooks
from cdc.mysql.tablemap import TableMaps

__all__ = [
    "STREAM_EVENTS",
    "BinlogPurgedError",
    "EventReader",
    "ReaderFactory",
    "Streamer",
    "binlog_reader_factory",
]

log = logging.getLogger(__name__)

# Errors 2013/2006 must reach us: the library's own reconnect restarts from its *original* position.
_binlogstream.MYSQL_EXPECTED_ERROR_CODES = []


class _RowMetadataAdvice(logging.Filter):
    """Drops the library's advice to set binlog_row_metadata=FULL: cdc reads names from its own model."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "BINLOG_ROW_METADATA = FULL" not in record.getMessage()


logging.getLogger(_binlogstream.__name__).addFilter(_RowMetadataAdvice())

# The library's event classes the streamer asks for (BinlogReader reads the frequent ones itself).
STREAM_EVENTS = (
    WriteRowsEvent,
    UpdateRowsEvent,
    DeleteRowsEvent,
    QueryEvent,
    XidEvent,
    RotateEvent,
    GtidEvent,
    MariadbGtidEvent,
    HeartbeatLogEvent,
)
# With include.query: the statement of the row events that follow (MariaDB's ANNOTATE_ROWS, written with
# binlog_annotate_row_events=ON; MySQL's ROWS_QUERY, with binlog_rows_query_log_events=ON).
QUERY_EVENTS = (MariadbAnnotateRowsEvent, RowsQueryLogEvent)
_ROW_EVENTS = (FastRows, WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)
_GTID_EVENTS = (FastGtid, GtidEvent, MariadbGtidEvent)
_RETRIABLE_CODES = {2003, 2006, 2013, 2055, 1053, 1927}


class BinlogPurgedError(ConnectError):
    pass


class EventReader(Protocol):
    """A source of binlog events: the library's events (or ours, :mod:`cdc.mysql.binlog`), None at the
    end; an :class:`OperationalError` for a lost connection."""

    table_maps_read: int
    """TABLE_MAP events read so far (Debezium counts them in an offset's ``event``)."""

    def fetchone(self) -> Any: ...

    def close(self) -> None: ...


ReaderFactory = Callable[[BinlogOffset], EventReader]
"""Opens an event source at an offset's file and position."""


def binlog_reader_factory(settings: MySqlSettings, mariadb: bool = False) -> ReaderFactory:
    """Our :class:`BinlogReader` on the connector's server, as a replica with its ``database.server.id``;
    with ``include.query`` it asks for the statements of row events too (on MariaDB: ANNOTATE_ROWS)."""
    events = [*STREAM_EVENTS, *(QUERY_EVENTS if settings.include_query else ())]

    def open_reader(start: BinlogOffset) -> EventReader:
        return BinlogReader(
            connection_settings={
                "host": settings.database_hostname,
                "port": settings.database_port,
                "user": settings.database_user,
                "password": settings.password,
            },
            server_id=settings.database_server_id,
            # registered under a name of its own: validate tells this connector's connection from others'
            report_slave=report_host(settings.prefix),
            resume_stream=True,
            log_file=start.file,
            log_pos=start.pos,
            blocking=True,
            only_events=events,
            annotate_rows=settings.include_query and mariadb,
            slave_heartbeat=1,
            is_mariadb=False,
            freeze_schema=True,
            enable_logging=False,
            # the replication connection and the library's control connection, with database.ssl.*'s TLS
            pymysql_wrapper=settings.tls.pymysql_connect,
        )

    return open_reader


class Streamer:
    """Streams the binlog from an offset through the shared :class:`CaptureContext`.

    ``reader_factory`` opens the event source at an offset (default: :func:`binlog_reader_factory`, a
    :class:`BinlogReader` on the server); a unit test gives one that replays recorded events.
    """

    def __init__(
        self,
        ctx: CaptureContext,
        metrics: StreamingMetrics,
        reader_factory: ReaderFactory | None = None,
    ) -> None:
        settings = ctx.settings
        self.settings = settings
        self.schema = ctx.schema
        self.events = ctx.events
        self.filters = ctx.filters
        self.schema_events = ctx.schema_events
        self.emit = ctx.emit
        self.stopping = ctx.stopping
        self.metrics = metrics
        self.mariadb = ctx.mariadb
        self.reader_factory = reader_factory or binlog_reader_factory(settings, ctx.mariadb)
        self._row_decoder = RowDecoder()
        self.heartbeat_ms = settings.heartbeat_interval_ms
        self.max_retries = settings.errors_max_retries
        self.include_query = settings.include_query
        self.row_query: str | None = None
        self.event_failure_mode = settings.event_processing_failure_handling_mode.lower()
        self.inconsistent_mode = settings.inconsistent_schema_handling_mode.lower()
        self.placeholder = settings.unavailable_value_placeholder
        self.statements = StatementDml(ctx.filters, metrics)
        self.same_id = SameIdGuard(settings)
        # Position state.
        self.file = ""
        self.next_pos = 4
        self.tx_start = 4
        self.in_tx = False
        self.tx_gtid: str | None = None
        self.tx_thread: int | None = None
        self.completed_gtids: str | None = None
        self.events_done = 0  # Debezium's count of the transaction's completed events
        self.maps_seen = 0  # the reader's TABLE_MAP count when events_done was last brought up to date
        self.binlog: EventReader | None = None
        self.last_row = 0  # the last rows event's last row number (Debezium's source.row of a DDL)
        self.skip_events = 0
        self.skip_rows = 0
        self.server_id = 0
        self.ts_sec = 0
        self._last_emit = time.monotonic()
        self.event_start = 4
        self._gtids = _CompletedGtids(ctx.mariadb)
        self.table_maps = TableMaps()
        self.hooks: StreamHooks = NO_HOOKS
        """Signals and the incremental snapshot (:mod:`cdc.mysql.stream_hooks`); set by the task."""

    # -- offsets ------------------------------------------------------------------------------------------
    def checkpoint(self) -> BinlogOffset:
        """Where to resume: the current transaction's start (and what of it is done), or the next event."""
        if self.in_tx:
            return BinlogOffset(
                self.file,
                self.tx_start,
                self.completed_gtids,
                self.events_done,
                0,
                self.server_id,
                self.ts_sec,
            )
        return BinlogOffset(self.file, self.next_pos, self.completed_gtids, 0, 0, self.server_id, self.ts_sec)

    # -- the loop --------------------------------------------------------------------------------------------
    def run(self, start: BinlogOffset) -> None:
        self.file, self.next_pos, self.tx_start = start.file, start.pos, start.pos
        self.completed_gtids = start.gtids
        self.skip_events, self.skip_rows = start.event, start.row
        self.server_id, self.ts_sec = start.server_id, start.ts_sec
        try:
            self.hooks.on_start()
            self._run()
        finally:
            self.hooks.close()

    def _run(self) -> None:
        backoff = 1.0
        retries = 0
        while not self.stopping.is_set():
            resume = self.checkpoint()
            same_id = False
            try:
                self._stream(resume)
                backoff = 1.0
            except OperationalError as exc:
                code = exc.args[0] if exc.args else 0
                message = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
                if is_same_id_error(code, message):
                    same_id = self.same_id.disconnect(message, exc)
                elif code == 1236:
                    raise BinlogPurgedError(
                        f"The connector is trying to read binlog starting at file '{resume.file}', position "
                        f"{resume.pos}"
                        + (f" (GTIDs {resume.gtids})" if resume.gtids else "")
                        + f", but this is no longer available on the server: {message}. Reconfigure the "
                        "connector to use a snapshot when needed (snapshot.mode=when_needed) to take a new "
                        "snapshot, or delete the connector's offsets and restart it."
                    ) from exc
                elif code not in _RETRIABLE_CODES and code < 2000:
                    raise
                self.metrics.connected = False
                self.metrics.disconnects += 1
                log.warning(
                    "Binlog connection lost (%s); reconnecting from %s:%s in %.1fs",
                    message,
                    self.file,
                    self.tx_start if self.in_tx else self.next_pos,
                    backoff,
                )
                # Re-reading the transaction from its start means skipping what was already emitted.
                restart = self.checkpoint()
                if restart != resume and not same_id:
                    backoff = 1.0  # this connection made progress: the next loss is a new incident
                    retries = 0
                retries += 1
                if 0 <= self.max_retries < retries:
                    raise ConnectError(
                        f"The binlog connection failed {retries} time(s) in a row ({message}); giving up "
                        f"after errors.max.retries={self.max_retries} retries"
                    ) from exc
                self.next_pos, self.skip_events, self.skip_rows = restart.pos, restart.event, restart.row
                self.in_tx = False
                if self.stopping.wait(backoff):
                    return
                backoff = min(backoff * 2, 30.0)

    def _stream(self, start: BinlogOffset) -> None:
        reader = self.reader_factory(start)
        self.binlog = reader
        self.maps_seen = reader.table_maps_read
        self.metrics.connected = True
        self.file, self.next_pos = start.file, start.pos
        try:
            for event in self._events(reader):
                self._dispatch(event)
                if self.stopping.is_set():
                    return
                if not self.in_tx:
                    self.hooks.on_idle()
                self._maybe_heartbeat()
        finally:
            reader.close()

    def _events(self, reader: EventReader) -> Iterator[Any]:
        while not self.stopping.is_set():
            event = reader.fetchone()
            if event is None:
                return
            yield event

    # -- dispatch -----------------------------------------------------------------------------------------
    def _dispatch(self, event: Any) -> None:
        if isinstance(event, HeartbeatLogEvent):
            return
        if isinstance(event, QUERY_EVENTS):
            # One of the transaction's events, as Debezium counts it (the server sends it only with
            # include.query: Debezium's offsets then say event=3 for the first rows event, seen side by side)
            text = event.query if isinstance(event, RowsQueryLogEvent) else event.sql_statement
            self.row_query = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
            if self.in_tx:
                self.events_done += 1
            return
        if isinstance(event, RotateEvent):
            self.file = event.next_binlog
            self.next_pos = int(event.position)
            self.metrics.binlog_filename = self.file
            return
        # An event starts where the previous one ended. (Not log_pos - event_size: a MariaDB server
        # rewrites GTID events as BEGIN queries of another size for clients like ours.)
        self.event_start = self.next_pos
        self.ts_sec = int(event.timestamp)
        self.server_id = int(event.packet.server_id)
        if isinstance(event, _GTID_EVENTS):
            self._begin(event, str(event.gtid))
            if not isinstance(event, GtidEvent) and (int(getattr(event, "flags", 0)) & 1):
                self.in_tx = False  # FL_STANDALONE: a DDL follows, no transaction
            return
        if isinstance(event, (FastQuery, QueryEvent)):
            self._query(event)
        elif isinstance(event, (FastXid, XidEvent)):
            self._commit(event)
        elif isinstance(event, _ROW_EVENTS):
            self._rows(event)
        self.next_pos = int(event.packet.log_pos) or self.next_pos
        self.metrics.binlog_position = self.next_pos

    def _maps_read(self) -> int:
        return self.binlog.table_maps_read if self.binlog is not None else 0

    def _begin(self, event: Any, gtid: str | None) -> None:
        self.in_tx = True
        self.tx_start = self.event_start
        self.tx_gtid = gtid
        self.events_done = 1  # the GTID (or BEGIN) event itself, as Debezium counts it
        self.maps_seen = self._maps_read()
        self.row_query = None

    def _query(self, event: Any) -> None:
        query = event.query.strip() if isinstance(event.query, str) else bytes(event.query).decode()
        upper = query[:10].upper()
        if upper.startswith("BEGIN"):
            if not self.in_tx or self.tx_gtid is None:
                self._begin(event, self.tx_gtid if self.in_tx else None)
            self.in_tx = True
            self.tx_thread = int(getattr(event, "slave_proxy_id", 0) or 0) or None
            return
        if upper.startswith("COMMIT"):
            self._commit(event)
            return
        if upper.startswith(("SAVEPOINT", "ROLLBACK", "XA ")):
            return
        database = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema or "")
        if self.statements.on_query(query, database or None, self.file, _start_of(event, self.event_start)):
            return  # DML logged as a statement: warned about, not captured
        self._ddl(event, query, database or None)

    def _commit(self, event: Any) -> None:
        if self.tx_gtid:
            self.completed_gtids = self._gtids.add(self.completed_gtids, self.tx_gtid)
        self.in_tx = False
        self.tx_gtid = None
        self.row_query = None
        self.events_done = 0
        self.skip_events = self.skip_rows = 0
        self.next_pos = int(event.packet.log_pos)
        self.metrics.committed_transactions += 1
        self.metrics.gtid_set = self.completed_gtids or ""

    def _ddl(self, event: QueryEvent, query: str, database: str | None) -> None:
        gtid, gtids_before = self.tx_gtid, self.completed_gtids
        start = _start_of(event, self.event_start)
        # A DDL with a GTID is recorded (history, schema change and truncate records' offsets) at the
        # position before it, as Debezium does: its GTID event counted as the one event done and the GTID set
        # without it; a restart there applies the DDL again, which the parser tolerates (it is idempotent).
        before = BinlogOffset(self.file, self.tx_start, gtids_before, 1, 0, self.server_id, self.ts_sec)
        if self.tx_gtid:
            self.completed_gtids = self._gtids.add(self.completed_gtids, self.tx_gtid)
            self.tx_gtid = None
        self.in_tx = False
        self.next_pos = int(event.packet.log_pos)
        if self.skip_events or self.skip_rows:
            self.skip_events = self.skip_rows = 0
        offset = BinlogOffset(
            self.file, self.next_pos, self.completed_gtids, 0, 0, self.server_id, self.ts_sec
        )
        history_position = (before if gtid else offset).position()
        record_offset = history_position
        # row: Debezium's source keeps the last rows event's row number on a DDL (it is not reset)
        pos = SourcePosition(self.file, start, self.server_id, self.ts_sec, gtid, self.last_row)
        truncate = bool(_TRUNCATE.match(query))
        if not truncate and self.schema.ignores(query):
            return  # Debezium's ddl.filter (grants, users, views, routines, ...): no history, no record
        drop_tables = bool(_DROP_TABLE.match(query))
        try:
            # Debezium keeps TRUNCATE out of the history and the schema change topic (a data event only),
            # and records a DROP TABLE once per table, as DROP TABLE `db`.`t`
            changes = self.schema.apply_ddl(
                query, database, history_position, record=not (truncate or drop_tables)
            )
        except Exception:
            if self.event_failure_mode == "fail":
                raise
            log.warning("Skipping DDL that failed to apply: %s", query, exc_info=True)
            return
        for change in changes:
            self.events.forget(self.schema._change_id(change))
        records: list[SourceRecord] = []
        if truncate:
            records.extend(self._truncates(query, database, pos, record_offset))
        elif drop_tables:
            for change in changes:
                text = f"DROP TABLE {self.schema._change_id(change).sql()}"
                self.schema.record(text, database, history_position, [change])
                records += self.schema_events.records(text, database, [change], pos, record_offset)
        else:
            records = self.schema_events.records(query, database, changes, pos, record_offset)
        if records:
            self._emit(records)

    def _truncates(
        self, query: str, database: str | None, pos: SourcePosition, offset: dict[str, Any]
    ) -> list[SourceRecord]:
        out: list[SourceRecord] = []
        for table_id in _truncated_tables(query, database):
            table = self.schema.table(table_id)
            if table is None or not self.filters.table(table_id):
                continue
            ts = self.events.schema_for(table)
            source = self.events.source(pos, table_id, self.ts_sec * 1000, None)
            out.extend(self.events.truncate(ts, source, offset))
        return out

    def _rows(self, event: Any) -> None:
        maps = self._maps_read()
        if not self.in_tx:  # a row event outside BEGIN…COMMIT (non-transactional table)
            self.in_tx = True
            self.tx_start = self.event_start
            self.events_done = 0
        else:
            self.events_done += maps - self.maps_seen  # the TABLE_MAP events since the last rows event
        self.maps_seen = maps
        index = self.events_done
        self.events_done += 1
        if self.skip_events > index:
            self.metrics.skipped_events += 1
            return
        first_row = self.skip_rows if self.skip_events == index else 0
        if self.skip_events == index:
            self.skip_events = self.skip_rows = 0
        table_id = TableId(str(event.schema), str(event.table))
        if not self.filters.table(table_id):
            self.metrics.filtered += 1
            return
        table = self.schema.table(table_id)
        if table is None:
            self._inconsistent(table_id)
            return
        library_table = event.table_obj if type(event) is FastRows else event.table_map.get(event.table_id)
        if library_table is None or not self.table_maps.prepare(event.table_id, library_table, table):
            self._inconsistent(table_id, "its binlog table map has other columns than the schema history's")
            return
        kind = _kind(event)
        # Partial images are refused before anything of the event is decoded or emitted.
        images = check_images(
            kind,
            event.columns_present_bitmap,
            getattr(event, "columns_present_bitmap2", b"") if kind == "u" else b"",
            library_table.columns,
        )
        if images is not None and images.partial:
            self._partial_image(event, table_id, images, [str(c.name) for c in library_table.columns])
            return
        try:
            records = self._row_records(event, table, table_id, first_row, kind, images)
        except Exception:
            self.metrics.erroneous_events += 1
            if self.event_failure_mode == "fail":
                raise
            log.warning(
                "Skipping binlog event at %s:%s that could not be processed",
                self.file,
                self.event_start,
                exc_info=self.event_failure_mode == "warn",
            )
            return
        if records:
            self.hooks.on_rows(table_id, records)
            self._emit(records)

    def _partial_image(self, event: Any, table_id: TableId, check: ImageCheck, names: list[str]) -> None:
        """A MINIMAL image: fail (the default), or skip the event with a WARN (warn) or without (skip)."""
        self.metrics.erroneous_events += 1
        key = str(table_id)
        self.metrics.partial_row_images[key] = self.metrics.partial_row_images.get(key, 0) + 1
        start = _start_of(event, self.event_start)
        error = partial_error(check, key, self.file, start, names, self.event_failure_mode)
        if self.event_failure_mode == "fail":
            raise error
        if self.event_failure_mode == "warn":
            log.warning("Skipping the binlog event at %s:%s: %s", self.file, start, error)

    def _row_records(
        self,
        event: Any,
        table: Any,
        table_id: TableId,
        first_row: int,
        kind: str,
        partial: ImageCheck | None = None,
    ) -> list[SourceRecord]:
        ts = self.events.schema_for(table)
        names = ts.column_names
        update = kind == "u"
        # Rows as lists in our column order: one image per row, (before, after) for updates. The
        # precompiled decoder reads the event's bytes; None means "use the library's rows" (unusual
        # types or events), which then go through _ordered exactly as before.
        images = self._row_decoder.ordered(event, names)
        if images is None:
            images = []
            library = event.library_event() if type(event) is FastRows else event
            for row in library.rows:
                if update:
                    images.append(_ordered(row["before_values"], names, row.get("before_none_sources")))
                    images.append(_ordered(row["after_values"], names, row.get("after_none_sources")))
                else:
                    images.append(_ordered(row["values"], names, row.get("none_sources")))
        if partial is not None:  # NOBLOB: the left-out BLOB/TEXT values are Debezium's placeholder
            self.metrics.unavailable_values += self._unavailable(images, update, partial, table, names)
        self.hooks.on_row_images(table_id, images)
        n = len(images) // 2 if update else len(images)
        event_index = self.events_done - 1  # this event's index in the transaction (Debezium's ``event``)
        ts_ms = int(event.timestamp) * 1000
        # Per event once: the offset's fixed part (Debezium's key order) and the source block's template;
        # per row only the event/row counts and the row index change.
        base: dict[str, Any] = {"ts_sec": self.ts_sec, "file": self.file, "pos": self.tx_start}
        if self.completed_gtids:
            base["gtids"] = self.completed_gtids
        tail = {"server_id": self.server_id} if self.server_id else {}
        pos = SourcePosition(
            self.file,
            _start_of(event, self.event_start),
            self.server_id,
            self.ts_sec,
            self.tx_gtid,
            0,
            self.tx_thread,
            self.row_query if self.include_query else None,
        )
        source_schema, template, row_field = self.events.source_template(pos, table_id, ts_ms, None)
        events = self.events
        out: list[SourceRecord] = []
        for i in range(first_row, n):
            # Debezium's row count: after the last row, all n rows (the event is counted once it is over)
            # in Debezium's order (DEBEZIUM_OFFSET_ORDER: row, then server_id before event)
            offset = {**base, "row": i + 1, **tail}
            if event_index:
                offset["event"] = event_index
            values = template.copy()
            values[row_field] = i
            source = Struct(source_schema, values)
            if kind == "c":
                out.extend(events.create(ts, images[i], source, offset))
            elif kind == "u":
                out.extend(events.update(ts, images[2 * i], images[2 * i + 1], source, offset))
            else:
                out.extend(events.delete(ts, images[i], source, offset))
        emitted = n - first_row
        self.last_row = max(n - 1, 0)
        if kind == "c":
            self.metrics.creates += emitted
        elif kind == "u":
            self.metrics.updates += emitted
        else:
            self.metrics.deletes += emitted
        self.metrics.events(ts_ms, emitted)
        return out

    def _unavailable(
        self, images: list[list[Any]], update: bool, check: ImageCheck, table: Any, names: list[str]
    ) -> int:
        at = {name: i for i, name in enumerate(names)}
        positions = [at.get(c.name) for c in table.columns]
        binary = [c.base_type in _BINARY_BLOBS for c in table.columns]
        return fill_unavailable(images, update, check, positions, binary, self.placeholder)

    def _inconsistent(self, table_id: TableId, why: str = "") -> None:
        message = (
            f"Encountered change event for table {table_id} whose schema isn't known to this connector "
            + (f"({why}) " if why else "")
            + "(inconsistent.schema.handling.mode)"
        )
        if self.inconsistent_mode == "fail":
            raise ConnectError(
                message + ". The schema history may be incomplete; consider snapshot.mode=recovery."
            )
        if self.inconsistent_mode == "warn":
            log.warning("%s; skipping the event", message)

    def _emit(self, records: list[SourceRecord]) -> None:
        self._last_emit = time.monotonic()
        if not self.emit(self.hooks.decorate(records)):
            raise InterruptedError("stopping")

    def _maybe_heartbeat(self) -> None:
        if not self.heartbeat_ms or self.in_tx:
            return
        if (time.monotonic() - self._last_emit) * 1000 >= self.heartbeat_ms:
            self._last_emit = time.monotonic()
            record = self.schema_events.heartbeat(self.checkpoint().to_dict())
            self.emit(self.hooks.decorate([record]))


_TRUNCATE = re.compile(
    r"^\s*TRUNCATE\s+(?:TABLE\s+)?(?:`((?:[^`]|``)+)`|(\w+))"
    r"(?:\s*\.\s*(?:`((?:[^`]|``)+)`|(\w+)))?",
    re.IGNORECASE,
)


def _truncated_tables(query: str, database: str | None) -> list[TableId]:
    m = _TRUNCATE.match(query)
    if not m:
        return []
    first = (m.group(1) or m.group(2) or "").replace("``", "`")
    second = (m.group(3) or m.group(4) or "").replace("``", "`")
    if second:
        return [TableId(first, second)]
    return [TableId(database or "", first)] if database else []


_DROP_TABLE = re.compile(r"\s*DROP\s+(?:TEMPORARY\s+)?TABLES?\b", re.IGNORECASE)


_BINARY_BLOBS = frozenset({"TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})


def _kind(event: Any) -> str:
    if type(event) is FastRows:
        return event.kind
    if isinstance(event, UpdateRowsEvent):
        return "u"
    return "c" if isinstance(event, WriteRowsEvent) else "d"


def _start_of(event: Any, fallback: int) -> int:
    """Where a rows or query event starts, as Debezium's ``source.pos`` names it: its end less its size.
    (The event before it may be a Table_map or Annotate_rows event the reader does not hand over.)"""
    end, size = int(event.packet.log_pos or 0), int(event.packet.event_size or 0)
    return end - size if end and size else fallback


def _ordered(
    values: dict[str, Any], names: list[str], none_sources: dict[str, str] | None = None
) -> list[Any]:
    row = [values.get(n) for n in names]
    if none_sources:
        # mysql-replication decodes an empty SET as None; the row holds '' (as the snapshot reads it).
        for i, n in enumerate(names):
            if row[i] is None and none_sources.get(n) == "empty set":
                row[i] = ""
    return row


class _CompletedGtids:
    """The GTID set of completed transactions, kept parsed between transactions.

    Parsing the set's text and printing it again for every transaction cost more than decoding a
    one-row transaction; the parsed set is kept and re-parsed only when the text it came from is no
    longer the streamer's (a new start, a DDL path that set it). A MariaDB set is one ``domain-server-seq``
    per domain: a transaction whose domain is the set's only one with the same server just changes
    the sequence number, without a regex or a sort.
    """

    __slots__ = ("mariadb", "parsed", "seq", "simple", "text")

    def __init__(self, mariadb: bool) -> None:
        self.mariadb = mariadb
        self.text: str | None = None
        self.parsed: GtidSet | None = None
        self.simple: str | None = None  # "domain-server-" when the set is that domain's only entry
        self.seq = 0  # its sequence number

    def add(self, current: str | None, gtid: str) -> str:
        if (
            self.simple is not None
            and current is self.text
            and gtid.startswith(self.simple)
            and (seq := int(gtid[len(self.simple) :])) >= self.seq
        ):
            text = gtid  # the only domain moved on: the set is this GTID
            self.seq = seq
        else:
            if current is not self.text or self.parsed is None:
                self.parsed = GtidSet(current or "", self.mariadb)
            self.parsed.add(gtid)
            text = str(self.parsed)
            self.simple = None
            if self.mariadb and "," not in text and text == gtid.strip():
                self.simple = gtid[: gtid.rindex("-") + 1]
                self.seq = int(gtid[len(self.simple) :])
                self.parsed = None  # re-parsed from the text when the fast case ends
        self.text = text
        return text
