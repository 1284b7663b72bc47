"""B15's cdc side alone, small and repeatable: records/s and CPU-seconds of ``cdc mirror-maker`` copying
an existing topic to the second cluster, with the source task thread's own CPU and where its time goes.

    python -m bench.mirror.source_profile --topic T [--produce 200000] [--runs 3] [--profile DIR]
                                          [--set k=v] [--cdc CHECKOUT]

``--produce N`` first writes N records of 1 KB (lz4, ``bench/tools/produce.py``) into a fresh 6-partition
topic ``T`` on the stack's broker (deleted at the end unless ``--keep``). Each run mirrors ``T`` with fresh
aliases (a fresh remote topic, deleted after the run) and prints one line: records/s from the first to the
last record on the target (end offsets polled every 0.1 s); CPU-seconds of the process per million records
(its start included); CPU-seconds of the source tasks' threads alone per million (``time.thread_time``:
poll, send and the delivery callbacks, the Python side that bounds records/s); the wall time in ``poll``
and ``_send``, the consumer's calls until the last record and how long they waited; the busiest threads
by name (librdkafka's are ``rdk:…``).

``--profile DIR`` also wraps each task's ``execute`` in a cProfile (``DIR/<task>.prof``; its overhead
inflates the figures: measure without it). ``--set`` adds mm2.properties keys (``tasks.max=2``). ``--cdc``
runs another checkout's cdc (the process's ``PYTHONPATH``) to compare before and after in the same
conditions: run it under ``nice`` on a shared machine and alternate the two.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from bench.mirror.processes import MirrorMakerProcess, mm2_properties, write_properties

SOURCE = os.environ.get("CDC_KAFKA_BOOTSTRAP", "127.0.0.1:9092")
TARGET = os.environ.get("CDC_KAFKA_B_BOOTSTRAP", "127.0.0.1:9192")
PARTITIONS = 6

_LAUNCHER = """
import cProfile, sys, time
from cdc.worker import source_task
_execute = source_task.WorkerSourceTask.execute
_poll, _send = source_task.WorkerSourceTask._poll, source_task.WorkerSourceTask._send
walls = {"poll": 0.0, "send": 0.0}
def timed(name, fn):
    def wrapper(self, *args):
        started = time.perf_counter()
        try:
            return fn(self, *args)
        finally:
            walls[name] += time.perf_counter() - started
    return wrapper
source_task.WorkerSourceTask._poll = timed("poll", _poll)
from cdc.mirror import source as mirror_source
_start = mirror_source.MirrorSourceTask.start
trace = []
def start(self, props):
    _start(self, props)
    consume = self.consumer.consume
    def traced(n, timeout):
        t0 = time.perf_counter()
        out = consume(n, timeout)
        trace.append((t0, time.perf_counter() - t0, len(out)))
        return out
    class Proxy:
        def __getattr__(self, name):
            return getattr(consumer, name)
    consumer = self.consumer
    proxy = Proxy()
    proxy.consume = traced
    self.consumer = proxy
mirror_source.MirrorSourceTask.start = start

source_task.WorkerSourceTask._send = timed("send", _send)
def execute(self):
    name = str(self.id).replace('/', '_')
    prof = cProfile.Profile() if sys.argv[3] == 'profile' else None
    if prof is not None:
        prof.enable()
    started = time.thread_time()
    try:
        return _execute(self)
    finally:
        cpu = time.thread_time() - started
        if prof is not None:
            prof.disable()
            prof.dump_stats(f"{sys.argv[1]}/{name}.prof")
        with open(f"{sys.argv[1]}/{name}.trace", "w") as out:
            out.write(chr(10).join(f"{a:.4f} {b:.4f} {c}" for a, b, c in trace))
        with open(f"{sys.argv[1]}/{name}.cpu", "w") as out:
            out.write(f"{cpu} {self.records_sent} {walls['poll']} {walls['send']}")
source_task.WorkerSourceTask.execute = execute
from cdc.cli import main
sys.exit(main(["mirror-maker", sys.argv[2]]))
"""


def _ends(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "source-profile"})
    try:
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), 5)[1] for p in range(PARTITIONS))
    except Exception:  # not created yet
        return 0
    finally:
        consumer.close()


def _threads(pid: int) -> str:
    """The process's busiest threads by name (librdkafka names its own ``rdk:…``), CPU-seconds each."""
    tick = os.sysconf("SC_CLK_TCK")
    by_name: dict[str, float] = {}
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        with contextlib.suppress(OSError):
            text = stat.read_text()
            name = text[text.index("(") + 1 : text.rindex(")")]
            fields = text[text.rindex(")") + 2 :].split()
            by_name[name] = by_name.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:8]
    return ", ".join(f"{n} {c:.2f}" for n, c in top)


