"""``io.confluent.connect.jdbc.source.JdbcSourceTask``: polls its tables one after another.

The task holds one connection (autocommit off) and one querier per table of its ``tables`` (or one for
``query``). ``poll`` picks the querier due first; a querier with an open result set keeps the turn until
its rows run out, so only one statement is open on the connection at a time (as Confluent's task before
10.8.5). Nothing due: ``poll`` waits at most ``max_wait_s`` and returns None, so pause and stop stay
responsive.

Errors: a failed query or a lost connection drops the connection; the querier resumes from the offset
of the last record it returned, after ``connection.backoff.ms``. ``query.retry.attempts`` (-1 = for
ever) consecutive failures fail the task.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from cdc.api.connector import SourceTask
from cdc.api.errors import ConfigError, ConnectError, RetriableError
from cdc.api.offsets import partition_key
from cdc.api.records import SourceRecord
from cdc.jdbc.config import BULK, TABLES_CONFIG, JdbcSourceSettings
from cdc.jdbc.dialects import Dialect, dialect_for
from cdc.jdbc.metrics import JdbcSourceMetrics
from cdc.jdbc.offsets import QUERY_PARTITION, TimestampIncrementingOffset, partition_v0, partition_v1
from cdc.jdbc.querier import TableQuerier
from cdc.jdbc.tables import TableId, parse_table_list
from cdc.jdbc.url import parse_jdbc_url
from cdc.jdbc.url_properties import check_server_timezone

__all__ = ["JdbcSourceTask", "make_dialect"]

log = logging.getLogger(__name__)


def make_dialect(settings: JdbcSourceSettings) -> Dialect:
    url = parse_jdbc_url(settings.connection_url)
    url = url.with_credentials(settings.connection_user, settings.password)
    dialect = dialect_for(
        url,
        str(settings.dialect_name or ""),
        settings.timezone,
        settings.quote,
        settings.transaction_isolation_mode,
    )
    check_server_timezone(dialect.options, settings.db_timezone)
    return dialect


class JdbcSourceTask(SourceTask):
    JAVA_NAME = "io.confluent.connect.jdbc.source.JdbcSourceTask"

    def __init__(self, max_wait_s: float = 1.0, clock: Callable[[], float] = time.time) -> None:
        self.max_wait_s = max_wait_s
        self.clock = clock
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._conn: Any = None
        self._queriers: list[TableQuerier] = []
        self._failures = 0
        self.settings: JdbcSourceSettings | None = None
        self.dialect: Dialect | None = None
        self.metrics: JdbcSourceMetrics | None = None

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self, props: dict[str, str]) -> None:
        self._stopping.clear()
        settings = JdbcSourceSettings.parse(props)
        settings.check()
        self.settings = settings
        self.dialect = dialect = make_dialect(settings)
        self.metrics = JdbcSourceMetrics(props.get("name", ""), str(self.context.task_index()))
        tables = parse_table_list(props.get(TABLES_CONFIG, ""), dialect.with_catalog)
        if settings.query and tables:
            raise ConfigError("Both query and tables are set: a task polls one or the other")
        if not settings.query and not tables:
            log.info("JDBC source task has no tables to poll (tables not fetched yet); it stays idle")
        offsets = self._stored_offsets(tables)
        self._conn = self._connect()
        try:
            if settings.query:
                offset = TimestampIncrementingOffset.from_dict(offsets.get(partition_key(QUERY_PARTITION)))
                self._queriers = [TableQuerier(dialect, settings, None, offset, None, self.clock)]
            else:
                self._queriers = [self._querier(t, offsets) for t in tables]
        except BaseException:
            self._close_connection()
            raise
        log.info(
            "JDBC source task started with %d querier(s): %s",
            len(self._queriers),
            ", ".join(q.topic for q in self._queriers),
        )

    def _querier(self, table: TableId, offsets: dict[str, dict[str, Any]]) -> TableQuerier:
        assert self.settings is not None and self.dialect is not None
        stored = offsets.get(partition_key(partition_v1(table))) or offsets.get(
            partition_key(partition_v0(table))
        )
        if stored and self.settings.mode != BULK:
            log.info("Found offset %s for partition %s", stored, partition_v1(table))
        columns = self.dialect.describe_table(table)
        return TableQuerier(
            self.dialect,
            self.settings,
            table,
            TimestampIncrementingOffset.from_dict(stored),
            columns,
            self.clock,
        )

    def _stored_offsets(self, tables: list[TableId]) -> dict[str, dict[str, Any]]:
        assert self.settings is not None
        if self.settings.mode == BULK:
            return {}
        partitions = (
            [QUERY_PARTITION]
            if self.settings.query
            else ([p for t in tables for p in (partition_v1(t), partition_v0(t))])
        )
        return self.context.offset_storage_reader().offsets(partitions)

    def _connect(self) -> Any:
        assert self.settings is not None and self.dialect is not None
        return self.dialect.connect_with_retries(
            self.settings.connection_attempts,
            self.settings.connection_backoff_ms,
            self._stopping.is_set,
        )

    def stop(self) -> None:
        self._stopping.set()
        if self.metrics is not None:
            self.metrics.close()
        with self._lock:
            for q in self._queriers:
                q.reset(None)
            self._close_connection()
            if self.dialect is not None:
                self.dialect.close()

    def _close_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                log.debug("Closing the connection failed", exc_info=True)
            self._conn = None

    # -- polling ---------------------------------------------------------------------------------------
    def poll(self) -> list[SourceRecord] | None:
        deadline = time.monotonic() + self.max_wait_s
        while not self._stopping.is_set():
            with self._lock:
                if self._stopping.is_set() or not self._queriers:
                    break
                querier = self._head()
                wait = 0.0 if querier.querying else querier.next_due(self._interval()) - self.clock()
                if wait <= 0:
                    records = self._run(querier)
                    if records:
                        return records
                    continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._stopping.wait(min(wait, remaining, 0.1))
        if not self._queriers:
            self._stopping.wait(self.max_wait_s)
        return None

    def _interval(self) -> float:
        assert self.settings is not None
        return self.settings.poll_interval_ms / 1000

    def _head(self) -> TableQuerier:
        for q in self._queriers:
            if q.querying:
                return q
        return min(self._queriers, key=lambda q: q.last_update)

    def _run(self, querier: TableQuerier) -> list[SourceRecord]:
        assert self.settings is not None
        try:
            if self._conn is None:
                self._conn = self._connect()
            metrics, table = self.metrics, querier.metric_name
            if not querier.querying:
                started = time.monotonic()
                querier.start_query(self._conn)
                if metrics is not None:
                    metrics.query(table, time.monotonic() - started)
            records = querier.next_batch()
            if querier.done:
                querier.finish(self._conn)
                if metrics is not None:
                    metrics.poll_done(table)
            if metrics is not None and records:
                metrics.rows(table, len(records))
            self._failures = 0
            return records
        except (ConnectError, ConfigError):
            querier.reset(self._conn)
            raise
        except RetriableError:
            querier.reset(self._conn)
            raise
        except Exception as exc:
            self._failures += 1
            querier.reset(self._conn)
            self._close_connection()
            attempts = self.settings.query_retry_attempts
            log.warning("Failed to run query for %s (failure %d): %s", querier.topic, self._failures, exc)
            if attempts >= 0 and self._failures > attempts:
                raise ConnectError(
                    f"Failed to run query for {querier.topic} after {self._failures} tries: {exc}"
                ) from exc
            self._stopping.wait(self.settings.connection_backoff_ms / 1000 if self._failures > 1 else 0)
            raise RetriableError(f"Query for {querier.topic} failed, retrying: {exc}") from exc
