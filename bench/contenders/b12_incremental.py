"""B12's contenders: cdc's incremental snapshot at ``incremental.snapshot.parallelism`` 1, 2 and 4, cdc's
Spark back-fill (``cdc-spark2``: ``incremental.snapshot.engine=spark`` at ``local[2]``), and Debezium's
(MariaDB connector in Kafka Connect) at its defaults and at its best documented setting.

Debezium's incremental snapshot has one documented speed knob, ``incremental.snapshot.chunk.size``
(default 1024): its documentation says a larger chunk is more efficient (fewer, larger snapshot queries
and two signal-table writes per chunk) at the cost of buffering the chunk in memory. ``debezium-chunk``
runs it at ``--set debezium_chunk=`` rows (default 8192: 8 times the default, a few MB of dataset A's rows
buffered, far inside the worker's ``-Xmx2G``). Debezium reads one chunk at a time (no parallelism key).
cdc runs at its default chunk size (1024, Debezium's) so the parallelism is the only difference. See
:mod:`bench.scenarios.b12_incremental` for the procedure and the metrics.
"""

from __future__ import annotations

import json
import random
import time
from typing import ClassVar

import requests

from bench import jars
from bench.contenders.b3_debezium import debezium_worker, fetch_debezium
from bench.core import Case, Contender, Sample, contender
from bench.scenarios.b1_snapshot import Writers, audit, table_rows
from bench.scenarios.b3_binlog import connector_config, failure, settle
from bench.scenarios.b12_incremental import B12IncrementalSnapshot, backfill, read_events
from bench.stack import Stack, unique
from bench.verify import Watermarks, readback_timeout
from bench.workers import WorkerProcess, WorkerSpec, cdc_worker, free_port, worker_properties

__all__ = ["IncrementalContender"]

SIGNAL_DDL = "(id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL)"


