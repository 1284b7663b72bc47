"""``snapshot.engine=spark``: the MySQL connector's initial snapshot done by the parallel engine.

The task calls :func:`spark_snapshot` where it would call ``Snapshotter.run(data=True)`` and uses the
result the same way: emit the heartbeat with ``result.offset`` (no ``snapshot`` flag) so the worker
commits it, then stream from it. The records go to Kafka from the Spark tasks directly, through the
same converters and transforms the worker would apply; the schema history is written through the
task's own :class:`SchemaState`.

The worker's converter and producer settings reach the task through its context
(:meth:`~cdc.api.connector.SourceTaskContext.worker_client_config`); converters named in the connector's
own config need nothing more. The Spark tasks get the resolved writer settings only.

Around the engine's :class:`~cdc.mysql.spark.engine.SnapshotRun` this module adds what a connector task needs:

* **Stop in bounded time**: when ``stopping`` is set, the running Spark jobs are cancelled (no chunk
  finishes its read first) and the session is stopped; the task sees :class:`InterruptedError`.
* **Pause**: ``gate`` is called before each chunk is submitted; the task blocks there while the worker
  does not poll it (a paused connector), so a paused connector writes no more chunks.
* **Resume only the same run**: the engine keeps its resume file per connector name and
  ``topic.prefix``. It is used only when the connector's stored offset is the in-progress offset of that
  very run (``"snapshot": "INITIAL"`` at the run's start position); with no stored offset (a new connector, or
  its offsets deleted) or any other offset the run starts afresh, so a stale file is never reused.
* **One Spark snapshot per process at a time**: ``SparkSession.getOrCreate`` hands every caller the same
  session, and one run's cancel or stop would end another's jobs.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cdc.api.records import Header
from cdc.logs import in_context
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.snapshot import SnapshotResult
from cdc.snapshot.spark_conf import SPARK_CONF_PREFIX

__all__ = [
    "SPARK_CONF_PREFIX",
    "cancel_on_stop",
    "exclusive",
    "gated_runner",
    "may_resume",
    "running",
    "spark_conf",
    "spark_snapshot",
    "state_dir",
]

log = logging.getLogger(__name__)

_one_at_a_time = threading.Lock()


def state_dir(props: Mapping[str, str]) -> Path:
    from cdc.snapshot.progress import default_state_dir

    configured = str(props.get("snapshot.spark.state.dir") or "").strip()
    return Path(configured).expanduser() if configured else default_state_dir()


def may_resume(directory: Path, name: str, prefix: str, stored: BinlogOffset | None) -> bool:
    """Whether an unfinished run's resume file belongs to the snapshot the stored offset says is under way.

    The task commits the run's start ``S`` with the ``snapshot`` flag as soon as the run has it, so the
    stored offset of an interrupted run is ``S`` + ``snapshot``; the file must have the same ``S``. No
    stored offset (the connector's offsets were deleted, or nothing was committed yet), a completed
    offset, or another ``S`` mean a fresh run.
    """
    from cdc.snapshot.progress import ProgressState

    if stored is None or not stored.snapshot:
        return False
    try:
        state = ProgressState.load(directory, name, prefix)
    except Exception as exc:  # unreadable: start afresh rather than fail the connector
        log.warning("Ignoring the unreadable snapshot resume file for %s: %s", name, exc)
        return False
    if state is None or state.completed or not state.plans:
        return False
    try:
        start = BinlogOffset.from_dict(state.start)
    except Exception:
        return False
    return (start.file, start.pos, start.gtids or None) == (stored.file, stored.pos, stored.gtids or None)


class _ObservedHistory:
    """The schema history, with every record also shown to ``observe`` (after it was written)."""

    def __init__(self, history: Any, observe: Callable[[Any], None]) -> None:
        self._history = history
        self._observe = observe

    def record(self, record: Any) -> None:
        self._history.record(record)
        self._observe(record)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._history, name)


@contextlib.contextmanager
def _observing(schema: Any, observe: Callable[[Any], None] | None) -> Iterator[None]:
    if observe is None or schema is None:
        yield
        return
    history = schema.history
    schema.history = _ObservedHistory(history, observe)
    try:
        yield
    finally:
        schema.history = history


@contextlib.contextmanager
def exclusive(stopping: threading.Event) -> Iterator[None]:
    logged = False
    while not _one_at_a_time.acquire(timeout=0.5):
        if not logged:
            log.info("Another Spark snapshot runs in this process; waiting for it to end")
            logged = True
        if stopping.is_set():
            raise InterruptedError("stopped while waiting for another Spark snapshot")
    try:
        yield
    finally:
        _one_at_a_time.release()


def cancel_on_stop(job: Any, stopping: threading.Event, done: threading.Event) -> None:
    """Once ``stopping`` is set, cancel every Spark job of the run (again each time: a job may have been
    submitted in between) until the run is over."""
    while not done.wait(0.2):
        if not stopping.is_set():
            continue
        if job.runner is not None:
            job.runner.cancel()


@contextlib.contextmanager
def running(job: Any, stopping: threading.Event, name: str) -> Iterator[None]:
    """Around a run of ``job`` (a :class:`~cdc.mysql.spark.engine.SnapshotRun` whose runner the body
    creates): once ``stopping`` is set its Spark jobs are cancelled and an error it then ends with is an
    :class:`InterruptedError`; at the end its runner (the Spark session) is closed."""
    done = threading.Event()
    watcher = threading.Thread(
        target=in_context(cancel_on_stop), args=(job, stopping, done), name=name, daemon=True
    )
    watcher.start()
    try:
        yield
    except BaseException as exc:
        if stopping.is_set() and not isinstance(exc, InterruptedError):
            raise InterruptedError("the Spark snapshot was stopped") from exc
        raise
    finally:
        done.set()
        if job.runner is not None:
            job.runner.close()
        watcher.join(5)


def spark_conf(props: Mapping[str, str], worker: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings of the connector's session: the worker file's ``snapshot.spark.conf.*`` (in
    ``worker``, the task context's ``worker_client_config``), then the connector's own, of which only the
    allowed keys are taken (anything else raises naming the key, see :mod:`cdc.snapshot.spark_conf`)."""
    from cdc.snapshot.spark_conf import session_conf

    return session_conf(props, worker)


def gated_runner(
    master: str,
    partitions: int | None,
    app_name: str,
    gate: Callable[[], None] | None,
    conf: Mapping[str, str],
) -> Any:
    from cdc.mysql.spark.runners import MySqlSparkRunner

    class GatedSparkRunner(MySqlSparkRunner):
        """Each chunk waits at ``gate`` before it is submitted (a paused connector submits none)."""

        def _submit(self, task: Any, ctx: Any) -> Any:
            if gate is not None:
                gate()
            return super()._submit(task, ctx)

    return GatedSparkRunner(master, partitions, app_name=app_name, conf=dict(conf))


def spark_snapshot(
    props: Mapping[str, str],
    worker_clients: Mapping[str, str],
    schema: Any,
    stopping: threading.Event,
    *,
    stored: BinlogOffset | None = None,
    on_history: Callable[[Any], None] | None = None,
    gate: Callable[[], None] | None = None,
    headers: Sequence[Header] = (),
) -> SnapshotResult:
    """Run the Spark snapshot for a connector task; ``props`` is the task config (with ``name``),
    ``worker_clients`` the worker's client settings (the task context's ``worker_client_config``).

    ``stored``: the connector's stored offset (decides whether an unfinished run may be resumed).
    ``on_history``: called with each schema history record the run writes through ``schema`` (the task
    turns them into schema change events and commits the run's start). ``gate``: called before each chunk;
    it blocks while the connector is paused and raises :class:`InterruptedError` to give up.
    ``headers``: the task's Debezium context headers, on every record as its ``poll`` adds them.
    """
    from cdc.api.errors import ConnectError
    from cdc.mysql.spark.engine import SnapshotOptions, SnapshotRun
    from cdc.mysql.validation import require_valid
    from cdc.snapshot.runners import spark_available

    if not spark_available():
        raise ConnectError(
            "snapshot.engine=spark needs pyspark on the worker: install cdc's `spark` extra (make spark)"
        )
    raw = dict(props)
    raw.setdefault("name", raw.get("topic.prefix", raw.get("database.server.name", "mysql")))
    settings = require_valid(raw)
    partitions = settings.snapshot_spark_partitions
    directory = state_dir(raw)
    resume = may_resume(directory, raw["name"], settings.prefix, stored)
    options = SnapshotOptions(
        master=settings.snapshot_spark_master,
        partitions=int(partitions) if partitions else None,
        chunk_rows=settings.snapshot_spark_chunk_rows,
        restart=not resume,
        state_dir=directory,
        progress=True,
        progress_to_log=True,  # with the task's [name|task-0] context, not on the worker's stderr
        spark_conf=spark_conf(raw, worker_clients),
    )
    with exclusive(stopping):
        job = SnapshotRun(raw, worker_clients, options, headers=headers)
        job.stopping = stopping
        with running(job, stopping, f"spark-snapshot-stop-{settings.prefix}"):
            log.info(
                "Snapshot on Spark (%s, %s): %s",
                options.master,
                f"{options.partitions} readers" if options.partitions else "one reader per core",
                "resuming the unfinished run" if resume else "a new run",
            )
            job.runner = gated_runner(
                options.master, options.partitions, f"cdc-snapshot-{job.name}", gate, options.spark_conf
            )
            if stopping.is_set():  # while Spark started: take no lock, write no history
                raise InterruptedError("snapshot stopped")
            with _observing(schema, on_history):
                summary = job.run(schema=schema)
    log.info("%s", summary.render())
    return SnapshotResult(summary.end.with_(snapshot=False), summary.tables, summary.rows)
