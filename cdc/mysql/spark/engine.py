"""The parallel snapshot, start to end: the driver's side.

1. **Start** (:func:`capture_start`): the single reader's own procedure without its data phase
   (:meth:`Snapshotter.run` with ``data=False``): REPEATABLE READ, the global read lock, a consistent
   snapshot, the binlog position ``S``, every table's ``SHOW CREATE TABLE`` into the model *and the
   schema history* at ``S``, unlock. The same history records as a ``snapshot.engine=local`` run.
2. **Plan** (:mod:`cdc.snapshot.sampling`): primary-key ranges of about ``chunk_rows`` rows, at least
   ``partitions`` per table.
3. **Chunks** on Spark (:mod:`cdc.mysql.spark.runners`): each task reads its range and produces the
   connector's ``op=r`` records; the progress file notes every acknowledged chunk.
4. **Reconcile** (:mod:`cdc.mysql.spark.reconcile`): the end position ``E`` and the keys changed in
   ``(S, E]``, read again as of ``E``.
5. **Offsets** (CLI only): ``E`` without the ``snapshot`` flag, under Connect's key
   ``["<name>",{"server":"<prefix>"}]`` in the worker's offsets store, so the connector streams from ``E``.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cdc.api.errors import ConfigError
from cdc.api.records import Header
from cdc.history.model import Table, TableId
from cdc.logs import in_context
from cdc.mysql.config import MySqlSettings
from cdc.mysql.history import open_history
from cdc.mysql.metrics import SnapshotMetrics
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.spark.executor import ChunkResult, ChunkTask, RunContext
from cdc.mysql.spark.run_report import (
    ENCODERS,
    ChunkRun,
    SnapshotOptions,
    SnapshotSummary,
    _run_metrics,
)
from cdc.snapshot.chunks import TablePlan, format_plan
from cdc.snapshot.delivery import RunDelivery
from cdc.snapshot.progress import Progress, ProgressState, default_state_dir
from cdc.snapshot.runners import ChunkRunner
from cdc.snapshot.watchdog import SnapshotStalled, Watchdog
from cdc.snapshot.writer import WriterSpec

__all__ = ["ENCODERS", "ChunkRun", "SnapshotOptions", "SnapshotRun", "SnapshotSummary", "connector_name"]

log = logging.getLogger(__name__)


def connector_name(config: Mapping[str, str]) -> str:
    name = config.get("name")
    if not name:
        raise ConfigError("The connector config has no 'name' (needed for its offsets key)")
    return str(name)


def _connector_kind(config: Mapping[str, str]) -> str:
    return "mariadb" if "mariadb" in str(config.get("connector.class", "")).lower() else "mysql"


def _choice(key: str, value: Any, choices: Sequence[str]) -> str:
    mode = str(value).strip().lower()
    if mode not in choices:
        raise ConfigError(
            f"Invalid value {mode} for configuration {key}: String must be one of: {', '.join(choices)}"
        )
    return mode


def _reads(state: ProgressState, chunk_id: str, done: Mapping[str, Any]) -> int:
    """How often a done chunk was read: each time a run handed it to the runner, plus Spark's retries."""
    return max(1, state.submitted.get(chunk_id, 1)) + int(done.get("attempt", 0))


class _NullHistory:
    """Where history records go when they must not be written (dry run, resumed run)."""

    def record(self, record: Any) -> None:
        pass


def _select(tables: Sequence[TableId], wanted: Sequence[str]) -> list[TableId]:
    if not wanted:
        return list(tables)
    out = [t for t in tables if any(str(t) == w or re.fullmatch(w, str(t)) for w in wanted)]
    missing = [w for w in wanted if not any(str(t) == w or re.fullmatch(w, str(t)) for t in tables)]
    if missing:
        raise ConfigError(f"--tables names tables the connector does not capture: {', '.join(missing)}")
    return out