class IncrementalContender(Contender):
    scenario_id: ClassVar[str] = "B12"
    connector_class: ClassVar[str] = "io.debezium.connector.mysql.MySqlConnector"
    ssl_mode: ClassVar[str] = "disabled"

    @property
    def b12(self) -> B12IncrementalSnapshot:
        assert isinstance(self.scenario, B12IncrementalSnapshot)
        return self.scenario

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        raise NotImplementedError

    def settings(self) -> dict[str, str]:
        """What this contender adds to the shared configuration."""
        return {}

    def config(self, stack: Stack, table: str, signal: str, prefix: str) -> dict[str, str]:
        config = connector_config(
            self.connector_class, table, prefix, stack, random.randrange(7400, 9400), self.ssl_mode
        )
        config.update(
            {
                "snapshot.mode": "no_data",
                "table.include.list": f"{table},{signal}",
                "signal.data.collection": signal,
                **self.settings(),
            }
        )
        return config

    def run(self, case: Case, run_index: int) -> Sample:
        sc = self.b12
        stack = Stack(self.ctx.repo)
        table = sc.fresh_copy(case)
        prefix = unique(f"bench-b12-{self.name}").replace("-", "_")
        group = prefix.replace("_", "-")
        signal = f"{table.split('.')[0]}.{prefix}_signal"
        topic = f"{prefix}.{table}"
        props = worker_properties(stack.bootstrap, group, free_port())
        topics = [
            topic,
            f"{prefix}.{signal}",
            f"{prefix}-schema-history",
            prefix,
            *(props[k] for k in ("config.storage.topic", "offset.storage.topic", "status.storage.topic")),
        ]
        stack.sql(f"DROP TABLE IF EXISTS {signal}; CREATE TABLE {signal} {SIGNAL_DDL};", binlog=False)
        config = self.config(stack, table, signal, prefix)
        worker = WorkerProcess(self.spec(props))
        writers = Writers(stack, table, sc.rows(), sc.option("limit_s", "7200"), sc.seed() + 12)
        watermarks = Watermarks(stack.bootstrap, topic)
        try:
            worker.wait_ready()
            worker.create_connector(f"{group}-source", config)
            worker.wait_running(f"{group}-source")
            writers.start()
            time.sleep(sc.option("warmup_s", "5"))
            cpu0 = worker.monitor.cpu()
            payload = json.dumps({"data-collections": [table], "type": "incremental"})
            signal_ms = time.time() * 1000.0
            stack.sql(f"INSERT INTO {signal} VALUES ('b12-{run_index}', 'execute-snapshot', '{payload}');")
            cpu1 = self._wait_backfill(worker, f"{group}-source", stack, signal, sc.option("quiet_s", "15"))
            writers.seconds = 0  # stop now
            writers.join()
            settle(watermarks, quiet=10.0, limit=900.0)
            events = list(read_events(stack.bootstrap, topic, readback_timeout(sc.rows() * 2)))
            figures = backfill(events)
            verdict = audit((event for _ts, event in events), table_rows(stack, table))
            rate = figures.rows_per_s(signal_ms)
            values: dict[str, float | None] = {
                "rows_per_s": rate,
                "read_rows_per_s": figures.read_span_rows_per_s(),
                "backfill_s": figures.reads / rate if rate else None,
                "lag_p50_ms": figures.lag_ms(0.50),
                "lag_p99_ms": figures.lag_ms(0.99),
                "lag_max_ms": max(figures.lags_ms) if figures.lags_ms else None,
                "cpu_s": cpu1 - cpu0,
                "cpu_s_per_m": (cpu1 - cpu0) / (figures.reads / 1e6) if figures.reads else None,
                "peak_rss_mb": worker.monitor.peak_rss_kb / 1024,
                "reads": float(figures.reads),
                "streamed_in_window": float(len(figures.lags_ms)),
                "write_rate": writers.done / max(writers.elapsed, 1e-9),
                "missing": float(verdict.absent),
                "stale": float(verdict.stale + verdict.extra),
                "duplicates": float(verdict.duplicates),
            }
            shown = {
                k: ("***" if "password" in k else v.replace(prefix, "<prefix>")) for k, v in config.items()
            }
            shown["database.server.id"] = "<random per run>"
            notes = [
                f"{self.name}: connector config {json.dumps(shown)}",
                f"{self.name}: writers {writers.summary()}",
            ]
            return Sample(values, notes)
        finally:
            if writers.started:
                writers.seconds = 0
                writers.join()
            worker.stop()
            watermarks.close()
            if self.ctx.options.get("keep") != "1":
                stack.delete_topics(topics)
                stack.sql(f"DROP TABLE IF EXISTS {signal};", binlog=False)

    def _wait_backfill(
        self, worker: WorkerProcess, name: str, stack: Stack, signal: str, quiet: float
    ) -> float:
        """Wait until the signal table's watermark rows stop growing for ``quiet`` s; the CPU at the last
        growth. Fails on a dead worker, a FAILED task, or no watermark within ``start_s`` (default 120)."""
        last, since, cpu = 1, time.monotonic(), worker.monitor.cpu()
        started = time.monotonic()
        start_limit = self.b12.option("start_s", "120")
        while True:
            time.sleep(0.5)
            count = int(stack.sql(f"SELECT COUNT(*) FROM {signal};").strip())
            now = time.monotonic()
            if count != last:
                last, since, cpu = count, now, worker.monitor.cpu()
            elif last > 1 and now - since >= quiet:
                return cpu
            elif last <= 1 and now - started > start_limit:
                raise TimeoutError(f"{self.name}: no snapshot window opened in {start_limit:.0f} s")
            if not worker.alive():
                raise RuntimeError(f"{self.name}: the worker died; see {worker.spec.log}")
            if int(now - started) % 10 == 0:
                status = worker.status(name)
                if "FAILED" in json.dumps(status):
                    raise RuntimeError(f"{self.name}: connector failed: {failure(status)}")


