"""B3, the peer: Debezium's MariaDB connector (or its MySQL connector) in Apache Kafka Connect.

``--set debezium=mysql`` runs ``debezium-connector-mysql`` (``MySqlConnector``) instead of
``debezium-connector-mariadb`` (``MariaDbConnector``), the connector Debezium 3.x ships for MariaDB, which
our stack runs. Both ran against MariaDB 10.11.19 here with no missing or duplicated key (B3 updates,
20 000 rows); the MariaDB connector is the default because it is the one Debezium documents for MariaDB.
"""

from __future__ import annotations

import random

from bench import jars, peer_tuning
from bench.core import Context, contender
from bench.scenarios.b3_binlog import BinlogRange, ConnectBinlogContender, connector_config
from bench.stack import Stack
from bench.workers import WorkerSpec, connect_worker

_CLASSES = {
    "mariadb": "io.debezium.connector.mariadb.MariaDbConnector",
    "mysql": "io.debezium.connector.mysql.MySqlConnector",
}


def fetch_debezium(ctx: Context, flavour: str) -> None:
    """Kafka Connect's jars and Debezium's ``debezium-connector-<flavour>`` plugin, into the cache."""
    jars.connect_libs(ctx.cache)
    jars.debezium_plugin_path(ctx.cache, f"debezium-connector-{flavour}")


def debezium_worker(ctx: Context, props: dict[str, str], flavour: str) -> WorkerSpec:
    """A Kafka Connect worker with Debezium's ``debezium-connector-<flavour>`` on its plugin path."""
    plugin_path = jars.debezium_plugin_path(ctx.cache, f"debezium-connector-{flavour}")
    return connect_worker(
        ctx.workdir, ctx.cache, props, plugin_path=plugin_path, cpus=ctx.options.get("cpus")
    )


@contender
class Debezium(ConnectBinlogContender):
    name = "debezium"
    role = "peer"
    order = 20

    @property
    def flavour(self) -> str:
        return self.ctx.options.get("debezium", "mariadb")

    def setup(self) -> None:
        fetch_debezium(self.ctx, self.flavour)

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return debezium_worker(self.ctx, props, self.flavour)

    def connector_config(self, rng: BinlogRange, prefix: str, stack: Stack) -> dict[str, str]:
        ssl_mode = "disable" if self.flavour == "mariadb" else "disabled"
        return connector_config(
            _CLASSES[self.flavour], rng.table, prefix, stack, random.randrange(5400, 6400), ssl_mode
        )

    def versions(self) -> dict[str, str]:
        artifact = f"debezium-connector-{self.flavour}"
        return {"debezium connector": f"{artifact} {jars.debezium_version(artifact)}"}


@contender
class DebeziumBest(Debezium):
    """Debezium at its best documented settings (:mod:`bench.peer_tuning`): ``max.batch.size`` 8192,
    ``max.queue.size`` 32768, ``poll.interval.ms`` 100, and the worker's producer through
    ``producer.override.*`` (idempotent, five requests in flight, ``linger.ms`` 20, 1 MB batches, lz4),
    with ``connector.client.config.override.policy=All`` on the worker. Otherwise :class:`Debezium`'s
    configuration, so the two columns differ only in these keys."""

    name = "debezium-best"
    order = 25
    tunes = "debezium"

    def settings(self) -> dict[str, str]:
        """The tuned keys (B5's subclass trades batching for its latency budget)."""
        return peer_tuning.throughput_settings()

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return super().spec({**props, **peer_tuning.OVERRIDE_POLICY})

    def connector_config(self, rng: BinlogRange, prefix: str, stack: Stack) -> dict[str, str]:
        tuned = peer_tuning.with_options(self.settings(), self.ctx.options)
        return {**super().connector_config(rng, prefix, stack), **tuned}
