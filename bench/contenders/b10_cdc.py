"""B10, ours: ``cdc distributed worker.properties``."""

from __future__ import annotations

from bench.core import contender
from bench.scenarios.b10_startup import WorkerStartupContender
from bench.workers import WorkerSpec, cdc_worker


@contender
class CdcWorker(WorkerStartupContender):
    name = "cdc"
    role = "ours"
    order = 10

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        # FileStream connectors are offered by a distributed worker only when enabled (docs/security.md);
        # the peer has Kafka's connect-file jar on its class path.
        props = {**props, "filestream.connectors.enable": "true"}
        return cdc_worker(self.ctx.workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))
