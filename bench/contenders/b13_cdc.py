"""B13, ours: a group of ``cdc distributed worker.properties`` processes."""

from __future__ import annotations

from pathlib import Path

from bench.core import contender
from bench.scenarios.b13_group import GroupContender
from bench.workers import WorkerSpec, cdc_worker


@contender
class CdcGroup(GroupContender):
    name = "cdc"
    role = "ours"
    order = 10

    def spec(self, props: dict[str, str], workdir: Path) -> WorkerSpec:
        # A distributed cdc worker offers the FileStream connectors only when told to (docs/security.md);
        # Kafka Connect's workers here find them in its libs/ directory.
        props = {**props, "filestream.connectors.enable": "true"}
        return cdc_worker(workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))
