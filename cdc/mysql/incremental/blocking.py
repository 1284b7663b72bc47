"""The blocking snapshot (``execute-snapshot`` with ``"type": "blocking"``): streaming waits while the named
tables are read as the initial snapshot reads them, then goes on from where it stopped.

The tables are read in one ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` as ``op=r`` events (``source.
snapshot`` ``first``/``true``/``last`` as the initial snapshot marks them), each carrying the streaming
position where the stream paused. Changes made between that position and the read are streamed again
after it: older than what was read, they end in the same state, so the topic reduced by key equals the
table (at least once, as Debezium's). A task killed during a blocking snapshot resumes streaming without it;
the signal must be sent again.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from cdc.api.errors import ConnectError
from cdc.history.model import TableId
from cdc.mysql.capture import CaptureContext
from cdc.mysql.connection import connect
from cdc.mysql.events import SourcePosition
from cdc.mysql.incremental.filters import check_filter, where_clause
from cdc.mysql.incremental.patterns import SignalPatterns

__all__ = ["BlockingSnapshotter"]

log = logging.getLogger(__name__)

FETCH_ROWS = 2000


class BlockingSnapshotter:
    def __init__(
        self, ctx: CaptureContext, expand: Callable[[list[str], SignalPatterns], list[TableId]]
    ) -> None:
        self.settings = ctx.settings
        self.schema = ctx.schema
        self.events = ctx.events
        self.emit = ctx.emit
        self.stopping = ctx.stopping
        self.expand = expand
        self.captured = ctx.filters.table
        self.position: Callable[[], dict[str, Any]] = dict

    def __call__(self, patterns: list[str], conditions: list[tuple[str, str]]) -> None:
        matching = SignalPatterns()
        tables = [
            t
            for t in self.expand(patterns, matching)
            if self.captured(t) and self.schema.table(t) is not None
        ]
        if not tables:
            raise ConnectError(f"blocking snapshot of {patterns}: no captured table matches")
        # Which filter each table gets is decided (and the filters checked) before streaming pauses.
        filters = {
            table_id: check_filter(
                next((f for p, f in conditions if matching.fullmatch(p, str(table_id), True)), "")
            )
            for table_id in tables
        }
        offset = self.position()
        log.info("Blocking snapshot of %s: streaming paused at %s", ", ".join(map(str, tables)), offset)
        conn = connect(self.settings, streaming=True)
        total = 0
        try:
            cur = conn.cursor()
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            pos = SourcePosition(file=str(offset.get("file", "")), pos=int(offset.get("pos", 0)))
            # The last row is emitted once known to be the last (marked "last"): (schema, row, source maker).
            pending: tuple[Any, Any, Callable[[int, str], Any]] | None = None
            first = True
            for table_id in tables:
                table = self.schema.table(table_id)
                assert table is not None
                ts = self.events.schema_for(table)
                # bytes and no arguments: the driver formats nothing of the filter (filters.py)
                where = where_clause(conn, "", (), filters[table_id])
                cur.execute(f"SELECT * FROM {table_id.sql()}".encode() + where)
                source = self.events.snapshot_sources(pos, table_id)
                while True:
                    if self.stopping.is_set():
                        raise InterruptedError("stopping")
                    rows = cur.fetchmany(FETCH_ROWS)
                    if not rows:
                        break
                    now_ms = int(time.time() * 1000)
                    batch = []
                    for row in rows:
                        if pending is not None:
                            p_ts, p_row, p_source = pending
                            marker = "first" if first else "true"
                            first = False
                            batch.append(
                                self.events.read(p_ts, p_row, p_source(now_ms, marker), dict(offset))
                            )
                        pending = (ts, row, source)
                    total += len(rows)
                    if batch and not self.emit(batch):
                        raise InterruptedError("stopping")
            cur.execute("COMMIT")
            if pending is not None:
                p_ts, p_row, p_source = pending
                last = self.events.read(p_ts, p_row, p_source(int(time.time() * 1000), "last"), dict(offset))
                if not self.emit([last]):
                    raise InterruptedError("stopping")
        finally:
            with contextlib.suppress(Exception):
                conn.close()
        log.info("Blocking snapshot completed: %d rows from %d tables; streaming resumes", total, len(tables))
