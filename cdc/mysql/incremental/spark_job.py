"""The background half of a Spark back-fill: the parallel read of one table while the task streams.

:class:`BackfillJob` is a thread of the task. It reads the whole table as the initial Spark snapshot
reads it (:meth:`cdc.mysql.spark.engine.SnapshotRun.read_chunks`: the same plan, chunk readers, encoders
and exactly-once chunk transactions), every record an ``op=r`` with ``source.snapshot=incremental`` and
the stream position the back-fill started from. It returns once Kafka has every record (committed, with
exactly-once delivery), which is what the streamer thread waits for before it reads the changed keys
again (:mod:`cdc.mysql.incremental.spark_backfill`).

Resuming: the run keeps its plan and finished chunks in a resume file of its own
(``<snapshot.spark.state.dir>/<name>.incremental__<prefix>.json``), used again only when it belongs to the
same table and start position. A resumed task also lost the keys its streamer had recorded since that
start; the job reads them back from the binlog first (:func:`cdc.mysql.spark.reconcile.touched_keys`,
from the start to the server's current position, which the restarted stream overlaps).

Spark has one session per process: the job waits for any other Spark snapshot of the worker to end
(:func:`cdc.mysql.spark.connector.exclusive`); ``cancel`` or the task's ``stopping`` cancel its Spark jobs at
once. Pausing the incremental snapshot holds back chunks not yet submitted.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cdc.api.records import Header
from cdc.history.model import Table
from cdc.logs import in_context
from cdc.mysql.offsets import BinlogOffset

__all__ = ["BackfillJob", "BackfillSpec", "Images"]

log = logging.getLogger(__name__)

Images = dict[tuple[Any, ...], list[Any]]
"""Primary-key values → the last row image seen for the key."""


@dataclass(frozen=True)
class BackfillSpec:
    """What one back-fill reads: the task config (with ``name``), the worker's client settings, the table
    and the stream position it started from; ``recover``: a resumed back-fill, which first reads back from
    the binlog the keys changed since ``start``."""

    props: Mapping[str, str]
    worker_clients: Mapping[str, str]
    table: Table
    start: BinlogOffset
    recover: bool = False
    headers: tuple[Header, ...] = ()
    """The task's Debezium context headers, on every record the back-fill writes."""


