"""B3: replay of a prepared binlog, 1 M single-row UPDATEs and 1 M rows inserted 100 per statement.

Preparation, once per case (and reused while the table and the binlog range are still there; ``--set
fresh=1`` forces it): dataset A is loaded into ``bench.b3_<case>`` without binlogging (for the updates
case; the inserts case starts from an empty table), the binlog position is taken (``SHOW MASTER STATUS``
and ``@@gtid_binlog_pos``), then the workload runs through the ``mariadb`` client (autocommit, one
transaction per statement) and the end position is taken.

Each run of a Connect-based contender starts a fresh worker, creates the connector **STOPPED**, writes
its source offset to the position taken before the workload (``PATCH /connectors/<n>/offsets``, KIP-875)
and resumes it, so both ours and Debezium read exactly the workload's range. Debezium runs with
``snapshot.mode=recovery``: with an offset and no schema history it reads the captured table's current
schema (unchanged by the workload) and then streams from the offset. The contender is done when the
table topic's end offset reaches the expected count; the topic is then read back (``bench.verify``).

B4 (dataset B) and B8 (one UPDATE of every row) are this scenario with another dataset or workload: they
subclass :class:`B3Binlog` (``dataset``, :meth:`B3Binlog.cases`, and the hooks
:meth:`B3Binlog.connector_overrides` and :meth:`B3Binlog.ran`) and register B3's contenders again under
their own id. Tables, prepared ranges and topics are named after the scenario (``bench.b4_updates``).
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from bench import datagen
from bench.core import Case, Contender, Metric, Sample, Scenario, scenario
from bench.procstat import cpu_seconds
from bench.stack import Stack, unique
from bench.verify import Watermarks, read_back
from bench.workers import WorkerProcess, WorkerSpec, free_port, worker_properties

__all__ = [
    "RUNNING",
    "B3Binlog",
    "BinlogRange",
    "ConnectBinlogContender",
    "connector_config",
    "failure",
    "settle",
    "wait_drained",
]

DATABASE = "bench"
# every Connect contender's sample has it; B3's table leaves it out, B4 and B8 show it
RUNNING = Metric("running", "connector and task RUNNING after the drain (1 = yes)", digits=0, ratio=False)


@dataclass(frozen=True)
class BinlogRange:
    """The workload's place in the binlog, and what a reader of it must emit."""

    table: str  # db.table
    start_file: str
    start_pos: int
    start_gtid: str
    end_file: str
    end_pos: int
    events: int  # change events expected (rows touched)
    rows: int
    seed: int
    prepare_s: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@scenario
