"""B3, ours: cdc's MySQL source (``io.debezium.connector.mysql.MySqlConnector``) in ``cdc distributed``.

Not run (the results say "not yet") until the class resolves in our plugin registry.
"""

from __future__ import annotations

import random

from bench.core import Unavailable, contender
from bench.scenarios.b3_binlog import BinlogRange, ConnectBinlogContender, connector_config
from bench.stack import Stack
from bench.workers import WorkerSpec, cdc_worker

CONNECTOR = "io.debezium.connector.mysql.MySqlConnector"


@contender
class CdcMySql(ConnectBinlogContender):
    name = "cdc"
    role = "ours"
    order = 10

    def check(self) -> None:
        import subprocess

        probe = subprocess.run(
            [self.ctx.python, "-c", f"from cdc.plugins import registry; registry.load({CONNECTOR!r})"],
            capture_output=True,
            text=True,
            cwd=self.ctx.repo,
        )
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["?"])[-1]
            raise Unavailable(f"not yet: {CONNECTOR} does not load in cdc ({last})")

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return cdc_worker(self.ctx.workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))

    def connector_config(self, rng: BinlogRange, prefix: str, stack: Stack) -> dict[str, str]:
        # exactly the peer's configuration, connector class aside
        return connector_config(CONNECTOR, rng.table, prefix, stack, random.randrange(6400, 7400), "disabled")
