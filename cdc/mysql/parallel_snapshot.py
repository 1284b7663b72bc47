"""``snapshot.max.threads``: the local initial snapshot reads each table's primary-key chunks on several
connections at once.

The chunks are the Spark engine's (:mod:`cdc.snapshot.chunks`, planned by :mod:`cdc.snapshot.sampling`):
at least ``snapshot.max.threads * snapshot.max.threads.multiplier`` per table, as Debezium 3.6 cuts them,
and at most :data:`CHUNK_ROWS` rows each, so that what is read ahead stays bounded. A table without a
primary key, or read through ``snapshot.select.statement.overrides``, is one chunk (as in Debezium).

Every reader connection opens its ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` while the snapshot still
holds its lock (the global read lock, or the table locks), so all of them read the same state as the
snapshot's own connection and the offset it recorded. Chunks are read ahead by ``snapshot.max.threads``
threads but handed to the snapshot in plan order (table by table, key range by key range, each in key
order), so the records, their ``snapshot`` markers and their order are the single reader's: only the
time changes. With ``snapshot.locking.mode=none`` there is no lock to open them under, and each reader
sees the moment its transaction began (Debezium's readers do the same).

``legacy.snapshot.max.threads`` (Debezium's table-per-thread algorithm): no chunks, each table is read
whole by one reader, up to ``snapshot.max.threads`` tables at once (the one being written and the next
ones in plan order). A reader streams its table through a queue of :data:`QUEUED_BATCHES` batches and
waits while it is full, so at most ``threads * (QUEUED_BATCHES + 1)`` batches are held, whatever the
tables' sizes; the records are written table after table, as with one reader.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from cdc.history.model import Table
from cdc.snapshot.chunks import Chunk, TablePlan, plan_table, range_predicate
from cdc.snapshot.sampling import plan_tables

__all__ = ["CHUNK_ROWS", "QUEUED_BATCHES", "ChunkReaders"]

log = logging.getLogger(__name__)

CHUNK_ROWS = 50_000
"""At most this many rows per chunk (the Spark engine's default chunk size): with the chunks read ahead,
about ``(snapshot.max.threads + 1) * CHUNK_ROWS`` rows are held at once."""

QUEUED_BATCHES = 2
"""Batches a table-per-thread reader reads ahead of the snapshot (``legacy.snapshot.max.threads``)."""

Row = tuple[Any, ...]
_DONE = object()


class _TableStream:
    """One table read whole by one reader (legacy mode): its batches, then ``_DONE`` or the error."""

    def __init__(self) -> None:
        self.queue: queue.Queue[Any] = queue.Queue(QUEUED_BATCHES)
        self.cancelled = threading.Event()
        self.future: Future[None] | None = None


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class ChunkReaders:
    """``threads`` reader connections in one consistent snapshot, and the threads that read chunks on them."""

    def __init__(
        self, connections: Sequence[Any], stopping: threading.Event, multiplier: int = 1, legacy: bool = False
    ) -> None:
        self.connections = list(connections)
        self.threads = len(self.connections)
        self.multiplier = multiplier
        self.stopping = stopping
        self.legacy = legacy
        self._order: list[str] = []  # legacy: the tables in plan order, and each one's SELECT
        self._selects: dict[str, str] = {}
        self._streams: dict[str, _TableStream] = {}
        self._free: queue.Queue[Any] = queue.Queue()
        for conn in self.connections:
            self._free.put(conn)
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="mysql-snapshot-reader")

    @classmethod
    def open(
        cls,
        connect: Callable[[], Any],
        threads: int,
        stopping: threading.Event,
        multiplier: int = 1,
        legacy: bool = False,
    ) -> ChunkReaders:
        """Open the readers; call it while the snapshot's lock is held (see the module docstring)."""
        opened: list[Any] = []
        try:
            for _ in range(threads):
                conn = connect()
                opened.append(conn)
                cur = conn.cursor()
                cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                cur.close()
        except Exception:
            for conn in opened:
                with contextlib.suppress(Exception):
                    conn.close()
            raise
        log.info(
            "Snapshot reads with %d threads (snapshot.max.threads%s)",
            threads,
            ", a table per thread" if legacy else "",
        )
        return cls(opened, stopping, multiplier, legacy)

    def plan(
        self,
        conn: Any,
        tables: Sequence[Table],
        single: Collection[str],
        selects: Mapping[str, str] | None = None,
    ) -> dict[str, TablePlan]:
        """Each table's chunks (``single``: tables read as one chunk), counted and cut on ``conn``; in
        legacy mode one chunk each, read by ``selects`` (table → its SELECT) in the order of ``tables``."""
        if self.legacy:
            self._order = [str(t.id) for t in tables]
            self._selects = dict(selects or {})
            return {str(t.id): plan_table(t.id, (), 0, []) for t in tables}
        plans = plan_tables(conn, tables, CHUNK_ROWS, self.threads * self.multiplier, tuple(single))
        return {str(p.table): p for p in plans}

    def batches(self, table: Table, plan: TablePlan, select: str, size: int) -> Iterator[list[Row]]:
        """The table's rows in plan order, ``size`` at a time, read ``threads`` chunks ahead (legacy:
        streamed by one reader, the next ``threads - 1`` tables read meanwhile)."""
        if self.legacy:
            yield from self._table_batches(str(table.id), select, size)
            return
        pending: deque[Future[list[Row]]] = deque()
        chunks = iter(plan.chunks)
        try:
            for chunk in chunks:
                pending.append(self._pool.submit(self._read, table, chunk, select))
                if len(pending) > self.threads:
                    break
            while pending:
                rows = pending.popleft().result()
                nxt = next(chunks, None)
                if nxt is not None:
                    pending.append(self._pool.submit(self._read, table, nxt, select))
                for i in range(0, len(rows), size):
                    yield rows[i : i + size]
        finally:
            for f in pending:
                f.cancel()
            for f in pending:  # a reader still running holds its connection: wait for it to give it back
                with contextlib.suppress(Exception):
                    f.result()

    def _table_batches(self, name: str, select: str, size: int) -> Iterator[list[Row]]:
        if name not in self._streams:
            self._start(name, select, size)
        at = self._order.index(name) if name in self._order else len(self._order)
        for ahead in self._order[at + 1 :]:
            if len(self._streams) >= self.threads:
                break
            if ahead not in self._streams and ahead in self._selects:
                self._start(ahead, self._selects[ahead], size)
        stream = self._streams[name]
        try:
            while True:
                try:
                    item = stream.queue.get(timeout=0.5)
                except queue.Empty:
                    if self.stopping.is_set():
                        raise InterruptedError("snapshot interrupted") from None
                    continue
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            del self._streams[name]
            stream.cancelled.set()

    def _start(self, name: str, select: str, size: int) -> None:
        stream = _TableStream()
        self._streams[name] = stream
        stream.future = self._pool.submit(self._stream, stream, select, size)

    def _stream(self, stream: _TableStream, select: str, size: int) -> None:
        """Read one table whole on a free reader connection into its stream's bounded queue."""

        def put(item: Any) -> bool:
            while not (stream.cancelled.is_set() or self.stopping.is_set()):
                try:
                    stream.queue.put(item, timeout=0.2)
                    return True
                except queue.Full:
                    continue
            return False

        conn = self._free.get()
        try:
            if stream.cancelled.is_set() or self.stopping.is_set():
                return  # given up while it waited for a connection: its SELECT is not started
            cur = conn.cursor()
            try:
                cur.execute(select)
                while rows := cur.fetchmany(size):
                    if not put(list(rows)):
                        return
                put(_DONE)
            finally:
                cur.close()
        except Exception as exc:  # handed to the snapshot, which fails with it
            put(exc)
        finally:
            self._free.put(conn)

    def _read(self, table: Table, chunk: Chunk, select: str) -> list[Row]:
        conn = self._free.get()
        try:
            cur = conn.cursor()
            try:
                sql, params = select, list[Any]()
                if chunk.key and (chunk.lower is not None or chunk.upper is not None):
                    where, params = range_predicate(chunk.key, chunk.lower, chunk.upper)
                    sql = f"{select} WHERE {where} ORDER BY {', '.join(_quote(c) for c in chunk.key)}"
                cur.execute(sql, params or None)
                rows: list[Row] = []
                while True:
                    if self.stopping.is_set():
                        raise InterruptedError("snapshot interrupted")
                    got = cur.fetchmany(5000)
                    if not got:
                        return rows
                    rows.extend(got)
            finally:
                cur.close()
        finally:
            self._free.put(conn)

    def close(self) -> None:
        for stream in self._streams.values():
            stream.cancelled.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        for conn in self.connections:
            with contextlib.suppress(Exception):
                conn.rollback()
            with contextlib.suppress(Exception):
                conn.close()
