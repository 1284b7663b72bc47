"""The sink task both classes run: records → changes → the buffer → the database.

``put`` reads each record into a change (a record that cannot be read — no key where the key mode needs
one, an unsupported type — goes to the errant record reporter at once) and writes the buffer when it
holds ``batch.size`` records, or when ``put`` is called with no records (the worker's idle poll: the task
has caught up, so waiting longer only delays the rows). ``flush``/``pre_commit`` write what is left
before the runtime commits offsets, so a committed offset always follows a database commit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

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
        log.info(
            "JDBC sink writing to %s: insert.mode %s, key mode %s, batch size %d",
            sql.dialect.describe_url(),
            plan.insert_mode.value,
            plan.pk_mode.value,
            plan.batch_size,
        )

    def put(self, records: list[SinkRecord]) -> None:
        reader, buffer = self._require()
        for record in records:
            try:
                change = reader.read(record)
            except ConnectError as exc:
                self._report_record(record, exc)
                continue
            if change is not None:
                if buffer.must_flush_before(change, self._writer().unique_keys(change.layout.table)):
                    self._write()  # a conflict on a secondary unique key: write what comes before it
                buffer.add(change)
            if len(buffer) >= max(1, self._plan().batch_size):
                self._write()
        if not records and len(buffer):
            self._write()

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        if self.buffer is not None and len(self.buffer):
            self._write()

    def stop(self) -> None:
        self._stopping.set()
        if self.writer is not None:
            self.writer.close()

    # -- helpers -------------------------------------------------------------------------------------
    def _write(self) -> None:
        assert self.writer is not None and self.buffer is not None
        self.writer.write(self.buffer, self._report_change)

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
