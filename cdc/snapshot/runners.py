"""Who runs the chunks: Spark (``local[*]`` or a cluster) or, for tests and tiny jobs, threads.

Both submit each chunk as its own unit of work and report each one as it completes, which is what
resumability and the progress display need. On Spark each chunk is a one-task job submitted from a
driver thread; ``parallelism`` threads keep that many tasks running, and Spark's scheduler places them
on free executor cores. A failed task is retried by Spark (``spark.task.maxFailures``; in local mode the
master is rewritten to ``local[N,4]``, since plain ``local[N]`` never retries). What a retried chunk
writes again is the source's affair (the MySQL source writes each chunk in a Kafka transaction of its own,
fenced on retry: :mod:`cdc.snapshot.delivery`).

A runner knows nothing of the source: it is given the source's chunk function (``run_chunk(item)`` with
``item = (task, ctx)``, a module-level function so that it pickles to the executors) and, on Spark, the
Maven packages the source's JVM side needs (``spark.jars.packages``, from Maven Central, cached by Ivy;
when they cannot be resolved the session is created without them and :attr:`SparkRunner.packages_loaded`
is false). The MySQL source's runner (:mod:`cdc.mysql.spark.runners`) adds its JVM path on top.

On a cluster (any master but ``local…``) the ``cdc`` package is zipped and shipped to the executors with
``addPyFile`` (it comes first on their ``sys.path``); its dependencies (PyMySQL, confluent-kafka, orjson,
fastavro …) must be there: installed on every worker host, or shipped as an environment archive
(``spark.archives`` + ``spark.pyspark.python``), see docs/snapshots.md "Spark cluster". Nothing about the
network or the executors' interpreter is forced on a cluster; ``conf`` (``cdc snapshot --conf``, a
properties file; for a connector the worker file's ``snapshot.spark.conf.*``, :mod:`cdc.snapshot.spark_conf`)
is the user's way to say them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Protocol

from cdc.logs import in_context

__all__ = ["ChunkRunner", "SparkRunner", "ThreadRunner", "spark_available"]

log = logging.getLogger(__name__)

OnDone = Callable[[Any], None]
OnStart = Callable[[Any], None]
ChunkFn = Callable[[tuple[Any, Any]], Any]
"""A source's chunk function: ``(task, ctx)`` → the chunk's result (module-level, so that it pickles)."""


@contextlib.contextmanager
def _output_to(path: Path | None) -> Iterator[None]:
    """While inside: this process's stdout and stderr file descriptors write to ``path`` (appended), so
    that a child started meanwhile (Spark's JVM: spark-submit, Ivy's resolution, log4j) keeps writing
    there for its whole life instead of to the user's terminal. None: nothing changes."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 1)
        os.dup2(target, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, target):
            os.close(fd)


def spark_available() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return True


class ChunkRunner(Protocol):
    parallelism: int

    def run(
        self,
        tasks: Sequence[Any],
        ctx: Any,
        on_done: OnDone,
        stopping: threading.Event,
        on_start: OnStart | None = None,
    ) -> None:
        """Run the chunks, ``parallelism`` at a time: ``on_start`` as each is handed to the executors,
        ``on_done`` as each is in Kafka; raises the first failure, or InterruptedError once ``stopping``."""

    def cancel(self) -> None:
        """Cancel the chunks running now (from another thread; a stopping run calls it)."""
        ...

    def lost(self) -> str | None:
        """Why this runner can run nothing more (the application is gone), or None."""

    def close(self) -> None: ...


def _nothing() -> None:
    """A chunk thread's initializer: :func:`in_context` gives it the task's log context."""


def _drive(
    submit: Callable[[Any], Any],
    tasks: Sequence[Any],
    parallelism: int,
    on_done: OnDone,
    stopping: threading.Event,
    on_start: OnStart | None = None,
) -> None:
    """Keep ``parallelism`` chunks in flight; report each as it starts and as it completes; stop
    submitting on a failure or when ``stopping`` is set, and re-raise the first failure once the chunks
    in flight are over."""
    pending = list(tasks)
    running: set[Future[Any]] = set()
    failure: BaseException | None = None
    with ThreadPoolExecutor(
        max(1, parallelism), thread_name_prefix="snapshot-chunk", initializer=in_context(_nothing)
    ) as pool:
        while pending or running:
            while pending and len(running) < parallelism and failure is None and not stopping.is_set():
                task = pending.pop(0)
                if on_start is not None:
                    on_start(task)
                running.add(pool.submit(submit, task))
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

    def __init__(self, run_chunk: ChunkFn, parallelism: int = 2) -> None:
        self.run_chunk = run_chunk
        self.parallelism = max(1, parallelism)

    def run(
        self,
        tasks: Sequence[Any],
        ctx: Any,
        on_done: OnDone,
        stopping: threading.Event,
        on_start: OnStart | None = None,
    ) -> None:
        _drive(lambda t: self.run_chunk((t, ctx)), tasks, self.parallelism, on_done, stopping, on_start)

    def cancel(self) -> None:
        pass  # a chunk on a thread ends on its own; ``stopping`` keeps the next ones from starting

    def lost(self) -> str | None:
        return None

    def close(self) -> None:
        pass


def _local(master: str) -> bool:
    return master.strip().startswith("local")


def _with_retries(master: str, failures: int = 4) -> str:
    m = re.fullmatch(r"local\[(\*|\d+)\]", master.strip())
    if m:
        return f"local[{m.group(1)},{failures}]"
    if master.strip() == "local":
        return f"local[1,{failures}]"
    return master


