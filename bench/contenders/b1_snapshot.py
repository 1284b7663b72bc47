"""B1's and B2's contenders: ``cdc snapshot`` on Spark at 1/2/4 partitions, cdc's single-reader snapshot,
cdc's connector at its default engine (``auto``) and with ``snapshot.engine=spark`` in the worker,
Debezium's initial snapshot in Kafka Connect, and the ``mariadb-dump`` ceiling (B1 only).

The connectors run with the same configuration as B3's (:func:`bench.scenarios.b3_binlog.connector_config`)
but ``snapshot.mode=initial`` and the connectors' default locking. See :mod:`bench.scenarios.b1_snapshot`.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import time
from typing import Any, ClassVar

from bench import jars, peer_tuning
from bench.contenders.b3_debezium import debezium_worker, fetch_debezium
from bench.contenders.jdbc_poll_cdc import connector_config as jdbc_connector_config
from bench.core import Case, Contender, Sample, Unavailable, contender
from bench.procstat import TreeMonitor, cpu_seconds
from bench.query_cpu import QueryCpu
from bench.scenarios import jdbc_poll
from bench.scenarios.b1_snapshot import B1Snapshot, B2SnapshotUnderWrites, Writers, reduce_topic
from bench.scenarios.b3_binlog import connector_config, settle, wait_drained
from bench.stack import Stack, unique
from bench.verify import Watermarks, read_back, readback_timeout
from bench.workers import (
    WorkerProcess,
    WorkerSpec,
    cdc_worker,
    free_port,
    tail,
    worker_properties,
)

__all__ = ["Dump", "SnapshotContender"]

CDC_CONNECTOR = "io.debezium.connector.mysql.MySqlConnector"
DEBEZIUM_CONNECTOR = "io.debezium.connector.mariadb.MariaDbConnector"


class _Run:
    """One run's names, clocks and CPU baselines."""

    def __init__(self, contender: SnapshotContender, case: Case) -> None:
        sc = contender.b1
        self.stack = Stack(contender.ctx.repo)
        self.rows = sc.rows()
        self.table = sc.fresh_copy(case) if isinstance(sc, B2SnapshotUnderWrites) else sc.table_for(case)
        self.prefix = unique(f"bench-{sc.id.lower()}-{contender.name}").replace("-", "_")
        self.group = self.prefix.replace("_", "-")
        self.name = f"{self.group}-source"
        self.topic = f"{self.prefix}.{self.table}"
        self.props = worker_properties(self.stack.bootstrap, self.group, free_port())
        self.topics = [
            self.topic,
            f"{self.prefix}-schema-history",
            self.prefix,
            f"__debezium-heartbeat.{self.prefix}",
            *(
                self.props[k]
                for k in ("config.storage.topic", "offset.storage.topic", "status.storage.topic")
            ),
        ]
        self.mysqld, self.broker = self.stack.pid("mariadb"), self.stack.pid("kafka")
        self.server_id = random.randrange(5400, 7400)
        self.watermarks = Watermarks(self.stack.bootstrap, self.topic)
        self.writers: Writers | None = None
        self.query_cpu: QueryCpu | None = None
        if isinstance(sc, B2SnapshotUnderWrites):
            self.writers = Writers(self.stack, self.table, self.rows, sc.write_seconds(), sc.seed() + 7)

    def start(self) -> None:
        self.mysqld0 = cpu_seconds(self.mysqld) if self.mysqld else 0.0
        self.broker0 = cpu_seconds(self.broker) if self.broker else 0.0
        if self.mysqld:
            self.query_cpu = QueryCpu(self.mysqld, self._root, self.table).start()
        self.t0 = time.monotonic()
        if self.writers is not None:
            self.writers.start()

    def _root(self) -> Any:
        import MySQLdb

        return MySQLdb.connect(unix_socket=str(self.stack.socket), user="root")

    def server_cpu(self) -> tuple[float | None, float | None]:
        mysqld = cpu_seconds(self.mysqld) - self.mysqld0 if self.mysqld else None
        broker = cpu_seconds(self.broker) - self.broker0 if self.broker else None
        return mysqld, broker

    def reads_cpu(self) -> float | None:
        """mysqld CPU-seconds of the threads that served statements naming the table (bench/query_cpu.py)."""
        if self.query_cpu is None:
            return None
        cpu = self.query_cpu.stop()
        return cpu if self.query_cpu.error is None and self.query_cpu.threads else None


