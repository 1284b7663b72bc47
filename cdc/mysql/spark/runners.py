"""The MySQL source's chunk runners: the generic ones of :mod:`cdc.snapshot.runners` with its chunk
function, and on Spark its JVM path.

Two ways to run a chunk on Spark (``RunContext.encoder``): the JVM path (:mod:`cdc.mysql.spark.jvm`:
Spark's JDBC reader, the envelope built by Spark SQL expressions, bytes produced from the executor's
Python worker) for every table it encodes byte-identically, and the Python path
(:mod:`cdc.mysql.spark.executor`: PyMySQL and our converters inside the task) for the others. The JVM
path needs the JDBC driver: the session is created with :data:`cdc.mysql.spark.jvm.JDBC_PACKAGE`; when it
cannot be resolved every chunk takes the Python path. A retried chunk's earlier attempt is fenced and its
records never reach a ``read_committed`` consumer (exactly once, the default; :mod:`cdc.snapshot.delivery`),
or are written again (at least once: every record is keyed; see :mod:`cdc.mysql.spark.reconcile` for why a
retry can never leave a stale row last).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cdc.mysql.spark.executor import ChunkResult, ChunkTask, RunContext, run_item
from cdc.mysql.spark.jvm import JDBC_PACKAGE
from cdc.snapshot.runners import OnDone, OnStart, SparkRunner, ThreadRunner, _drive

__all__ = ["MySqlSparkRunner", "MySqlThreadRunner"]

log = logging.getLogger(__name__)


class MySqlThreadRunner(ThreadRunner):
    """Chunks on threads of this process: no Spark, same records."""

    def __init__(self, parallelism: int = 2) -> None:
        super().__init__(run_item, parallelism)


class MySqlSparkRunner(SparkRunner):
    """Chunks as one-task Spark jobs, on the JVM path where the table allows it.

    ``jdbc_package``: Maven coordinates of the JDBC driver for the JVM path (default
    :data:`cdc.mysql.spark.jvm.JDBC_PACKAGE`); ``None``: no jars, every chunk on the Python path.
    """

    def __init__(
        self,
        master: str = "local[*]",
        parallelism: int | None = None,
        app_name: str = "cdc-snapshot",
        conf: dict[str, str] | None = None,
        jdbc_package: str | None = JDBC_PACKAGE,
        *,
        jvm_log: Path | None = None,
    ) -> None:
        super().__init__(run_item, master, parallelism, app_name, conf, jdbc_package, jvm_log=jvm_log)
        self._encodings: dict[Any, Any] = {}
        self._encodings_lock = threading.Lock()
        self._classes_ok: bool | None = None
        self._table_lines: dict[Any, Any] = {}
        self._run_tasks: list[ChunkTask] = []

    def _encoding(self, task: ChunkTask, ctx: RunContext) -> Any:
        """The table's JVM encoding, or None for the Python path (decided once per table and run)."""
        if ctx.encoder == "python":
            return None
        from cdc.mysql.spark.jvm import Unsupported, table_encoding

        key = (task.table.id, id(task.table), id(ctx))
        with self._encodings_lock:
            if key in self._encodings:
                return self._encodings[key][1]
            encoding = None
            try:
                if not self.packages_loaded or not self._jvm_classes():
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
        from cdc.mysql.spark.jvm import table_lines

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
            from cdc.mysql.spark.jvm import DOUBLE_TO_TEXT, FLOAT_TO_TEXT, JDBC_DRIVER

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
            from cdc.mysql.spark.jvm import run_chunk_jvm

            self.paths[task.chunk.id] = "sql"
            return run_chunk_jvm(self.session, encoding, task, ctx, self._lines(task, ctx, encoding))
        done: ChunkResult = self._submit_python(task, ctx)
        return done

    def run(
        self,
        tasks: Sequence[ChunkTask],
        ctx: RunContext,
        on_done: OnDone,
        stopping: threading.Event,
        on_start: OnStart | None = None,
    ) -> None:
        with self._encodings_lock:
            self._run_tasks = list(tasks)
            self._table_lines.clear()
        _drive(lambda t: self._submit(t, ctx), tasks, self.parallelism, on_done, stopping, on_start)
