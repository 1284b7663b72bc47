"""``io.confluent.connect.jdbc.JdbcSourceConnector``: finds the tables and splits them into tasks.

* ``query`` set: one task, no tables.
* Otherwise ``min(tasks.max, tables)`` tasks, each with a contiguous slice of the sorted tables
  (Connect's ``groupPartitions``), written into the task's ``tables`` key quoted as Confluent writes it
  (```kafkadb`.`customers```, comma-separated).
* A table monitor thread lists the tables again every ``table.poll.interval.ms`` and asks the runtime
  for new task configs when the list changed (a table created or dropped).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from cdc.api.connector import FileUse, SourceConnector, Task
from cdc.api.errors import ConfigError, ConnectError
from cdc.config import ConfigDef, ConfigValue
from cdc.jdbc.config import JDBC_SOURCE_DEF, TABLES_CONFIG, JdbcSourceSettings, validate_jdbc
from cdc.jdbc.dialects import Dialect
from cdc.jdbc.offsets import check_offset
from cdc.jdbc.tables import TableFilter, TableId, group_partitions
from cdc.jdbc.task import JdbcSourceTask, make_dialect
from cdc.jdbc.tls import TlsConnectError
from cdc.jdbc.url_properties import url_files

CONNECTION_URL_CONFIG = "connection.url"

__all__ = ["JdbcSourceConnector", "TableMonitor"]

log = logging.getLogger(__name__)


class TableMonitor(threading.Thread):
    """Lists the tables every ``interval_s``; calls ``on_change`` when the selection differs."""

    def __init__(
        self, dialect: Dialect, settings: JdbcSourceSettings, interval_s: float, on_change: Any, on_error: Any
    ) -> None:
        super().__init__(name="jdbc-table-monitor", daemon=True)
        self.dialect = dialect
        self.settings = settings
        self.interval_s = interval_s
        self.on_change = on_change
        self.on_error = on_error
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._tables: list[TableId] | None = None
        self._filter = TableFilter(
            settings.table_whitelist,
            settings.table_blacklist,
            settings.table_include_list,
            settings.table_exclude_list,
        )

    def fetch(self) -> list[TableId]:
        """List and filter the tables now (a connection of its own, closed afterwards)."""
        conn = self.dialect.connect_with_retries(
            self.settings.connection_attempts,
            self.settings.connection_backoff_ms,
            self.stopping.is_set,
        )
        try:
            found = self.dialect.list_tables(
                conn,
                list(self.settings.table_types),
                self.settings.catalog_pattern,
                self.settings.schema_pattern,
            )
        finally:
            conn.close()
        return self._filter.select(found)

    def tables(self) -> list[TableId]:
        with self._lock:
            if self._tables is None:
                self._tables = self.fetch()
            return list(self._tables)

    def run(self) -> None:
        while not self.stopping.wait(self.interval_s):
            try:
                tables = self.fetch()
            except ConfigError as exc:
                self.on_error(exc)
                return
            except Exception as exc:
                log.warning("Could not list the tables (will try again): %s", exc)
                continue
            with self._lock:
                changed = tables != self._tables
                previous, self._tables = self._tables, tables
            if changed:
                log.info(
                    "Tables changed from %s to %s; asking for new task configs",
                    [t.unquoted() for t in previous or []],
                    [t.unquoted() for t in tables],
                )
                self.on_change()

    def shutdown(self) -> None:
        self.stopping.set()


class JdbcSourceConnector(SourceConnector):
    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._settings: JdbcSourceSettings | None = None
        self._monitor: TableMonitor | None = None
        self._dialect: Dialect | None = None

    def start(self, props: dict[str, str]) -> None:
        settings = JdbcSourceSettings.parse(props)
        settings.check()
        self._props = dict(props)
        self._settings = settings
        self._dialect = make_dialect(settings)
        if settings.query:
            if (
                settings.table_whitelist
                or settings.table_blacklist
                or settings.table_include_list
                or settings.table_exclude_list
            ):
                log.warning("query is set: the table lists are ignored")
            return
        monitor = TableMonitor(
            self._dialect,
            settings,
            settings.table_poll_interval_ms / 1000,
            self.context.request_task_reconfiguration,
            self.context.raise_error,
        )
        tables = monitor.tables()  # fails the connector now if the database cannot be reached
        log.info("JDBC source connector found %d table(s): %s", len(tables), [t.unquoted() for t in tables])
        self._monitor = monitor
        monitor.start()

    def task_class(self) -> type[Task]:
        return JdbcSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self._settings is None or self._dialect is None:
            raise ConnectError("The connector is not started")
        if self._settings.query:
            return [{**self._props, TABLES_CONFIG: ""}]
        assert self._monitor is not None
        tables = self._monitor.tables()
        if not tables:
            log.warning("No tables match the configuration; no tasks are created")
            return []
        groups = group_partitions(tables, min(max_tasks, len(tables)))
        return [
            {**self._props, TABLES_CONFIG: ",".join(self._dialect.table_text(t) for t in group)}
            for group in groups
        ]

    def stop(self) -> None:
        if self._monitor is not None:
            self._monitor.shutdown()
            self._monitor.join(timeout=5)
            self._monitor = None
        if self._dialect is not None:
            self._dialect.close()

    def config(self) -> ConfigDef:
        return JDBC_SOURCE_DEF

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        """The keys (:func:`validate_jdbc`), then the URL: its properties (unknown ones refused), and,
        when it asks for TLS or names stores, one connection, so that a store that does not open, an
        untrusted certificate or a host name mismatch is a 400 on ``connection.url`` with the reason. Other
        connection failures (a database that is down) are left to the start, as Confluent's connector does."""
        values = validate_jdbc(props)
        if any(v.errors for v in values):
            return values
        url_value = next(v for v in values if v.name == "connection.url")
        try:
            dialect = make_dialect(JdbcSourceSettings.parse(props))
        except ConfigError as exc:
            url_value.add_error(str(exc))
            return values
        except ConnectError:
            return values  # e.g. an unknown dialect.name: reported when the connector starts
        tls = dialect.options.tls
        try:
            if tls.mode.required or tls.truststore is not None or tls.keystore is not None:
                dialect.connect().close()
        except (ConfigError, TlsConnectError) as exc:
            url_value.add_error(str(exc))
        except Exception as exc:
            log.info("validate could not connect to %s (left to the start): %s", dialect.describe_url(), exc)
        finally:
            dialect.close()
        return values

    def files(self, props: Mapping[str, str]) -> list[FileUse]:
        """A ``jdbc:sqlite:`` database's file (sqlite3 creates it) and the key and trust stores the URL's
        TLS properties name."""
        return url_files(CONNECTION_URL_CONFIG, str(props.get(CONNECTION_URL_CONFIG) or ""))

    def validate_offset(
        self, props: Mapping[str, str], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> bool:
        check_offset(props.get("mode", ""), partition, offset)
        return True