class SnapshotContender(Contender):
    scenario_id: ClassVar[str] = "B1"

    @property
    def b1(self) -> B1Snapshot:
        assert isinstance(self.scenario, B1Snapshot)
        return self.scenario

    def connector(self, run: _Run) -> dict[str, str]:
        raise NotImplementedError

    def snapshot(self, run: _Run) -> tuple[float, float, float]:
        """Take the snapshot; (seconds from start to its end, contender CPU-seconds, peak RSS in MB)."""
        raise NotImplementedError

    def stream_after(self, run: _Run) -> WorkerProcess | None:
        """B2: what streams the writers' changes once the snapshot ended (None: the snapshotter goes on)."""
        return None

    def run(self, case: Case, run_index: int) -> Sample:
        run = _Run(self, case)
        streamer: WorkerProcess | None = None
        try:
            wall, cpu, peak = self.snapshot(run)
            mysqld_cpu, broker_cpu = run.server_cpu()
            reads_cpu = run.reads_cpu()
            million = run.rows / 1e6
            values: dict[str, float | None] = {
                "wall_s": wall,
                "rows_per_s_wall": run.rows / wall,
                "cpu_s_per_m": cpu / million,
                "mysqld_cpu_s_per_m": mysqld_cpu / million if mysqld_cpu is not None else None,
                "mysqld_reads_cpu_s_per_m": reads_cpu / million if reads_cpu is not None else None,
                "broker_cpu_s_per_m": broker_cpu / million if broker_cpu is not None else None,
                "peak_rss_mb": peak,
            }
            notes = [f"{self.name}: {self.describe(run)}"]
            if run.writers is None:
                back = read_back(run.stack.bootstrap, run.topic, run.rows, readback_timeout(run.rows))
                values.update(
                    rows_per_s=back.records / back.span_s if back.span_s > 0 else None,
                    records=float(back.records),
                    missing=float(back.missing),
                    duplicates=float(back.duplicates + back.unexpected),
                )
            else:
                streamer = self.stream_after(run)
                run.writers.join()
                settle(run.watermarks, quiet=10.0, limit=900.0)
                audit = reduce_topic(
                    run.stack, run.stack.bootstrap, run.topic, run.table, readback_timeout(run.rows)
                )
                values.update(
                    writes=float(run.writers.done),
                    write_rate=run.writers.done / max(run.writers.elapsed, 1e-9),
                    records=float(audit.records),
                    missing=float(audit.missing),
                    extra=float(audit.extra),
                    duplicates=float(audit.duplicates),
                    overlap=float(audit.overlap),
                )
                notes.append(f"{self.name}: writers {run.writers.summary()}")
            return Sample(values, notes)
        finally:
            if run.query_cpu is not None:
                run.query_cpu.stop()
            if run.writers is not None and run.writers.started:
                run.writers.seconds = 0  # stop early on an error
                run.writers.join()
            if streamer is not None:
                streamer.stop()
            self.cleanup(run)
            run.watermarks.close()
            if self.ctx.options.get("keep") != "1":
                run.stack.delete_topics(run.topics)

    def cleanup(self, run: _Run) -> None:
        """Stop what :meth:`snapshot` left running."""

    def describe(self, run: _Run) -> str:
        shown = dict(self.connector(run))
        shown["database.server.id"] = "<random per run>"
        return "connector config " + json.dumps(
            {k: ("***" if "password" in k else v.replace(run.prefix, "<prefix>")) for k, v in shown.items()}
        )


def _config(connector_class: str, run: _Run, ssl_mode: str) -> dict[str, str]:
    config = connector_config(connector_class, run.table, run.prefix, run.stack, run.server_id, ssl_mode)
    config["snapshot.mode"] = "initial"
    del config["snapshot.locking.mode"]  # each connector's default
    return config


class ConnectSnapshot(SnapshotContender):
    """A connector's own initial snapshot in a worker that is up before the clock starts."""

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        raise NotImplementedError

    _worker: WorkerProcess | None = None

    def snapshot(self, run: _Run) -> tuple[float, float, float]:
        self._worker = WorkerProcess(self.spec(run.props))
        worker = self._worker
        worker.wait_ready()
        cpu0 = worker.monitor.cpu()
        run.start()
        worker.create_connector(run.name, self.connector(run))
        stall = float(self.ctx.options.get("stall", "120"))
        done = wait_drained(self.name, worker, run.name, run.watermarks, run.rows, stall)
        return done - run.t0, worker.monitor.cpu() - cpu0, worker.monitor.peak_rss_kb / 1024

    def cleanup(self, run: _Run) -> None:
        worker = self._worker
        if worker is not None:
            worker.stop()
            self._worker = None


@contender
class CdcSingle(ConnectSnapshot):
    name = "cdc-single"
    role = "ours"
    order = 14

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return cdc_worker(self.ctx.workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))

    def connector(self, run: _Run) -> dict[str, str]:
        config = _config(CDC_CONNECTOR, run, "disabled")
        config["snapshot.engine"] = "local"  # one reader, whatever the default (auto) would choose
        return config


