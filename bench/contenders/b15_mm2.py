"""B15, the peer: Kafka's MirrorMaker 2 in dedicated mode (connect-mirror from Maven Central), at its
defaults and at its documented throughput settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import jars
from bench.core import contender
from bench.mirror.processes import JavaMirrorMaker, MirrorMakerProcess
from bench.scenarios.b15_mirror import MirrorContender


@contender
class JavaMirror(MirrorContender):
    name = "mm2"
    role = "peer"
    order = 20

    def setup(self) -> None:
        jars.mirror_libs(self.ctx.cache)

    def versions(self) -> dict[str, str]:
        return {"connect-mirror": jars.MIRROR_VERSION, "java": jars.java_version()}

    def start(self, props: dict[str, str], workdir: Path) -> MirrorMakerProcess:
        return JavaMirrorMaker(workdir, self.ctx.cache, props, cpus=self.ctx.options.get("cpus"))


@contender
class JavaMirrorTuned(JavaMirror):
    """MM2's throughput settings (Kafka's and its distributors' tuning guides): one task per partition,
    and a target producer that batches and compresses (lz4, as the source)."""

    name = "mm2-tuned"
    order = 30
    tunes = "mm2"

    def extra(self, source: str, target: str) -> dict[str, str]:
        scenario: Any = self.scenario
        return {
            "tasks.max": str(scenario.option("partitions", 6)),
            f"{target}.producer.linger.ms": "50",
            f"{target}.producer.batch.size": "524288",
            f"{target}.producer.compression.type": "lz4",
            f"{target}.producer.buffer.memory": "67108864",
        }
