"""Who runs the chunks: Spark (``local[*]`` or a cluster) or, for tests and tiny jobs, threads.

Both submit each chunk as its own unit of work and report each one as it completes, which is what
resumability and the progress display need. On Spark each chunk is a one-task job submitted from a
driver thread; ``parallelism`` threads keep that many tasks running, and Spark's scheduler places them
on free executor cores. A failed task is retried by Spark (``spark.task.maxFailures``; in local mode the
master is rewritten to ``local[N,4]``, since plain ``local[N]`` never retries). A retried chunk writes
its records again; every record is keyed, so the reduced topic is unchanged (see
:mod:`cdc.snapshot.reconcile` for why a retry can never leave a stale row last).

Spark needs no extra jars: rows are read by PyMySQL inside the tasks (see :mod:`cdc.snapshot.executor`)
and produced with confluent-kafka. For a cluster, the ``cdc`` package is shipped to the executors with
``addPyFile``; its dependencies (PyMySQL, confluent-kafka, orjson, fastavro) must be installed there.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Protocol

from cdc.snapshot.executor import ChunkResult, ChunkTask, RunContext, run_chunk

__all__ = ["ChunkRunner", "SparkRunner", "ThreadRunner", "spark_available"]

log = logging.getLogger(__name__)

OnDone = Callable[[ChunkResult], None]


def spark_available() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return True


class ChunkRunner(Protocol):
    parallelism: int

    def run(
        self, tasks: Sequence[ChunkTask], ctx: RunContext, on_done: OnDone, stopping: threading.Event
    ) -> None: ...

    def close(self) -> None: ...


def _drive(
    submit: Callable[[ChunkTask], ChunkResult],
    tasks: Sequence[ChunkTask],
    parallelism: int,
    on_done: OnDone,
    stopping: threading.Event,
) -> None:
    """Keep ``parallelism`` chunks in flight; report each as it completes; stop submitting on a failure
    or when ``stopping`` is set, and re-raise the first failure once the chunks in flight are over."""
    pending = list(tasks)
    running: set[Future[ChunkResult]] = set()
    failure: BaseException | None = None
    with ThreadPoolExecutor(max(1, parallelism), thread_name_prefix="snapshot-chunk") as pool:
        while pending or running:
            while pending and len(running) < parallelism and failure is None and not stopping.is_set():
                running.add(pool.submit(submit, pending.pop(0)))
            if not running:
                break
            finished, running = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
            for fut in finished:
                exc = fut.exception()
                if exc is not None:
                    failure = failure or exc
                    continue
                on_done(fut.result())
            if failure is not None or stopping.is_set():
                pending.clear()
    if failure is not None:
        raise failure
    if stopping.is_set():
        raise InterruptedError("snapshot stopped")


class ThreadRunner:
    """Chunks on threads of this process: no Spark, same records."""

    def __init__(self, parallelism: int = 2) -> None:
        self.parallelism = max(1, parallelism)

    def run(
        self, tasks: Sequence[ChunkTask], ctx: RunContext, on_done: OnDone, stopping: threading.Event
    ) -> None:
        _drive(lambda t: run_chunk(t, ctx), tasks, self.parallelism, on_done, stopping)

    def close(self) -> None:
        pass


def _with_retries(master: str, failures: int = 4) -> str:
    m = re.fullmatch(r"local\[(\*|\d+)\]", master.strip())
    if m:
        return f"local[{m.group(1)},{failures}]"
    if master.strip() == "local":
        return f"local[1,{failures}]"
    return master


def _run_one(item: tuple[ChunkTask, RunContext]) -> ChunkResult:
    return run_chunk(item[0], item[1])


class SparkRunner:
    """Chunks as one-task Spark jobs, ``parallelism`` at a time."""

    def __init__(
        self,
        master: str = "local[*]",
        parallelism: int | None = None,
        app_name: str = "cdc-snapshot",
        conf: dict[str, str] | None = None,
    ) -> None:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        builder = (
            SparkSession.builder.master(_with_retries(master))
            .appName(app_name)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.python.worker.reuse", "true")
            .config("spark.task.maxFailures", "4")
            .config("spark.scheduler.mode", "FAIR")
        )
        for k, v in (conf or {}).items():
            builder = builder.config(k, v)
        self.session = builder.getOrCreate()
        self.session.sparkContext.setLogLevel("WARN")
        self.sc = self.session.sparkContext
        self.master = master
        if not master.startswith("local"):
            self._ship_package()
        self.parallelism = max(1, parallelism or int(self.sc.defaultParallelism))

    def _ship_package(self) -> None:
        import cdc

        root = Path(cdc.__file__).resolve().parent
        fd, path = tempfile.mkstemp(prefix="cdc-", suffix=".zip")
        os.close(fd)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in root.rglob("*.py"):
                zf.write(f, str(Path("cdc") / f.relative_to(root)))
        self.sc.addPyFile(path)

    def _submit(self, task: ChunkTask, ctx: RunContext) -> ChunkResult:
        self.sc.setJobDescription(f"cdc snapshot {task.chunk.id}")
        result: list[Any] = self.sc.parallelize([(task, ctx)], 1).map(_run_one).collect()
        done: ChunkResult = result[0]
        return done

    def run(
        self, tasks: Sequence[ChunkTask], ctx: RunContext, on_done: OnDone, stopping: threading.Event
    ) -> None:
        _drive(lambda t: self._submit(t, ctx), tasks, self.parallelism, on_done, stopping)

    def close(self) -> None:
        try:
            self.session.stop()
        except Exception:
            log.debug("Error stopping Spark", exc_info=True)
