"""Binlog streaming: the :class:`Streamer`'s positions, transactions and reconnects, and its event dispatch.

The events come from an :class:`EventReader` (:mod:`cdc.mysql.binlog_source`: our ``BinlogReader`` around
mysql-replication) as :mod:`cdc.mysql.binlog_events`' types, and go through a table of handlers, one per
type. The streamer keeps the position; a rows event's records are built by
:class:`~cdc.mysql.row_changes.RowChanges`, a DDL's by :class:`~cdc.mysql.ddl_changes.DdlChanges`, every
offset map by :class:`~cdc.mysql.offsets.StreamPosition`.

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
import time
from collections.abc import Callable, Iterator
from typing import TypeVar, cast

from pymysql.err import OperationalError

from cdc.api.errors import ConnectError
from cdc.api.records import SourceRecord
from cdc.history.model import Table, TableId
from cdc.mysql.binlog_events import (
    BinlogEvent,
    Gtid,
    Heartbeat,
    Other,
    Query,
    Rotate,
    Rows,
    RowsQuery,
    Xid,
)
from cdc.mysql.binlog_source import (
    QUERY_EVENTS,
    STREAM_EVENTS,
    EventReader,
    ReaderFactory,
    binlog_reader_factory,
)
from cdc.mysql.capture import CaptureContext
from cdc.mysql.ddl_changes import DdlChanges
from cdc.mysql.events import SourcePosition
from cdc.mysql.filters import quoted_table_id
from cdc.mysql.gtid_filter import GtidSourceFilter
from cdc.mysql.gtids import CompletedGtids
from cdc.mysql.heartbeats import HeartbeatAction
from cdc.mysql.metrics import StreamingMetrics
from cdc.mysql.offsets import BinlogOffset, StreamPosition
from cdc.mysql.row_changes import RowChanges
from cdc.mysql.row_images import ImageCheck, check_images, partial_error
from cdc.mysql.server_ids import SameIdGuard, is_same_id_error
from cdc.mysql.statements import StatementDml
from cdc.mysql.stream_hooks import NO_HOOKS, StreamHooks
from cdc.mysql.tablemap import TableMaps
from cdc.mysql.transactions import TransactionMetadata, transaction_id

__all__ = [
    "QUERY_EVENTS",
    "STREAM_EVENTS",
    "BinlogPurgedError",
    "EventReader",
    "ReaderFactory",
    "Streamer",
    "binlog_reader_factory",
]

log = logging.getLogger(__name__)

_RETRIABLE_CODES = {2003, 2006, 2013, 2055, 1053, 1927}


class BinlogPurgedError(ConnectError):
    pass


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
        self.rows = RowChanges(ctx.events, metrics, settings.unavailable_value_placeholder)
        self.heartbeat_ms = settings.heartbeat_interval_ms
        self.max_retries = settings.errors_max_retries
        self.keep_alive = settings.connect_keep_alive
        self.include_query = settings.include_query
        self.row_query: str | None = None
        self.signal_quoted = quoted_table_id(settings.signal_data_collection) if ctx.mariadb else None
        self.event_failure_mode = settings.event_processing_failure_handling_mode.lower()
        self.ddl = DdlChanges(ctx.schema, ctx.events, ctx.filters, ctx.schema_events, self.event_failure_mode)
        self.inconsistent_mode = settings.inconsistent_schema_handling_mode.lower()
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
        self._gtids = CompletedGtids(ctx.mariadb)
        self.table_maps = TableMaps()
        self.hooks: StreamHooks = NO_HOOKS
        # provide.transaction.metadata (cdc.mysql.transactions): BEGIN/END records, blocks and offset fields
        tx = settings.provide_transaction_metadata
        self.transactions = TransactionMetadata(settings, ctx.events.partition) if tx else None
        self.heartbeat_action = HeartbeatAction(settings)  # heartbeat.action.query, run with each heartbeat
        self.gtid_filter = GtidSourceFilter.of(settings)  # gtid.source.includes/excludes
        self.last_event_ts_ms = 0  # the time of the event before the current one (BEGIN/END's ts_ms)
        self.source_ts_sec = (
            0  # Debezium's source time: of the last captured change or DDL (BEGIN/END's ts_sec)
        )
        """Signals and the incremental snapshot (:mod:`cdc.mysql.stream_hooks`); set by the task."""
        # The dispatch table: each event type's handler.
        self._handlers: dict[type, Callable[[BinlogEvent], None]] = dict(
            (
                _handler(Rows, self._on_rows),
                _handler(Query, self._on_query),
                _handler(Xid, self._on_xid),
                _handler(Gtid, self._on_gtid),
                _handler(Rotate, self._on_rotate),
                _handler(RowsQuery, self._on_rows_query),
                _handler(Heartbeat, _ignore),
                _handler(Other, self._on_other),
            )
        )

    # -- offsets ------------------------------------------------------------------------------------------
    def checkpoint(self) -> BinlogOffset:
        """Where to resume: the current transaction's start (and what of it is done), or the next event."""
        if self.in_tx:
            return self._position(self.tx_start).resume(self.events_done)
        return self._position(self.next_pos).resume()

    def _position(self, pos: int) -> StreamPosition:
        return StreamPosition(self.file, pos, self.completed_gtids, self.server_id, self.ts_sec)

    # -- the loop --------------------------------------------------------------------------------------------
    def run(self, start: BinlogOffset) -> None:
        self.file, self.next_pos, self.tx_start = start.file, start.pos, start.pos
        self.completed_gtids = self.gtid_filter.retain(start.gtids)
        self.skip_events, self.skip_rows = start.event, start.row
        self.server_id, self.ts_sec = start.server_id, start.ts_sec
        self.source_ts_sec = start.ts_sec
        try:
            self.hooks.on_start()
            self._run()
        finally:
            self.hooks.close()
            self.heartbeat_action.close()

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
                elif not self.keep_alive:
                    raise ConnectError(
                        f"The binlog connection was lost ({message}) at {self.file}:"
                        f"{self.tx_start if self.in_tx else self.next_pos}; connect.keep.alive=false: the "
                        "binlog client does not reconnect. Restart the task, or set connect.keep.alive=true "
                        "to reconnect (up to errors.max.retries times in a row)"
                    ) from exc
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
        handlers = self._handlers  # _dispatch, inlined: this loop runs for every binlog event
        try:
            for event in self._events(reader):
                handlers[type(event)](event)
                # after handling it, as Debezium's onEvent (rotate, heartbeat, annotate events have a
                # timestamp of 0: no time)
                if event.timestamp:
                    self.last_event_ts_ms = event.timestamp * 1000
                if self.stopping.is_set():
                    return
                if not self.in_tx:
                    self.hooks.on_idle()
                self._maybe_heartbeat()
        finally:
            reader.close()

    def _events(self, reader: EventReader) -> Iterator[BinlogEvent]:
        while not self.stopping.is_set():
            event = reader.read()
            if event is None:
                return
            yield event

    # -- dispatch -----------------------------------------------------------------------------------------
    def _dispatch(self, event: BinlogEvent) -> None:
        self._handlers[type(event)](event)

    def _on_rows_query(self, event: RowsQuery) -> None:
        # One of the transaction's events, as Debezium counts it (the server sends it only with
        # include.query: Debezium's offsets then say event=3 for the first rows event, seen side by side)
        # Debezium's MariaDB connector does not take an ANNOTATE_ROWS query that names its signal table
        # (`db`.`table`, as its watermark INSERTs and cdc's spell it): the rows keep the transaction's query
        # before it, null if none (MariaDbStreamingChangeEventSource.handleRecordingQuery).
        if self.signal_quoted is None or self.signal_quoted not in event.query.lower():
            self.row_query = event.query
        if self.in_tx:
            self.events_done += 1

    def _on_rotate(self, event: Rotate) -> None:
        self.file = event.next_binlog
        self.next_pos = event.position
        self.metrics.binlog_filename = self.file

    def _started(self, event: Gtid | Query | Xid | Rows | Other) -> None:
        # An event starts where the previous one ended. (Not log_pos - event_size: a MariaDB server
        # rewrites GTID events as BEGIN queries of another size for clients like ours.)
        self.event_start = self.next_pos
        self.ts_sec = event.timestamp
        self.server_id = event.server_id

    def _ended(self, event: Query | Xid | Rows | Other) -> None:
        self.next_pos = event.log_pos or self.next_pos
        self.metrics.binlog_position = self.next_pos

    def _on_gtid(self, event: Gtid) -> None:
        self._started(event)
        self._begin(event.gtid)
        if event.standalone:
            self.in_tx = False  # FL_STANDALONE: a DDL follows, no transaction

    def _on_query(self, event: Query) -> None:
        self._started(event)
        self._query(event)
        self._ended(event)

    def _on_xid(self, event: Xid) -> None:
        self._started(event)
        self._commit(event)
        self._ended(event)

    def _on_rows(self, event: Rows) -> None:
        self._started(event)
        self._rows(event)
        self._ended(event)

    def _on_other(self, event: Other) -> None:
        self._started(event)
        self._ended(event)

    def _maps_read(self) -> int:
        return self.binlog.table_maps_read if self.binlog is not None else 0

    def _begin(self, gtid: str | None) -> None:
        self.in_tx = True
        self.tx_start = self.event_start
        self.tx_gtid = gtid
        self.events_done = 1  # the GTID (or BEGIN) event itself, as Debezium counts it
        self.maps_seen = self._maps_read()
        self.row_query = None
        if self.transactions is not None:
            tx_id = transaction_id(gtid, self.file, self.tx_start)
            self._emit(
                self.transactions.begin_at(
                    tx_id, self.last_event_ts_ms, self.source_ts_sec, self.checkpoint()
                )
            )

    def _query(self, event: Query) -> None:
        query = event.query
        upper = query[:10].upper()
        if upper.startswith("BEGIN"):
            if not self.in_tx or self.tx_gtid is None:
                self._begin(self.tx_gtid if self.in_tx else None)
            self.in_tx = True
            self.tx_thread = event.thread
            return
        if upper.startswith("COMMIT"):
            self._commit(event)
            return
        if upper.startswith(("SAVEPOINT", "ROLLBACK", "XA ")):
            return
        database = event.schema
        if self.statements.on_query(query, database or None, self.file, event.start(self.event_start)):
            return  # DML logged as a statement: warned about, not captured
        self._ddl(event, query, database or None)

    def _commit(self, event: Query | Xid) -> None:
        if self.transactions is not None:
            self._emit(
                self.transactions.commit_at(self.last_event_ts_ms, self.source_ts_sec, self.checkpoint())
            )
        if self.tx_gtid:
            self.completed_gtids = self._gtids.add(self.completed_gtids, self.tx_gtid)
        self.in_tx = False
        self.tx_gtid = None
        self.row_query = None
        self.events_done = 0
        self.skip_events = self.skip_rows = 0
        self.next_pos = event.log_pos
        self.metrics.committed_transactions += 1
        self.metrics.gtid_set = self.completed_gtids or ""

    def _ddl(self, event: Query, query: str, database: str | None) -> None:
        gtid, gtids_before = self.tx_gtid, self.completed_gtids
        start = event.start(self.event_start)
        # A DDL with a GTID is recorded (history, schema change and truncate records' offsets) at the
        # position before it, as Debezium does: its GTID event counted as the one event done and the GTID set
        # without it; a restart there applies the DDL again, which the parser tolerates (it is idempotent).
        before = StreamPosition(self.file, self.tx_start, gtids_before, self.server_id, self.ts_sec)
        if self.tx_gtid:
            self.completed_gtids = self._gtids.add(self.completed_gtids, self.tx_gtid)
            self.tx_gtid = None
        self.in_tx = False
        self.next_pos = event.log_pos
        if self.skip_events or self.skip_rows:
            self.skip_events = self.skip_rows = 0
        position = before.offset(event=1) if gtid else self._position(self.next_pos).offset()
        history_position = self._tx_store(position)  # transaction metadata's fields, when provided
        # row: Debezium's source keeps the last rows event's row number on a DDL (it is not reset)
        pos = SourcePosition(self.file, start, self.server_id, self.ts_sec, gtid, self.last_row)
        records = self.ddl.records(query, database, history_position, pos, self.ts_sec * 1000)
        if records:
            self.source_ts_sec = self.ts_sec  # Debezium's source time: of the last change or DDL
        if records:
            self._emit(records)

    def _rows(self, event: Rows) -> None:
        binlog = self.binlog
        maps = binlog.table_maps_read if binlog is not None else 0  # _maps_read, inlined
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
        table_id = TableId(event.schema, event.table)
        if not self.filters.table(table_id) or self.gtid_filter.skips(self.tx_gtid):
            self.metrics.filtered += 1
            return
        table = self.schema.table(table_id)
        if table is None:
            self._inconsistent(table_id)
            return
        library_table = event.mapped
        if library_table is None or not self.table_maps.prepare(event.table_id, library_table, table):
            self._inconsistent(table_id, "its binlog table map has other columns than the schema history's")
            return
        kind = event.kind
        # Partial images are refused before anything of the event is decoded or emitted.
        images = check_images(
            kind, event.columns_present_bitmap, event.columns_present_bitmap2, library_table.columns
        )
        if images is not None and images.partial:
            self._partial_image(event, table_id, images, [str(c.name) for c in library_table.columns])
            return
        try:
            records = self._row_records(event, table, table_id, first_row, images)
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
        self.source_ts_sec = self.ts_sec
        if records and self.transactions is not None:
            records = self.transactions.data(table_id, records)
        if records:
            self.hooks.on_rows(table_id, records)
            self._emit(records)

    def _partial_image(self, event: Rows, table_id: TableId, check: ImageCheck, names: list[str]) -> None:
        """A MINIMAL image: fail (the default), or skip the event with a WARN (warn) or without (skip)."""
        self.metrics.erroneous_events += 1
        key = str(table_id)
        self.metrics.partial_row_images[key] = self.metrics.partial_row_images.get(key, 0) + 1
        start = event.start(self.event_start)
        error = partial_error(check, key, self.file, start, names, self.event_failure_mode)
        if self.event_failure_mode == "fail":
            raise error
        if self.event_failure_mode == "warn":
            log.warning("Skipping the binlog event at %s:%s: %s", self.file, start, error)

    def _row_records(
        self, event: Rows, table: Table, table_id: TableId, first_row: int, partial: ImageCheck | None
    ) -> list[SourceRecord]:
        ts = self.events.schema_for(table)
        images = self.rows.images(event, ts, table, partial)
        self.hooks.on_row_images(table_id, images)
        n = len(images) // 2 if event.kind == "u" else len(images)
        # Debezium's ``event``: this event's index in the transaction
        offsets = StreamPosition.row_offsets(
            self.file, self.tx_start, self.completed_gtids, self.server_id, self.ts_sec, self.events_done - 1
        )
        pos = SourcePosition(
            self.file,
            event.start(self.event_start),
            self.server_id,
            self.ts_sec,
            self.tx_gtid,
            0,
            self.tx_thread,
            self.row_query if self.include_query else None,
        )
        records = self.rows.records(event, ts, table_id, images, range(first_row, n), offsets, pos)
        self.last_row = max(n - 1, 0)
        return records

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

    def _tx_store(self, offset: dict[str, object]) -> dict[str, object]:
        return offset if self.transactions is None else self.transactions.store(offset)

    def _maybe_heartbeat(self) -> None:
        if not self.heartbeat_ms or self.in_tx:
            return
        if (time.monotonic() - self._last_emit) * 1000 >= self.heartbeat_ms:
            self._last_emit = time.monotonic()
            self.heartbeat_action.run()
            record = self.schema_events.heartbeat(self._tx_store(self.checkpoint().to_dict()))
            self.emit(self.hooks.decorate([record]))


_E = TypeVar("_E", bound=BinlogEvent)


def _handler(kind: type[_E], handle: Callable[[_E], None]) -> tuple[type, Callable[[BinlogEvent], None]]:
    """A dispatch table entry: the table calls ``handle`` only with events of type ``kind``."""
    return kind, cast(Callable[[BinlogEvent], None], handle)


def _ignore(_: BinlogEvent) -> None:
    pass
