"""B3, the peer: Debezium's MariaDB connector (or its MySQL connector) in Apache Kafka Connect.

``--set debezium=mysql`` runs ``debezium-connector-mysql`` (``MySqlConnector``) instead of
``debezium-connector-mariadb`` (``MariaDbConnector``); against MariaDB 10.11 the MariaDB connector is the
one Debezium supports (3.x's MySQL connector refuses MariaDB's GTIDs and binlog flavour).
"""

from __future__ import annotations

import random

from bench import jars
from bench.core import contender
from bench.scenarios.b3_binlog import BinlogRange, ConnectBinlogContender
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
        return {
            "connector.class": _CLASSES[self.flavour],
            "tasks.max": "1",
            "database.hostname": stack.mysql_host,
            "database.port": str(stack.mysql_port),
            "database.user": "cdc",
            "database.password": "cdc",
            "database.server.id": str(random.randrange(5400, 6400)),
            "database.ssl.mode": "disable",
            "topic.prefix": prefix,
            "database.include.list": rng.table.split(".")[0],
            "table.include.list": rng.table,
            "snapshot.mode": "recovery",
            "snapshot.locking.mode": "none",
            "include.schema.changes": "false",
            "schema.history.internal.kafka.bootstrap.servers": stack.bootstrap,
            "schema.history.internal.kafka.topic": f"{prefix}-schema-history",
            "schema.history.internal.store.only.captured.tables.ddl": "true",
        }

    def versions(self) -> dict[str, str]:
        return {"debezium connector": f"debezium-connector-{self.flavour} {jars.DEBEZIUM_VERSION}"}
