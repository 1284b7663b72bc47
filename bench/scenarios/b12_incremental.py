"""B12: an incremental snapshot (signal ``execute-snapshot``) of dataset A while B2's writers run.

Dataset A (1 M rows by default, ``--rows``) is loaded once into ``bench.b1_a_<rows>`` (B1's pristine
table) and copied afresh for every run into ``bench.b12_a_<rows>``. Each run:

1. A signal table of its own (``bench.<prefix>_signal``, Debezium's three columns) and a worker that is up
   before anything is measured: ours (``cdc distributed``) or Apache Kafka Connect with Debezium's MariaDB
   connector. The connector is B3's configuration (:func:`bench.scenarios.b3_binlog.connector_config`) with
   ``snapshot.mode=no_data`` (stream only), the signal table in ``table.include.list`` and
   ``signal.data.collection``; each contender adds its own settings (parallelism, chunk size).
2. B2's writers (:class:`bench.scenarios.b1_snapshot.Writers`: 500 UPDATEs ``k = k + 1`` + 200 INSERTs +
   50 DELETEs per second, autocommit, seeded ids) start; after ``warmup_s`` seconds (default 5) the signal
   row ``execute-snapshot`` ``{"data-collections": [table], "type": "incremental"}`` is inserted.
3. The back-fill's progress is the signal table: both connectors insert a watermark row before and after
   each chunk (``insert_insert``, both defaults). The back-fill is taken as finished when that count has
   not moved for ``quiet_s`` seconds (default 15); the contender's CPU (its process tree, from /proc) is
   read when the count last moved. Then the writers stop, the topic is left to settle (10 s quiet), and
   it is read back once.
4. From that read: **back-fill rows/s** = ``op=r`` records / (last ``r`` record's Kafka timestamp - the
   signal's commit), and first to last ``r`` beside it; **lag** of each streamed change (``c``/``u``)
   whose record's Kafka timestamp falls between the first and the last ``r`` = that timestamp (CreateTime,
   stamped by the worker's producer) - the row's ``updated_at`` (set by the server when the statement ran,
   as B5 measures latency; the server runs in UTC, as Debezium reads DATETIME); p50/p99 nearest-rank.
   Deletes carry no commit stamp and are not in the lag figures.
5. The same read, reduced by key, is compared with the final table (:func:`bench.scenarios.b1_snapshot.
   audit`): **missing** = rows of the table of which the topic has no record, **stale** = rows whose
   latest record is an older version (k, updated_at), plus deleted rows whose latest record is not a
   delete. Both must be 0. Duplicated (key, version) pairs are counted and shown, not judged: an
   incremental snapshot is at-least-once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from bench.core import Case, Metric, scenario
from bench.scenarios.b1_snapshot import DATABASE, B2SnapshotUnderWrites, ChangeEvent, change_event
from bench.scenarios.b5_steady import percentile
from bench.verify import records

__all__ = ["B12IncrementalSnapshot", "Backfill", "backfill", "read_events"]


@dataclass
class Backfill:
    """What one read of the topic says about the back-fill window."""

    reads: int = 0
    first_read_ms: int | None = None
    last_read_ms: int | None = None
    lags_ms: list[float] = field(default_factory=list)  # streamed c/u inside [first r, last r], in order

    def lag_ms(self, q: float) -> float | None:
        """Nearest-rank percentile of the lags (``q`` in 0..1)."""
        return percentile(sorted(self.lags_ms), q)

    def rows_per_s(self, signal_ms: float) -> float | None:
        """``op=r`` records per second from the signal's commit to the last ``r`` record."""
        if self.last_read_ms is None or self.last_read_ms <= signal_ms:
            return None
        return self.reads / ((self.last_read_ms - signal_ms) / 1000.0)

    def read_span_rows_per_s(self) -> float | None:
        if self.first_read_ms is None or self.last_read_ms is None or self.last_read_ms <= self.first_read_ms:
            return None
        return self.reads / ((self.last_read_ms - self.first_read_ms) / 1000.0)


