"""Kafka's MirrorMaker 2 in dedicated mode, as ``bin/connect-mirror-maker.sh mm2.properties`` runs it:
``java -cp 'libs/*' org.apache.kafka.connect.mirror.MirrorMaker mm2.properties``, with the JVM options and
heap of ``kafka-run-class.sh`` (``bench.jars``) and a log4j2 file like the Connect peer's
(``bench.workers``). Its CPU and peak RSS are sampled from ``/proc`` while it runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench import jars
from bench.procstat import TreeMonitor
from bench.workers import _connect_log4j, write_properties

__all__ = ["CdcMirrorMaker", "JavaMirrorMaker", "MirrorMakerProcess", "mm2_properties"]


def mm2_properties(
    clusters: Mapping[str, str],
    flows: Sequence[tuple[str, str]],
    *,
    topics: str = ".*",
    groups: str = ".*",
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """An ``mm2.properties`` for ``clusters`` (alias → bootstrap) with ``flows`` enabled, on a one-broker
    cluster (replication factors 1); ``extra`` adds or overrides keys (``a->b.…`` per flow included)."""
    props = {"clusters": ", ".join(clusters)}
    for alias, bootstrap in clusters.items():
        props[f"{alias}.bootstrap.servers"] = bootstrap
    for source, target in flows:
        props[f"{source}->{target}.enabled"] = "true"
        props[f"{source}->{target}.topics"] = topics
        props[f"{source}->{target}.groups"] = groups
    props.update(
        {
            "replication.factor": "1",
            "checkpoints.topic.replication.factor": "1",
            "heartbeats.topic.replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "config.storage.replication.factor": "1",
        }
    )
    props.update(extra or {})
    return props


class MirrorMakerProcess:
    """One dedicated-mode MirrorMaker process of ``argv`` (writing to ``<workdir>/<name>.out``). A context
    manager: the process is stopped on exit whatever happens."""

    def __init__(self, workdir: Path, name: str, argv: list[str], log: Path, cpus: str | None = None) -> None:
        if cpus:
            argv = ["taskset", "-c", cpus, *argv]
        self.argv = argv
        self.log = log
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._out = (workdir / f"{name}.out").open("wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv, stdout=self._out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        self.monitor = TreeMonitor(self.proc.pid).start()

    def __enter__(self) -> MirrorMakerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def check(self) -> None:
        """Raise if the process has exited (with the end of its log)."""
        if not self.alive():
            tail = (
                "\n".join(self.log.read_text(errors="replace").splitlines()[-30:])
                if self.log.exists()
                else ""
            )
            raise RuntimeError(f"MirrorMaker exited with {self.proc.returncode}; {self.log}:\n{tail}")

    def cpu_seconds(self) -> float:
        return self.monitor.cpu()

    def peak_rss_kb(self) -> int:
        return self.monitor.peak_rss_kb

    def stop(self, grace: float = 60.0) -> None:
        """SIGTERM (MirrorMaker's shutdown hook stops its herders, committing offsets), SIGKILL after
        ``grace`` seconds."""
        if self.proc.poll() is None:
            self.monitor.stop()
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        else:
            self.monitor.stop()
        if not self._out.closed:
            self._out.close()

    def kill(self) -> None:
        """SIGKILL, no shutdown."""
        if self.proc.poll() is None:
            self.monitor.stop()
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        if not self._out.closed:
            self._out.close()


class JavaMirrorMaker(MirrorMakerProcess):
    """Kafka's MirrorMaker (``clusters``: its ``--clusters`` targets, all when empty)."""

    def __init__(
        self,
        workdir: Path,
        cache: Path,
        props: Mapping[str, str],
        *,
        name: str = "mm2",
        clusters: Sequence[str] = (),
        cpus: str | None = None,
        log_levels: Mapping[str, str] | None = None,
    ) -> None:
        libs = jars.mirror_libs(cache)
        workdir.mkdir(parents=True, exist_ok=True)
        self.config = write_properties(workdir / f"{name}.properties", props)
        log4j = workdir / f"{name}.log4j2.properties"
        log = workdir / f"{name}.log"
        _connect_log4j(log4j, log, log_levels)
        argv = [
            "java",
            *jars.jvm_heap(),
            *jars.JVM_OPTS,
            f"-Dlog4j2.configurationFile={log4j}",
            "-cp",
            f"{libs}/*",
            "org.apache.kafka.connect.mirror.MirrorMaker",
            str(self.config),
        ]
        if clusters:
            argv += ["--clusters", *clusters]
        super().__init__(workdir, name, argv, log, cpus)


class CdcMirrorMaker(MirrorMakerProcess):
    """Ours: ``cdc mirror-maker mm2.properties`` (``python -m cdc.cli``, the given interpreter)."""

    def __init__(
        self,
        workdir: Path,
        python: str,
        props: Mapping[str, str],
        *,
        name: str = "cdc-mm2",
        clusters: Sequence[str] = (),
        cpus: str | None = None,
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.config = write_properties(workdir / f"{name}.properties", props)
        argv = [python, "-m", "cdc.cli", "mirror-maker", str(self.config)]
        if clusters:
            argv += ["--clusters", *clusters]
        super().__init__(workdir, name, argv, workdir / f"{name}.out", cpus)
