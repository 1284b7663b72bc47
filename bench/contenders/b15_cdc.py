"""B15, ours: ``cdc mirror-maker mm2.properties`` at MM2's defaults."""

from __future__ import annotations

from pathlib import Path

from bench.core import contender
from bench.mirror.processes import CdcMirrorMaker, MirrorMakerProcess
from bench.scenarios.b15_mirror import MirrorContender


@contender
class CdcMirror(MirrorContender):
    name = "cdc"
    role = "ours"
    order = 10

    def start(self, props: dict[str, str], workdir: Path) -> MirrorMakerProcess:
        return CdcMirrorMaker(workdir, self.ctx.python, props, cpus=self.ctx.options.get("cpus"))
