"""The sink task both classes run: records → changes → the buffer → the database.

``put`` reads each record into a change (a record that cannot be read — no key where the key mode needs
one, an unsupported type — goes to the errant record reporter at once) and writes the buffer when it
holds ``batch.size`` records, or when ``put`` is called with no records (the worker's idle poll: the task
has caught up, so waiting longer only delays the rows). ``flush``/``pre_commit`` write what is left
before the runtime commits offsets, so a committed offset always follows a database commit.

**A full batch is written on a thread of its own** (PostgreSQL and MariaDB/MySQL; SQLite's connection
belongs to the thread that opened it) while ``put`` goes on reading the next records: the database's
round trips and work overlap the decoding, which is most of the task's CPU. At most one batch is in
flight, and anything that needs the database — the next batch, an idle poll, ``flush``, looking up a new
table's unique keys — waits for it first, so batches still commit in order and before their offsets. A
background write never reports records itself: if one is refused, the write is undone (nothing of it is
committed) and done again in the task's thread, where the errant record reporter runs as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from cdc.api.connector import SinkTask, TopicPartition
from cdc.api.errors import ConnectError
from cdc.api.records import SinkRecord
from cdc.jdbc.dialects import dialect_for
from cdc.jdbc.url import parse_jdbc_url
from cdc.jdbcsink.buffer import ChangeBuffer
from cdc.jdbcsink.changes import Change, ChangeReader, where
from cdc.jdbcsink.plan import SinkPlan
from cdc.jdbcsink.sql import SinkSql, sink_sql
from cdc.jdbcsink.writer import BatchWriter

__all__ = ["JdbcSinkTask", "make_sql"]

log = logging.getLogger(__name__)


class _Deferred(Exception):
    """A background write met a record to report: it is undone and done again in the task's thread."""


def _defer(change: Change, error: BaseException) -> None:
    raise _Deferred() from error


def make_sql(plan: SinkPlan) -> SinkSql:
    url = parse_jdbc_url(plan.connection_url).with_credentials(plan.user, plan.password)
    dialect = dialect_for(url, plan.dialect_name, plan.tz, plan.quote, "DEFAULT")
    return sink_sql(dialect, plan.quote)


class JdbcSinkTask(SinkTask):
    """Shared by both classes; :meth:`plan_of` (overridden) parses the class's own keys."""

    JAVA_NAME = "io.confluent.connect.jdbc.sink.JdbcSinkTask"

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self.plan: SinkPlan | None = None
        self.reader: ChangeReader | None = None
        self.buffer: ChangeBuffer | None = None
        self.writer: BatchWriter | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pending: tuple[Future[None], ChangeBuffer] | None = None

    def plan_of(self, props: Mapping[str, str]) -> SinkPlan:
        from cdc.jdbcsink.confluent_config import ConfluentSinkSettings

        settings = ConfluentSinkSettings.parse(props)
        settings.check()
        return settings.plan()

    def start(self, props: dict[str, str]) -> None:
        plan = self.plan_of(props)
        sql = make_sql(plan)
        self.plan = plan
        self.reader = ChangeReader(plan, sql, props.get("name", ""))
        self.buffer = ChangeBuffer(plan.reduce)
        self.writer = BatchWriter(plan, sql, self._stopping)
        conn = self.writer.connection()  # a wrong URL or password fails the task at start
        sql.geometry_type = sql.find_geometry_type(conn, plan.postgis_schema)
        if sql.family != "sqlite":
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="jdbc-sink-writer")
        log.info(
            "JDBC sink writing to %s: insert.mode %s, key mode %s, batch size %d",
            sql.dialect.describe_url(),
            plan.insert_mode.value,
            plan.pk_mode.value,
            plan.batch_size,
        )

    def put(self, records: list[SinkRecord]) -> None:
        reader, _ = self._require()
        batch_size = max(1, self._plan().batch_size)
        for record in records:
            try:
                change = reader.read(record)
            except ConnectError as exc:
                self._report_record(record, exc)
                continue
            if change is not None:
                if self._buffer().must_flush_before(change, self._unique_keys(change)):
                    self._write(background=True)  # a conflict on a secondary unique key: write what precedes
                self._buffer().add(change)
            if len(self._buffer()) >= batch_size:
                self._write(background=True)
        if not records:
            # an idle poll: the task has caught up, so the rows are written now, and waited for
            self._settle()
            if len(self._buffer()):
                self._write(background=False)

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._settle()
        if self.buffer is not None and len(self.buffer):
            self._write(background=False)

    def stop(self) -> None:
        self._stopping.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # a write in flight ends (its retries see the stop) first
        if self.writer is not None:
            self.writer.close()

    # -- helpers -------------------------------------------------------------------------------------
    def _write(self, background: bool) -> None:
        """Write the buffer: on the writer thread (the buffer handed over, a new one started) or here."""
        self._settle()
        writer, buffer = self._writer(), self._buffer()
        if background and self._pool is not None:
            self.buffer = ChangeBuffer(buffer.reduce)
            self._pending = (self._pool.submit(writer.write, buffer, _defer), buffer)
        else:
            writer.write(buffer, self._report_change)

    def _settle(self) -> None:
        """Wait for the write in flight; its failure is the task's; a refused record's batch is written
        again here, reporting the records at fault."""
        if self._pending is None:
            return
        future, buffer = self._pending
        self._pending = None
        try:
            future.result()
        except _Deferred:
            self._writer().write(buffer, self._report_change)

    def _unique_keys(self, change: Change) -> list[tuple[str, ...]]:
        writer = self._writer()
        table = change.layout.table
        known = writer.known_unique_keys(table)
        if known is None:
            self._settle()  # the lookup needs the connection the writer thread may be using
            known = writer.unique_keys(table)
        return known

    def _report_change(self, change: Change, error: BaseException) -> None:
        self._report_record(change.record, error)

    def _report_record(self, record: SinkRecord, error: BaseException) -> None:
        reporter = self.context.errant_record_reporter()
        if reporter is None:
            raise ConnectError(f"Cannot write the record at {where(record)}: {error}") from error
        log.warning("Record at %s refused: %s", where(record), error)
        reporter.report(record, error)

    def _require(self) -> tuple[ChangeReader, ChangeBuffer]:
        if self.reader is None or self.buffer is None:
            raise ConnectError("The JDBC sink task is not started")
        return self.reader, self.buffer

    def _buffer(self) -> ChangeBuffer:
        assert self.buffer is not None
        return self.buffer

    def _writer(self) -> BatchWriter:
        assert self.writer is not None
        return self.writer

    def _plan(self) -> SinkPlan:
        assert self.plan is not None
        return self.plan


class DebeziumJdbcSinkTask(JdbcSinkTask):
    JAVA_NAME = "io.debezium.connector.jdbc.JdbcSinkConnectorTask"

    def plan_of(self, props: Mapping[str, str]) -> SinkPlan:
        from cdc.jdbcsink.debezium_config import DebeziumSinkSettings

        settings = DebeziumSinkSettings.parse(props)
        settings.check()
        return settings.plan()
