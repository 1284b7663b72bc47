"""B13, the peer: a group of Apache Kafka Connect distributed workers (``ConnectDistributed``, the
FileStreamSource of Kafka's ``connect-file`` jar; no JDBC source: see :mod:`bench.scenarios.b13_group`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from bench import jars
from bench.core import contender
from bench.scenarios.b13_group import GroupContender
from bench.workers import WorkerSpec, connect_worker


@contender
class ConnectGroup(GroupContender):
    name = "kafka-connect"
    role = "peer"
    order = 20
    runs_jdbc: ClassVar[bool] = False

    def setup(self) -> None:
        jars.connect_libs(self.ctx.cache, jars.FILESTREAM_CONNECT_VERSION)

    def spec(self, props: dict[str, str], workdir: Path) -> WorkerSpec:
        return connect_worker(
            workdir,
            self.ctx.cache,
            props,
            cpus=self.ctx.options.get("cpus"),
            connect_version=jars.FILESTREAM_CONNECT_VERSION,
        )
