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
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from cdc.history.model import Table
from cdc.snapshot.chunks import Chunk, TablePlan, range_predicate
from cdc.snapshot.sampling import plan_tables

__all__ = ["CHUNK_ROWS", "ChunkReaders"]

log = logging.getLogger(__name__)

CHUNK_ROWS = 50_000
"""At most this many rows per chunk (the Spark engine's default chunk size): with the chunks read ahead,
about ``(snapshot.max.threads + 1) * CHUNK_ROWS`` rows are held at once."""

Row = tuple[Any, ...]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class ChunkReaders:
    """``threads`` reader connections in one consistent snapshot, and the threads that read chunks on them."""

    def __init__(self, connections: Sequence[Any], stopping: threading.Event, multiplier: int = 1) -> None:
        self.connections = list(connections)
        self.threads = len(self.connections)
        self.multiplier = multiplier
        self.stopping = stopping
        self._free: queue.Queue[Any] = queue.Queue()
        for conn in self.connections:
            self._free.put(conn)
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="mysql-snapshot-reader")

    @classmethod
    def open(
        cls, connect: Callable[[], Any], threads: int, stopping: threading.Event, multiplier: int = 1
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
        log.info("Snapshot reads with %d threads (snapshot.max.threads)", threads)
        return cls(opened, stopping, multiplier)

    def plan(self, conn: Any, tables: Sequence[Table], single: Collection[str]) -> dict[str, TablePlan]:
        """Each table's chunks (``single``: tables read as one chunk), counted and cut on ``conn``."""
        plans = plan_tables(conn, tables, CHUNK_ROWS, self.threads * self.multiplier, tuple(single))
        return {str(p.table): p for p in plans}

    def batches(self, table: Table, plan: TablePlan, select: str, size: int) -> Iterator[list[Row]]:
        """The table's rows in plan order, ``size`` at a time, read ``threads`` chunks ahead."""
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
        self._pool.shutdown(wait=True, cancel_futures=True)
        for conn in self.connections:
            with contextlib.suppress(Exception):
                conn.rollback()
            with contextlib.suppress(Exception):
                conn.close()
