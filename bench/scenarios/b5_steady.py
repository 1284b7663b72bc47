"""B5: steady 100, 1 000 and 3 000 changes/s against dataset A; latency from commit to Kafka, and CPU.

Options (``--set``): ``rates=100,1000,3000`` (one case per rate); ``duration=60`` (seconds measured per
run; BENCHMARKS.md's figure is 600, and every result says which was used); ``warmup=30`` (the least
warm-up at the rate before measuring); ``caught_up_ms`` and ``warmup_max=300`` (the warm-up goes on
until the contender is caught up, its latest record at most that far behind its change's commit stamp
(by default what its own waiting allows: max(1000, 2 x ``poll.interval.ms``) for the binlog connectors,
``poll.interval.ms`` + 1000 for the JDBC source), or for at most that many seconds: Debezium's JVM on a
busy 2-core machine was still compiling, and draining the backlog of its start, 60 s after it began
streaming at 1 000 changes/s); ``grace=30`` (seconds after the writer stopped within which a change
must reach the consumer, or it is missing); ``insert_every=5`` (1 change in 5 is an INSERT);
``partitions=1`` (of the table's topic); ``poll=1000`` (the JDBC source's ``poll.interval.ms``);
``start=offset|no_data`` (how the binlog connectors start streaming from now); ``binlog_poll=N`` (the
binlog connectors' ``poll.interval.ms``, the same for both; unset, both run at their default of 500 ms,
which Debezium 3.5 waits out whenever fewer than ``max.batch.size`` (2048) events are queued: its
``ChangeEventQueue.poll`` returns on a full batch or on that timer, so at these rates its latency is
mostly that wait); ``cdc_polls=0,5,20,50,200`` (ours' ``poll.interval.ms`` only, one case per rate and
value, keyed ``r<rate>-p<ms>``: the latency/CPU trade-off curve; give ``--only cdc`` and run Debezium once
at its default beside it); ``cdc_linger=N`` (ours' ``producer.override.linger.ms``; unset, the worker's
default of 5 ms); ``dump=1`` (write every measured change's times to
``<workdir>/b5/<topic>.latency.tsv``; give ``--workdir`` to keep it); ``seed``; ``fresh=1`` (reload the
table); ``keep=1`` (keep the topics).

Preparation, once per invocation: dataset A (``--rows``, default 1 000 000) is loaded into
``bench.b5_a_<rows>`` without binlogging, or reused when it holds ids 1..rows. Before every run the rows a
previous run inserted are deleted and the auto-increment set back (neither binlogged), so each run starts
from the same table and inserts the same ids.

Each run of each contender, one contender after another (never two at once):

1. A fresh worker: ``cdc distributed`` for ours and for our JDBC source, Apache Kafka Connect for
   Debezium (:mod:`bench.workers`, the same worker properties as B3: JSON without schemas both sides). The
   table's topic is created first (``partitions``) and a consumer thread of this process reads it from its
   start for the whole run.
2. The connector starts streaming from *now*. Binlog connectors (ours' and Debezium's), by default as in
   B3: created STOPPED, their offset written at the binlog position of this moment (``PATCH .../offsets``,
   ``snapshot.mode=recovery``) and resumed; with ``--set start=no_data``, created with
   ``snapshot.mode=no_data`` and no offset. The JDBC source (``timestamp+incrementing``, ``updated_at``
   and ``id``, ``poll.interval.ms=1000``) with ``timestamp.initial=-1``: its first poll starts at the
   database's current time.
3. Readiness: one UPDATE of a probe row every 0.5 s until the consumer has seen one, so the connector is
   known to be streaming (the JDBC source: caught up) before the writer starts.
4. The writer (``bench/tools/paced_writer.py``, its own process, one connection, autocommit) writes
   single-row changes at the case's rate: a warm-up of at least ``warmup`` seconds that goes on until the
   consumer sees the contender caught up (``caught_up_ms``; at most ``warmup_max`` seconds; the seconds it
   took are reported), then ``duration`` seconds measured; every ``insert_every``-th an
   INSERT, the others UPDATEs of a seeded permutation of the preloaded ids; ``c`` holds the run's tag and
   the change's sequence number, ``updated_at`` is set by the server (the table's CURRENT_TIMESTAMP(6)
   defaults: the time the statement began, a single-row autocommit statement's commit follows within
   its execution). The writer also keeps, per change, its own clock before and after the statement.
5. The steady window is the writer's measured phase: the contender's CPU (its process tree), mysqld's,
   the broker's and the binlog's growth (all databases: on a shared server the binlog readers parse
   other work's events too) are read when it begins and when it ends. Then the consumer is given
   ``grace`` seconds to see every measured change; one it has not seen by then is **missing** (0
   expected of CDC), one seen twice a **duplicate**.

Latency of a change = the Kafka timestamp of its record (CreateTime: the worker's producer stamps it when
the worker hands the record over; no contender sets a record timestamp of its own) minus the change's
commit stamp, the ``updated_at`` the server gave it, read from the record's row (ours' and Debezium's
``after``: MicroTimestamp, microseconds; the JDBC source's row: Connect Timestamp, milliseconds, the
stamp cut to the millisecond, so its latency reads up to 1 ms high). The consumer's receive time minus
the same stamp is reported beside it (it adds the producer's batching, the broker's append and the
consumer's fetch, and this process's scheduling).
MariaDB, Kafka, the workers, the writer and the consumer share this machine's clock. The server's stamp
is taken rather than the writer's "statement returned" time because on a busy machine the writer is
often scheduled late after its commit: in a trial at load 4-5 on 2 cores the record was in Kafka up to
48 ms before the writer saw its statement return, a negative latency. The notes give, per run, how late
the writer saw its statements return after the server's stamp and the latency timed from that return
instead (a lower bound). Percentiles are nearest-rank over the measured changes the consumer saw; the
warm-up's and the probes' records are not counted.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import queue
import signal
import subprocess
import threading
import time
import uuid
from abc import abstractmethod
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_CREATE_TIME, Consumer, KafkaError, TopicPartition

from bench import datagen
from bench.core import Case, Contender, Metric, Sample, Scenario, scenario
from bench.procstat import cpu_seconds, descendants
from bench.scenarios.b3_binlog import RUNNING, failure
from bench.stack import Stack, unique
from bench.workers import WorkerProcess, WorkerSpec, free_port, worker_properties

__all__ = ["DATABASE", "B5Steady", "ChangeConsumer", "SteadyContender"]

DATABASE = "bench"
BENCHMARKS_DURATION = 600  # seconds, BENCHMARKS.md's "for 10 minutes"
P99_TARGET_MS = 100.0  # BENCHMARKS.md: p99 <= 100 ms at 1 000 changes/s
WRITER = Path(__file__).resolve().parent.parent / "tools" / "paced_writer.py"
_NONE = -(2**62)


def _tree_cpu(pid: int) -> float:
    """CPU-seconds of a process and its living descendants now."""
    return sum(cpu_seconds(p) for p in [pid, *descendants(pid)])


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile of sorted ``values`` (``q`` in 0..1)."""
    if not values:
        return None
    return values[max(0, math.ceil(q * len(values)) - 1)]


