"""``snapshot.engine=auto`` (the default): the local reader or Spark, by the tables' size and the cores.

Spark's start-up is a fixed cost the local reader does not pay: a JVM, the session, the JDBC driver's jars
(B1, docs/benchmarks.md). Once started, its readers are faster than the one local reader, and more so with
more cores. So on ``c`` cores Spark finishes first only above

    rows ≥ MARGIN * SPARK_START_S / (1 / LOCAL_ROWS_S - 1 / spark_rows_s(c))

and never when ``spark_rows_s(c) <= LOCAL_ROWS_S`` (one core: its single reader is no faster than ours
once its start-up is counted). :data:`MARGIN` keeps the choice on the local side near the break-even,
where the two differ by less than a run's noise: the default must never be slower than the single reader.

``auto`` also reads locally when Spark cannot or should not be used: pyspark is not installed on the
worker, or the connector asks for the local parallel readers (``snapshot.max.threads`` > 1). The rows are
the server's estimate (``information_schema.tables.table_rows``) of the tables the snapshot reads; a
failure to get it reads locally. The constants are B1's measurements on this project's 2-core machine
(1 M rows of dataset A, see docs/benchmarks.md); ``cdc snapshot`` prints the same break-even as advice.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LOCAL_ROWS_S",
    "MARGIN",
    "SPARK_ROWS_S_PER_CORE",
    "SPARK_START_S",
    "EngineChoice",
    "choose_engine",
    "estimated_rows",
    "machine_cpus",
    "master_cores",
    "resolve_engine",
    "spark_worth_rows",
]

log = logging.getLogger(__name__)

SPARK_START_S = 17.0
"""Spark's start-up in the snapshot, seconds: B1's start to last record minus the rows over the first-to-
last rate of ``cdc snapshot --master local[2]``, the slower of two runs (29.2 s - 1 M / 84 k = 17.3 s;
an idle-machine run gave 15.5 s - 1 M / 177 k = 9.9 s): the default must not be slower than the single
reader on a machine where Spark starts slowly."""
LOCAL_ROWS_S = 43_500.0
"""The local single reader's rows/s (B1, ``cdc-single``)."""
SPARK_ROWS_S_PER_CORE = 42_000.0
"""Spark's rows/s per core of its master, first to last record (B1, ``cdc-spark-2``: 84 k rows/s in the
same slower run; 177 k on an idle machine)."""
MARGIN = 1.25
"""How far past the break-even the tables must be before ``auto`` starts Spark."""


@dataclass(frozen=True)
class EngineChoice:
    """The engine a snapshot uses (``local`` or ``spark``) and why, for the task's log."""

    engine: str
    reason: str

    @property
    def spark(self) -> bool:
        return self.engine == "spark"


def spark_worth_rows(cores: int) -> int | None:
    """Rows above which Spark on ``cores`` cores finishes before the local reader (None: never)."""
    spark = SPARK_ROWS_S_PER_CORE * cores
    if cores < 2 or spark <= LOCAL_ROWS_S:
        return None
    return int(MARGIN * SPARK_START_S / (1 / LOCAL_ROWS_S - 1 / spark))


def master_cores(master: str, partitions: int | None, cpus: int) -> int:
    """The cores Spark's readers get: ``snapshot.spark.partitions`` when set, else a local master's
    ``N`` (``local[*]``: this machine's ``cpus``), else (a cluster, whose size the worker cannot know)
    this machine's ``cpus``."""
    if partitions:
        return int(partitions)
    m = re.fullmatch(r"\s*local(?:\[(\d+|\*)(?:,\d+)?\])?\s*", master)
    if m is None:  # a cluster
        return cpus
    threads = m.group(1)
    if threads is None:  # "local": one thread
        return 1
    return cpus if threads == "*" else int(threads)


def choose_engine(
    configured: str,
    rows: int | None,
    cores: int,
    spark_installed: bool,
    local_threads: int = 1,
) -> EngineChoice:
    """Pure: the engine for ``snapshot.engine=configured`` given the tables' estimated ``rows`` (None:
    unknown), the ``cores`` Spark would use, whether pyspark is installed and ``snapshot.max.threads``."""
    engine = configured.strip().lower()
    if engine in ("local", "spark"):
        return EngineChoice(engine, f"snapshot.engine={engine}")
    if not spark_installed:
        return EngineChoice("local", "pyspark is not installed on the worker")
    if local_threads > 1:
        return EngineChoice("local", f"snapshot.max.threads={local_threads} asks for the local readers")
    if rows is None:
        return EngineChoice("local", "the tables' row estimate is not available")
    worth = spark_worth_rows(cores)
    if worth is None:
        return EngineChoice("local", f"Spark on {cores} core(s) is not faster than the local reader")
    if rows < worth:
        return EngineChoice(
            "local", f"about {rows:,} rows, below the {worth:,} at which Spark on {cores} cores is faster"
        )
    return EngineChoice(
        "spark", f"about {rows:,} rows, at least the {worth:,} at which Spark on {cores} cores is faster"
    )


def estimated_rows(settings: Any, tables: Sequence[str] = ()) -> int:
    """The server's row estimate (``information_schema.tables.table_rows``) of the tables the snapshot
    reads: the captured ones, or those of ``tables`` (names or regexes) among them."""
    from cdc.history.model import TableId
    from cdc.mysql.connection import connect
    from cdc.mysql.filters import Filters

    filters = Filters(settings)
    conn = connect(settings)
    try:
        with conn.cursor() as cur:
            # only the captured databases' tables: information_schema opens every table it lists
            cur.execute("SHOW DATABASES")
            databases = sorted(str(r[0]) for r in cur.fetchall() if filters.database(str(r[0])))
            if not databases:
                return 0
            cur.execute(
                "SELECT table_schema, table_name, COALESCE(table_rows, 0) FROM information_schema.tables "
                f"WHERE table_type = 'BASE TABLE' AND table_schema IN ({', '.join(['%s'] * len(databases))})",
                databases,
            )
            rows = cur.fetchall()
    finally:
        conn.close()
    total = 0
    for db, table, count in rows:
        tid = TableId(str(db), str(table))
        if not filters.snapshot_table(tid):
            continue
        if tables and not any(str(tid) == w or re.fullmatch(w, str(tid)) for w in tables):
            continue
        total += int(count)
    return total


def machine_cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def resolve_engine(
    settings: Any,
    rows: Callable[[], int] | None = None,
    spark_installed: Callable[[], bool] | None = None,
    cpus: int | None = None,
) -> EngineChoice:
    """The engine of this connector's initial snapshot (``settings``: its :class:`MySqlSettings`).

    Only ``auto`` asks the server (one query); ``rows``, ``spark_installed`` and ``cpus`` replace the
    server, the import probe and this machine's cores.
    """
    configured = str(settings.snapshot_engine).strip().lower()
    if configured != "auto":
        return choose_engine(configured, None, 1, False)
    if spark_installed is None:
        from cdc.snapshot.runners import spark_available

        spark_installed = spark_available
    installed = spark_installed()
    estimate: int | None = None
    if installed and settings.snapshot_max_threads <= 1:
        try:
            estimate = rows() if rows is not None else estimated_rows(settings)
        except Exception as exc:  # not worth failing the snapshot over: read locally
            log.warning("snapshot.engine=auto could not estimate the tables' rows (%s): reading locally", exc)
    partitions = settings.snapshot_spark_partitions
    cores = master_cores(
        settings.snapshot_spark_master, partitions, cpus if cpus is not None else machine_cpus()
    )
    return choose_engine("auto", estimate, cores, installed, settings.snapshot_max_threads)
