"""An incremental snapshot's table back-filled by the parallel Spark engine while the stream goes on.

With ``incremental.snapshot.engine=spark`` (or ``auto`` and ``snapshot.engine=spark``) a table of the
incremental snapshot that has a primary key, no ``additional-conditions`` filter, no ``surrogate-key``
and at least ``incremental.snapshot.spark.min.rows`` rows (the server's estimate) is not read in DBLog
chunks. Instead:

1. **Start** (streamer thread, at the signal): the stream position ``W0`` is noted in the offsets
   (``incremental_snapshot_spark_start``), the streamer records from then on every key of the table a row
   event touches (before and after images, with the last image seen), and a background thread
   (:class:`~cdc.mysql.incremental.spark_job.BackfillJob`) reads the whole table on Spark: the initial
   Spark snapshot's plan, readers, encoders and exactly-once chunk transactions, every record ``op=r``
   with ``source.snapshot=incremental``. The task's poll loop keeps streaming.
2. **Spark done** (all its records in Kafka): between two transactions the streamer freezes the set of
   touched keys ``T`` at its position ``P``.
3. **Re-read** ``T`` in ordinary DBLog windows of ``incremental.snapshot.chunk.size`` times
   ``incremental.snapshot.parallelism`` keys: an open watermark, ``SELECT … WHERE pk IN (…)``, a close
   watermark; streamed changes inside the window drop their key from the buffer as usual; at the close,
   each row found is an ``op=r`` and each key no longer in the table a delete as the stream writes it
   (``op=d`` with the last image seen, then a tombstone unless ``tombstones.on.delete=false``).

Why this is right: a Spark record of key ``k`` holds the row as some chunk read it, after ``W0``. If no row
event touched ``k`` after ``W0`` the record is the row's state. Otherwise the event is at or after ``W0``:
if at or before ``P`` then ``k`` is in ``T`` and its re-read, emitted after every Spark record (Spark
was done before the window opened) and after every streamed event up to the window's close, carries the
state as of the window (or the delete); if after ``P`` the streamer emits it after Spark was done, so it
follows the Spark record in the topic. So the topic reduced by key equals the table and no stale ``op=r``
is left last. A Spark record can still land after a streamed change of its key that is newer (the two
writers do not share an order); the change is then in ``T`` and the re-read restores the order.

No watermark is written at the start (unlike the brief's first draft): the streamer's position when the
signal is acted on is at or before the binlog's end at that moment, so recording from there is a superset
of what a watermark would give, and a read-only replica would not need a signal table for it.

**Restarts.** The offsets keep ``W0`` while the back-fill runs. A restarted task resumes the Spark run from
its resume file (finished chunks are kept) and, since the keys its streamer had recorded are gone, reads
the keys touched since ``W0`` back from the binlog (up to the server's position, which the restarted
stream overlaps), then goes on recording. ``stop-snapshot`` cancels the Spark jobs; ``pause-snapshot``
holds back chunks not yet submitted and windows not yet opened.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cdc.api.errors import ConnectError
from cdc.api.records import Header, SourceRecord
from cdc.api.struct import Struct
from cdc.history.model import Table, TableId
from cdc.mysql.capture import CaptureContext
from cdc.mysql.events import TableSchema
from cdc.mysql.incremental.chunks import ChunkReader
from cdc.mysql.incremental.context import DataCollection, IncrementalContext, flag_row
from cdc.mysql.incremental.spark_job import BackfillJob, BackfillSpec, Images
from cdc.mysql.incremental.window import OPEN_WINDOW, close_watermark, watermark_time
from cdc.mysql.metrics import SnapshotMetrics
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.spark.reconcile import SchemaChangedError, reread

__all__ = ["SparkBackfill"]

log = logging.getLogger(__name__)

SnapshotSource = Callable[[SourceRecord, TableId], Struct]
"""The ``source`` block of a window's records, from its close watermark's record."""


class SparkBackfill:
    """Decides which tables Spark reads, and runs their back-fill beside the stream (streamer thread)."""

    def __init__(
        self,
        ctx: CaptureContext,
        context: IncrementalContext,
        metrics: SnapshotMetrics,
        chunks: ChunkReader,
        props: Mapping[str, str],
        worker_clients: Mapping[str, str],
        snapshot_source: SnapshotSource,
        headers: Sequence[Header] = (),
    ) -> None:
        settings = ctx.settings
        self.ctx, self.events, self.stopping = ctx, ctx.events, ctx.stopping
        self.signal_table = ctx.filters.signal_table
        self.context, self.metrics, self.chunks = context, metrics, chunks
        self.props, self.worker_clients = dict(props), dict(worker_clients)
        self.snapshot_source = snapshot_source
        self.headers = tuple(headers)
        self.min_rows = settings.incremental_snapshot_spark_min_rows
        self.window_keys = max(
            1, settings.incremental_snapshot_chunk_size * settings.incremental_snapshot_parallelism
        )
        self.position: Callable[[], dict[str, Any]] = dict
        """The streamer's current offset (set by the task)."""
        self.on_done: Callable[[TableId], None] = lambda table: None
        """Called (streamer thread) once a table's back-fill is complete: the snapshot goes on."""
        self._declined: DataCollection | None = None
        """The collection last found not to qualify (read in chunks): not asked again at every chunk."""
        self._reset()

    def _reset(self) -> None:
        self.table: Table | None = None
        self.job: BackfillJob | None = None
        self.touched: Images = {}
        self.pending: list[tuple[tuple[Any, ...], list[Any]]] | None = None
        """The frozen keys still to read again (None: Spark is not done yet)."""
        self.window_id: str | None = None
        self.window_open = False
        self.window: dict[tuple[Any, ...], tuple[bool, Sequence[Any]]] = {}
        """Message key values → (found, row): a row read again, or the last image of a key now gone."""
        self._window_schema: TableSchema | None = None
        self._key_index: list[int] = []
        self.found = self.gone = 0

    # -- the incremental snapshot's questions ----------------------------------------------------------------
    def takes_current(self) -> bool:
        """Whether the current table is (now) back-filled here; starts or resumes its back-fill, or goes on
        with its windows (after a pause). False: the DBLog chunks read it."""
        current = self.context.current
        if current is None:
            return False
        if self.table is not None and self.table.id == current.table:
            if self.pending is not None and self.window_id is None:
                self._next_window()
            return True
        if current == self._declined:
            return False  # decided at its first chunk
        table = self.ctx.schema.table(current.table)
        if table is None or not self._eligible(table, current):
            self._declined = current
            return False
        self._begin(table)
        return True

    def _eligible(self, table: Table, current: DataCollection) -> bool:
        resuming = self.context.spark_start is not None
        why = ""
        if self.signal_table is None:
            why = "no signal table for the watermarks of its re-read windows (read.only)"
        elif current.condition or current.surrogate_key:
            why = "an additional condition or a surrogate key"
        elif not table.primary_key:
            why = "no primary key"
        elif not resuming and self.min_rows > 0:
            estimate = self._estimated_rows(table.id)
            if estimate < self.min_rows:
                why = f"about {estimate} rows, below incremental.snapshot.spark.min.rows={self.min_rows}"
        if why:
            if resuming:
                self.context.spark_start = None
            log.info("Incremental snapshot of '%s' in DBLog chunks, not on Spark: %s", table.id, why)
            return False
        return True

    def _estimated_rows(self, table_id: TableId) -> int:
        with self.chunks.connection().cursor() as cur:
            cur.execute(
                "SELECT TABLE_ROWS FROM information_schema.TABLES "
                "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                (table_id.database, table_id.table),
            )
            row = cur.fetchone()
        return int(row[0] or 0) if row else 0

    def _begin(self, table: Table) -> None:
        resumed = self.context.spark_start is not None
        if self.context.spark_start is None:
            self.context.spark_start = BinlogOffset.from_dict(self.position()).with_(event=0, row=0).to_dict()
        start = BinlogOffset.from_dict(self.context.spark_start)
        self.table = table
        names = [n.lower() for n in table.column_names()]
        self._key_index = [names.index(c.lower()) for c in table.primary_key]
        log.info(
            "Incremental snapshot of table '%s' on Spark from %s:%s%s; streaming goes on",
            table.id,
            start.file,
            start.pos,
            " (resumed)" if resumed else "",
        )
        self.job = BackfillJob(
            BackfillSpec(
                self.props, self.worker_clients, table, start, recover=resumed, headers=self.headers
            ),
            self.stopping,
            paused=lambda: self.context.paused,
            on_chunk=functools.partial(self.metrics.rows_scanned, table.id),
        )
        self.job.begin()

    # -- the streamer's hooks -------------------------------------------------------------------------------
    def on_row_images(self, table_id: TableId, images: Sequence[Sequence[Any]]) -> None:
        """Record the keys a row event touches while Spark reads (before the keys are frozen)."""
        if self.table is None or self.pending is not None or table_id != self.table.id:
            return
        index = self._key_index
        touched = self.touched
        for image in images:
            touched[tuple(image[i] for i in index)] = list(image)

    def on_idle(self) -> None:
        """Between transactions: once Spark is done, freeze the touched keys and open the first window."""
        job = self.job
        if job is None or self.pending is not None or not job.done.is_set():
            return
        table = self.table
        assert table is not None
        if job.error is not None:
            if job.cancelled.is_set() or self.stopping.is_set():
                return
            error = job.error
            if isinstance(error, SchemaChangedError):
                log.error("Incremental snapshot of '%s' stopped: %s; send the signal again", table.id, error)
                self._reset()
                self.on_done(table.id)
                return
            raise ConnectError(f"The Spark back-fill of '{table.id}' failed: {error}") from error
        keys = {**job.recovered, **self.touched}
        self.touched = {}
        self.pending = list(keys.items())
        log.info(
            "Spark back-fill of '%s': %d rows written; reading again the %d keys changed meanwhile",
            table.id,
            job.rows,
            len(self.pending),
        )
        self._next_window()

    def expects(self, signal_id: str) -> bool:
        return self.window_id is not None and signal_id.startswith(self.window_id)

    def open_window(self, signal_id: str) -> None:
        if self.expects(signal_id):
            self.window_open = True

    def close_window(self, signal_id: str, close_record: SourceRecord) -> None:
        """The window's rows and deletes, at the close watermark; then the next window."""
        if not self.expects(signal_id):
            return
        self.window_open = False
        self.window_id = None
        self._send(close_record)
        self._next_window()

    def deduplicate(self, table_id: TableId, records: list[SourceRecord]) -> None:
        if not self.window_open or not self.window or self.table is None or table_id != self.table.id:
            return
        for record in records:
            key = record.key
            if isinstance(key, Struct):
                self.window.pop(tuple(key.values), None)

    def cancel(self) -> None:
        """``stop-snapshot`` of the table being back-filled: the Spark jobs are cancelled."""
        if self.job is not None:
            log.info("Cancelling the Spark back-fill of '%s'", self.job.table.id)
            self.job.cancel()
        self._reset()

    def close(self) -> None:
        """The task stops: cancel the Spark jobs and wait (bounded) for the session to end."""
        job = self.job
        if job is not None:
            job.cancel()
            job.join(30)

    # -- windows -------------------------------------------------------------------------------------------
    def _next_window(self) -> None:
        """Open the next window of keys to read again, or end the table's back-fill."""
        if self.context.paused:
            return
        if self.stopping.is_set():
            raise InterruptedError("stopping")
        assert self.table is not None and self.pending is not None
        if not self.pending:
            table, job = self.table, self.job
            log.info(
                "Incremental snapshot of table '%s' finished: %d rows from Spark; keys changed meanwhile "
                "read again: %d found, %d gone (op=d)",
                table.id,
                job.rows if job is not None else 0,
                self.found,
                self.gone,
            )
            self.metrics.rows_scanned(table.id, (job.rows if job is not None else 0) + self.found)
            self._reset()
            self.on_done(table.id)
            return
        if self.signal_table is None:
            raise ConnectError("A Spark back-fill needs signal.data.collection for its watermarks")
        table = self.table
        batch = self.pending[: self.window_keys]
        del self.pending[: self.window_keys]
        window_id = str(uuid.uuid4())
        opened = watermark_time()
        self.chunks.reconnect_if_lost()
        self.chunks.insert_signal(
            self.signal_table, window_id + "-open", OPEN_WINDOW, {"openWindowTimestamp": opened}
        )
        ts = self.events.schema_for(table)
        self._window_schema = ts
        window: dict[tuple[Any, ...], tuple[bool, Sequence[Any]]] = {}

        def found(row: Sequence[Any]) -> None:
            window[_message_key(ts, row)] = (True, row)

        def gone(image: Sequence[Any]) -> None:
            window[_message_key(ts, image)] = (False, image)

        reread(self.chunks.connection(), table, dict(batch), found, gone)
        self.window = window
        self.window_id = window_id
        close_watermark(self.chunks, self.signal_table, window_id, opened, insert_delete=False)

    def _send(self, close_record: SourceRecord) -> None:
        ts, table = self._window_schema, self.table
        if not self.window or ts is None or table is None:
            self.window.clear()
            return
        source = self.snapshot_source(close_record, table.id)
        out: list[SourceRecord] = []
        for present, row in self.window.values():
            offset = self.context.store(dict(close_record.source_offset or {}))
            if present:
                out.append(self.events.read(ts, row, source, flag_row(offset)))
                self.found += 1
            else:
                out.extend(self.events.delete(ts, row, source, offset))
                self.gone += 1
        self.window.clear()
        if not self.ctx.emit(out):
            raise InterruptedError("stopping")


def _message_key(ts: TableSchema, row: Sequence[Any]) -> tuple[Any, ...]:
    """What a streamed change of the same row carries as its key (the de-duplication's identity)."""
    key = ts.key(row)
    return tuple(key.values) if key is not None else tuple(row)
