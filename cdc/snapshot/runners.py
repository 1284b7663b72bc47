"""Who runs the chunks: Spark (``local[*]`` or a cluster) or, for tests and tiny jobs, threads.

Both submit each chunk as its own unit of work and report each one as it completes, which is what
resumability and the progress display need. On Spark each chunk is a one-task job submitted from a
driver thread; ``parallelism`` threads keep that many tasks running, and Spark's scheduler places them
on free executor cores. A failed task is retried by Spark (``spark.task.maxFailures``; in local mode the
master is rewritten to ``local[N,4]``, since plain ``local[N]`` never retries). A retried chunk writes
its records again; every record is keyed, so the reduced topic is unchanged (see
:mod:`cdc.snapshot.reconcile` for why a retry can never leave a stale row last).

Two ways to run a chunk on Spark (``RunContext.encoder``): the JVM path (:mod:`cdc.snapshot.jvm`: Spark's
JDBC reader, the envelope built by Spark SQL expressions, bytes produced from the executor's Python
worker) for every table it encodes byte-identically, and the Python path (:mod:`cdc.snapshot.executor`:
PyMySQL and our converters inside the task) for the others. The JVM path needs the JDBC driver: the
session is created with ``spark.jars.packages`` = :data:`cdc.snapshot.jvm.JDBC_PACKAGE` (from Maven
Central, cached by Ivy); when it cannot be resolved the session is created without it and every chunk
takes the Python path. For a cluster, the ``cdc`` package is shipped to the executors with
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

from cdc.logs import in_context
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


def _nothing() -> None:
    """A chunk thread's initializer: :func:`in_context` gives it the task's log context."""


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
    with ThreadPoolExecutor(
        max(1, parallelism), thread_name_prefix="snapshot-chunk", initializer=in_context(_nothing)
    ) as pool:
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


_DEFAULT_PACKAGE = object()


class SparkRunner:
    """Chunks as one-task Spark jobs, ``parallelism`` at a time.

    ``jdbc_package``: Maven coordinates of the JDBC driver for the JVM path (default
    :data:`cdc.snapshot.jvm.JDBC_PACKAGE`); ``None``: no jars, every chunk on the Python path.
    """

    def __init__(
        self,
        master: str = "local[*]",
        parallelism: int | None = None,
        app_name: str = "cdc-snapshot",
        conf: dict[str, str] | None = None,
        jdbc_package: Any = _DEFAULT_PACKAGE,
    ) -> None:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from cdc.snapshot.jvm import JDBC_PACKAGE

        package = JDBC_PACKAGE if jdbc_package is _DEFAULT_PACKAGE else jdbc_package
        settings = dict(conf or {})
        if package:
            packages = [p for p in str(settings.get("spark.jars.packages", "")).split(",") if p.strip()]
            settings["spark.jars.packages"] = ",".join([*packages, str(package)])
            try:
                self.session = self._session(master, app_name, settings)
                self.jdbc = True
            except Exception as exc:  # Ivy could not resolve it (offline, not cached): the Python path
                log.warning(
                    "Spark could not load the JDBC driver %s (%s): every chunk takes the Python path",
                    package,
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
                )
                settings.pop("spark.jars.packages")
                if packages:
                    settings["spark.jars.packages"] = ",".join(packages)
                self.session = self._session(master, app_name, settings)
                self.jdbc = False
        else:
            self.session = self._session(master, app_name, settings)
            self.jdbc = False
        self.session.sparkContext.setLogLevel("WARN")
        self.sc = self.session.sparkContext
        self.master = master
        if not master.startswith("local"):
            self._ship_package()
        self.parallelism = max(1, parallelism or int(self.sc.defaultParallelism))
        self._encodings: dict[Any, Any] = {}
        self._encodings_lock = threading.Lock()
        self._classes_ok: bool | None = None
        self._table_lines: dict[Any, Any] = {}
        self._run_tasks: list[ChunkTask] = []
        self.paths: dict[str, str] = {}
        """The path each chunk took (chunk id → ``sql`` or ``python``): for tests and the log."""

    @staticmethod
    def _session(master: str, app_name: str, settings: dict[str, str]) -> Any:
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

    def _encoding(self, task: ChunkTask, ctx: RunContext) -> Any:
        """The table's JVM encoding, or None for the Python path (decided once per table and run)."""
        if ctx.encoder == "python":
            return None
        from cdc.snapshot.jvm import Unsupported, table_encoding

        key = (task.table.id, id(task.table), id(ctx))
        with self._encodings_lock:
            if key in self._encodings:
                return self._encodings[key][1]
            encoding = None
            try:
                if not self.jdbc or not self._jvm_classes():
                    raise Unsupported("the JDBC driver is not loaded")
                encoding = table_encoding(task.table, ctx)
                log.info("%s: chunks read and encoded in the JVM (Spark JDBC + SQL)", task.table.id)
            except Unsupported as exc:
                if ctx.encoder == "sql":
                    from cdc.api.errors import ConfigError

                    raise ConfigError(
                        f"snapshot.spark.encoder=sql: {task.table.id} cannot be encoded in SQL ({exc})"
                    ) from exc
                log.info("%s: chunks on the Python path (%s)", task.table.id, exc)
            # the value holds the table and context objects alive, so their ids stay theirs
            self._encodings[key] = ((task.table, ctx), encoding)
            return encoding

    def _lines(self, task: ChunkTask, ctx: RunContext, encoding: Any) -> Any:
        """The table's lines over its chunks in this run (one JDBC frame a table, one partition a chunk)."""
        from cdc.snapshot.jvm import table_lines

        key = (task.table.id, id(task.table), id(ctx))
        with self._encodings_lock:
            lines = self._table_lines.get(key)
            if lines is None or task.chunk.id not in lines[1].partition:
                same = [t for t in self._run_tasks if t.table is task.table] or [task]
                if task not in same:
                    same.append(task)
                lines = self._table_lines[key] = (
                    (task.table, ctx),
                    table_lines(self.session, encoding, same, ctx),
                )
            return lines[1]

    def _jvm_classes(self) -> bool:
        """Whether the JVM has the JDBC driver and Jackson's double writer (a session started in a process
        whose JVM was launched without the package has not); checked once."""
        if self._classes_ok is None:
            from cdc.snapshot.jvm import DOUBLE_TO_TEXT, FLOAT_TO_TEXT, JDBC_DRIVER

            try:
                utils = self.sc._jvm.org.apache.spark.util.Utils
                for name in (JDBC_DRIVER, DOUBLE_TO_TEXT, FLOAT_TO_TEXT):
                    utils.classForName(name, True, False)
                self._classes_ok = True
            except Exception as exc:
                log.warning("The JVM path is off: %s", str(exc).splitlines()[0] if str(exc) else exc)
                self._classes_ok = False
        return bool(self._classes_ok)

    def _submit(self, task: ChunkTask, ctx: RunContext) -> ChunkResult:
        self.sc.setJobDescription(f"cdc snapshot {task.chunk.id}")
        encoding = self._encoding(task, ctx)
        if encoding is not None:
            from cdc.snapshot.jvm import run_chunk_jvm

            self.paths[task.chunk.id] = "sql"
            return run_chunk_jvm(self.session, encoding, task, ctx, self._lines(task, ctx, encoding))
        self.paths[task.chunk.id] = "python"
        result: list[Any] = self.sc.parallelize([(task, ctx)], 1).map(_run_one).collect()
        done: ChunkResult = result[0]
        return done

    def run(
        self, tasks: Sequence[ChunkTask], ctx: RunContext, on_done: OnDone, stopping: threading.Event
    ) -> None:
        with self._encodings_lock:
            self._run_tasks = list(tasks)
            self._table_lines.clear()
        _drive(lambda t: self._submit(t, ctx), tasks, self.parallelism, on_done, stopping)

    def close(self) -> None:
        try:
            self.session.stop()
        except Exception:
            log.debug("Error stopping Spark", exc_info=True)
