"""B1: an initial snapshot of dataset A on an idle database; B2: the same snapshot while writers run.

**B1.** Dataset A (1 M rows by default, ``--rows``) is loaded once into ``bench.b1_a_<rows>`` without
binlogging and kept between invocations. Every contender reads the whole table into a fresh topic
``<prefix>.bench.b1_a_<rows>`` (JsonConverter, ``schemas.enable=false``, one partition, as the topic is
auto-created), and the topic is read back for missing and duplicated ids:

* ``cdc-spark-<N>`` (ours): ``cdc snapshot`` with ``--master local[N] --partitions N`` (N parallel JDBC
  readers; ``--set spark=1,2,4`` picks the N), its default encoder (``auto``: the JVM path), the worker
  properties a ``cdc distributed`` worker runs with; process start (Spark's start-up included) to exit.
* ``cdc-single`` (ours): cdc's MySQL connector with ``snapshot.mode=initial`` and
  ``snapshot.engine=local`` in a ``cdc distributed`` worker: one reader, as Debezium's.
* ``cdc-default`` (ours): the same connector at its default ``snapshot.engine=auto``, which picks the
  local reader or Spark by the table's row estimate and the cores (:mod:`cdc.mysql.snapshot_engine`).
* ``cdc-worker-spark-2`` (ours): the same connector with ``snapshot.engine=spark`` on ``local[2]``:
  Spark started inside the worker (the engine ``auto`` picks), the clock from ``POST /connectors``.
* ``debezium`` (peer): Debezium's MariaDB connector with ``snapshot.mode=initial`` in Kafka Connect.
* ``mariadb-dump`` (ceiling): ``mariadb-dump --single-transaction`` of the table to ``/dev/null``.

For the two connectors the clock starts at ``POST /connectors`` on a worker already up and stops when the
topic's end offset reaches the row count. CPU-seconds are the contender's whole process tree, sampled from
``/proc`` (Spark's JVM and its Python workers are children of ``cdc snapshot``). mysqld's CPU is given
twice: the whole process (every client of the server), and the threads of the connections that ran
statements naming the table (:mod:`bench.query_cpu`), which other clients of a shared server do not
inflate.

**B2** is B1 with writers: from the contender's start, three open-loop writer threads send 500 single-row
UPDATEs (``k = k + 1``), 200 INSERTs and 50 DELETEs per second (ids drawn from the table's range, seeded)
for ``--set write_s=`` seconds (default 60), each in autocommit. Each run starts from a fresh copy of the
table. When the writers stop, ours (``cdc snapshot``) is followed by the connector in a ``cdc distributed``
worker with the same name and offsets topic, which streams from where the snapshot's data ends; Debezium
simply goes on streaming. Once the topic has been quiet for 10 s it is read back and reduced by key, and
compared with the final table by version ``(k, updated_at)``: **missing** counts the table's rows whose
latest record in the topic is absent or older, **extra** the keys whose row is gone from the table but
whose latest record is not a delete, **duplicated** the (key, version) pairs written more than once, and
**overlap** those duplicates in which a streamed change event (not a snapshot read, ``op=r``) took part:
the snapshot and the streaming after it covering the same change.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from bench import datagen
from bench.core import Case, Metric, Scenario, scenario
from bench.stack import Stack
from bench.verify import records

__all__ = [
    "B1Snapshot",
    "B2SnapshotUnderWrites",
    "ChangeEvent",
    "Reduced",
    "TableRow",
    "Writers",
    "audit",
    "change_event",
    "reduce_topic",
    "table_rows",
]

DATABASE = "bench"


@scenario
class B1Snapshot(Scenario):
    id = "B1"
    title = "initial snapshot of dataset A (idle database)"
    measures = (
        "Rows per second of an initial snapshot of dataset A into Kafka: first to last record by their "
        "Kafka timestamps, and from the contender's start (Spark's start-up, or `POST /connectors`) to the "
        "last record; CPU-seconds per million rows of the contender's process tree, of mysqld and of the "
        "broker; the tree's peak RSS; the consumer's missing and duplicated ids. The ceiling is "
        "`mariadb-dump --single-transaction` to /dev/null."
    )
    default_rows = 1_000_000
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("rows_per_s", "rows/s, first to last record in Kafka", "rows/s", "higher", 0),
        Metric("rows_per_s_wall", "rows/s, start to last record (start-up included)", "rows/s", "higher", 0),
        Metric("wall_s", "seconds, start to last record", "s", "lower", 1),
        Metric("cpu_s_per_m", "contender CPU-seconds per million rows", "s", "lower", 1),
        Metric("mysqld_cpu_s_per_m", "mysqld CPU-seconds per million rows", "s", "lower", 2),
        Metric(
            "mysqld_reads_cpu_s_per_m",
            "mysqld CPU-seconds per million rows, threads serving the table's reads",
            "s",
            "lower",
            2,
        ),
        Metric("broker_cpu_s_per_m", "broker CPU-seconds per million rows", "s", "lower", 2),
        Metric("peak_rss_mb", "contender peak RSS (process tree)", "MB", "lower", 0),
        Metric("records", "records read back", "", "higher", 0, ratio=False),
        Metric("missing", "missing ids", "", "lower", 0, ratio=False),
        Metric("duplicates", "duplicated ids", "", "lower", 0, ratio=False),
    )

    def seed(self) -> int:
        return int(self.ctx.options.get("seed", "42"))

    @property
    def source_table(self) -> str:
        return f"{DATABASE}.b1_a_{self.rows()}"

    def table_for(self, case: Case) -> str:
        """The table a contender snapshots (B2 copies the pristine one per run)."""
        return self.source_table

    def cases(self) -> list[Case]:
        return [Case("snapshot", f"snapshot of {self.rows():,} rows", {})]

    def setup(self) -> None:
        self.stack = Stack(self.ctx.repo)

    def load_table(self, case: Case) -> None:
        """Load dataset A into the pristine table unless it is there already (``--set fresh=1`` reloads)."""
        table, n = self.source_table, self.rows()
        try:
            count = self.stack.sql(f"SELECT COUNT(*), MAX(id) FROM {table};").split()
        except RuntimeError:
            count = []
        if count == [str(n), str(n)] and self.ctx.options.get("fresh") != "1":
            self.ctx.log(f"[bench]   reusing {table} ({n:,} rows)")
            self.ctx.info[case.key] = {"table": table, "reused": True}
            return
        self.ctx.log(f"[bench]   loading {table}: {n:,} rows of dataset A, seed {self.seed()}")
        took = datagen.load(self.stack, "A", table, n, self.seed(), self.ctx.workdir)
        self.stack.sql(f"ANALYZE TABLE {table};", binlog=False)
        self.ctx.log(f"[bench]   loaded in {took:.0f} s")
        self.ctx.info[case.key] = {"table": table, "reused": False, "load_s": round(took, 1)}

    def prepare(self, case: Case) -> None:
        self.load_table(case)
        self.fit_buffer_pool(copies=1)

    def fit_buffer_pool(self, copies: int) -> None:
        """Grow InnoDB's buffer pool to hold ``copies`` of the table, so every contender reads from memory.

        The stack's 512 MB pool (sized for the tests) holds dataset A up to about 2 M rows; at 10 M rows
        (2.5 GB) a planner's ``COUNT(*)`` or a fresh copy went to disk and the contenders' rates measured
        the disk. The size is capped at 40 % of the machine's memory, reported in the notes, and put back
        at teardown.
        """
        table_bytes = self.stack.table_bytes(self.source_table)
        need = int(table_bytes * copies * 1.25)
        self._pool_before = have = self.stack.buffer_pool_bytes()
        cap = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 0.4)
        size = self.stack.set_buffer_pool(min(need, cap)) if need > have else have
        grown = f" (grown from {have / 2**30:.1f} GiB for this run)" if size != have else ""
        self.ctx.info.setdefault("notes", []).append(
            f"InnoDB buffer pool {size / 2**30:.1f} GiB{grown}; the table is "
            f"{table_bytes / 2**30:.2f} GiB of data and index."
        )

    def teardown(self, case: Case) -> None:
        before = getattr(self, "_pool_before", None)
        if before is not None and before != self.stack.buffer_pool_bytes():
            self.stack.set_buffer_pool(before)

    # hooks B2 fills in: writers around the contender's run, and the final-state audit
    def writing(self) -> bool:
        return False


@scenario
class B2SnapshotUnderWrites(B1Snapshot):
    id = "B2"
    title = "initial snapshot of dataset A while writers run"
    measures = (
        "B1's snapshot while three writers send 500 UPDATEs + 200 INSERTs + 50 DELETEs per second for "
        "`write_s` seconds from the contender's start; then the connector streams the rest. The topic, "
        "reduced by key, is compared with the final table by version (k, updated_at): missing, extra "
        "(deleted rows still present) and duplicated (key, version) pairs; rows/s are B1's."
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("wall_s", "seconds, start to the snapshot's end", "s", "lower", 1),
        Metric("cpu_s_per_m", "contender CPU-seconds per million rows (snapshot)", "s", "lower", 1),
        Metric("writes", "changes the writers committed", "", "higher", 0, ratio=False),
        Metric("write_rate", "writers' achieved changes/s", "changes/s", "higher", 0, ratio=False),
        Metric("records", "records read back", "", "higher", 0, ratio=False),
        Metric("missing", "missing (key, version): final rows not last in the topic", "", "lower", 0, False),
        Metric("extra", "deleted rows whose last record is not a delete", "", "lower", 0, ratio=False),
        Metric("duplicates", "duplicated (key, version) pairs", "", "lower", 0, ratio=False),
        Metric("overlap", "of which a streamed change took part in (overlap)", "", "lower", 0, ratio=False),
    )

    def writing(self) -> bool:
        return True

    def prepare(self, case: Case) -> None:
        self.load_table(case)
        self.fit_buffer_pool(copies=2)  # the pristine table is read for each run's fresh copy

    def write_seconds(self) -> float:
        return float(self.ctx.options.get("write_s", "60"))

    def table_for(self, case: Case) -> str:
        return f"{DATABASE}.b2_a_{self.rows()}"

    def fresh_copy(self, case: Case) -> str:
        """A fresh copy of the pristine table for one run (not binlogged: set-up, not a workload)."""
        table = self.table_for(case)
        self.stack.sql(
            f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} LIKE {self.source_table}; "
            f"INSERT INTO {table} SELECT * FROM {self.source_table}; ANALYZE TABLE {table};",
            binlog=False,
        )
        return table


# ------------------------------------------------------------------------------------------------ writers


@dataclass
class _Stream:
    kind: str
    rate: float
    done: int = 0
    errors: int = 0
    finished: float = 0.0  # monotonic time of its last statement


class Writers:
    """Open-loop writer threads (one connection each): UPDATE ``k = k + 1``, INSERT, DELETE by random id."""

    RATES: ClassVar[dict[str, float]] = {"update": 500.0, "insert": 200.0, "delete": 50.0}

    def __init__(self, stack: Stack, table: str, ids: int, seconds: float, seed: int) -> None:
        self.stack, self.table, self.ids, self.seconds, self.seed = stack, table, ids, seconds, seed
        self.streams = [_Stream(kind, rate) for kind, rate in self.RATES.items()]
        self._threads: list[threading.Thread] = []
        self.started = 0.0
        self.elapsed = 0.0
        self.failure: BaseException | None = None

    def _connect(self) -> Any:
        import MySQLdb

        return MySQLdb.connect(
            host=self.stack.mysql_host,
            port=self.stack.mysql_port,
            user="cdc",
            passwd="cdc",
            db=DATABASE,
            autocommit=True,
        )

    def _run(self, stream: _Stream, index: int) -> None:
        rng = random.Random(self.seed * 31 + index)
        try:
            conn = self._connect()
            cur = conn.cursor()
            table = self.table
            t0 = self.started
            i = 0
            while True:
                due = t0 + i / stream.rate
                now = time.monotonic()
                if due - t0 >= self.seconds:
                    break
                if due > now:
                    time.sleep(due - now)
                ident = rng.randint(1, self.ids)
                try:
                    if stream.kind == "update":
                        cur.execute(f"UPDATE {table} SET k = k + 1 WHERE id = %s", (ident,))
                    elif stream.kind == "insert":
                        cur.execute(
                            f"INSERT INTO {table} (k, c, pad) VALUES (%s, %s, %s)",
                            (ident, f"b2 insert {i}", "pad"),
                        )
                    else:
                        cur.execute(f"DELETE FROM {table} WHERE id = %s", (ident,))
                    stream.done += 1
                except Exception:
                    stream.errors += 1
                i += 1
            stream.finished = time.monotonic()
            conn.close()
        except BaseException as exc:
            self.failure = exc

    def start(self) -> Writers:
        self.started = time.monotonic()
        for index, stream in enumerate(self.streams):
            thread = threading.Thread(target=self._run, args=(stream, index), name=f"b2-{stream.kind}")
            thread.start()
            self._threads.append(thread)
        return self

    def join(self) -> None:
        for thread in self._threads:
            thread.join()
        ends = [s.finished for s in self.streams if s.finished]
        self.elapsed = (max(ends) if ends else time.monotonic()) - self.started
        if self.failure is not None:
            raise RuntimeError(f"a B2 writer failed: {self.failure}")

    @property
    def done(self) -> int:
        return sum(s.done for s in self.streams)

    def summary(self) -> str:
        parts = [f"{s.kind} {s.done:,} ({s.done / max(self.elapsed, 1e-9):.0f}/s)" for s in self.streams]
        errors = sum(s.errors for s in self.streams)
        return ", ".join(parts) + (f", {errors} statements failed" if errors else "")


# ------------------------------------------------------------------------------------------------- audit


@dataclass
class Reduced:
    records: int
    missing: int  # final rows whose latest record is absent or older (B2's figure: absent + stale)
    extra: int  # rows gone from the table whose latest record is not a delete
    duplicates: int
    overlap: int  # duplicates in which a streamed event (not a snapshot read) took part
    stale: int = 0  # of ``missing``, the rows whose key has records but the latest is an older version

    @property
    def absent(self) -> int:
        """Final rows of which the topic holds no record at all."""
        return self.missing - self.stale


ChangeEvent = tuple[int, str, dict[str, Any] | None]  # (id, op, after)
TableRow = tuple[int, int, int]  # (id, k, updated_at in epoch µs)


def _change_events(bootstrap: str, topic: str, timeout: float) -> Iterator[ChangeEvent]:
    """(id, op, after) per change event of a schemas-off JSON topic; tombstones are skipped."""
    for msg in records(bootstrap, topic, timeout):
        event = change_event(msg.key(), msg.value())
        if event is not None:
            yield event


def change_event(key: bytes | None, value: bytes | None) -> ChangeEvent | None:
    """One record as (id, op, after); None for a tombstone."""
    if value is None:
        return None
    envelope = json.loads(value)
    return int(json.loads(key or b"{}")["id"]), envelope["op"], envelope.get("after")


def audit(events: Iterable[ChangeEvent], rows: Iterable[TableRow]) -> Reduced:
    """Reduce change events by key (topic order) and compare with the table's rows by version (k, updated_at).

    Pure: the consumer and the ``SELECT`` are the caller's, so the verdicts can be tested on broken input.
    """
    last: dict[int, tuple[int, int] | None] = {}
    streamed: dict[tuple[int, int, int], bool] = {}  # each version seen: was one of its records streamed
    count = duplicates = overlap = 0
    for ident, op, after in events:
        count += 1
        if op == "d" or after is None:
            last[ident] = None
            continue
        version = (int(after["k"]), int(after["updated_at"]))
        last[ident] = version
        seen = streamed.get((ident, *version))
        if seen is not None:
            duplicates += 1
            overlap += seen or op != "r"
        streamed[(ident, *version)] = bool(seen) or op != "r"
    present: set[int] = set()
    missing = stale = 0
    for ident, k, at in rows:
        present.add(ident)
        latest = last.get(ident)
        if latest != (k, at):
            missing += 1
            stale += ident in last
    extra = sum(1 for ident, version in last.items() if version is not None and ident not in present)
    return Reduced(count, missing, extra, duplicates, overlap, stale)


def table_rows(stack: Stack, table: str) -> list[TableRow]:
    """(id, k, updated_at in epoch µs) of every row of ``table`` now."""
    out = stack.sql(
        f"SELECT id, k, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', updated_at) FROM {table};"
    )
    rows: list[TableRow] = []
    for line in out.splitlines():
        ident, k, at = line.split("\t")
        rows.append((int(ident), int(k), int(at)))
    return rows


def reduce_topic(stack: Stack, bootstrap: str, topic: str, table: str, timeout: float = 600.0) -> Reduced:
    """Compare ``topic`` reduced by key with ``table`` now, by version ``(k, updated_at)`` in epoch µs."""
    return audit(_change_events(bootstrap, topic, timeout), table_rows(stack, table))
