"""B10, the peer: Apache Kafka Connect's distributed worker (``ConnectDistributed``), no plugin.path, at
its defaults (``kafka-connect``) and at its best documented setting for start-up (``kafka-connect-best``).

What B10 measures (start-up to a 200 on ``GET /``, ``POST /connectors`` to a FileStreamSource task
RUNNING, the idle footprint) depends on no throughput setting: ``producer.override.*`` (linger, batch
size, compression, idempotence) shapes records in flight, and a FileStreamSource on an empty file sends
none; the JVM's heap and GC flags are ``connect-distributed.sh``'s own (``-Xms256M -Xmx2G``, G1), what a
user runs (``BENCH_CONNECT_HEAP`` changes them for an experiment). The one documented knob for start-up
is ``plugin.discovery`` (KIP-898, Kafka 3.6; https://kafka.apache.org/documentation/#connect_plugindiscovery):
the default ``hybrid_warn`` scans every jar of the class path reflectively for plugins, ``service_load``
reads only the plugins' ``ServiceLoader`` manifests, which Kafka documents as its faster mode. Kafka's own
plugins (``connect-file``, ``connect-json``, ``connect-transforms``, 4.3.1 here) carry those manifests, so
``kafka-connect-best`` runs with ``plugin.discovery=service_load``.
"""

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


@contender
class ConnectWorkerBest(ConnectWorker):
    """Connect with ``plugin.discovery=service_load`` (the module's docstring says why)."""

    name = "kafka-connect-best"
    order = 25
    tunes = "kafka-connect"

    def spec(self, props: dict[str, str]) -> WorkerSpec:
        return super().spec({**props, "plugin.discovery": "service_load"})