class BackfillJob:
    """Reads a table on Spark in a thread of its own; ``paused`` holds chunks back, ``on_chunk`` is told
    the rows written so far after each chunk."""

    def __init__(
        self,
        spec: BackfillSpec,
        stopping: threading.Event,
        paused: Callable[[], bool],
        on_chunk: Callable[[int], None],
    ) -> None:
        self.props = {"name": spec.props.get("topic.prefix", "mysql"), **spec.props}
        self.spec = spec
        self.table, self.start, self.recover = spec.table, spec.start, spec.recover
        self.task_stopping, self.paused, self.on_chunk = stopping, paused, on_chunk
        self.cancelled = threading.Event()
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.recovered: Images = {}
        self.rows = 0
        self._thread = threading.Thread(
            target=in_context(self._run), name=f"spark-backfill-{spec.table.id}", daemon=True
        )

    def begin(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self.cancelled.set()

    def join(self, timeout: float) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def stopping(self) -> bool:
        return self.cancelled.is_set() or self.task_stopping.is_set()

    # -- the thread ---------------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            if self.recover:
                self.recovered = self._recover()
            self.rows = self._read()
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()

    def _recover(self) -> Images:
        """The keys changed since the start, from the binlog up to the server's position now."""
        from cdc.mysql.connection import connect
        from cdc.mysql.spark.executor import _master_position
        from cdc.mysql.spark.reconcile import touched_keys
        from cdc.mysql.validation import require_valid

        settings = require_valid(self.props)
        conn = connect(settings)
        try:
            with conn.cursor() as cur:
                file, pos = _master_position(cur)
        finally:
            conn.close()
        touched = touched_keys(
            {
                "host": settings.database_hostname,
                "port": settings.database_port,
                "user": settings.database_user,
                "passwd": settings.password,
            },
            settings.database_server_id + 1,
            self.start,
            BinlogOffset(file, pos),
            [self.table],
            connect=settings.tls.pymysql_connect,
        )
        keys = touched.rows.get(self.table.id, {})
        log.info(
            "Spark back-fill of '%s' resumed: %d keys changed since it started (%s:%s), from %d row events",
            self.table.id,
            len(keys),
            self.start.file,
            self.start.pos,
            touched.events,
        )
        return keys

    def _gate(self) -> None:
        """Before each chunk: wait while the snapshot is paused; give up once cancelled."""
        while self.paused() and not self.stopping:
            self.cancelled.wait(0.5)
        if self.stopping:
            raise InterruptedError("the Spark back-fill was stopped")

    def _read(self) -> int:
        from cdc.api.errors import ConnectError
        from cdc.mysql.spark.connector import exclusive, gated_runner, running, spark_conf, state_dir
        from cdc.mysql.spark.engine import SnapshotOptions, SnapshotRun
        from cdc.mysql.validation import require_valid
        from cdc.snapshot.progress import ProgressState
        from cdc.snapshot.runners import spark_available

        if not spark_available():
            raise ConnectError(
                "incremental.snapshot.engine=spark needs pyspark on the worker: install cdc's `spark` extra "
                "(make spark)"
            )
        settings = require_valid(self.props)
        directory = state_dir(self.props)
        name = f"{self.props['name']}.incremental"
        # Only a resumed back-fill takes up the resume file, and only the one of its table and start.
        state = ProgressState.load(directory, name, settings.prefix) if self.recover else None
        resumed = (
            state is not None
            and bool(state.plans)
            and state.plans[0].table == self.table.id
            and _same_position(state.start, self.start)
        )
        partitions = settings.snapshot_spark_partitions
        options = SnapshotOptions(
            master=settings.snapshot_spark_master,
            partitions=int(partitions) if partitions else None,
            chunk_rows=settings.snapshot_spark_chunk_rows,
            restart=True,
            state_dir=directory,
            progress=True,
            progress_to_log=True,
            progress_interval=10.0,
            spark_conf=spark_conf(self.props, self.spec.worker_clients),
        )
        with exclusive(self.cancelled):
            if self.stopping:
                raise InterruptedError("the Spark back-fill was stopped")
            job = SnapshotRun(self.props, self.spec.worker_clients, options, headers=self.spec.headers)
            job.name = name
            job.stopping = self.cancelled
            with running(job, self.cancelled, "spark-backfill-stop"):
                job.runner = gated_runner(
                    options.master,
                    options.partitions,
                    f"cdc-incremental-{name}",
                    self._gate,
                    options.spark_conf,
                )
                if not resumed:
                    state = ProgressState(
                        ProgressState.path_for(directory, name, settings.prefix),
                        name,
                        settings.prefix,
                        self.start.to_dict(),
                        job.plan([self.table]),
                        {},
                    )
                    state.save()
                assert state is not None
                log.info(
                    "Spark back-fill of '%s' (%s, %s): %s, %d chunks of about %d rows",
                    self.table.id,
                    options.master,
                    f"{options.partitions} readers" if options.partitions else "one reader per core",
                    f"resuming ({len(state.done)} chunks done)" if resumed else "a new run",
                    sum(len(p.chunks) for p in state.plans),
                    options.chunk_rows,
                )
                self.on_chunk(_rows_done(state))
                progress = state

                def on_chunk(_chunk: str, _rows: int) -> None:
                    self.on_chunk(_rows_done(progress))

                if not state.completed:
                    chunks = job.read_chunks(
                        self.start,
                        state.plans,
                        {self.table.id: self.table},
                        state,
                        snapshot="incremental",
                        on_chunk=on_chunk,
                    )
                    state.completed = True
                    state.save()
                    chunks.delivery.completed()
        return _rows_done(state)


def _rows_done(state: Any) -> int:
    return sum(int(d.get("rows", 0)) for d in state.done.values())


def _same_position(stored: Mapping[str, Any], start: BinlogOffset) -> bool:
    try:
        other = BinlogOffset.from_dict(stored)
    except Exception:
        return False
    return (other.file, other.pos) == (start.file, start.pos)