class B3Binlog(Scenario):
    id = "B3"
    title = "replay of a prepared binlog (dataset A)"
    measures = (
        "Change events per second end to end (first to last record of the table's topic in Kafka, by their "
        "timestamps) when a connector replays a prepared binlog range from its start position; CPU-seconds "
        "per million events of the contender, of mysqld and of the broker; peak RSS; the consumer's missing "
        "and duplicated keys. The ceiling is `mariadb-binlog --read-from-remote-server -v` over the same "
        "range to /dev/null."
    )
    default_rows = 1_000_000
    dataset: ClassVar[str] = "A"  # of bench.datagen
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("events_per_s", "events/s, first to last record in Kafka", "ev/s", "higher", 0),
        Metric(
            "events_per_s_wall", "events/s, resume to last record (start-up included)", "ev/s", "higher", 0
        ),
        Metric("drain_s", "seconds from resume to the last record", "s", "lower", 1),
        Metric("cpu_s_per_m", "contender CPU-seconds per million events", "s", "lower", 1),
        Metric("mysqld_cpu_s_per_m", "mysqld CPU-seconds per million events", "s", "lower", 2),
        Metric("broker_cpu_s_per_m", "broker CPU-seconds per million events", "s", "lower", 2),
        Metric("peak_rss_mb", "contender peak RSS", "MB", "lower", 0),
        Metric("records", "records read back", "", "higher", 0, ratio=False),
        Metric("missing", "missing keys", "", "lower", 0, ratio=False),
        Metric("duplicates", "duplicated keys", "", "lower", 0, ratio=False),
    )

    def cases(self) -> list[Case]:
        n = self.rows()
        return [
            Case("updates", f"{n:,} single-row UPDATEs", {"workload": "updates"}),
            Case("inserts", f"{n:,} rows inserted 100 per statement", {"workload": "inserts"}),
        ]

    def connector_overrides(self) -> dict[str, str]:
        """Options every connector of this scenario gets on top of :func:`connector_config`."""
        return {}

    def ran(self, case: Case, run: int, contender: Contender, topic: str, sample: Sample) -> bool:
        """Called when a Connect contender drained and its topic was read back, before the topic is deleted;
        may add to ``sample``. True keeps the topic (the scenario then deletes it)."""
        return False

    def seed(self) -> int:
        return int(self.ctx.options.get("seed", "42"))

    def range_for(self, case: Case) -> BinlogRange:
        return self._ranges[case.key]

    def setup(self) -> None:
        self._ranges: dict[str, BinlogRange] = {}
        self.stack = Stack(self.ctx.repo)

    # -------------------------------------------------------------------------------------------- prepare

    def _tag(self) -> str:
        """``--set tag=NAME``: a prepared table and range of its own (``bench.b8_bulk_update_NAME``), so a
        small check run leaves the full-size preparation of the same scenario in place."""
        tag = self.ctx.options.get("tag", "")
        if tag and not tag.isidentifier():
            raise ValueError(f"--set tag={tag!r}: letters, digits and underscores only")
        return f"_{tag}" if tag else ""

    def _state_file(self, case: Case) -> Path:
        path = self.ctx.cache / "bench" / f"{self.id.lower()}-{case.key}{self._tag()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _reusable(self, case: Case) -> BinlogRange | None:
        path = self._state_file(case)
        if self.ctx.options.get("fresh") == "1" or not path.exists():
            return None
        saved = BinlogRange(**json.loads(path.read_text()))
        if saved.rows != self.rows() or saved.seed != self.seed():
            return None
        files = self.stack.binlog_files(saved.start_file, saved.end_file)
        if not files or files[0] != saved.start_file or files[-1] != saved.end_file:
            return None
        count = self.stack.sql(f"SELECT COUNT(*) FROM {saved.table};").strip()
        return saved if count == str(saved.rows) else None

    def prepare(self, case: Case) -> None:
        saved = self._reusable(case)
        if saved is not None:
            self.ctx.log(
                f"[bench]   reusing the prepared binlog of {saved.table}: "
                f"{saved.start_file}:{saved.start_pos} .. {saved.end_file}:{saved.end_pos}"
            )
            self._ranges[case.key] = saved
            self.ctx.info[case.key] = {"binlog": saved.to_dict(), "reused": True}
            return
        n, seed, workload = self.rows(), self.seed(), str(case.params["workload"])
        name = f"{self.id.lower()}_{workload.replace('-', '_')}{self._tag()}"
        table = f"{DATABASE}.{name}"
        started = time.monotonic()
        self.ctx.log(f"[bench]   preparing {table}: {n:,} rows of dataset {self.dataset}, seed {seed}")
        preload = n if datagen.PRELOADED[workload] else 0
        datagen.load(self.stack, self.dataset, table, preload, seed, self.ctx.workdir)
        write = datagen.WORKLOADS[workload]
        sql = write(self.ctx.workdir / f"{name}.sql", table, n, seed + 1, dataset=self.dataset)
        file, pos, gtid = self.stack.binlog_position()
        self.ctx.log(f"[bench]   writing the workload from {file}:{pos} (gtid {gtid})")
        self.stack.sql_file(sql)
        sql.unlink()
        end_file, end_pos, _ = self.stack.binlog_position()
        prepared = BinlogRange(
            table, file, pos, gtid, end_file, end_pos, n, n, seed, time.monotonic() - started
        )
        self.ctx.log(
            f"[bench]   prepared in {prepared.prepare_s:.0f} s: {file}:{pos} .. {end_file}:{end_pos}"
        )
        self._state_file(case).write_text(json.dumps(prepared.to_dict()))
        self._ranges[case.key] = prepared
        self.ctx.info[case.key] = {"binlog": prepared.to_dict(), "reused": False}


