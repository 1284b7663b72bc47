"""B3, the peer: Debezium's MariaDB connector (or its MySQL connector) in Apache Kafka Connect.

``--set debezium=mysql`` runs ``debezium-connector-mysql`` (``MySqlConnector``) instead of
``debezium-connector-mariadb`` (``MariaDbConnector``), the connector Debezium 3.x ships for MariaDB, which
our stack runs. Both ran against MariaDB 10.11.19 here with no missing or duplicated key (B3 updates,
20 000 rows); the MariaDB connector is the default because it is the one Debezium documents for MariaDB.
"""

from __future__ import annotations

import random

from bench import jars
from bench.core import contender
from bench.scenarios.b3_binlog import BinlogRange, ConnectBinlogContender, connector_config
from bench.stack import Stack
from bench.workers import WorkerSpec, connect_worker

_CLASSES = {
    "mariadb": "io.debezium.connector.mariadb.MariaDbConnector",
    "mysql": "io.debezium.connector.mysql.MySqlConnector",
}


@contender
class Debezium(ConnectBinlogContender):
    name = "debezium"
    role = "peer"
    order = 20

    @property
    def flavour(self) -> str:
        return self.ctx.options.get("debezium", "mariadb")

    def setup(self) -> None:
        jars.connect_libs(self.ctx.cache)
        jars.debezium_plugin_path(self.ctx.cache, f"debezium-connector-{self.flavour}")

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        plugin_path = jars.debezium_plugin_path(self.ctx.cache, f"debezium-connector-{self.flavour}")
        return connect_worker(
            self.ctx.workdir,
            self.ctx.cache,
            props,
            plugin_path=plugin_path,
            cpus=self.ctx.options.get("cpus"),
        )

    def connector_config(self, rng: BinlogRange, prefix: str, stack: Stack) -> dict[str, str]:
        ssl_mode = "disable" if self.flavour == "mariadb" else "disabled"
        return connector_config(
            _CLASSES[self.flavour], rng.table, prefix, stack, random.randrange(5400, 6400), ssl_mode
        )

    def versions(self) -> dict[str, str]:
        return {"debezium connector": f"debezium-connector-{self.flavour} {jars.DEBEZIUM_VERSION}"}
