"""The MySQL source task: the composition root of the capture pipeline.

``start`` wires config → server checks → schema history → schema state → event factory → queue →
snapshotter/streamer, decides whether to snapshot (``snapshot.mode`` and the stored offset), and starts
one capture thread. ``poll`` only drains the queue; a failure of the capture thread surfaces there and
fails the task with its message.

With ``snapshot.engine=spark`` (or ``auto``, the default, on tables large enough for it to pay,
:mod:`cdc.mysql.snapshot_engine`) the initial snapshot with data is the parallel engine's
(:func:`cdc.mysql.spark.connector.spark_snapshot`): its Spark tasks write the records to Kafka themselves
with the worker's converters and producer settings (from
:meth:`~cdc.api.connector.SourceTaskContext.worker_client_config`), the schema history is written through
this task's :class:`SchemaState`, and the task only emits what carries offsets: the schema change events,
a record committing the run's start ``S`` flagged ``snapshot`` (a restart then resumes that run) and, at
the end, one committing the end position without the flag (a heartbeat when ``heartbeat.interval.ms`` is
set, else an offset-only record), from which it streams.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdc.api.connector import SourceTask
from cdc.api.errors import ConnectError, RetriableError
from cdc.api.records import Header, SourceRecord
from cdc.ids import uuid7
from cdc.logs import in_context
from cdc.mysql.capture import CaptureContext
from cdc.mysql.config import MySqlSettings
from cdc.mysql.config_tuning import SHUTDOWN_WAIT_MAX_MS
from cdc.mysql.connection import check_server, connect
from cdc.mysql.context_headers import context_headers
from cdc.mysql.events import SourcePosition
from cdc.mysql.filters import Filters
from cdc.mysql.guardrail import check_guardrail
from cdc.mysql.history import open_history
from cdc.mysql.include_lists import warn_unmatched
from cdc.mysql.incremental import IncrementalContext, IncrementalSnapshot
from cdc.mysql.incremental.blocking import BlockingSnapshotter
from cdc.mysql.lineage import close_lineage, input_dataset, open_lineage
from cdc.mysql.metrics import REGISTRY, SignalMetrics, SnapshotMetrics, StreamingMetrics
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.post_processors import ProcessedEmit
from cdc.mysql.queue import ChangeEventQueue
from cdc.mysql.record_size import approximate_size
from cdc.mysql.schema_events import SchemaChangeEvents
from cdc.mysql.signals import (
    ChannelPoller,
    FileChannel,
    KafkaChannel,
    SignalActions,
    SignalChannel,
    SignalProcessor,
)
from cdc.mysql.snapshot import Snapshotter
from cdc.mysql.snapshot_engine import resolve_engine
from cdc.mysql.start_log import configuration_line
from cdc.mysql.start_plan import resume_offset, start_plan
from cdc.mysql.streaming import Streamer
from cdc.mysql.validation import require_valid

if TYPE_CHECKING:
    from cdc.openlineage.emitter import LineageEmitter

__all__ = ["MySqlSourceTask"]

log = logging.getLogger(__name__)

PAUSED_AFTER_S = 10.0
"""The worker has not polled for this long: the connector is paused (or the worker stuck), and the Spark
snapshot, which writes to Kafka without going through ``poll``, submits no further chunk."""


class MySqlSourceTask(SourceTask):
    JAVA_NAME = "io.debezium.connector.mysql.MySqlConnectorTask"
    CONNECTOR = "mysql"

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.queue: ChangeEventQueue | None = None
        self.thread: threading.Thread | None = None
        self.streamer: Streamer | None = None
        self.snapshotter: Snapshotter | None = None
        self.incremental: IncrementalSnapshot | None = None
        self.signal_metrics: SignalMetrics | None = None
        self._metrics_prefix: str | None = None  # the server name its metrics are registered under
        self.history: Any = None
        self.poll_timeout = 0.5
        self.props: dict[str, str] = {}
        self._last_poll = time.monotonic()
        self._context_headers: list[Header] = []
        self._headerless: frozenset[str] = frozenset()  # topics whose records carry no context headers
        self._post: ProcessedEmit | None = None
        self.lineage: LineageEmitter | None = None
        """openlineage.integration.enabled: the run events (cdc.mysql.lineage); None when off."""
        self._lineage_failed = False
        self._shutdown_wait_s = 4.0  # executor.shutdown.timeout.ms
        self._restart_at: float | None = None  # retriable.restart.connector.wait.ms: when to start again

    # -- composition root ------------------------------------------------------------------------------
    def start(self, props: dict[str, str]) -> None:
        settings = require_valid(props)
        self.settings = settings
        self.props = dict(props)
        self._last_poll = time.monotonic()
        run_id = str(uuid7())  # the headers' and the lineage run's, as Debezium's task run id
        self._context_headers = (
            context_headers(settings.prefix, self.CONNECTOR, "0", run_id)
            if settings.extended_headers_enabled
            else []
        )
        self.lineage = (
            open_lineage(settings, props, self.CONNECTOR, self.context, "0", run_id)
            if settings.lineage.enabled
            else None
        )
        try:
            self._start(settings, props)
        except BaseException as exc:
            if self.lineage is not None:
                close_lineage(self.lineage, exc)
                self.lineage = None
            raise
        if self.lineage is not None:
            self.lineage.running()

    def _start(self, settings: MySqlSettings, props: dict[str, str]) -> None:
        # Debezium's EventDispatcher adds them to change and schema change records only: its heartbeats,
        # transaction BEGIN/END records and sink notifications carry none (seen side by side, `make compat`
        # rows heartbeats, transaction-metadata and notifications)
        self._headerless = frozenset(
            t
            for t in (
                settings.naming.heartbeat_topic(),
                settings.naming.transaction_topic() if settings.provide_transaction_metadata else None,
                settings.notification_sink_topic_name if settings.notification_enabled_channels else None,
            )
            if t
        )
        self.poll_timeout = settings.poll_interval_ms / 1000
        if self._restart_at is None:  # once, not at each restart after a retriable error
            log.info("%s", configuration_line(self.JAVA_NAME.rsplit(".", 1)[-1], props))
        self.queue = ChangeEventQueue(
            settings.max_queue_size,
            settings.max_batch_size,
            settings.max_queue_size_in_bytes,
            approximate_size,
        )
        self._shutdown_wait_s = min(settings.executor_shutdown_timeout_ms, SHUTDOWN_WAIT_MAX_MS) / 1000
        self._restart_at = None
        try:
            conn = connect(settings)
        except RetriableError as exc:
            # As Debezium's BaseSourceTask: the task does not fail; poll starts it again after the wait.
            log.warning("Failed to start connector, will re-attempt during polling: %s", exc)
            self._restart_at = time.monotonic() + settings.retriable_restart_connector_wait_ms / 1000
            return
        try:
            server = check_server(conn, settings)
            warn_unmatched(conn, settings)
            check_guardrail(conn, settings, Filters(settings))
        finally:
            conn.close()
        log.info("Connected to %s %s", server.flavour, server.version)
        self.history = open_history(props, self.context.worker_client_config())
        emit = self._post = ProcessedEmit(self._emit)  # post.processors run on every record first
        ctx = CaptureContext.build(
            settings, self.history, emit, self.stopping, server.mariadb, self.CONNECTOR
        )
        emit.install(
            props,
            settings.unavailable_value_placeholder,
            ctx.schema,
            ctx.events,
            lambda: connect(settings, streaming=True),
            ctx.filters.signal_table,
        )
        schema, schema_events = ctx.schema, ctx.schema_events
        lineage = self.lineage
        if lineage is not None:
            schema.on_table = lambda table: input_dataset(lineage, table)
        self._metrics_prefix = settings.prefix
        REGISTRY.set_connector(settings.prefix, props.get("name", ""))  # a `connector` label on its series
        REGISTRY.set_tags(settings.prefix, settings.metric_tags)  # custom.metric.tags
        snapshot_metrics = SnapshotMetrics(settings.prefix)
        streaming_metrics = StreamingMetrics(
            settings.prefix, settings.statistics_metrics_enabled, settings.advanced_metrics
        )
        stored = self.context.offset_storage_reader().offset({"server": settings.prefix})
        offset = BinlogOffset.from_dict(stored) if stored else None
        plan = start_plan(settings, offset, schema, server, self.history)
        if plan == "stream" and offset is not None:
            offset = resume_offset(settings, offset, server)
        snapshotter = Snapshotter(ctx, snapshot_metrics)
        self.streamer = Streamer(ctx, streaming_metrics)
        resumed = stored if plan in ("stream", "recover_schema") else None  # a new snapshot starts clean
        self.streamer.hooks = self._signals(ctx, snapshot_metrics, resumed)
        if resumed and self.streamer.transactions is not None:  # the transaction in progress, if any
            self.streamer.transactions.restore(resumed)
        self.snapshotter = snapshotter
        self.schema = schema
        self.thread = threading.Thread(
            target=in_context(self._capture),
            args=(plan, snapshotter, schema_events, offset),
            name=f"mysql-capture-{settings.prefix}",
            daemon=True,
        )
        self.thread.start()

    def _signals(
        self, ctx: CaptureContext, metrics: SnapshotMetrics, stored: Mapping[str, Any] | None
    ) -> SignalProcessor:
        """The signal channels, the incremental and blocking snapshots, as the streamer's hooks."""
        streamer = self.streamer
        assert streamer is not None
        settings = ctx.settings
        signal_table = ctx.filters.signal_table
        if signal_table is not None and not ctx.filters.database(signal_table.database):
            raise ConnectError(
                f"signal.data.collection {signal_table} is not in a captured database: its schema would "
                "be unknown; add its database to database.include.list"
            )
        context = IncrementalContext.from_offset(stored)
        if context.running:
            log.info("The offsets hold an unfinished incremental snapshot of %s", context.collections_json())
        signal_metrics = self.signal_metrics = SignalMetrics(settings.prefix)
        signal_metrics.register()
        incremental = self.incremental = IncrementalSnapshot(ctx, metrics, context, signal_metrics)
        blocking = BlockingSnapshotter(ctx, incremental.expand)
        channels: list[SignalChannel] = []
        enabled = {c.strip().lower() for c in settings.signal_enabled_channels}
        if "file" in enabled:
            channels.append(FileChannel(settings.signal_file))
        if "kafka" in enabled:
            channels.append(KafkaChannel(settings, self.context.worker_client_config()))
        poller = ChannelPoller(channels, settings.signal_poll_interval_ms / 1000, self.stopping)
        actions = SignalActions(incremental, blocking, settings.prefix, signal_metrics)
        processor = SignalProcessor(
            incremental, actions, poller, ctx.filters.signal_table, "source" in enabled
        )

        def position() -> dict[str, Any]:
            return context.store(streamer.checkpoint().to_dict())

        actions.position = blocking.position = position
        if ctx.notifier is not None:  # incremental snapshot notifications carry the stream's offset
            ctx.notifier.position = position
        if settings.incremental_spark:
            spark = incremental.use_spark(
                self.props, self.context.worker_client_config(), self._context_headers
            )
            spark.position = position
        return processor

    def _capture(
        self,
        plan: str,
        snapshotter: Snapshotter,
        schema_events: SchemaChangeEvents,
        offset: BinlogOffset | None,
    ) -> None:
        assert self.queue is not None and self.streamer is not None
        try:
            spark = plan in ("snapshot", "snapshot_only") and self._snapshot_on_spark()
            if spark:
                result = self._spark_snapshot(schema_events, offset)
                start = result.offset
                # The run's own metrics were unregistered at its end: the task's show the snapshot done.
                metrics = snapshotter.metrics
                REGISTRY.register("snapshot", self.settings.prefix, metrics)
                metrics.start(list(result.tables))
                for table in result.tables:
                    metrics.table_done(table)
                metrics.complete()
                # The Spark tasks wrote the records; this heartbeat carries the end position (no snapshot
                # flag) for the worker to commit once everything before it is acknowledged.
                if not self._emit([self._offset_carrier(schema_events, start.to_dict())]):
                    raise InterruptedError("stopped at the end of the snapshot")
                log.info("Snapshot completed: %d rows from %d tables", result.rows, len(result.tables))
                if plan == "snapshot_only":
                    return
            elif plan in ("snapshot", "snapshot_only", "schema", "recover_schema"):
                result = snapshotter.run(data=plan in ("snapshot", "snapshot_only"))
                start = result.offset if plan != "recover_schema" or offset is None else offset
                if result.rows == 0 or plan in ("schema", "recover_schema"):
                    # No row carried the completed offset: a heartbeat does when heartbeats are on (as
                    # Debezium dispatches one); otherwise a record that only commits the offset, so a
                    # restart streams from here without a heartbeat topic Debezium would not create.
                    if self.settings.heartbeat_interval_ms > 0:
                        self._emit([schema_events.heartbeat(start.to_dict())])
                    else:
                        self._emit([schema_events.offset_only(start.to_dict())])
                log.info("Snapshot completed: %d rows from %d tables", result.rows, len(result.tables))
                if plan == "snapshot_only":
                    return
            elif plan == "idle":
                return
            elif plan == "stream_from_start":
                start = self._first_binlog()
            else:
                assert offset is not None
                start = offset
                snapshotter.notify("SKIPPED", offset=offset.to_dict())  # streaming resumes: no snapshot
            if plan in ("snapshot", "schema", "recover_schema") and not self._delay_streaming():
                return
            self.streamer.run(start)
        except InterruptedError:
            log.debug("Capture thread stopped")
        except BaseException as exc:
            if not self.stopping.is_set():
                log.error("Capture failed", exc_info=exc)
                if self.lineage is not None:
                    self._lineage_failed = True
                    self.lineage.fail(exc)
                self.queue.fail(exc)

    def _snapshot_on_spark(self) -> bool:
        """Whether the initial snapshot's data is read by the Spark engine (``snapshot.engine``; ``auto``
        chooses by the tables' size and the cores, see :mod:`cdc.mysql.snapshot_engine`)."""
        assert self.settings is not None
        choice = resolve_engine(self.settings)
        if self.settings.snapshot_engine.lower() == "auto":
            log.info("Snapshot engine: %s (snapshot.engine=auto: %s)", choice.engine, choice.reason)
        return choice.spark

    def _delay_streaming(self) -> bool:
        """``streaming.delay.ms`` after a completed snapshot (Debezium's ``delayStreamingIfNeeded``: not when
        streaming resumes from an offset); False when the task stops meanwhile."""
        assert self.settings is not None
        end = time.monotonic() + self.settings.streaming_delay_ms / 1000
        while (left := end - time.monotonic()) > 0:
            log.info("The connector will wait for %ds before initiating streaming", int(left))
            if self.stopping.wait(min(left, 10.0)):
                return False
        return True

    def _spark_snapshot(self, schema_events: SchemaChangeEvents, stored: BinlogOffset | None) -> Any:
        """The initial snapshot by the parallel engine; returns its :class:`SnapshotResult`."""
        from cdc.mysql.spark.connector import spark_snapshot

        started = False

        def on_history(record: Any) -> None:
            # Called under the snapshot's lock for each DDL it records, with the run's start position S.
            nonlocal started
            position = dict(record.position)
            out = []
            if not started:
                started = True
                # S with the snapshot flag, committed early: a task restarted before the end resumes
                # this run (and only this one, see cdc.mysql.spark.connector.may_resume).
                out.append(self._offset_carrier(schema_events, position))
            # The schema change event the single-reader snapshot emits for the same statement (SET, DROP
            # TABLE IF EXISTS, DROP/CREATE DATABASE, USE, CREATE TABLE: Debezium's snapshot DDL).
            pos = SourcePosition(file=str(position["file"]), pos=int(position["pos"]))
            out.extend(
                schema_events.records(
                    str(record.ddl),
                    record.database_name,
                    list(record.table_changes),
                    pos,
                    position,
                    snapshot="true",
                )
            )
            if out and not self._emit(out):
                raise InterruptedError("snapshot interrupted")

        return spark_snapshot(
            self.props,
            self.context.worker_client_config(),
            self.schema,
            self.stopping,
            stored=stored,
            on_history=on_history,
            gate=self._await_polling,
            headers=self._context_headers,
        )

    def _offset_carrier(self, schema_events: SchemaChangeEvents, offset: dict[str, Any]) -> SourceRecord:
        """A record whose only job is to have the worker commit ``offset``: a heartbeat when heartbeats are
        on (Debezium's record), else an offset-only record (no topic is written)."""
        if self.settings.heartbeat_interval_ms > 0:
            return schema_events.heartbeat(offset)
        return schema_events.offset_only(offset)

    def _await_polling(self) -> None:
        """Block while the worker does not poll this task (a paused connector); raise once stopping."""
        waited = False
        while time.monotonic() - self._last_poll > PAUSED_AFTER_S:
            if not waited:
                log.info(
                    "The worker does not poll this task (paused?): the snapshot waits before its next chunk"
                )
                waited = True
            if self.stopping.wait(min(0.5, PAUSED_AFTER_S / 4)):
                break
        if self.stopping.is_set():
            raise InterruptedError("snapshot stopped")
        if waited:
            log.info("The worker polls again: the snapshot goes on")

    def _first_binlog(self) -> BinlogOffset:
        conn = connect(self.settings)
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW BINARY LOGS")
                first = cur.fetchone()
                cur.fetchall()
        finally:
            conn.close()
        if first is None:
            raise ConnectError("The server has no binary logs")
        return BinlogOffset(str(first[0]), 4)

    def _emit(self, records: list[SourceRecord]) -> bool:
        assert self.queue is not None
        return self.queue.put_all(records, self.stopping)

    # -- SourceTask ----------------------------------------------------------------------------------------
    def poll(self) -> list[SourceRecord] | None:
        assert self.queue is not None
        self._last_poll = time.monotonic()
        if self._restart_at is not None:
            left = self._restart_at - time.monotonic()
            if left > 0:
                self.stopping.wait(min(left, self.poll_timeout))
            elif not self.stopping.is_set():
                log.info("Restarting the connector after a retriable error")
                self.start(self.props)
            return None
        batch = self.queue.poll(self.poll_timeout)
        if not batch:
            return None
        context, headerless = self._context_headers, self._headerless
        for record in batch:
            if record.topic not in headerless:
                record.headers.extend(context)
        return batch

    def progress(self) -> Mapping[str, Any]:
        """A running incremental snapshot (:meth:`IncrementalSnapshot.progress`) and the signals skipped
        (:meth:`SignalMetrics.status`), for the REST status."""
        running = self.incremental.progress() if self.incremental is not None else None
        signals = self.signal_metrics.status() if self.signal_metrics is not None else None
        out: dict[str, Any] = {}
        if running is not None:
            out["incremental_snapshot"] = running
        if signals is not None:
            out["signals"] = signals
        return out

    def stop(self) -> None:
        self.stopping.set()
        if self.queue is not None:
            self.queue.close()
        if self.thread is not None:
            # executor.shutdown.timeout.ms: how long the capture thread gets to end (Debezium's coordinator)
            deadline = time.monotonic() + self._shutdown_wait_s
            self.thread.join(min(0.5, self._shutdown_wait_s))
            if self.thread.is_alive() and self.snapshotter is not None:
                self.snapshotter.interrupt()
            self.thread.join(max(0.0, deadline - time.monotonic()))
            if self.thread.is_alive():
                log.warning(
                    "The capture thread did not stop within executor.shutdown.timeout.ms (%d ms); "
                    "stopping without it",
                    int(self._shutdown_wait_s * 1000),
                )
        if self.history is not None:
            try:
                self.history.stop()
            except Exception:
                log.debug("Error stopping the schema history", exc_info=True)
        if self._post is not None:
            self._post.close()
        if self._metrics_prefix is not None:
            REGISTRY.forget_server(self._metrics_prefix)
        if self.signal_metrics is not None:
            self.signal_metrics.unregister()
        if self.lineage is not None:  # COMPLETE, unless the run already ended with FAIL
            lineage, self.lineage = self.lineage, None
            close_lineage(lineage, failed=self._lineage_failed)


class MariaDbSourceTask(MySqlSourceTask):
    JAVA_NAME = "io.debezium.connector.mariadb.MariaDbConnectorTask"
    CONNECTOR = "mariadb"
