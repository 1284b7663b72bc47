"""What a Spark snapshot run is asked (:class:`SnapshotOptions`) and what it reports: its summary, the
chunks it read, and Debezium's snapshot metrics as the chunks complete. The run itself is
:class:`cdc.mysql.spark.engine.SnapshotRun`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdc.history.model import TableId
from cdc.mysql.metrics import SnapshotMetrics
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.spark.executor import ChunkResult, ChunkTask
from cdc.snapshot.chunks import TablePlan
from cdc.snapshot.delivery import RunDelivery
from cdc.snapshot.writer import WriterSpec

__all__ = ["ENCODERS", "ChunkRun", "SnapshotOptions", "SnapshotSummary"]

ENCODERS = ("auto", "sql", "python")


@dataclass
class SnapshotOptions:
    master: str = "local[*]"
    partitions: int | None = None
    """Parallel readers (Spark tasks at once); each table gets at least this many chunks."""
    chunk_rows: int = 50_000
    tables: Sequence[str] = ()
    dry_run: bool = False
    restart: bool = False
    state_dir: Path | None = None
    server_id: int | None = None
    progress: bool = True
    progress_interval: float = 2.0
    progress_to_log: bool = False
    """Progress lines go to the log (INFO, in the task's context) instead of stderr: in a worker."""
    encoder: str | None = None
    """``auto`` | ``sql`` | ``python``: who builds the records on Spark (see :mod:`cdc.mysql.spark.jvm`);
    None: the connector's ``snapshot.spark.encoder``, default ``auto``."""
    delivery: str | None = None
    """``exactly_once`` | ``at_least_once`` (see :mod:`cdc.snapshot.delivery`); None: the connector's
    ``snapshot.spark.delivery``, default ``exactly_once``."""
    stall_timeout: float | None = None
    """Seconds without progress before the run stops (see :mod:`cdc.snapshot.watchdog`); None: the
    connector's ``snapshot.spark.stall.timeout.ms``, default 300 s."""
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    """Spark settings (``--conf``, ``--properties-file``)."""


@dataclass
class SnapshotSummary:
    start: BinlogOffset
    end: BinlogOffset
    tables: list[TableId]
    rows: int
    chunks: int
    chunks_skipped: int
    seconds: float
    reread_rows: int = 0
    """Keys changed while the snapshot ran, read again as of the end position."""
    deleted: int = 0
    """Keys gone by the end position: written as the stream writes a delete (op=d, then the tombstone)."""
    window_events: int = 0
    resumed: bool = False
    per_chunk: list[ChunkResult] = field(default_factory=list)
    chunk_seconds: float = 0.0
    """The chunks' part of ``seconds``: from the first chunk submitted to the last one done (without the
    Spark session's start, the lock, the plan and the reconciliation)."""
    delivery: str = "exactly_once"
    chunks_reread: int = 0
    """Chunks read more than once (a Spark task retried, or in flight when an earlier run stopped)."""
    written_twice: int | None = 0
    """Records written more than once: 0 with exactly once (for ``read_committed`` consumers); counted
    from the topics' offsets with at least once (None: not known)."""

    def render(self) -> str:
        rate = self.rows / self.seconds if self.seconds > 0 else 0.0
        read = sum(r.rows for r in self.per_chunk)
        chunk_rate = (
            f"; the chunks {self.chunk_seconds:,.1f} s, {read / self.chunk_seconds:,.0f} rows/s"
            if self.chunk_seconds > 0 and read
            else ""
        )
        lines = [
            f"Snapshot done: {self.rows:,} rows from {len(self.tables)} tables in {self.seconds:,.1f} s "
            f"({rate:,.0f} rows/s); {self.chunks} chunks read"
            + (f", {self.chunks_skipped} already done in an earlier run" if self.chunks_skipped else "")
            + chunk_rate,
            f"  start {self.start.file}:{self.start.pos}  end {self.end.file}:{self.end.pos}"
            + (f"  gtids {self.end.gtids}" if self.end.gtids else ""),
            f"  concurrent changes in the window: {self.window_events} row events; {self.reread_rows} rows "
            f"re-read as of the end, {self.deleted} gone (op=d and tombstone)",
            f"  delivery {self.delivery.replace('_', '-')}: {self.chunks_reread} chunks re-read; "
            + (
                "records written twice: 0 for read_committed consumers (one transaction per chunk)"
                if self.delivery == "exactly_once"
                else "records written twice: "
                + ("unknown" if self.written_twice is None else f"{self.written_twice:,}")
            ),
        ]
        return "\n".join(lines)


@dataclass
class ChunkRun:
    """What :meth:`SnapshotRun.read_chunks` did: where it wrote, the chunks it read and how long it took."""

    writer: WriterSpec
    delivery: RunDelivery
    tasks: list[ChunkTask]
    results: list[ChunkResult]
    seconds: float


class _RunMetrics:
    """Debezium's snapshot metrics for the chunks of a Spark run (``/metrics``, the status page's progress
    and ETA): rows per table as chunks complete, a table done with its last chunk."""

    def __init__(
        self, snapshot: SnapshotMetrics, plans: Sequence[TablePlan], done: Mapping[str, Any]
    ) -> None:
        self.snapshot = snapshot
        self.tables = {str(p.table): p.table for p in plans}
        self.chunks_left = {str(p.table): len(p.chunks) for p in plans}
        self.rows = dict.fromkeys(self.tables, 0)
        for chunk_id, info in done.items():
            self._count(chunk_id, int(info.get("rows", 0)))

    def _count(self, chunk_id: str, rows: int) -> None:
        table = chunk_id.rsplit("#", 1)[0]
        if table not in self.tables:
            return
        self.rows[table] += rows
        self.chunks_left[table] -= 1
        self.snapshot.rows_scanned(self.tables[table], self.rows[table])
        if self.chunks_left[table] == 0:
            self.snapshot.table_done(self.tables[table])

    def chunk_done(self, chunk_id: str, rows: int) -> None:
        self._count(chunk_id, rows)


def _run_metrics(prefix: str, plans: Sequence[TablePlan], done: Mapping[str, Any]) -> _RunMetrics:
    snapshot = SnapshotMetrics(prefix)
    snapshot.start([p.table for p in plans])
    snapshot.estimated_rows = {str(p.table): p.rows for p in plans}
    return _RunMetrics(snapshot, plans, done)
