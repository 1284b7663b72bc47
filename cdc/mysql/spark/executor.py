"""One chunk, read and written inside a Spark task (or a thread, for tests and small tables).

Each task opens its own connection exactly as the single-reader snapshot does (PyMySQL, session time
zone UTC, ``database.initial.statements``), notes the binlog position before (low watermark) and after
(high watermark) one streaming ``SELECT * … WHERE <key range>``, and turns every row into the very
record the single reader builds (:meth:`EventFactory.read` with the same ``source`` block, the snapshot
position of the run and the same ``snapshot`` markers), which :class:`RecordWriter` converts and
produces. The task returns only once Kafka acknowledged every record, so a chunk reported done is in
Kafka.

Why PyMySQL in the task and not Spark's JDBC reader: the rows must arrive as the Python values our
column converters are written for (Spark's JDBC types turn ``TIME`` into timestamps, unsigned ``BIGINT``
into ``DECIMAL(20,0)``, read ``DATETIME`` through the session zone …), or the envelopes would not be
byte-identical; and the watermarks must be taken on the connection that runs the SELECT.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any

from cdc.api.records import Header
from cdc.history.model import Table
from cdc.snapshot.chunks import Chunk
from cdc.snapshot.delivery import EXACTLY_ONCE, ChunkWriter, RunIds, task_attempt
from cdc.snapshot.writer import WriterSpec

__all__ = [
    "ChunkResult",
    "ChunkTask",
    "RunContext",
    "run_chunk",
    "run_item",
]

FETCH_ROWS = 2000


@dataclass(frozen=True)
class RunContext:
    """What every task of one snapshot run shares."""

    connector_config: dict[str, str]
    connector: str  # "mysql" or "mariadb": the source block's connector name
    writer: WriterSpec
    start_file: str
    start_pos: int
    encoder: str = "auto"
    """Who builds a chunk's records on Spark: ``sql`` (the JVM path, :mod:`cdc.mysql.spark.jvm`; an error for
    a table it cannot encode), ``python`` (this module), ``auto`` (the JVM path where it gives the same
    bytes, else this module)."""
    delivery: str = EXACTLY_ONCE
    """``exactly_once`` (a transaction per chunk) or ``at_least_once``: see :mod:`cdc.snapshot.delivery`."""
    ids: RunIds | None = None
    """The run's transaction names (exactly once)."""
    headers: tuple[Header, ...] = ()
    """Debezium's ``__debezium.context.*`` headers (:mod:`cdc.mysql.context_headers`), on every record as the
    task's ``poll`` adds them to the records it returns: the connector task's own (its run id) when the task
    runs the snapshot, a run's own for ``cdc snapshot``."""

    def transactional_id(self, chunk_id: str) -> str | None:
        """The chunk's transactional id, or None when the run writes at least once."""
        if self.delivery != EXACTLY_ONCE:
            return None
        if self.ids is None:
            raise ValueError("an exactly-once run needs its RunIds")
        return self.ids.chunk(chunk_id)


@dataclass(frozen=True)
class ChunkTask:
    chunk: Chunk
    table: Table
    first_overall: bool
    last_overall: bool
    snapshot: str | None = None
    """The ``source.snapshot`` of every record of the chunk (``incremental`` for an incremental
    snapshot's back-fill); None: the initial snapshot's markers (:func:`_marker`)."""


@dataclass(frozen=True)
class ChunkResult:
    chunk_id: str
    rows: int
    low: tuple[str, int]
    high: tuple[str, int]
    seconds: float
    attempt: int = 0
    """Spark's attempt number of the task that finished the chunk (0: the first)."""
    replayed: bool = False
    """An earlier attempt had committed the chunk; this one wrote nothing (exactly once)."""
    topic: str | None = None
    """The topic of the chunk's first record (None: no record)."""


def _master_position(cur: Any) -> tuple[str, int]:
    cur.execute("SHOW MASTER STATUS")
    row = cur.fetchone()
    cur.fetchall()
    if row is None:
        raise RuntimeError("SHOW MASTER STATUS returned nothing: is the binary log enabled?")
    return str(row[0]), int(row[1])