def failure(status: dict[str, Any]) -> str:
    """The last lines of each FAILED instance's trace: where the error is, not the thread's top frames."""
    parts = []
    for item in [status.get("connector", {}), *status.get("tasks", [])]:
        if item.get("state") == "FAILED":
            trace = [ln.strip() for ln in str(item.get("trace", "")).splitlines() if ln.strip()]
            parts.append(" | ".join(trace[:1] + trace[-3:]))
    return " || ".join(parts)[:1500]


def connector_config(
    connector_class: str, table: str, prefix: str, stack: Stack, server_id: int, ssl_mode: str
) -> dict[str, str]:
    """The configuration both ours and Debezium run with: what a Debezium user writes for this capture.

    Only ``database.ssl.mode`` is spelled per connector: the MySQL connector's ``disabled``, the MariaDB
    connector's ``disable``.
    """
    return {
        "connector.class": connector_class,
        "tasks.max": "1",
        "database.hostname": stack.mysql_host,
        "database.port": str(stack.mysql_port),
        "database.user": "cdc",
        "database.password": "cdc",
        "database.server.id": str(server_id),
        "database.ssl.mode": ssl_mode,
        "topic.prefix": prefix,
        "database.include.list": table.split(".")[0],
        "table.include.list": table,
        "snapshot.mode": "recovery",
        "snapshot.locking.mode": "none",
        "include.schema.changes": "false",
        "schema.history.internal.kafka.bootstrap.servers": stack.bootstrap,
        "schema.history.internal.kafka.topic": f"{prefix}-schema-history",
        "schema.history.internal.store.only.captured.tables.ddl": "true",
    }


class BinlogContender(Contender):
    scenario_id: ClassVar[str] = "B3"

    @property
    def b3(self) -> B3Binlog:
        assert isinstance(self.scenario, B3Binlog)
        return self.scenario