@contender
class CdcDefault(CdcSingle):
    """cdc's connector with its default ``snapshot.engine=auto``: the engine it picks for this table on
    this machine (the task logs which and why)."""

    name = "cdc-default"
    order = 13

    def connector(self, run: _Run) -> dict[str, str]:
        return _config(CDC_CONNECTOR, run, "disabled")


@contender
class CdcWorkerSpark(CdcSingle):
    """cdc's connector with ``snapshot.engine=spark`` on ``local[2]`` in the worker (the engine ``auto``
    starts there): the clock includes Spark's start in the worker process, not a new process's."""

    name = "cdc-worker-spark-2"
    order = 15

    def check(self) -> None:
        probe = subprocess.run([self.ctx.python, "-c", "import pyspark"], capture_output=True)
        if probe.returncode != 0:
            raise Unavailable("pyspark is not installed (make spark)")

    def connector(self, run: _Run) -> dict[str, str]:
        config = _config(CDC_CONNECTOR, run, "disabled")
        config.update({"snapshot.engine": "spark", "snapshot.spark.master": "local[2]"})
        return config


@contender
class JdbcBulk(CdcSingle):
    """cdc's JDBC source in ``mode=bulk`` (one pass: ``poll.interval.ms`` of an hour), key = the row's id.

    BENCHMARKS.md's JDBC-bulk comparison for B1: Confluent's own JDBC source is not on Maven Central (B11
    says so), so this is ours, the way a JDBC-source user copies a table without CDC: no binlog position,
    no consistency with later changes.
    """

    name = "cdc-jdbc-bulk"
    order = 16

    def connector(self, run: _Run) -> dict[str, str]:
        database, table = run.table.split(".", 1)
        assert database == jdbc_poll.DATABASE
        config = jdbc_connector_config(run.stack, table, "bulk", f"{run.prefix}.{database}.", "")
        config["name"] = run.name
        return config

    def describe(self, run: _Run) -> str:
        shown = {k: ("***" if "password" in k else v) for k, v in self.connector(run).items()}
        return "connector config " + json.dumps(
            {k: v.replace(run.prefix, "<prefix>").replace(run.name, "<name>") for k, v in shown.items()}
        )


@contender
class DebeziumSnapshot(ConnectSnapshot):
    name = "debezium"
    role = "peer"
    order = 20

    def setup(self) -> None:
        fetch_debezium(self.ctx, "mariadb")

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return debezium_worker(self.ctx, props, "mariadb")

    def connector(self, run: _Run) -> dict[str, str]:
        return _config(DEBEZIUM_CONNECTOR, run, "disable")

    def versions(self) -> dict[str, str]:
        return {"debezium connector": f"debezium-connector-mariadb {jars.MARIADB_VERSION}"}


@contender
class DebeziumSnapshotBest(DebeziumSnapshot):
    """Debezium's initial snapshot at its best documented settings (:mod:`bench.peer_tuning`):
    ``max.batch.size`` 8192, ``max.queue.size`` 32768, ``poll.interval.ms`` 100 and the producer through
    ``producer.override.*`` (idempotent, five in flight, ``linger.ms`` 20, 1 MB batches, lz4).
    ``snapshot.fetch.size`` stays unset (the docs: the unset default streams the result set; setting it
    "can result in performance problems") and ``snapshot.max.threads`` at 1 (it parallelises across
    tables; B1 has one)."""

    name = "debezium-best"
    order = 25
    tunes = "debezium"

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return super().spec({**props, **peer_tuning.OVERRIDE_POLICY})

    def connector(self, run: _Run) -> dict[str, str]:
        tuned = peer_tuning.with_options(peer_tuning.throughput_settings(), self.ctx.options)
        return {**super().connector(run), **tuned}