def run_once(topic: str, total: int, extra: dict[str, str], profile: Path | None, workdir: Path) -> str:
    tag = uuid.uuid4().hex[:6]
    source, target = f"p{tag}", f"q{tag}"
    remote = f"{source}.{topic}"
    props = mm2_properties({source: SOURCE, target: TARGET}, [(source, target)], topics=topic, groups="none")
    props.update(extra)
    config = write_properties(workdir / f"{tag}.properties", props)
    out = profile or workdir / f"{tag}-threads"
    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-c", _LAUNCHER, str(out), str(config), "profile" if profile else "cpu"]
    mm = MirrorMakerProcess(workdir, tag, argv, workdir / f"{tag}.out")
    try:
        first = last = None
        while last is None:
            mm.check()
            copied = _ends(TARGET, remote)
            now = time.monotonic()
            if copied and first is None:
                first = now
            if copied >= total:
                last = now
            time.sleep(0.1)
        cpu = mm.cpu_seconds()
        threads = _threads(mm.pid)
        assert first is not None
    finally:
        mm.stop()
        admin = AdminClient({"bootstrap.servers": TARGET})
        for future in admin.delete_topics([remote], operation_timeout=30).values():
            with contextlib.suppress(Exception):
                future.result(30)
    # the source tasks' threads (poll, convert, produce, delivery callbacks), written when they stopped
    figures = [f.read_text().split() for f in out.glob("MirrorSourceConnector*.cpu")]
    task_cpu = sum(float(f[0]) for f in figures)
    walls = ", ".join(f"poll {float(f[2]):.1f} s, send {float(f[3]):.1f} s" for f in figures)
    for trace in out.glob("MirrorSourceConnector*.trace"):  # the consumer's calls until the last record
        rows = [tuple(map(float, line.split())) for line in trace.read_text().split("\n") if line]
        seen, copying = 0, []
        for t0, wait, n in rows:
            if seen >= total / len(figures):
                break
            seen += int(n)
            copying.append((t0, wait, n))
        if copying:
            span = copying[-1][0] + copying[-1][1] - copying[0][0]
            walls += (
                f"; consume: {len(copying)} calls over {span:.1f} s, {sum(w for _, w, _ in copying):.1f} s "
                f"waiting in them, {sum(1 for *_, n in copying if n < 2000)} short"
            )
    return (
        f"{total / max(last - first, 1e-6):,.0f} records/s, {cpu / total * 1e6:.1f} CPU-s/M "
        f"({cpu:.1f} CPU-s), source task threads {task_cpu / total * 1e6:.1f} CPU-s/M "
        f"(wall in {walls}), "
        f"{last - mm.started:.1f} s from start, extra {extra or 'none'}; threads (CPU-s): {threads}"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topic", required=True)
    parser.add_argument("--produce", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--keep", action="store_true", help="keep the produced topic")
    parser.add_argument("--cdc", type=Path, help="the checkout whose cdc runs (before/after comparisons)")
    args = parser.parse_args()
    if args.cdc is not None:
        os.environ["PYTHONPATH"] = str(args.cdc.resolve())
    extra = dict(kv.split("=", 1) for kv in args.set)
    admin = AdminClient({"bootstrap.servers": SOURCE})
    if args.produce:
        admin.create_topics([NewTopic(args.topic, PARTITIONS, 1)])[args.topic].result(60)
        tool = Path(__file__).resolve().parent.parent / "tools" / "produce.py"
        subprocess.run(
            [sys.executable, str(tool), SOURCE, args.topic, str(args.produce), "--size", "1024"], check=True
        )
    total = _ends(SOURCE, args.topic)
    try:
        with tempfile.TemporaryDirectory(prefix="mm2-profile-") as tmp:
            for i in range(args.runs):
                print(
                    f"run {i + 1}: {run_once(args.topic, total, extra, args.profile, Path(tmp))}", flush=True
                )
    finally:
        if args.produce and not args.keep:
            for future in admin.delete_topics([args.topic], operation_timeout=30).values():
                with contextlib.suppress(Exception):
                    future.result(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