class SparkRunner:
    """Chunks as one-task Spark jobs of ``run_chunk``, ``parallelism`` at a time.

    ``package``: Maven coordinates the source's JVM side needs (added to ``spark.jars.packages``);
    ``None``: no jars.
    """

    def __init__(
        self,
        run_chunk: ChunkFn,
        master: str = "local[*]",
        parallelism: int | None = None,
        app_name: str = "cdc-snapshot",
        conf: dict[str, str] | None = None,
        package: str | None = None,
        *,
        jvm_log: Path | None = None,
    ) -> None:
        self.run_chunk = run_chunk
        self.jvm_log = jvm_log
        """Where the JVM's own output (spark-submit, Ivy, Spark's log4j) goes; None: this process's."""
        # No setting of a run reaches the process's environment, which every connector of the worker
        # shares (one connector's interpreter must not become the next one's): the executors' interpreter
        # is the session's (SparkContext.pythonExec, carried by the Python functions to the executors),
        # and on a local master the driver binds to loopback through the session's settings.
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        settings = dict(conf or {})
        python = settings.get("spark.pyspark.python") or (sys.executable if _local(master) else None)
        if _local(master):
            # Everything runs in this process and on this machine. A cluster's driver and executors are
            # the user's to place (spark.driver.host, spark.pyspark.python …, see docs/snapshots.md).
            settings.setdefault("spark.driver.host", "127.0.0.1")
            settings.setdefault("spark.driver.bindAddress", settings["spark.driver.host"])
        if package:
            packages = [p for p in str(settings.get("spark.jars.packages", "")).split(",") if p.strip()]
            settings["spark.jars.packages"] = ",".join([*packages, str(package)])
            try:
                self.session = self._session(master, app_name, settings)
                self.packages_loaded = True
            except Exception as exc:  # Ivy could not resolve it (offline, not cached): the Python path
                log.warning(
                    "Spark could not load %s (%s): every chunk takes the Python path",
                    package,
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                )
                settings.pop("spark.jars.packages")
                if packages:
                    settings["spark.jars.packages"] = ",".join(packages)
                self.session = self._session(master, app_name, settings)
                self.packages_loaded = False
        else:
            self.session = self._session(master, app_name, settings)
            self.packages_loaded = False
        self.session.sparkContext.setLogLevel("WARN")
        self.sc = self.session.sparkContext
        if python:
            # spark-submit turns spark.pyspark.python into the executors' interpreter; a session made in
            # this process reads PYSPARK_PYTHON instead, unless told here
            self.sc.pythonExec = python
        self.master = master
        if not _local(master):
            self._ship_package()
        self.parallelism = max(1, parallelism or int(self.sc.defaultParallelism))
        self.paths: dict[str, str] = {}
        """The path each chunk took (chunk id → ``sql`` or ``python``): for tests and the log."""

    def _session(self, master: str, app_name: str, settings: dict[str, str]) -> Any:
        from pyspark.sql import SparkSession

        builder = (
            SparkSession.builder.master(_with_retries(master))
            .appName(app_name)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.python.worker.reuse", "true")
            .config("spark.task.maxFailures", "4")
            .config("spark.scheduler.mode", "FAIR")
            # the JVM path: base64 without MIME line breaks, CHAR columns not padded by the reader
            .config("spark.sql.chunkBase64String.enabled", "false")
            .config("spark.sql.readSideCharPadding", "false")
        )
        for k, v in settings.items():
            builder = builder.config(k, v)
        with _output_to(self.jvm_log):  # the JVM starts here
            return builder.getOrCreate()

    def _ship_package(self) -> None:
        import cdc

        root = Path(cdc.__file__).resolve().parent
        fd, path = tempfile.mkstemp(prefix="cdc-", suffix=".zip")
        os.close(fd)
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in root.rglob("*.py"):
                zf.write(f, str(Path("cdc") / f.relative_to(root)))
        self.sc.addPyFile(path)

    def _submit(self, task: Any, ctx: Any) -> Any:
        """Run one chunk as a one-task Spark job of :attr:`run_chunk` (a source may add other paths)."""
        self.sc.setJobDescription(f"cdc snapshot {task.chunk.id}")
        return self._submit_python(task, ctx)

    def _submit_python(self, task: Any, ctx: Any) -> Any:
        self.paths[task.chunk.id] = "python"
        result: list[Any] = self.sc.parallelize([(task, ctx)], 1).map(self.run_chunk).collect()
        return result[0]

    def run(
        self,
        tasks: Sequence[Any],
        ctx: Any,
        on_done: OnDone,
        stopping: threading.Event,
        on_start: OnStart | None = None,
    ) -> None:
        _drive(lambda t: self._submit(t, ctx), tasks, self.parallelism, on_done, stopping, on_start)

    def cancel(self) -> None:
        with contextlib.suppress(Exception):  # the session may be stopping already
            self.sc.cancelAllJobs()

    def lost(self) -> str | None:
        try:
            stopped = bool(self.sc._jsc.sc().isStopped())
        except Exception as exc:  # the JVM gateway itself is gone
            return f"the Spark driver's JVM is gone ({exc})"
        if stopped:
            return (
                "Spark stopped the application (its master unreachable, the application killed, or "
                "the driver's context stopped); see the Spark log above"
            )
        return None

    def close(self) -> None:
        try:
            self.session.stop()
        except Exception:
            log.debug("Error stopping Spark", exc_info=True)
