"""B9, ours: a confluent-kafka (librdkafka) producer fed from memory (``bench/tools/produce.py``)."""

from __future__ import annotations

from pathlib import Path

from bench.core import contender
from bench.scenarios.b9_producer import ProducerContender, parse_json_line

TOOL = Path(__file__).resolve().parent.parent / "tools" / "produce.py"


@contender
class ConfluentKafkaProducer(ProducerContender):
    name = "confluent-kafka"
    role = "ours"
    order = 10

    def argv(self, bootstrap: str, topic: str, count: int, seed: int) -> list[str]:
        return [
            self.ctx.python,
            str(TOOL),
            bootstrap,
            topic,
            str(count),
            "--size",
            "200",
            "--acks",
            "all",
            "--compression",
            "lz4",
            "--seed",
            str(seed),
        ]

    def parse(self, stdout: str) -> dict[str, float]:
        return parse_json_line(stdout)
