"""B5's contenders: ours (MySqlConnector in ``cdc distributed``), Debezium in Kafka Connect, and our JDBC
source (``JdbcSourceConnector``, timestamp+incrementing, polling every second) in ``cdc distributed``.

Debezium runs twice, at its defaults (``debezium``) and at its best for a latency budget (``debezium-best``,
:func:`bench.peer_tuning.latency_settings`). The binlog connectors are B3's (:mod:`bench.contenders.b3_cdc`,
:mod:`bench.contenders.b3_debezium`):
the same worker, the same connector configuration and the same way of starting from a binlog position
(created STOPPED, offset written, resumed), here the position of the moment the run starts. The run itself
(probe, paced writer, consumer, CPU window) is :class:`bench.scenarios.b5_steady.SteadyContender`'s.
"""

from __future__ import annotations

import subprocess
from typing import ClassVar

from bench import peer_tuning
from bench.contenders.b3_cdc import CdcMySql
from bench.contenders.b3_debezium import Debezium, DebeziumBest
from bench.contenders.jdbc_poll_cdc import CONNECTOR as JDBC_CONNECTOR
from bench.contenders.jdbc_poll_cdc import connector_config as jdbc_config
from bench.core import Context, Scenario, Unavailable, contender
from bench.scenarios.b3_binlog import BinlogRange, ConnectBinlogContender
from bench.scenarios.b5_steady import SteadyContender
from bench.stack import Stack
from bench.workers import WorkerProcess, WorkerSpec, cdc_worker


def _secretless(config: dict[str, str]) -> dict[str, str]:
    shown = {k: ("***" if "password" in k else v) for k, v in config.items()}
    if "database.server.id" in shown:
        shown["database.server.id"] = "<random per run>"
    return shown


class SteadyBinlog(SteadyContender):
    """A B3 binlog contender (:attr:`b3_class`) streaming the B5 table from the binlog position of now."""

    b3_class: ClassVar[type[ConnectBinlogContender]]

    def __init__(self, ctx: Context, scenario: Scenario) -> None:
        super().__init__(ctx, scenario)
        self.inner = self.b3_class(ctx, scenario)

    def check(self) -> None:
        self.inner.check()

    def setup(self) -> None:
        self.inner.setup()

    def versions(self) -> dict[str, str]:
        return self.inner.versions()

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return self.inner.spec(props)

    def topic(self, prefix: str) -> str:
        return f"{prefix}.{self.steady.table}"

    def natural_lag_ms(self) -> float:
        # a caught-up connector holds events up to poll.interval.ms (Debezium's ChangeEventQueue)
        ours = self.case.params.get("cdc_poll_ms") if self.case is not None and self.role == "ours" else None
        poll = float(ours if ours is not None else self.ctx.options.get("binlog_poll", "500"))
        return max(1000.0, 2.0 * poll)

    def extra_topics(self, prefix: str) -> list[str]:
        # the schema history, the server's topic and ours' heartbeat topic, as B3 cleans them up
        return [f"{prefix}-schema-history", prefix, f"__debezium-heartbeat.{prefix}"]

    def start(self, worker: WorkerProcess, name: str, prefix: str, stack: Stack) -> dict[str, str]:
        file, pos, gtid = stack.binlog_position()
        here = BinlogRange(self.steady.table, file, pos, gtid, file, pos, 0, 0, 0, 0.0)
        config = self.inner.connector_config(here, prefix, stack)
        if self.ctx.options.get("binlog_poll"):  # the same for ours and Debezium (default 500 ms both)
            config["poll.interval.ms"] = self.ctx.options["binlog_poll"]
        if self.role == "ours":  # the trade-off curve: ours' latency budget and producer linger
            poll = self.case.params.get("cdc_poll_ms") if self.case is not None else None
            if poll is not None:
                config["poll.interval.ms"] = str(poll)
            if self.ctx.options.get("cdc_linger"):
                config["producer.override.linger.ms"] = self.ctx.options["cdc_linger"]
        if self.ctx.options.get("start", "offset") == "no_data":
            config["snapshot.mode"] = "no_data"
            worker.create_connector(name, config)
            return _secretless(config)
        worker.create_connector(name, config, initial_state="STOPPED")
        worker.request(
            "PATCH",
            f"/connectors/{name}/offsets",
            {"offsets": [{"partition": {"server": prefix}, "offset": self.inner.offset(here)}]},
        )
        worker.request("PUT", f"/connectors/{name}/resume")
        return _secretless(config)


@contender
class CdcMySqlB5(SteadyBinlog):
    name = "cdc"
    role = "ours"
    order = 10
    b3_class = CdcMySql


@contender
class DebeziumB5(SteadyBinlog):
    name = "debezium"
    role = "peer"
    order = 20
    b3_class = Debezium


class _DebeziumLatency(DebeziumBest):
    """B3's ``debezium-best`` with B5's settings: ``poll.interval.ms`` 25 and ``linger.ms`` 5."""

    def settings(self) -> dict[str, str]:
        return peer_tuning.latency_settings()


@contender
class DebeziumBestB5(SteadyBinlog):
    """Debezium at its best documented settings for steady rates (:mod:`bench.peer_tuning`): the queue's
    ``max.batch.size`` 8192 and ``max.queue.size`` 32768, ``poll.interval.ms`` 25 (at the default 500 a
    change waits up to half a second for a batch that never fills at these rates; 25 ms is a budget
    inside issue #30's 50 ms p99 aim, so that CPU per change is compared at equal latency), and the
    producer idempotent with five requests in flight, ``linger.ms`` 5, lz4. ``--set binlog_poll=`` still
    sets ``poll.interval.ms`` for every binlog contender alike."""

    name = "debezium-best"
    role = "peer"
    order = 25
    tunes = "debezium"
    b3_class = _DebeziumLatency


@contender
class CdcJdbcB5(SteadyContender):
    """Our JDBC source in timestamp+incrementing mode (``updated_at``, ``id``), polling every second."""

    name = "cdc-jdbc"
    role = "peer"
    order = 30

    def check(self) -> None:
        probe = subprocess.run(
            [self.ctx.python, "-c", f"from cdc.plugins import registry; registry.load({JDBC_CONNECTOR!r})"],
            capture_output=True,
            text=True,
            cwd=self.ctx.repo,
        )
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["?"])[-1]
            raise Unavailable(f"{JDBC_CONNECTOR} does not load in cdc ({last})")

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return cdc_worker(self.ctx.workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))

    def topic(self, prefix: str) -> str:
        return prefix + "_" + self.steady.table_name

    def natural_lag_ms(self) -> float:
        # caught up, the latest row seen is up to one poll interval (and the query) old
        return float(self.ctx.options.get("poll", "1000")) + 1000.0

    def start(self, worker: WorkerProcess, name: str, prefix: str, stack: Stack) -> dict[str, str]:
        config = jdbc_config(stack, self.steady.table_name, "timestamp+incrementing", prefix + "_", "")
        config.update(
            {
                "name": name,
                "timestamp.column.name": "updated_at",
                "incrementing.column.name": "id",
                "poll.interval.ms": self.ctx.options.get("poll", "1000"),
                "timestamp.initial": "-1",  # the database's current time: stream from now
            }
        )
        worker.create_connector(name, config)
        return _secretless(config)
