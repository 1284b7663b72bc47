"""B15: MirrorMaker 2 between two local clusters: a 6-partition topic of 1 KB records (lz4) mirrored.

Cluster ``a`` is the stack's broker; cluster ``b`` the stack's second cluster (``CDC_KAFKA_CLUSTERS=2 make
up``: ``127.0.0.1:9192``; ``--set target=HOST:PORT`` or ``CDC_KAFKA_B_BOOTSTRAP`` names another). Once per
case the source topic is written (``--rows`` records, default 1 000 000, of ``--set size=N`` bytes,
default 1024, ``--set partitions=N``, default 6; random upper-case payloads, null keys, ``acks=all``, lz4,
``bench/tools/produce.py``) and a consumer group commits offsets half-way through each partition.

Each run mirrors it with a fresh pair of aliases (so a fresh remote topic ``<alias>.<topic>``, groups and
internal topics, on both clusters) and measures:

* records/s from the first to the last record on the target (the remote topic's end offsets, polled every
  0.2 s), and the wall time from the process's start to the last record;
* CPU-seconds (the process tree's, from ``/proc``, start to last record) per million records, and peak RSS;
* checkpoint latency: once every record is there, the group commits its end offsets on the source; the
  seconds until ``<alias>.checkpoints.internal`` on the target carries those upstream offsets for every
  partition. ``emit.checkpoints.interval.seconds`` is ``--set checkpoint_interval=N`` (default 5, MM2's is
  60) for every contender alike, else the figure is the interval.

The remote topic is deleted after each run (a million 1 KB records is a gigabyte). Contenders: ``cdc``
(``cdc mirror-maker``, MM2's defaults), ``mm2`` (Kafka's MirrorMaker, dedicated mode, defaults) and
``mm2-tuned`` (its documented throughput settings: ``tasks.max`` = partitions, the target producer's
``linger.ms``, ``batch.size`` and ``compression.type=lz4``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid
from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from bench.core import Case, Contender, Metric, Sample, Scenario, scenario
from bench.mirror.capture import checkpoints_topic, read_topic
from bench.mirror.processes import MirrorMakerProcess, mm2_properties
from bench.stack import Stack, unique

__all__ = ["B15Mirror", "MirrorContender", "target_bootstrap"]

PRODUCE = Path(__file__).resolve().parent.parent / "tools" / "produce.py"


def target_bootstrap(options: dict[str, str]) -> str:
    return options.get("target") or os.environ.get("CDC_KAFKA_B_BOOTSTRAP", "127.0.0.1:9192")


def _end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-b15-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
        }
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or meta.error is not None:
            return {}
        ends = {}
        for p in meta.partitions:
            try:
                ends[p] = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[
                    1
                ]
            except KafkaException:  # a topic just created: its leaders are not known everywhere yet
                ends[p] = 0
        return ends
    finally:
        consumer.close()


def _commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


@scenario
class B15Mirror(Scenario):
    id = "B15"
    title = "MirrorMaker 2: a 6-partition topic of 1 KB lz4 records mirrored to a second cluster"
    measures = (
        "Records/s from the first to the last record on the target cluster, CPU-seconds per million records "
        "and peak RSS of the mirroring process (tree), and the seconds from a consumer group's commit on the "
        "source to the checkpoint that carries it on the target; a fresh remote topic per run."
    )
    default_rows = 1_000_000
    metrics = (
        Metric("records_per_s", "records/s, first to last on the target", "rec/s", "higher", 0),
        Metric("cpu_s_per_m", "CPU-seconds per million records", "s", "lower", 1),
        Metric("peak_rss_mb", "peak RSS", "MB", "lower", 0),
        Metric("checkpoint_s", "commit to checkpoint on the target", "s", "lower", 1),
        Metric("wall_s", "process start to last record", "s", "lower", 1),
    )

    def option(self, key: str, default: int) -> int:
        return int(self.ctx.options.get(key, str(default)))

    def cases(self) -> list[Case]:
        size, partitions = self.option("size", 1024), self.option("partitions", 6)
        return [Case("lz4", f"{self.rows()} records of {size} B, {partitions} partitions, lz4", {})]

    def setup(self) -> None:
        target = target_bootstrap(self.ctx.options)
        from confluent_kafka.admin import AdminClient

        try:
            AdminClient({"bootstrap.servers": target}).list_topics(timeout=10)
        except Exception as exc:
            raise RuntimeError(
                f"B15 needs a second Kafka cluster at {target}: CDC_KAFKA_CLUSTERS=2 make up "
                f"(or --set target=HOST:PORT): {exc}"
            ) from exc

    def prepare(self, case: Case) -> None:
        stack = Stack(self.ctx.repo)
        topic = unique("bench-b15")
        partitions = self.option("partitions", 6)
        stack.create_topic(topic, partitions)
        cmd = [
            self.ctx.python,
            str(PRODUCE),
            stack.bootstrap,
            topic,
            str(self.rows()),
            "--size",
            str(self.option("size", 1024)),
            "--acks",
            "all",
            "--compression",
            "lz4",
        ]
        self.ctx.log(f"[bench]   B15: writing {self.rows()} records into {topic}")
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        ends = _end_offsets(stack.bootstrap, topic)
        group = f"{topic}-group"
        self.ctx.info.update({"b15_topic": topic, "b15_group": group, "b15_ends": ends})

    def before_run(self, case: Case, contender: Contender, run: int) -> None:
        # the group half-way through each partition, as a consumer that lags; each run ends by committing
        # the end offsets (the checkpoint latency), so every run starts from here again
        ends = self.ctx.info["b15_ends"]
        half = {p: end // 2 for p, end in ends.items()}
        _commit(Stack(self.ctx.repo).bootstrap, self.ctx.info["b15_group"], self.ctx.info["b15_topic"], half)

    def teardown(self, case: Case) -> None:
        Stack(self.ctx.repo).delete_topics([self.ctx.info.get("b15_topic", "")])


class MirrorContender(Contender):
    """One MirrorMaker in B15; subclasses say how to start it and with which extra keys."""

    scenario_id: ClassVar[str] = "B15"

    @abstractmethod
    def start(self, props: dict[str, str], workdir: Path) -> MirrorMakerProcess: ...

    def extra(self, source: str, target: str) -> dict[str, str]:
        """Keys beside MM2's defaults (a peer's tuning)."""
        return {}

    def run(self, case: Case, run: int) -> Sample:
        b15: Any = self.scenario
        stack = Stack(self.ctx.repo)
        target_bs = target_bootstrap(self.ctx.options)
        topic, group, ends = self.ctx.info["b15_topic"], self.ctx.info["b15_group"], self.ctx.info["b15_ends"]
        total = sum(ends.values())
        tag = uuid.uuid4().hex[:6]
        source, target = f"a{tag}", f"b{tag}"
        remote = f"{source}.{topic}"
        props = mm2_properties(
            {source: stack.bootstrap, target: target_bs},
            [(source, target)],
            topics=topic,
            groups=group,
            extra={
                "emit.checkpoints.interval.seconds": str(b15.option("checkpoint_interval", 5)),
                **self.extra(source, target),
            },
        )
        workdir = self.ctx.workdir / f"b15-{self.name}-{run}"
        timeout = float(b15.option("timeout", 1800))
        mm = self.start(props, workdir)
        try:
            first = last = None
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                mm.check()
                copied = sum(_end_offsets(target_bs, remote).values())
                now = time.monotonic()
                if copied and first is None:
                    first = now
                if copied >= total:
                    last = now
                    break
                time.sleep(0.2)
            if first is None or last is None:
                raise TimeoutError(f"{self.name}: {remote} not complete after {timeout} s; see {mm.log}")
            cpu, wall = mm.cpu_seconds(), last - mm.started
            # a new commit on the source: how long until a checkpoint on the target carries it
            _commit(stack.bootstrap, group, topic, ends)
            committed = time.monotonic()
            wanted = set(ends.values())
            checkpoint_s = None
            while time.monotonic() - committed < 300:
                mm.check()
                latest: dict[bytes | None, int] = {}
                for record in read_topic(target_bs, checkpoints_topic(source)):
                    if record.value is not None:
                        latest[record.key] = int.from_bytes(record.value[2:10], "big")  # upstream offset
                if len(latest) == len(ends) and set(latest.values()) == wanted:
                    checkpoint_s = time.monotonic() - committed
                    break
                time.sleep(0.25)
            rss = mm.peak_rss_kb()
        finally:
            mm.stop()
            from confluent_kafka.admin import AdminClient

            admin = AdminClient({"bootstrap.servers": target_bs})
            for future in admin.delete_topics([remote], operation_timeout=30).values():
                with contextlib.suppress(Exception):  # cleaning up: a topic never created is fine
                    future.result(30)
        return Sample(
            {
                "records_per_s": total / max(last - first, 1e-6),
                "cpu_s_per_m": cpu / total * 1e6,
                "peak_rss_mb": rss / 1024,
                "checkpoint_s": checkpoint_s,
                "wall_s": wall,
            },
            notes=[f"{self.name}: `{' '.join(mm.argv)}`; extra keys {self.extra('<a>', '<b>') or 'none'}"],
        )