def _epoch_us(value: Any) -> int:
    """A DATETIME(6) as the record carries it, in epoch microseconds: Debezium's MicroTimestamp (a long of
    microseconds), Connect's Timestamp (a long of milliseconds), or ISO text (taken as UTC)."""
    if isinstance(value, int):
        return value if abs(value) >= 10**14 else value * 1000
    if isinstance(value, str):
        try:
            stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return _NONE
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.UTC)
        return int(stamp.timestamp() * 1_000_000)
    return _NONE


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


@scenario
class B5Steady(Scenario):
    id = "B5"
    title = "steady changes/s against dataset A: latency from commit to Kafka"
    measures = (
        "A paced writer (its own process, one connection, autocommit) makes single-row UPDATEs and INSERTs "
        "(1 in 5) on dataset A at 100, 1 000 and 3 000 changes/s; each contender streams the table from "
        "now, one contender after another on the same workload. Per change, latency = the Kafka timestamp "
        "of its record (CreateTime, stamped by the worker's producer) minus the change's commit stamp (the "
        "`updated_at` the server set, read from the record), and the consumer's receive time minus that "
        "stamp; "
        "p50/p99/max, the changes/s the writer achieved, CPU-seconds of the contender in the steady window "
        "and per million changes, of mysqld and of the broker, peak RSS, and changes never seen within the "
        "grace period (missing; 0 expected of CDC). Contenders: ours (MySqlConnector in `cdc distributed`), "
        "Debezium in Kafka Connect, and our JDBC source in timestamp+incrementing mode polling every second."
    )
    default_rows = 1_000_000
    metrics = (
        Metric("latency_p50_ms", "latency p50, commit to Kafka timestamp", "ms", "lower", 1),
        Metric("latency_p99_ms", "latency p99, commit to Kafka timestamp", "ms", "lower", 1),
        Metric("latency_max_ms", "latency max, commit to Kafka timestamp", "ms", "lower", 0),
        Metric("receive_p50_ms", "latency p50, commit to the consumer's receipt", "ms", "lower", 1),
        Metric("receive_p99_ms", "latency p99, commit to the consumer's receipt", "ms", "lower", 1),
        Metric("writer_rate", "changes/s the writer achieved", "ch/s", "higher", 0, ratio=False),
        Metric("changes", "changes in the steady window", "", "higher", 0, ratio=False),
        Metric("duration_s", "steady window, seconds (BENCHMARKS.md: 600)", "", "higher", 0, ratio=False),
        Metric("warmup_s", "warm-up until caught up, seconds", "s", "lower", 0, ratio=False),
        Metric("cpu_s", "contender CPU-seconds in the steady window", "s", "lower", 2),
        Metric("cpu_s_per_m", "contender CPU-seconds per million changes", "s", "lower", 0),
        Metric("mysqld_cpu_s_per_m", "mysqld CPU-seconds per million changes", "s", "lower", 0),
        Metric("broker_cpu_s_per_m", "broker CPU-seconds per million changes", "s", "lower", 0),
        Metric("peak_rss_mb", "contender peak RSS", "MB", "lower", 0),
        Metric("binlog_mb", "binlog written in the window, all databases", "MB", "lower", 1, ratio=False),
        Metric("missing", "changes not seen within the grace period", "", "lower", 0, ratio=False),
        Metric("duplicates", "changes seen more than once", "", "lower", 0, ratio=False),
        RUNNING,
    )

    # ----------------------------------------------------------------------------------------- options

    def option(self, key: str, default: str) -> str:
        return self.ctx.options.get(key, default)

    @property
    def duration(self) -> float:
        return float(self.option("duration", "60"))

    @property
    def warmup(self) -> float:
        return float(self.option("warmup", "30"))

    @property
    def warmup_max(self) -> float:
        return max(self.warmup, float(self.option("warmup_max", "300")))

    @property
    def grace(self) -> float:
        return float(self.option("grace", "30"))

    @property
    def insert_every(self) -> int:
        return int(self.option("insert_every", "5"))

    @property
    def partitions(self) -> int:
        return int(self.option("partitions", "1"))

    @property
    def seed(self) -> int:
        return int(self.option("seed", "42"))

    @property
    def table_name(self) -> str:
        return f"b5_a_{self.rows()}"

    @property
    def table(self) -> str:
        return f"{DATABASE}.{self.table_name}"

    def rates(self) -> list[int]:
        return [int(float(r)) for r in self.option("rates", "100,1000,3000").split(",") if r.strip()]

    def cdc_polls(self) -> list[int | None]:
        """Ours' ``poll.interval.ms`` per case (``cdc_polls``); [None]: the connector's own (or
        ``binlog_poll``)."""
        given = [int(float(p)) for p in self.option("cdc_polls", "").split(",") if p.strip()]
        return list(given) if given else [None]

    def cases(self) -> list[Case]:
        n, every = self.rows(), self.insert_every
        short = (
            f"; a short run, BENCHMARKS.md's is {BENCHMARKS_DURATION} s"
            if self.duration < BENCHMARKS_DURATION
            else ""
        )
        mix = f"1 change in {every} an INSERT" if every > 0 else "UPDATEs only"
        return [
            Case(
                f"r{rate}" if poll is None else f"r{rate}-p{poll}",
                f"{rate:,} changes/s for {self.duration:g} s measured (after at least {self.warmup:g} s of "
                "warm-up, until caught up)"
                f"{short}; dataset A, {n:,} rows; {mix}"
                + ("" if poll is None else f"; ours at poll.interval.ms={poll}"),
                {"rate": rate, "duration_s": self.duration, "warmup_min_s": self.warmup}
                | ({} if poll is None else {"cdc_poll_ms": poll}),
            )
            for rate in self.rates()
            for poll in self.cdc_polls()
        ]

    # ------------------------------------------------------------------------------------------ prepare

    def setup(self) -> None:
        self.stack = Stack(self.ctx.repo)
        self._samples: dict[str, list[tuple[str, str, Sample]]] = {}
        n, table = self.rows(), self.table
        try:
            found = self.stack.sql(f"SELECT COUNT(*), MAX(updated_at) < NOW(6) FROM {table} WHERE id <= {n};")
        except RuntimeError:
            found = ""
        count = found.split("\t")[0] if found else ""
        notes = self.ctx.info.setdefault("notes", [])
        if count == str(n) and self.option("fresh", "0") != "1":
            self.ctx.log(f"[bench]   reusing {table} ({n:,} rows)")
        else:
            started = time.monotonic()
            self.ctx.log(f"[bench]   loading {n:,} rows of dataset A into {table}")
            datagen.load(self.stack, "A", table, n, self.seed, self.ctx.workdir)
            self.stack.sql(f"ANALYZE TABLE {table};")
            notes.append(f"{table} loaded ({n:,} rows) in {time.monotonic() - started:.0f} s")
            found = self.stack.sql(f"SELECT COUNT(*), MAX(updated_at) < NOW(6) FROM {table};")
        if found.strip().endswith("0"):
            # the JDBC source reads updated_at < now: future stamps would come back as changes later
            notes.append(f"warning: {table} holds updated_at values later than the database's clock")
        notes.append(
            f"steady window {self.duration:g} s per run (BENCHMARKS.md: {BENCHMARKS_DURATION} s), after "
            f"a warm-up at the same rate of at least {self.warmup:g} s and until the contender is caught up "
            f"(its latest record at most {self.option('caught_up_ms', 'max(1000, 2 x poll.interval.ms)')} ms "
            f"behind its change's commit stamp for the binlog connectors, "
            f"{self.option('caught_up_ms', 'poll.interval.ms + 1000')} ms for the JDBC source; at most "
            f"{self.warmup_max:g} s); grace {self.grace:g} s; "
            f"rates {', '.join(f'{r:,}' for r in self.rates())} changes/s; the table's topic created per run "
            f"with {self.partitions} partition(s) and the broker's defaults (CreateTime), the workers' "
            "producers at their defaults"
        )
        notes.append(
            "latency = the record's Kafka timestamp (CreateTime, stamped by the worker's producer) minus "
            "the change's commit stamp: the updated_at (DATETIME(6), CURRENT_TIMESTAMP(6)) the server set, "
            "read from the record; 'receipt' = the consumer's receive time instead of the Kafka timestamp; "
            "one machine, one clock"
        )

    def before_run(self, case: Case, contender: Contender, run: int) -> None:
        """The table as prepared: the rows earlier runs inserted deleted, the next id ``rows + 1``."""
        n = self.rows()
        self.stack.sql(
            f"DELETE FROM {self.table} WHERE id > {n}; ALTER TABLE {self.table} AUTO_INCREMENT = {n + 1};",
            binlog=False,
        )

    def ran(self, case: Case, contender: Contender, sample: Sample) -> None:
        self._samples.setdefault(case.key, []).append((contender.name, contender.role, sample))

    def teardown(self, case: Case) -> None:
        """Notes on BENCHMARKS.md's aims: ours' p99 <= 100 ms at 1 000 changes/s, and <= Debezium's."""
        runs = self._samples.pop(case.key, [])

        def median(name: str, key: str) -> float | None:
            values = [s.values.get(key) for n, _r, s in runs if n == name]
            present = sorted(v for v in values if v is not None)
            return present[len(present) // 2] if present else None

        ours = sorted({n for n, role, _s in runs if role == "ours"})
        notes = self.ctx.info.setdefault("notes", [])
        rate = int(case.params["rate"])
        for name in ours:
            p99 = median(name, "latency_p99_ms")
            if p99 is None:
                continue
            if rate == 1000:
                verdict = "meets" if p99 <= P99_TARGET_MS else "misses"
                notes.append(
                    f"{case.key}: {name}'s p99 {p99:.1f} ms {verdict} the aim of at most "
                    f"{P99_TARGET_MS:.0f} ms at 1 000 changes/s"
                )
            # Debezium at its best: the lower p99 of its default and tuned runs
            peers = [(median(p, "latency_p99_ms"), p) for p in ("debezium", "debezium-best")]
            known = [(value, p) for value, p in peers if value is not None]
            if known:
                peer, which = min(known)
                verdict = "meets" if p99 <= peer else "misses"
                notes.append(
                    f"{case.key}: {name}'s p99 {p99:.1f} ms {verdict} the aim of at most Debezium's "
                    f"({which}: {peer:.1f} ms)"
                )
            missing = median(name, "missing")
            if missing:
                notes.append(f"{case.key}: {name} missed {missing:.0f} changes (median of runs); 0 expected")


# ------------------------------------------------------------------------------------------ consumer


class ChangeConsumer:
    """Reads a table's topic from its start in a thread; per change of the run, its record's Kafka
    timestamp and the wall clock when the consumer received it.

    A record is a change of this run when the ``c`` of its row (Debezium's ``after`` image, or the JDBC
    source's flat row) is ``b5 <tag> <seq>``; ``b5 <tag> p<n>`` is a probe. Other records (earlier images,
    tombstones) are ignored.
    """

    def __init__(self, bootstrap: str, topic: str, tag: str, capacity: int) -> None:
        self.topic, self.tag = topic, tag
        self.kafka_ms = array("q", [_NONE]) * capacity
        self.received_us = array("q", [_NONE]) * capacity
        self.stamp_us = array("q", [_NONE]) * capacity  # the row's updated_at, epoch microseconds
        self.copies = bytearray(capacity)
        self.latest_stamp_us = _NONE  # the latest commit stamp among the changes seen
        self.seen = 0
        self.records = 0
        self.not_create_time = 0
        self.probe_seen = threading.Event()
        self.error: str | None = None
        self._stop = threading.Event()
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-b5-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 100,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )
        meta = self._consumer.list_topics(topic, timeout=10).topics[topic]
        self._consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in meta.partitions])
        self._thread = threading.Thread(target=self._loop, name=f"b5-consumer-{topic}", daemon=True)

    def start(self) -> ChangeConsumer:
        self._thread.start()
        return self

    def _row(self, value: bytes) -> Any:
        doc = json.loads(value)
        if isinstance(doc, dict) and "after" in doc and "op" in doc:
            return doc.get("after")
        return doc

    def _loop(self) -> None:
        poll, now, tag = self._consumer.poll, time.time_ns, self.tag
        capacity = len(self.copies)
        try:
            while not self._stop.is_set():
                msg = poll(0.1)
                if msg is None:
                    continue
                received = now() // 1000
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise RuntimeError(f"reading {self.topic}: {err}")
                value = msg.value()
                if value is None:
                    continue
                self.records += 1
                row = self._row(value)
                c = row.get("c") if isinstance(row, dict) else None
                parts = c.split() if isinstance(c, str) else []
                if len(parts) != 3 or parts[0] != "b5" or parts[1] != tag:
                    continue
                if parts[2].startswith("p"):
                    self.probe_seen.set()
                    continue
                seq = int(parts[2])
                if not 0 <= seq < capacity:
                    continue
                if self.copies[seq] == 0:
                    kind, ts = msg.timestamp()
                    if kind != TIMESTAMP_CREATE_TIME:
                        self.not_create_time += 1
                    self.kafka_ms[seq] = ts
                    self.received_us[seq] = received
                    stamp = self.stamp_us[seq] = _epoch_us(row.get("updated_at"))
                    if stamp > self.latest_stamp_us:
                        self.latest_stamp_us = stamp
                    self.seen += 1
                if self.copies[seq] < 255:
                    self.copies[seq] += 1
        except Exception as exc:  # reported by the run, which then fails
            self.error = f"{type(exc).__name__}: {exc}"

    def lag_ms(self) -> float | None:
        """Now less the commit stamp of the latest change seen: how far behind the contender is."""
        if self.latest_stamp_us == _NONE:
            return None
        return (time.time_ns() // 1000 - self.latest_stamp_us) / 1000.0

    def seen_between(self, first: int, last: int) -> int:
        """Changes with sequence numbers in [first, last) seen at least once."""
        return (last - first) - self.copies[first:last].count(0)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._consumer.close()


# ----------------------------------------------------------------------------------------- contender


@dataclass
class WriterLog:
    """What the paced writer wrote: per sequence number, the row's id, the operation and commit time."""

    summary: dict[str, Any]
    ids: array[int]
    ops: array[int]
    start_us: array[int]
    commit_us: array[int]

    @classmethod
    def read(cls, path: Path, summary: dict[str, Any]) -> WriterLog:
        sent = int(summary["sent"])
        arrays = []
        with path.open("rb") as fh:
            for _ in range(4):
                arr = array("q")
                arr.fromfile(fh, sent)
                arrays.append(arr)
        return cls(summary, *arrays)


class SteadyContender(Contender):
    """One program streaming the table in a worker; :meth:`run` is B5's run, the same for every contender."""

    scenario_id: ClassVar[str] = "B5"

    @property
    def steady(self) -> B5Steady:
        assert isinstance(self.scenario, B5Steady)
        return self.scenario

    @abstractmethod
    def spec(self, props: dict[str, str]) -> WorkerSpec: ...

    @abstractmethod
    def topic(self, prefix: str) -> str:
        """The table's topic for a run whose topic prefix is ``prefix``."""

    @abstractmethod
    def start(self, worker: WorkerProcess, name: str, prefix: str, stack: Stack) -> dict[str, str]:
        """Create connector ``name`` streaming from now; the configuration to show (no secrets)."""

    def extra_topics(self, prefix: str) -> list[str]:
        """Topics besides the table's and the worker's that a run leaves behind."""
        return []

    def caught_up_ms(self) -> float:
        """How far behind (ms) the contender may be and still count as caught up: ``--set caught_up_ms``,
        or what its own waiting makes of a caught-up reader (:meth:`natural_lag_ms`)."""
        given = self.ctx.options.get("caught_up_ms")
        return float(given) if given else self.natural_lag_ms()

    def natural_lag_ms(self) -> float:
        return 1000.0

    # ---------------------------------------------------------------------------------------------- run

    case: Case | None = None
    """The case :meth:`run` is running (its ``cdc_poll_ms``, if any, is ours' ``poll.interval.ms``)."""

    def run(self, case: Case, run: int) -> Sample:
        self.case = case
        b5 = self.steady
        stack = Stack(self.ctx.repo)
        rate = int(case.params["rate"])
        prefix = unique(f"bench-b5-{self.name}").replace("-", "_")
        group = prefix.replace("_", "-")
        tag = uuid.uuid4().hex[:10]
        topic = self.topic(prefix)
        spec = self.spec(worker_properties(stack.bootstrap, group, free_port()))
        topics = [*spec.internal_topics, topic, *self.extra_topics(prefix)]
        name = f"{group}-source"
        capacity = round(b5.warmup_max * rate) + round(b5.duration * rate) + 1
        mysqld, broker = stack.pid("mariadb"), stack.pid("kafka")
        workdir = self.ctx.workdir / "b5" / prefix
        workdir.mkdir(parents=True, exist_ok=True)
        stack.create_topic(topic, b5.partitions)
        consumer = ChangeConsumer(stack.bootstrap, topic, tag, capacity).start()
        writer: subprocess.Popen[str] | None = None
        try:
            with WorkerProcess(spec) as worker:
                worker.wait_ready()
                created = time.monotonic()
                shown = self.start(worker, name, prefix, stack)
                worker.wait_running(name)
                self._probe(worker, name, consumer, tag, stack)
                ready_s = time.monotonic() - created
                out = workdir / "writer.bin"
                flags = {
                    "--host": stack.mysql_host,
                    "--port": stack.mysql_port,
                    "--table": b5.table,
                    "--rows": b5.rows(),
                    "--rate": rate,
                    "--warmup": b5.warmup,
                    "--wait-go": b5.warmup_max,
                    "--duration": b5.duration,
                    "--tag": tag,
                    "--out": out,
                    "--insert-every": b5.insert_every,
                    "--seed": b5.seed,
                }
                argv = [self.ctx.python, str(WRITER), *(str(x) for kv in flags.items() for x in kv)]
                with (workdir / "writer.err").open("w") as err:
                    writer = subprocess.Popen(
                        argv,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=err,
                        text=True,
                        start_new_session=True,
                    )
                lines: queue.Queue[str] = queue.Queue()
                stdout = writer.stdout
                assert stdout is not None

                def read() -> None:
                    for ln in stdout:
                        lines.put(ln)
                    lines.put("")  # the writer closed its output: it ended

                threading.Thread(target=read, name="b5-writer-output", daemon=True).start()
                limit = b5.warmup_max + b5.duration + 120
                self._expect(lines, "warm", limit, writer, workdir)
                gate_lag = self._gate(worker, consumer, writer)
                self._expect(lines, "measure", limit, writer, workdir)
                cpu0 = _tree_cpu(worker.pid)
                mysqld0 = cpu_seconds(mysqld) if mysqld else 0.0
                broker0 = cpu_seconds(broker) if broker else 0.0
                binlog0 = stack.binlog_position()
                self._expect(lines, "end", limit, writer, workdir)
                cpu = _tree_cpu(worker.pid) - cpu0
                mysqld_cpu = cpu_seconds(mysqld) - mysqld0 if mysqld else None
                broker_cpu = cpu_seconds(broker) - broker0 if broker else None
                binlog1 = stack.binlog_position()
                binlog_mb = (binlog1[1] - binlog0[1]) / 1e6 if binlog1[0] == binlog0[0] else None
                summary = json.loads(self._expect(lines, "{", 60, writer, workdir))
                writer.wait(30)
                log = WriterLog.read(out, summary)
                warm, sent = int(summary["warm"]), int(summary["sent"])
                waited = self._drain(worker, name, consumer, warm, sent)
                snap = worker.snap()
                status = worker.status(name)
            out.unlink(missing_ok=True)
        finally:
            if writer is not None and writer.poll() is None:
                os.killpg(writer.pid, signal.SIGKILL)
                writer.wait(10)
            if writer is not None and writer.stdin is not None:
                with contextlib.suppress(OSError):
                    writer.stdin.close()
            consumer.stop()
            if self.ctx.options.get("keep") != "1":
                stack.delete_topics(topics)
        if consumer.error:
            raise RuntimeError(f"{self.name}: the consumer failed: {consumer.error}")
        sample = self._sample(
            case, run, log, consumer, cpu, mysqld_cpu, broker_cpu, snap, status, shown, ready_s, waited
        )
        sample.values["binlog_mb"] = binlog_mb
        sample.values["warmup_s"] = float(summary["warmup_s"])
        where = f"{case.key} run {run + 1}, {self.name}"
        if gate_lag is None or gate_lag > self.caught_up_ms():
            sample.notes.append(
                f"{where}: not caught up after {summary['warmup_s']:.0f} s of warm-up "
                f"(behind by {_ms(gate_lag)}); measured anyway"
            )
        else:
            sample.notes.append(
                f"{where}: caught up after {summary['warmup_s']:.0f} s of warm-up (behind by "
                f"{_ms(gate_lag)}, at most {self.caught_up_ms():g} ms taken as caught up)"
            )
        return sample

    def _gate(
        self, worker: WorkerProcess, consumer: ChangeConsumer, writer: subprocess.Popen[str]
    ) -> float | None:
        """After the minimum warm-up: wait until the contender is caught up (or the longest warm-up is
        over), then tell the writer to begin the measured phase. How far behind it was then, in ms."""
        b5 = self.steady
        deadline = time.monotonic() + b5.warmup_max - b5.warmup + 5
        while time.monotonic() < deadline and writer.poll() is None:
            lag = consumer.lag_ms()
            if lag is not None and lag <= self.caught_up_ms():
                break
            if consumer.error or not worker.alive():
                break
            time.sleep(0.1)
        lag = consumer.lag_ms()
        try:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        except (BrokenPipeError, OSError):  # the writer began on its own (its longest warm-up) or ended
            pass
        return lag

    def _probe(
        self, worker: WorkerProcess, name: str, consumer: ChangeConsumer, tag: str, stack: Stack
    ) -> None:
        """UPDATE a probe row every 0.5 s until the consumer saw one: the connector streams (caught up)."""
        b5 = self.steady
        deadline = time.monotonic() + float(self.ctx.options.get("ready_timeout", "180"))
        n = 0
        while not consumer.probe_seen.is_set():
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.name}: no probe change reached {consumer.topic}; see {worker.spec.log}"
                )
            if not worker.alive():
                raise RuntimeError(f"{self.name}: the worker died; see {worker.spec.log}")
            if n % 10 == 9:
                status = worker.status(name)
                if "FAILED" in json.dumps(status):
                    raise RuntimeError(f"{self.name}: connector failed: {failure(status)}")
            n += 1
            stack.sql(f"UPDATE {b5.table} SET c = 'b5 {tag} p{n}' WHERE id = {b5.rows()};")
            consumer.probe_seen.wait(0.5)

    def _expect(
        self, lines: queue.Queue[str], head: str, timeout: float, writer: subprocess.Popen[str], workdir: Path
    ) -> str:
        """The writer's next line, which must start with ``head``."""
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"{self.name}: no '{head}' line from the writer in {timeout:.0f} s") from None
        if not line.startswith(head):
            if not line:
                writer.wait(10)
            err = (workdir / "writer.err").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{self.name}: the writer said {line.strip()!r} (exit {writer.poll()}): {err}")
        return line

    def _drain(
        self, worker: WorkerProcess, name: str, consumer: ChangeConsumer, first: int, last: int
    ) -> float:
        """Seconds waited after the writer stopped until the consumer saw every measured change (at most
        the grace period; then the ones not seen are missing)."""
        started = time.monotonic()
        deadline = started + self.steady.grace
        while consumer.seen_between(first, last) < last - first and time.monotonic() < deadline:
            if consumer.error or not worker.alive():
                break
            time.sleep(0.05)
        return time.monotonic() - started

    @staticmethod
    def _stamp_ms(log: WriterLog, consumer: ChangeConsumer, seq: int) -> float:
        stamp = consumer.stamp_us[seq]
        return (log.commit_us[seq] if stamp == _NONE else stamp) / 1000.0

    def _slices(self, log: WriterLog, consumer: ChangeConsumer, first: int, last: int, parts: int = 6) -> str:
        """p99 of the Kafka-timestamp latency in each of ``parts`` equal slices of the window, in order:
        a contender still warming up or falling behind shows as a trend."""
        out = []
        for k in range(parts):
            lo, hi = first + (last - first) * k // parts, first + (last - first) * (k + 1) // parts
            values = sorted(
                consumer.kafka_ms[seq] - self._stamp_ms(log, consumer, seq)
                for seq in range(lo, hi)
                if consumer.copies[seq]
            )
            out.append(_ms(percentile(values, 0.99)))
        return ", ".join(out)

    def _dump(self, log: WriterLog, consumer: ChangeConsumer, first: int, last: int) -> None:
        path = self.ctx.workdir / "b5" / f"{consumer.topic}.latency.tsv"
        with path.open("w") as fh:
            fh.write(
                "seq\tid\top\twriter_start_us\twriter_return_us\tserver_stamp_us\tkafka_ms\treceived_us\tcopies\n"
            )
            for seq in range(first, last):
                row = (
                    seq,
                    log.ids[seq],
                    "IU"[log.ops[seq] == 0],
                    log.start_us[seq],
                    log.commit_us[seq],
                    consumer.stamp_us[seq],
                    consumer.kafka_ms[seq],
                    consumer.received_us[seq],
                    consumer.copies[seq],
                )
                fh.write("\t".join(map(str, row)) + "\n")
        self.ctx.log(f"[bench]     per-change times in {path}")

    def _sample(
        self,
        case: Case,
        run: int,
        log: WriterLog,
        consumer: ChangeConsumer,
        cpu: float,
        mysqld_cpu: float | None,
        broker_cpu: float | None,
        snap: Any,
        status: dict[str, Any],
        shown: dict[str, str],
        ready_s: float,
        waited: float,
    ) -> Sample:
        b5 = self.steady
        warm, sent = int(log.summary["warm"]), int(log.summary["sent"])
        measured = sent - warm
        kafka: list[float] = []  # Kafka timestamp - the server's stamp of the change
        receipt: list[float] = []  # the consumer's receive time - the server's stamp
        by_writer: list[float] = []  # Kafka timestamp - the writer's "statement returned" time
        writer_lag: list[float] = []  # the writer's "statement returned" time - the server's stamp
        duplicates = unstamped = 0
        for seq in range(warm, sent):
            if not consumer.copies[seq]:
                continue
            duplicates += consumer.copies[seq] - 1
            returned_ms = log.commit_us[seq] / 1000.0
            stamp = consumer.stamp_us[seq]
            if stamp == _NONE:  # no updated_at in the record: the writer's time stands in
                unstamped += 1
                stamp_ms = returned_ms
            else:
                stamp_ms = stamp / 1000.0
                writer_lag.append(returned_ms - stamp_ms)
            kafka.append(consumer.kafka_ms[seq] - stamp_ms)
            receipt.append(consumer.received_us[seq] / 1000.0 - stamp_ms)
            by_writer.append(consumer.kafka_ms[seq] - returned_ms)
        slices = self._slices(log, consumer, warm, sent)
        if self.ctx.options.get("dump") == "1":
            self._dump(log, consumer, warm, sent)
        by_writer.sort()
        writer_lag.sort()
        kafka.sort()
        receipt.sort()
        seen = len(kafka)
        missing = measured - seen
        million = max(measured, 1) / 1e6
        states = [status.get("connector", {}).get("state")] + [
            t.get("state") for t in status.get("tasks", [])
        ]
        running = len(states) > 1 and all(state == "RUNNING" for state in states)
        values: dict[str, float | None] = {
            "latency_p50_ms": percentile(kafka, 0.50),
            "latency_p99_ms": percentile(kafka, 0.99),
            "latency_max_ms": kafka[-1] if kafka else None,
            "receive_p50_ms": percentile(receipt, 0.50),
            "receive_p99_ms": percentile(receipt, 0.99),
            "writer_rate": float(log.summary["rate"]),
            "changes": float(measured),
            "duration_s": b5.duration,
            "cpu_s": cpu,
            "cpu_s_per_m": cpu / million,
            "mysqld_cpu_s_per_m": mysqld_cpu / million if mysqld_cpu is not None else None,
            "broker_cpu_s_per_m": broker_cpu / million if broker_cpu is not None else None,
            "peak_rss_mb": snap.hwm_kb / 1024 if snap else None,
            "missing": float(missing),
            "duplicates": float(duplicates),
            "running": 1.0 if running else 0.0,
        }
        inserts = sum(log.ops[warm:sent])
        where = f"{case.key} run {run + 1}, {self.name}"
        notes = [
            f"{self.name}: connector config {json.dumps(shown)}",
            f"{where}: writer {measured:,} changes ({inserts:,} INSERTs) in the {b5.duration:g} s window "
            f"({log.summary['rate']:,.0f}/s of {case.params['rate']:,}), at most "
            f"{log.summary['max_late_ms']:.0f} ms behind its schedule; streaming {ready_s:.1f} s after the "
            f"connector was created; {waited:.1f} s waited for the last changes after the writer stopped; "
            f"latency min {_ms(kafka[0] if kafka else None)}, p90 {_ms(percentile(kafka, 0.9))}, "
            f"p99.9 {_ms(percentile(kafka, 0.999))}",
        ]
        notes.append(f"{where}: latency p99 by sixth of the window, in order: {slices}")
        if kafka and kafka[0] < -1.5:
            notes.append(f"{where}: a Kafka timestamp {-kafka[0]:.1f} ms before its change's server stamp")
        if unstamped:
            notes.append(f"{where}: {unstamped:,} records without updated_at: timed from the writer's clock")
        if writer_lag:
            notes.append(
                f"{where}: the writer saw its statements return {_ms(percentile(writer_lag, 0.5))} (p50), "
                f"{_ms(percentile(writer_lag, 0.99))} (p99), {_ms(writer_lag[-1])} (max) after the server's "
                f"stamp; timed from the return instead, latency p50 {_ms(percentile(by_writer, 0.5))}, p99 "
                f"{_ms(percentile(by_writer, 0.99))}"
            )
            if abs(percentile(writer_lag, 0.5) or 0.0) > 1000:
                notes.append(f"{where}: updated_at is over a second off the writer's clock: time zones?")
        if consumer.not_create_time:
            notes.append(f"{where}: {consumer.not_create_time:,} records not stamped with CreateTime")
        if missing:
            lost = [seq for seq in range(warm, sent) if not consumer.copies[seq]]
            shown_lost = ", ".join(
                f"#{seq} id {log.ids[seq]} {'INSERT' if log.ops[seq] else 'UPDATE'}" for seq in lost[:5]
            )
            notes.append(f"{where}: {missing:,} changes not seen within {b5.grace:g} s, e.g. {shown_lost}")
        if not running:
            notes.append(f"{where}: not RUNNING after the run: {json.dumps(states)} {failure(status)}")
        sample = Sample(values, notes)
        b5.ran(case, self, sample)
        return sample