def capture_start(
    settings: MySqlSettings, schema: Any, connector: str, mariadb: bool, stopping: threading.Event
) -> tuple[BinlogOffset, list[TableId]]:
    """The single reader's lock → position → schema → unlock, without reading rows."""
    from cdc.mysql.capture import CaptureContext
    from cdc.mysql.events import EventFactory
    from cdc.mysql.filters import Filters
    from cdc.mysql.metrics import REGISTRY
    from cdc.mysql.schema_events import SchemaChangeEvents
    from cdc.mysql.snapshot import Snapshotter

    metrics = SnapshotMetrics(settings.prefix)
    events = EventFactory(settings, connector)
    ctx = CaptureContext(
        settings,
        schema,
        events,
        Filters(settings),
        SchemaChangeEvents(settings, events),
        lambda records: True,
        stopping,
        mariadb,
    )
    try:
        snap = Snapshotter(ctx, metrics, emit_schema_changes=False)
        result = snap.run(data=False)
    finally:
        REGISTRY.unregister("snapshot", settings.prefix)
    return result.offset, list(result.tables)


def marker_tables(plans: Sequence[TablePlan]) -> tuple[int, int]:
    """The plans whose first and last rows are the snapshot's ``first`` and ``last``. The single reader
    marks the first row it sends and the last: an empty table at either end sends none (its plan counted no
    rows), so the markers go to the first and the last table with rows, as Debezium's do (seen side by
    side, ``make compat --engine spark``)."""
    with_rows = [i for i, plan in enumerate(plans) if plan.rows > 0] or [0, len(plans) - 1]
    return with_rows[0], with_rows[-1]