class SparkSnapshot(CdcSingle):
    """``cdc snapshot --master local[N] --partitions N``: Spark's start-up is inside the clock."""

    partitions: ClassVar[int] = 2
    order = 10

    def connector(self, run: _Run) -> dict[str, str]:
        # `cdc snapshot` runs Spark whatever snapshot.engine says: the config the user would POST
        return _config(CDC_CONNECTOR, run, "disabled")

    def check(self) -> None:
        wanted = self.ctx.options.get("spark", "1,2,4").split(",")
        if str(self.partitions) not in [w.strip() for w in wanted]:
            raise Unavailable(f"not asked for (--set spark={','.join(wanted)})")
        probe = subprocess.run([self.ctx.python, "-c", "import pyspark"], capture_output=True)
        if probe.returncode != 0:
            raise Unavailable("pyspark is not installed (make spark)")

    def argv(self, run: _Run) -> list[str]:
        work = self.ctx.workdir
        conn = work / f"{run.group}.json"
        conn.write_text(json.dumps({"name": run.name, "config": self.connector(run)}), encoding="utf-8")
        props = work / f"{run.group}.snapshot.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in run.props.items()), encoding="utf-8")
        n = self.partitions
        argv = [self.ctx.python, "-m", "cdc.cli", "snapshot", str(conn), "--worker-config", str(props)]
        argv += ["--master", f"local[{n}]", "--partitions", str(n), "--quiet"]
        argv += ["--state-dir", str(work / f"{run.group}-state")]
        if "encoder" in self.ctx.options:
            argv += ["--encoder", self.ctx.options["encoder"]]
        if "chunk_rows" in self.ctx.options:
            argv += ["--chunk-rows", self.ctx.options["chunk_rows"]]
        if "delivery" in self.ctx.options:
            argv += ["--delivery", self.ctx.options["delivery"]]
        return argv

    def snapshot(self, run: _Run) -> tuple[float, float, float]:
        argv = self.argv(run)
        log = self.ctx.workdir / f"{run.group}.snapshot.log"
        with log.open("wb") as out:
            run.start()
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            monitor = TreeMonitor(proc.pid).start()
            try:
                code = proc.wait(timeout=float(self.ctx.options.get("timeout", "7200")))
            finally:
                monitor.stop()
                if proc.poll() is None:
                    proc.kill()
        ended = time.monotonic()
        if code != 0:
            raise RuntimeError(f"cdc snapshot exited with {code}: {tail(log, 15)}")
        return ended - run.t0, monitor.cpu(), monitor.peak_rss_kb / 1024

    def stream_after(self, run: _Run) -> WorkerProcess | None:
        worker = WorkerProcess(self.spec(run.props))
        try:
            worker.wait_ready()
            worker.create_connector(run.name, self.connector(run))
            worker.wait_running(run.name)
        except BaseException:
            worker.stop()
            raise
        return worker

    def describe(self, run: _Run) -> str:
        argv = [
            a.replace(str(self.ctx.workdir), "<workdir>").replace(run.group, "<run>") for a in self.argv(run)
        ]
        return " ".join(argv[1:]) + "; " + super().describe(run)


def _spark(n: int, scenario_id: str) -> type[SparkSnapshot]:
    cls: type[SparkSnapshot] = type(
        f"Spark{n}{scenario_id}",
        (SparkSnapshot,),
        {"name": f"cdc-spark-{n}", "partitions": n, "order": 10 + n, "scenario_id": scenario_id},
    )
    return contender(cls)


for _n in (1, 2, 4):
    for _sid in ("B1", "B2"):
        _spark(_n, _sid)


@contender
class CdcSingleB2(CdcSingle):
    scenario_id = "B2"


@contender
class DebeziumSnapshotB2(DebeziumSnapshot):
    scenario_id = "B2"


@contender
class Dump(Contender):
    """``mariadb-dump --single-transaction db table > /dev/null``: reading the table, nothing else."""

    name = "mariadb-dump"
    role = "ceiling"
    order = 40
    scenario_id = "B1"

    def run(self, case: Case, run: int) -> Sample:
        assert isinstance(self.scenario, B1Snapshot)
        stack = Stack(self.ctx.repo)
        database, table = self.scenario.table_for(case).split(".")
        rows = self.scenario.rows()
        argv = ["mariadb-dump", "--single-transaction", "-h", stack.mysql_host, "-P", str(stack.mysql_port)]
        argv += ["-ucdc", "-pcdc", database, table]
        mysqld = stack.pid("mariadb")
        mysqld0 = cpu_seconds(mysqld) if mysqld else 0.0
        # the dump is too short for /proc sampling: its CPU is the harness's children's rusage delta
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        with open("/dev/null", "wb") as sink:
            proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.PIPE)
            _out, err = proc.communicate()
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            raise RuntimeError(f"mariadb-dump failed: {err.decode(errors='replace')[-500:]}")
        million = rows / 1e6
        values: dict[str, Any] = {
            "wall_s": wall,
            "rows_per_s_wall": rows / wall,
            "rows_per_s": rows / wall,
            "cpu_s_per_m": cpu / million,
        }
        if mysqld:
            values["mysqld_cpu_s_per_m"] = (cpu_seconds(mysqld) - mysqld0) / million
        shown = " ".join(a if a != "-pcdc" else "-p***" for a in argv)
        return Sample(values, [f"{self.name}: `{shown} > /dev/null`"])