def _marker(task: ChunkTask, first: bool, last: bool) -> str:
    """The single reader's ``source.snapshot`` markers, decided per chunk: ``first`` is kept over any
    other, the table's first row is ``first_in_data_collection``, its last ``last_in_data_collection``
    (``last`` for the last table)."""
    chunk = task.chunk
    if task.snapshot is not None:
        return task.snapshot
    if first and chunk.first and task.first_overall:
        return "first"
    if last and chunk.last:
        return "last" if task.last_overall else "last_in_data_collection"
    if first and chunk.first:
        return "first_in_data_collection"
    return "true"


def run_chunk(task: ChunkTask, ctx: RunContext) -> ChunkResult:
    from cdc.mysql.config import MySqlSettings
    from cdc.mysql.connection import connect
    from cdc.mysql.events import EventFactory, SourcePosition
    from cdc.mysql.offsets import BinlogOffset

    started = time.monotonic()
    settings = MySqlSettings.parse(ctx.connector_config)
    events = EventFactory(settings, ctx.connector)
    ts = events.schema_for(task.table)
    pos = SourcePosition(file=ctx.start_file, pos=ctx.start_pos, server_id=0)
    offset = BinlogOffset(ctx.start_file, ctx.start_pos, snapshot=True).to_dict()
    table_id = task.table.id
    sql, params = task.chunk.select()
    if not task.chunk.key and task.chunk.count == 1:
        override = settings.select_override(str(table_id))
        if override:
            sql, params = override, []
    # the transaction opens while the connection is made and the SELECT runs
    out = ChunkWriter(ctx.writer, ctx.transactional_id(task.chunk.id), background=True)
    conn = connect(settings, streaming=True)
    rows = 0
    try:
        with conn.cursor() as meta:
            low = _master_position(meta)
        cur = conn.cursor()
        cur.execute(sql, params or None)
        pending: tuple[Any, int] | None = None
        source = events.snapshot_sources(pos, table_id)
        headers = ctx.headers

        def send(row: Any, now_ms: int, marker: str) -> int | None:
            """Produce one row's record; the first record produced asks whether the chunk was
            committed by an earlier attempt (its row count, then nothing more is written)."""
            read = events.read(ts, row, source(now_ms, marker), offset)
            for header in headers:  # before the transforms, as the worker applies them after poll
                read.headers.add_header(header)
            record = out.writer.route(read)
            if record is None:
                return None
            if out.topic is None:
                before = out.committed_before(record.topic)
                if before is not None:
                    return before
            out.writer.produce(record)
            return None

        replayed: int | None = None
        while replayed is None:
            batch = cur.fetchmany(FETCH_ROWS)
            if not batch:
                break
            now_ms = int(time.time() * 1000)
            for row in batch:
                if pending is not None:
                    replayed = send(pending[0], pending[1], _marker(task, rows == 1, False))
                    if replayed is not None:
                        break
                pending = (row, now_ms)
                rows += 1
        if replayed is not None:  # the rest of the result is not read: the connection is closed
            high = low
        else:
            cur.close()
            if pending is not None:
                replayed = send(pending[0], pending[1], _marker(task, rows == 1, True))
            with conn.cursor() as meta:
                high = _master_position(meta)
            if replayed is None:
                out.finish(rows)
    finally:
        with contextlib.suppress(Exception):  # the result (or the error) matters, not the close
            conn.close()
        out.close()
    seconds = time.monotonic() - started
    if replayed is not None:
        return ChunkResult(task.chunk.id, replayed, low, high, seconds, task_attempt(), True, out.topic)
    return ChunkResult(task.chunk.id, rows, low, high, seconds, task_attempt(), False, out.topic)


def run_item(item: tuple[ChunkTask, RunContext]) -> ChunkResult:
    """:func:`run_chunk` of ``(task, ctx)``: the chunk function the runners ship to Spark."""
    return run_chunk(item[0], item[1])