class CdcIncremental(IncrementalContender):
    role = "ours"
    parallelism: ClassVar[int] = 1

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return cdc_worker(self.ctx.workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))

    def settings(self) -> dict[str, str]:
        settings = {"incremental.snapshot.parallelism": str(self.parallelism)}
        if "cdc_chunk" in self.ctx.options:  # more, smaller windows: more interleaving with the stream
            settings["incremental.snapshot.chunk.size"] = self.ctx.options["cdc_chunk"]
        return settings


for _n in (1, 2, 4):
    contender(
        type(
            f"CdcIncremental{_n}",
            (CdcIncremental,),
            {"name": f"cdc-p{_n}", "parallelism": _n, "order": 10 + _n},
        )
    )


@contender
class CdcSparkIncremental(CdcIncremental):
    """cdc's incremental snapshot back-filled by its Spark engine (``incremental.snapshot.engine=spark``):
    the whole table read as ``local[2]`` Spark tasks (2 readers, ``snapshot.spark.chunk.rows`` default
    50 000, exactly-once chunks) while the task streams, then the keys changed meanwhile read again in
    watermark windows. Its watermarks are written only at the end, so the back-fill's end is taken from the
    worker's ``/metrics`` (``SnapshotCompleted`` after ``SnapshotRunning``) instead of the signal table."""

    name = "cdc-spark2"
    order = 15

    def settings(self) -> dict[str, str]:
        return {
            "incremental.snapshot.engine": "spark",
            "incremental.snapshot.spark.min.rows": "0",
            "snapshot.spark.master": "local[2]",
            "snapshot.spark.partitions": "2",
            "snapshot.spark.state.dir": str(self.ctx.workdir / "spark-state"),
        }

    def _wait_backfill(
        self, worker: WorkerProcess, name: str, stack: Stack, signal: str, quiet: float
    ) -> float:
        """Until the worker's snapshot metrics say the incremental snapshot ran and completed; the CPU
        then."""
        started_at = time.monotonic()
        limit = self.b12.option("limit_s", "7200")
        running = False
        while True:
            time.sleep(0.5)
            metrics = requests.get(worker.url + "/metrics", timeout=30).text
            running = running or _gauge(metrics, "SnapshotRunning") == 1.0
            if running and _gauge(metrics, "SnapshotCompleted") == 1.0:
                return worker.monitor.cpu()
            if not worker.alive():
                raise RuntimeError(f"{self.name}: the worker died; see {worker.spec.log}")
            status = worker.status(name)
            if "FAILED" in json.dumps(status):
                raise RuntimeError(f"{self.name}: connector failed: {failure(status)}")
            if time.monotonic() - started_at > limit:
                raise TimeoutError(f"{self.name}: the back-fill did not complete in {limit:.0f} s")


def _gauge(metrics: str, name: str) -> float | None:
    """The value of ``debezium_mysql_snapshot_<name>`` (the worker runs one connector)."""
    for line in metrics.splitlines():
        if line.startswith(f"debezium_mysql_snapshot_{name}{{"):
            return float(line.split()[-1])
    return None


@contender
class DebeziumIncremental(IncrementalContender):
    name = "debezium"
    role = "peer"
    order = 20
    connector_class = "io.debezium.connector.mariadb.MariaDbConnector"
    ssl_mode = "disable"

    def setup(self) -> None:
        fetch_debezium(self.ctx, "mariadb")

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return debezium_worker(self.ctx, props, "mariadb")

    def versions(self) -> dict[str, str]:
        return {"debezium connector": f"debezium-connector-mariadb {jars.MARIADB_VERSION}"}


@contender
class DebeziumIncrementalChunk(DebeziumIncremental):
    name = "debezium-chunk"
    order = 21
    tunes = "debezium"

    def settings(self) -> dict[str, str]:
        return {"incremental.snapshot.chunk.size": self.ctx.options.get("debezium_chunk", "8192")}
