"""B10, the peer: Apache Kafka Connect's distributed worker (``ConnectDistributed``), no plugin.path."""

from __future__ import annotations

from bench import jars
from bench.core import contender
from bench.scenarios.b10_startup import WorkerStartupContender
from bench.workers import WorkerSpec, connect_worker


@contender
class ConnectWorker(WorkerStartupContender):
    name = "kafka-connect"
    role = "peer"
    order = 20

    def setup(self) -> None:
        jars.connect_libs(self.ctx.cache, jars.FILESTREAM_CONNECT_VERSION)

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return connect_worker(
            self.ctx.workdir,
            self.ctx.cache,
            props,
            cpus=self.ctx.options.get("cpus"),
            connect_version=jars.FILESTREAM_CONNECT_VERSION,
        )