def backfill(events: Iterable[tuple[int, ChangeEvent]]) -> Backfill:
    """Back-fill figures from (Kafka timestamp ms, change event) in topic order."""
    out = Backfill()
    streamed: list[tuple[int, float]] = []
    for ts_ms, (_ident, op, after) in events:
        if op == "r":
            out.reads += 1
            out.first_read_ms = ts_ms if out.first_read_ms is None else min(out.first_read_ms, ts_ms)
            out.last_read_ms = ts_ms if out.last_read_ms is None else max(out.last_read_ms, ts_ms)
        elif op in ("c", "u") and after is not None:
            streamed.append((ts_ms, ts_ms - int(after["updated_at"]) / 1000.0))
    if out.first_read_ms is not None and out.last_read_ms is not None:
        first, last = out.first_read_ms, out.last_read_ms
        out.lags_ms = [lag for ts, lag in streamed if first <= ts <= last]
    return out


def read_events(bootstrap: str, topic: str, timeout: float) -> Iterator[tuple[int, ChangeEvent]]:
    """(Kafka timestamp ms, (id, op, after)) per record of ``topic``, tombstones skipped."""
    for msg in records(bootstrap, topic, timeout):
        event = change_event(msg.key(), msg.value())
        if event is not None:
            yield msg.timestamp()[1], event


@scenario
class B12IncrementalSnapshot(B2SnapshotUnderWrites):
    id = "B12"
    title = "incremental snapshot (signal) of dataset A while writers run"
    measures = (
        "A table of dataset A back-filled by an `execute-snapshot` signal (incremental) on a streaming "
        "connector while B2's writers send 500 UPDATEs + 200 INSERTs + 50 DELETEs per second: back-fill "
        "rows/s (op=r records from the signal's commit to the last one in Kafka), the streaming lag "
        "(Kafka timestamp - the row's updated_at) of the changes recorded during the back-fill, p50/p99, "
        "the contender's CPU-seconds over the back-fill and its peak RSS; then the topic reduced by key "
        "against the final table: missing and stale keys (both must be 0)."
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("rows_per_s", "back-fill rows/s, signal to last op=r in Kafka", "rows/s", "higher", 0),
        Metric("read_rows_per_s", "back-fill rows/s, first to last op=r", "rows/s", "higher", 0),
        Metric("backfill_s", "seconds, signal to last op=r", "s", "lower", 1),
        Metric("lag_p50_ms", "streaming lag p50 during the back-fill", "ms", "lower", 1),
        Metric("lag_p99_ms", "streaming lag p99 during the back-fill", "ms", "lower", 1),
        Metric("lag_max_ms", "streaming lag max during the back-fill", "ms", "lower", 0),
        Metric("cpu_s", "contender CPU-seconds, signal to the back-fill's end", "s", "lower", 1),
        Metric("cpu_s_per_m", "contender CPU-seconds per million rows back-filled", "s", "lower", 1),
        Metric("peak_rss_mb", "contender peak RSS (process tree)", "MB", "lower", 0),
        Metric("reads", "op=r records", "", "higher", 0, ratio=False),
        Metric(
            "streamed_in_window", "changes streamed during the back-fill (lag sample)", "", "higher", 0, False
        ),
        Metric("write_rate", "writers' achieved changes/s", "changes/s", "higher", 0, ratio=False),
        Metric("missing", "missing keys (in the table, no record)", "", "lower", 0, ratio=False),
        Metric(
            "stale", "stale keys (latest record older, or a deleted row not deleted)", "", "lower", 0, False
        ),
        Metric(
            "duplicates", "duplicated (key, version) pairs (at-least-once, not judged)", "", "lower", 0, False
        ),
    )

    def table_for(self, case: Case) -> str:
        return f"{DATABASE}.b12_a_{self.rows()}"

    def cases(self) -> list[Case]:
        return [Case("incremental", f"incremental snapshot of {self.rows():,} rows under writes", {})]

    def option(self, key: str, default: str) -> float:
        return float(self.ctx.options.get(key, default))
