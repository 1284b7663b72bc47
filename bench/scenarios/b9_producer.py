"""B9: the producer ceiling: 200-byte values from memory, 1 and 2 processes, ``acks=all``, lz4.

Every run writes to a fresh topic (``--set partitions=N``, default 1). Each process sends ``--rows``
records (default 1 000 000) with null keys and one random payload of upper-case letters, exactly what
``kafka-producer-perf-test`` sends; each process reports its own rate (first send to last acknowledgement)
and the case's rate is their sum. CPU-seconds and peak RSS are the producer processes' own (``/proc``),
the broker's CPU-seconds over the run beside them.
"""

from __future__ import annotations

import json
import subprocess
from abc import abstractmethod
from typing import Any, ClassVar

from bench.core import Case, Contender, Metric, Sample, Scenario, scenario
from bench.procstat import TreeMonitor, cpu_seconds
from bench.stack import Stack, unique

__all__ = ["B9Producer", "ProducerContender"]


@scenario
class B9Producer(Scenario):
    id = "B9"
    title = "producer ceiling: 200-byte values from memory, acks=all, lz4"
    measures = (
        "Records/s and MB/s of values produced from memory (200 bytes, null keys, acks=all, lz4, client "
        "defaults otherwise) by 1 and by 2 concurrent processes into a fresh topic; CPU-seconds per million "
        "records of the producers and of the broker; the producers' peak RSS."
    )
    default_rows = 1_000_000
    metrics = (
        Metric("records_per_s", "records/s (sum of processes)", "rec/s", "higher", 0),
        Metric("mb_per_s", "MB/s of values", "MB/s", "higher", 1),
        Metric("cpu_s_per_m", "producer CPU-seconds per million records", "s", "lower", 2),
        Metric("broker_cpu_s_per_m", "broker CPU-seconds per million records", "s", "lower", 2),
        Metric("peak_rss_mb", "producers' peak RSS (sum)", "MB", "lower", 1),
        Metric("wall_s", "wall time incl. process start", "s", "lower", 2),
    )

    def cases(self) -> list[Case]:
        return [
            Case("1proc", "1 producer process", {"processes": 1}),
            Case("2proc", "2 producer processes", {"processes": 2}),
        ]

    def partitions(self) -> int:
        return int(self.ctx.options.get("partitions", "1"))


class ProducerContender(Contender):
    scenario_id: ClassVar[str] = "B9"

    @abstractmethod
    def argv(self, bootstrap: str, topic: str, count: int, seed: int) -> list[str]: ...

    @abstractmethod
    def parse(self, stdout: str) -> dict[str, float]:
        """records, records_per_s and mb_per_s from the process's output."""

    def run(self, case: Case, run: int) -> Sample:
        stack = Stack(self.ctx.repo)
        scenario: Any = self.scenario
        topic = unique(f"bench-b9-{self.name}")
        stack.create_topic(topic, scenario.partitions())
        count = scenario.rows()
        processes = int(case.params["processes"])
        broker = stack.pid("kafka")
        broker_before = cpu_seconds(broker) if broker else None
        try:
            import time

            started = time.monotonic()
            procs = [
                subprocess.Popen(
                    self.argv(stack.bootstrap, topic, count, seed=i),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for i in range(processes)
            ]
            monitors = [TreeMonitor(p.pid, interval=0.1).start() for p in procs]
            outputs = []
            for proc, monitor in zip(procs, monitors, strict=True):
                # read /proc before reaping, so the last CPU figure is kept
                while proc.poll() is None:
                    monitor._sample()
                    time.sleep(0.05)
                monitor.stop()
                out, err = proc.communicate()
                if proc.returncode != 0:
                    raise RuntimeError(f"{self.name} exited with {proc.returncode}: {err.strip()[-800:]}")
                outputs.append(self.parse(out))
            wall = time.monotonic() - started
        finally:
            stack.delete_topics([topic])
        records = sum(o["records"] for o in outputs)
        cpu = sum(m.cpu() for m in monitors)
        broker_cpu = cpu_seconds(broker) - broker_before if broker and broker_before is not None else None
        return Sample(
            {
                "records_per_s": sum(o["records_per_s"] for o in outputs),
                "mb_per_s": sum(o["mb_per_s"] for o in outputs),
                "cpu_s_per_m": cpu / records * 1e6,
                "broker_cpu_s_per_m": broker_cpu / records * 1e6 if broker_cpu is not None else None,
                "peak_rss_mb": sum(m.peak_hwm_kb for m in monitors) / 1024,
                "wall_s": wall,
            },
            notes=[f"{self.name}: `{' '.join(self.argv(stack.bootstrap, '<topic>', count, 0))}`"],
        )


def parse_json_line(stdout: str) -> dict[str, float]:
    line = [ln for ln in stdout.splitlines() if ln.startswith("{")][-1]
    data = json.loads(line)
    return {k: float(data[k]) for k in ("records", "records_per_s", "mb_per_s")}