class SnapshotRun:
    """One parallel snapshot of a connector's tables (the CLI's and the connector's engine)."""

    def __init__(
        self,
        connector_config: Mapping[str, str],
        worker_props: Mapping[str, str],
        options: SnapshotOptions,
        runner: ChunkRunner | None = None,
        headers: Sequence[Header] | None = None,
    ) -> None:
        """``headers``: Debezium's context headers of every record (the connector task's own, with its run
        id); None: a run id of this run's own (``cdc snapshot``), unless ``extended.headers.enabled`` is
        off."""
        from cdc.mysql.context_headers import context_headers
        from cdc.mysql.validation import require_valid

        self.config = dict(connector_config)
        self.worker = dict(worker_props)
        self.options = options
        self.settings = require_valid(self.config)
        self.name = connector_name(self.config)
        self.connector = _connector_kind(self.config)
        if headers is None and self.settings.extended_headers_enabled:
            headers = context_headers(self.settings.prefix, self.connector, "0")
        self.headers = tuple(headers or ())
        self.runner = runner
        self.stopping = threading.Event()
        self.state_dir = options.state_dir or default_state_dir()
        self.spark_log = self.state_dir / f"{self.name}.spark.log"
        """Spark's, spark-submit's and Ivy's own output, kept out of the terminal (and the worker's log)."""

    # -- pieces ----------------------------------------------------------------------------------------------
    def _server(self) -> Any:
        from cdc.mysql.connection import check_server, connect

        conn = connect(self.settings)
        try:
            return check_server(conn, self.settings)
        finally:
            conn.close()

    def _schema(self, history: Any) -> Any:
        from cdc.mysql.filters import Filters
        from cdc.mysql.schema import SchemaState

        return SchemaState(self.settings, Filters(self.settings), history)

    def plan(self, tables: Sequence[Table]) -> list[TablePlan]:
        from cdc.mysql.connection import connect
        from cdc.snapshot.sampling import plan_tables

        overrides = sorted(self.settings.override_tables)
        conn = connect(self.settings)
        try:
            return plan_tables(conn, tables, self.options.chunk_rows, self._parallelism_hint(), overrides)
        finally:
            conn.close()

    def _parallelism_hint(self) -> int:
        if self.options.partitions:
            return self.options.partitions
        if self.runner is not None:
            return self.runner.parallelism
        m = re.fullmatch(r"local\[(\d+)(?:,\d+)?\]", self.options.master)
        if m:
            return int(m.group(1))
        import os

        return os.cpu_count() or 2

    def encoder(self) -> str:
        """The encoder mode of this run: the option, else the connector's ``snapshot.spark.encoder``."""
        return _choice(
            "snapshot.spark.encoder",
            self.options.encoder or self.config.get("snapshot.spark.encoder") or "auto",
            ENCODERS,
        )

    def delivery(self) -> str:
        """The delivery: the option (``exactly-once`` spelt either way), else ``snapshot.spark.delivery``."""
        from cdc.snapshot.delivery import DELIVERIES

        chosen = str(self.options.delivery or self.settings.snapshot_spark_delivery).replace("-", "_")
        return _choice("snapshot.spark.delivery", chosen, DELIVERIES)

    def stall_timeout(self) -> float:
        if self.options.stall_timeout is not None:
            return float(self.options.stall_timeout)
        return self.settings.snapshot_spark_stall_timeout_ms / 1000

    def _runner(self) -> ChunkRunner:
        if self.runner is None:
            from cdc.mysql.spark.runners import MySqlSparkRunner

            extra: dict[str, Any] = {"jdbc_package": None} if self.encoder() == "python" else {}
            self.runner = MySqlSparkRunner(
                self.options.master,
                self.options.partitions,
                app_name=f"cdc-snapshot-{self.name}",
                conf=dict(self.options.spark_conf),
                jvm_log=self.spark_log,
                **extra,
            )
        return self.runner

    def _say(self, line: str) -> None:
        """A progress line where the progress goes (the terminal, or the worker's log)."""
        if self.options.progress_to_log:
            _log_progress(line)
        else:
            print(line, file=sys.stderr, flush=True)

    # -- the run ---------------------------------------------------------------------------------------
    def dry_run(self) -> str:
        """The plan, read without locks and without writing any history."""
        config = {**self.config, "snapshot.locking.mode": "none"}
        from cdc.mysql.config import MySqlSettings

        settings = MySqlSettings.parse(config)
        server = self._server()
        schema = self._schema(_NullHistory())
        _start, tables = capture_start(settings, schema, self.connector, server.mariadb, self.stopping)
        selected = _select(tables, self.options.tables)
        plans = self.plan([t for t in (schema.table(i) for i in selected) if t is not None])
        return format_plan(plans, self._parallelism_hint())

    def run(self, schema: Any = None, history: Any = None) -> SnapshotSummary:
        """Snapshot the tables; returns the summary with the end position (offsets are the caller's).

        ``schema``: the connector's :class:`SchemaState` when run as its snapshot engine (its history is
        written); otherwise one over the connector's configured history is made here.
        """
        started = time.monotonic()
        server = self._server()
        state = (
            None
            if self.options.restart
            else ProgressState.load(self.state_dir, self.name, self.settings.prefix)
        )
        resumed = state is not None and not state.completed and bool(state.plans)
        own_history = None
        given = schema
        if resumed:
            schema = self._schema(_NullHistory())  # the interrupted run wrote the history at S
        elif schema is None:
            own_history = history if history is not None else open_history(self.config, self.worker)
            schema = self._schema(own_history)
        try:
            start, tables = capture_start(
                self.settings, schema, self.connector, server.mariadb, self.stopping
            )
        finally:
            if own_history is not None:
                own_history.stop()
        if given is not None and given is not schema:
            given.tables = schema.tables.copy()
            given.version += 1
        if resumed:
            assert state is not None
            start = BinlogOffset.from_dict(state.start)
            plans = state.plans
            log.info(
                "Resuming the snapshot from %s:%s: %d of %d chunks already done",
                start.file,
                start.pos,
                len(state.done),
                sum(len(p.chunks) for p in plans),
            )
        else:
            selected = _select(tables, self.options.tables)
            plans = self.plan([t for t in (schema.table(i) for i in selected) if t is not None])
            state = ProgressState(
                ProgressState.path_for(self.state_dir, self.name, self.settings.prefix),
                self.name,
                self.settings.prefix,
                start.to_dict(),
                plans,
                {},
            )
            state.save()
        assert state is not None
        table_models = {p.table: schema.table(p.table) for p in plans}
        for tid, model in table_models.items():
            if model is None:
                raise ConfigError(
                    f"No schema for {tid}: it was dropped since the snapshot began; use --restart"
                )
        chunks = self.read_chunks(start, plans, table_models, state)
        writer, delivery, results = chunks.writer, chunks.delivery, chunks.results
        tasks, chunk_seconds = chunks.tasks, chunks.seconds
        skipped = sum(len(p.chunks) for p in plans) - len(tasks)
        rows = sum(int(d.get("rows", 0)) for d in state.done.values())
        twice = delivery.written_twice(rows)
        end, reread, gone, events = self._reconcile(
            start, [m for m in table_models.values() if m is not None], writer, server.mariadb, delivery
        )
        state.completed = True
        state.save()
        delivery.completed()
        return SnapshotSummary(
            start,
            end,
            [p.table for p in plans],
            rows,
            len(tasks),
            skipped,
            time.monotonic() - started,
            reread,
            gone,
            events,
            resumed,
            results,
            chunk_seconds,
            delivery.mode,
            sum(1 for cid, d in state.done.items() if _reads(state, cid, d) > 1),
            twice,
        )

    def read_chunks(
        self,
        start: BinlogOffset,
        plans: Sequence[TablePlan],
        models: Mapping[TableId, Table | None],
        state: ProgressState,
        snapshot: str | None = None,
        on_chunk: Callable[[str, int], None] | None = None,
    ) -> ChunkRun:
        """Read the plans' chunks not yet done in ``state`` and write their records (positions of
        ``start``); returns once Kafka has every record. ``snapshot``: the ``source.snapshot`` of every
        record (None: the initial snapshot's markers). ``on_chunk(chunk id, rows)``: progress, instead of
        the run's own snapshot metrics."""
        tasks = self._tasks(plans, models, state.done, snapshot)
        writer = WriterSpec.resolve(self.config, self.worker, f"cdc-snapshot-{self.name}")
        delivery = RunDelivery(
            writer, self.delivery(), state, [f"{self.settings.prefix}.{p.table}" for p in plans]
        )
        delivery.begin()
        ctx = RunContext(
            self.config,
            self.connector,
            writer,
            start.file,
            start.pos,
            self.encoder(),
            delivery.mode,
            delivery.ids,
            self.headers,
        )
        if tasks:
            if self.options.progress and self.runner is None:
                self._say(f"[snapshot] starting Spark (master {self.options.master}) …")
            self._runner()  # the Spark session starts outside the chunks' time
        chunks_started = time.monotonic()
        results = self._run_chunks(tasks, ctx, plans, state, delivery, on_chunk)
        return ChunkRun(writer, delivery, tasks, results, time.monotonic() - chunks_started)

    def _tasks(
        self,
        plans: Sequence[TablePlan],
        models: Mapping[TableId, Table | None],
        done: Mapping[str, Any],
        snapshot: str | None = None,
    ) -> list[ChunkTask]:
        tasks: list[ChunkTask] = []
        first, last = marker_tables(plans)
        for t_index, plan in enumerate(plans):
            model = models[plan.table]
            assert model is not None
            for chunk in plan.chunks:
                if chunk.id in done:
                    continue
                tasks.append(ChunkTask(chunk, model, t_index == first, t_index == last, snapshot))
        # Largest first: the long ones start early, so the tail of the run stays short.
        tasks.sort(key=lambda t: -t.chunk.estimated_rows)
        return tasks

    def _run_chunks(
        self,
        tasks: Sequence[ChunkTask],
        ctx: RunContext,
        plans: Sequence[TablePlan],
        state: ProgressState,
        delivery: RunDelivery,
        on_chunk: Callable[[str, int], None] | None = None,
    ) -> list[ChunkResult]:
        """Run the chunks, noting each one started and done in the resume file; stops on a stall (see
        :mod:`cdc.snapshot.watchdog`) and, on any failure, fences the transactions of the chunks in flight."""
        results: list[ChunkResult] = []
        if not tasks:
            return results
        emit = _log_progress if self.options.progress_to_log else None
        progress = Progress(
            plans,
            state.done,
            interval=self.options.progress_interval,
            emit=emit,
            written=delivery.written if self.options.progress else None,
        )
        metrics = _run_metrics(self.settings.prefix, plans, state.done) if on_chunk is None else None
        lock = threading.Lock()
        in_flight: set[str] = set()
        runner = self._runner()
        halt = threading.Event()

        def on_halt(reason: str) -> None:
            log.error("Stopping the snapshot: %s", reason)
            halt.set()
            runner.cancel()

        watchdog = Watchdog(self.stall_timeout(), delivery.written, runner.lost, on_halt)

        def on_start(task: ChunkTask) -> None:
            with lock:
                in_flight.add(task.chunk.id)
                state.submitted[task.chunk.id] = state.submitted.get(task.chunk.id, 0) + 1
                state.save()

        def on_done(result: ChunkResult) -> None:
            with lock:
                in_flight.discard(result.chunk_id)
                results.append(result)
                state.done[result.chunk_id] = {
                    "rows": result.rows,
                    "low": list(result.low),
                    "high": list(result.high),
                    "seconds": round(result.seconds, 3),
                    "attempt": result.attempt,
                    "replayed": result.replayed,
                    "topic": result.topic,
                }
                state.save()
                progress.chunk_done(result.chunk_id, result.rows)
                if metrics is not None:
                    metrics.chunk_done(result.chunk_id, result.rows)
                if on_chunk is not None:
                    on_chunk(result.chunk_id, result.rows)
            watchdog.progress()

        def relay_stop() -> None:  # the caller's stop halts the run as the watchdog does
            while not halt.wait(0.2):
                if self.stopping.is_set():
                    halt.set()

        if self.options.progress:
            progress.start()
        watchdog.start()
        threading.Thread(target=in_context(relay_stop), name="snapshot-stop", daemon=True).start()
        try:
            runner.run(tasks, ctx, on_done, halt, on_start)
            if metrics is not None:
                metrics.snapshot.complete()
        except BaseException as exc:
            if metrics is not None:
                metrics.snapshot.abort()
            with lock:
                stopped = sorted(in_flight)
            delivery.fence(stopped)
            if watchdog.reason is not None:
                raise SnapshotStalled(
                    f"The snapshot stopped: {watchdog.reason}. {len(state.done)} chunks are done and kept in "
                    f"{state.path}; run the same command again to resume from them."
                ) from exc
            raise
        finally:
            halt.set()
            watchdog.stop()
            progress.stop()
            if self.options.progress:
                progress.emit(progress.line())
        return results

    def _reconcile(
        self,
        start: BinlogOffset,
        tables: Sequence[Table],
        spec: WriterSpec,
        mariadb: bool,
        delivery: RunDelivery,
    ) -> tuple[BinlogOffset, int, int, int]:
        """The end position and the keys changed since the start, read again (in one transaction of their
        own with exactly once: a run stopped half-way leaves nothing a ``read_committed`` consumer sees)."""
        from cdc.mysql.connection import connect
        from cdc.mysql.events import EventFactory, SourcePosition
        from cdc.mysql.spark.reconcile import consistent_end, reread, touched_keys
        from cdc.snapshot.delivery import ChunkWriter

        conn = connect(self.settings)
        try:
            lock = self.settings.snapshot_locking_mode.lower() != "none"
            end = consistent_end(conn, mariadb, lock)
            server_id = self.options.server_id or self.settings.database_server_id + 1
            touched = touched_keys(
                {
                    "host": self.settings.database_hostname,
                    "port": self.settings.database_port,
                    "user": self.settings.database_user,
                    "passwd": self.settings.password,
                },
                server_id,
                start,
                end,
                tables,
                connect=self.settings.tls.pymysql_connect,
            )
            found = gone = 0
            if touched.count():
                log.info(
                    "Reconciling %d keys changed while the snapshot ran (%d row events)",
                    touched.count(),
                    touched.events,
                )
                events = EventFactory(self.settings, self.connector)
                out = ChunkWriter(spec, delivery.ids.reconcile() if delivery.exactly_once else None)
                writer = out.writer
                pos = SourcePosition(file=start.file, pos=start.pos, server_id=0)
                offset = start.with_(snapshot=True).to_dict()
                for table in tables:
                    keys = touched.rows.get(table.id)
                    if not keys:
                        continue
                    ts = events.schema_for(table)

                    def emit_row(row: Any, ts: Any = ts, table: Table = table) -> None:
                        source = events.source(pos, table.id, int(time.time() * 1000), "true")
                        writer.send(events.read(ts, row, source, offset))

                    def emit_gone(image: Any, ts: Any = ts, table: Table = table) -> None:
                        # as a streamed delete: op=d with the last image the window saw, then the
                        # tombstone (tombstones.on.delete); consumers that drop tombstones see the delete
                        source = events.source(pos, table.id, int(time.time() * 1000), "true")
                        for record in events.delete(ts, image, source, offset):
                            writer.send(record)

                    f, g = reread(conn, table, keys, emit_row, emit_gone)
                    found, gone = found + f, gone + g
                try:
                    out.finish(found + gone)
                finally:
                    out.close()
            with conn.cursor() as cur:
                cur.execute("COMMIT")
        finally:
            conn.close()
        return end, found, gone, touched.events


def _log_progress(line: str) -> None:
    log.info("%s", line)
