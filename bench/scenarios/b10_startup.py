"""B10: a distributed worker's start-up to a 200 on ``GET /``, and its idle footprint with one connector.

Each run starts a fresh worker with its own ``group.id`` and internal topics (created by the worker, as a
new cluster's first worker does), times the first ``200`` on ``GET /``, creates a FileStreamSource on an
idle (empty) file, waits for the connector and its task to be RUNNING, lets the worker idle, then reads
its RSS (``VmRSS``), its peak RSS (``VmHWM``) and its CPU-seconds so far from ``/proc``.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import ClassVar

from bench.core import Case, Contender, Metric, Sample, Scenario, scenario
from bench.stack import Stack, unique
from bench.workers import WorkerProcess, WorkerSpec, free_port, worker_properties

__all__ = ["B10Startup", "WorkerStartupContender"]

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@scenario
class B10Startup(Scenario):
    id = "B10"
    title = "worker start-up to a 200 on GET /, and idle RSS with one connector"
    measures = (
        "Seconds from the worker process's start to the first 200 on `GET /`; seconds from "
        "`POST /connectors` "
        "(a FileStreamSource on an empty file) to the connector and its task RUNNING; then, after the worker "
        "idled `idle` seconds (default 15), its RSS, its peak RSS (VmHWM) and the CPU-seconds it used since "
        "it started. Each run is a fresh worker with its own group.id and internal topics."
    )
    metrics = (
        Metric("ready_s", "start-up to 200 on GET /", "s", "lower", 2),
        Metric("running_s", "POST /connectors to task RUNNING", "s", "lower", 2),
        Metric("idle_rss_mb", "idle RSS with one connector", "MB", "lower", 1),
        Metric("peak_rss_mb", "peak RSS (VmHWM)", "MB", "lower", 1),
        Metric("cpu_s", "CPU-seconds, start to end of idle", "s", "lower", 2),
    )

    def idle_seconds(self) -> float:
        return float(self.ctx.options.get("idle", "15"))


class WorkerStartupContender(Contender):
    """One worker in B10; subclasses say how to start it."""

    scenario_id: ClassVar[str] = "B10"

    @abstractmethod
    def spec(self, props: dict[str, str]) -> WorkerSpec: ...

    def run(self, case: Case, run: int) -> Sample:
        stack = Stack(self.ctx.repo)
        group = unique(f"bench-b10-{self.name}")
        props = worker_properties(stack.bootstrap, group, free_port())
        idle_file = self.ctx.workdir / f"{group}.idle.txt"
        idle_file.write_text("")
        spec = self.spec(props)
        topics = [*spec.internal_topics, f"{group}-file"]
        try:
            with WorkerProcess(spec) as worker:
                ready = worker.wait_ready()
                posted = time.monotonic()
                worker.create_connector(
                    f"{group}-source",
                    {
                        "connector.class": FILE_SOURCE,
                        "tasks.max": "1",
                        "file": str(idle_file),
                        "topic": f"{group}-file",
                    },
                )
                # asked every 20 ms (both workers): at the default 200 ms the figure moved in 0.2 s steps
                worker.wait_running(f"{group}-source", interval=0.02)
                running = time.monotonic() - posted
                time.sleep(self.scenario.idle_seconds())  # type: ignore[attr-defined]
                snap = worker.snap()
                if snap is None:
                    raise RuntimeError(f"{self.name} exited while idle; see {spec.log}")
                return Sample(
                    {
                        "ready_s": ready,
                        "running_s": running,
                        "idle_rss_mb": snap.rss_kb / 1024,
                        "peak_rss_mb": snap.hwm_kb / 1024,
                        "cpu_s": snap.cpu,
                    },
                    notes=[f"{self.name}: `{' '.join(spec.argv)}`"],
                )
        finally:
            stack.delete_topics(topics)