class ConnectBinlogContender(BinlogContender):
    """A binlog connector in a Connect-compatible worker, started from the workload's start position."""

    @abstractmethod
    def spec(self, props: dict[str, str]) -> WorkerSpec: ...

    @abstractmethod
    def connector_config(self, rng: BinlogRange, prefix: str, stack: Stack) -> dict[str, str]: ...

    def offset(self, rng: BinlogRange) -> dict[str, Any]:
        # Debezium's offset shape. The GTID set is needed: against a server with GTIDs (MariaDB always has
        # them) Debezium 3.5 resumes by GTID and fails on an offset without one (NPE on a null GtidSet).
        offset: dict[str, Any] = {"file": rng.start_file, "pos": rng.start_pos}
        if rng.start_gtid:
            offset["gtids"] = rng.start_gtid
        return offset

    def run(self, case: Case, run: int) -> Sample:
        stack = Stack(self.ctx.repo)
        rng = self.b3.range_for(case)
        prefix = unique(f"bench-{self.b3.id.lower()}-{self.name}").replace("-", "_")
        group = prefix.replace("_", "-")
        topic = f"{prefix}.{rng.table}"
        spec = self.spec(worker_properties(stack.bootstrap, group, free_port()))
        mysqld, broker = stack.pid("mariadb"), stack.pid("kafka")
        name = f"{group}-source"
        # ours writes one heartbeat record when its (recovery) snapshot ends, heartbeats off or not
        heartbeats = f"__debezium-heartbeat.{prefix}"
        topics = [*spec.internal_topics, topic, f"{prefix}-schema-history", prefix, heartbeats]
        watermarks = Watermarks(stack.bootstrap, topic)
        kept = False
        try:
            with WorkerProcess(spec) as worker:
                worker.wait_ready()
                worker.create_connector(name, self.config(rng, prefix, stack), initial_state="STOPPED")
                worker.request(
                    "PATCH",
                    f"/connectors/{name}/offsets",
                    {"offsets": [{"partition": {"server": prefix}, "offset": self.offset(rng)}]},
                )
                cpu0 = cpu_seconds(worker.pid)
                mysqld0 = cpu_seconds(mysqld) if mysqld else 0.0
                broker0 = cpu_seconds(broker) if broker else 0.0
                resumed = time.monotonic()
                worker.request("PUT", f"/connectors/{name}/resume")
                stall = float(self.ctx.options.get("stall", "120"))
                drained = wait_drained(self.name, worker, name, watermarks, rng.events, stall)
                cpu = cpu_seconds(worker.pid) - cpu0
                mysqld_cpu = cpu_seconds(mysqld) - mysqld0 if mysqld else None
                broker_cpu = cpu_seconds(broker) - broker0 if broker else None
                drain_s = drained - resumed
                snap = worker.snap()
                # records still coming after the expected count (duplicates) must be in the read-back
                settle(watermarks)
                status = worker.status(name)
            back = read_back(stack.bootstrap, topic, rng.rows)
            events = back.records
            million = max(events, 1) / 1e6
            states = [status.get("connector", {}).get("state")]
            states += [t.get("state") for t in status.get("tasks", [])]
            running = len(states) > 1 and all(state == "RUNNING" for state in states)
            sample = Sample(
                {
                    "events_per_s": events / back.span_s if back.span_s > 0 else None,
                    "events_per_s_wall": events / drain_s,
                    "drain_s": drain_s,
                    "cpu_s_per_m": cpu / million,
                    "mysqld_cpu_s_per_m": mysqld_cpu / million if mysqld_cpu is not None else None,
                    "broker_cpu_s_per_m": broker_cpu / million if broker_cpu is not None else None,
                    "peak_rss_mb": (snap.hwm_kb / 1024) if snap else None,
                    "records": float(back.records),
                    "missing": float(back.missing),
                    "duplicates": float(back.duplicates + back.unexpected),
                    "running": 1.0 if running else 0.0,
                },
                notes=[f"{self.name}: connector config {json.dumps(self._shown(rng, stack))}"]
                + ([] if running else [f"{self.name}: not RUNNING after the drain: {json.dumps(states)}"]),
            )
            kept = self.b3.ran(case, run, self, topic, sample)
        finally:
            watermarks.close()
            if self.ctx.options.get("keep") != "1":
                stack.delete_topics([t for t in topics if not (kept and t == topic)])
        return sample

    def config(self, rng: BinlogRange, prefix: str, stack: Stack) -> dict[str, str]:
        """:meth:`connector_config` with the scenario's overrides: what the connector is created with."""
        return {**self.connector_config(rng, prefix, stack), **self.b3.connector_overrides()}

    def _shown(self, rng: BinlogRange, stack: Stack) -> dict[str, str]:
        shown = self.config(rng, "<prefix>", stack)
        shown["database.server.id"] = "<random per run>"
        return {k: ("***" if "password" in k else v) for k, v in shown.items()}


def settle(watermarks: Watermarks, quiet: float = 3.0, limit: float = 60.0) -> None:
    """Wait until the topic's end offset has not moved for ``quiet`` seconds (at most ``limit``)."""
    last, since, deadline = watermarks.high(), time.monotonic(), time.monotonic() + limit
    while time.monotonic() - since < quiet and time.monotonic() < deadline:
        time.sleep(0.5)
        high = watermarks.high()
        if high != last:
            last, since = high, time.monotonic()


def wait_drained(
    label: str, worker: WorkerProcess, name: str, watermarks: Watermarks, expected: int, stall: float = 120.0
) -> float:
    """When the topic's end offset reached ``expected``; fails on a stall or a FAILED connector or task."""
    last, last_change = -1, time.monotonic()
    checked = time.monotonic()
    while True:
        high = watermarks.high()
        now = time.monotonic()
        if high >= expected:
            return now
        if high != last:
            last, last_change = high, now
        elif now - last_change > stall:
            raise TimeoutError(
                f"{label}: stalled at {high:,} of {expected:,} records for {stall:.0f} s; "
                f"see {worker.spec.log}"
            )
        if now - checked > 5:
            checked = now
            if not worker.alive():
                raise RuntimeError(f"{label}: the worker died; see {worker.spec.log}")
            status = worker.status(name)
            if "FAILED" in json.dumps(status):
                raise RuntimeError(f"{label}: connector failed: {failure(status)}")
        time.sleep(0.2)
