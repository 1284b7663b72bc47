"""B9, the peer: ``kafka-producer-perf-test`` (``org.apache.kafka.tools.ProducerPerformance``)."""

from __future__ import annotations

import re

from bench import jars
from bench.core import contender
from bench.scenarios.b9_producer import ProducerContender

# "1000000 records sent, 412371.1 records/sec (78.65 MB/sec), 120.3 ms avg latency, ..."
_SUMMARY = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\)")


@contender
class ProducerPerfTest(ProducerContender):
    name = "kafka-producer-perf-test"
    role = "peer"
    order = 20

    def setup(self) -> None:
        jars.connect_libs(self.ctx.cache)

    def argv(self, bootstrap: str, topic: str, count: int, seed: int) -> list[str]:
        libs = jars.connect_libs(self.ctx.cache)
        # kafka-run-class.sh's defaults for a tool: -Xmx256M and the same GC options as the worker
        return [
            "java",
            "-Xmx256M",
            *jars.JVM_OPTS,
            "-cp",
            f"{libs}/*",
            "org.apache.kafka.tools.ProducerPerformance",
            "--topic",
            topic,
            "--num-records",
            str(count),
            "--record-size",
            "200",
            "--throughput",
            "-1",
            "--producer-props",
            f"bootstrap.servers={bootstrap}",
            "acks=all",
            "compression.type=lz4",
        ]

    def parse(self, stdout: str) -> dict[str, float]:
        found = _SUMMARY.findall(stdout)
        if not found:
            raise RuntimeError(f"no summary line in the perf test's output: {stdout[-500:]}")
        records, rate, _mib = found[-1]
        # MB/sec there is MiB (records * size / 1024 / 1024): report MB (1e6) as the Python tool does
        return {"records": float(records), "records_per_s": float(rate), "mb_per_s": float(rate) * 200 / 1e6}

    def versions(self) -> dict[str, str]:
        return {"kafka-producer-perf-test": jars.CONNECT_VERSION}
