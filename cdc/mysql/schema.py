"""The connector's view of the database schema over time: the model, DDL applied to it, its history.

One place couples the three: every DDL the snapshot reads or the binlog carries goes through
:meth:`SchemaState.apply_ddl`, which parses it into the in-memory model, writes Debezium's history
record, and returns the table changes for the schema change topic. On restart :meth:`recover` rebuilds
the model from the history topic up to the connector's offset, so each event is described with the
schema of its own moment.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

from cdc.history.model import Table, TableId, Tables
from cdc.history.records import TableChangeType
from cdc.mysql.config import MySqlSettings
from cdc.mysql.filters import Filters

__all__ = ["SchemaState"]

log = logging.getLogger(__name__)

_IGNORED_STATEMENTS = frozenset(("BEGIN", "END", "FLUSH PRIVILEGES"))  # as Debezium's binlog schema


class SchemaState:
    def __init__(self, settings: MySqlSettings, filters: Filters, history: Any) -> None:
        from cdc.mysql.ddl.parser import DdlParser

        self.settings = settings
        self.filters = filters
        self.history = history
        self.tables = Tables()
        self.parser = DdlParser(include_comments=settings.include_schema_comments)
        self.skip_unparseable = settings.history_skip_unparseable_ddl
        self.only_captured_tables = settings.history_store_only_captured_tables_ddl
        self.only_captured_dbs = settings.history_store_only_captured_databases_ddl
        self.ddl_filter = [
            re.compile(r.strip(), re.IGNORECASE | re.DOTALL)
            for r in settings.history_ddl_filter.split(",")
            if r.strip()
        ]
        self.version = 0
        self.on_table: Callable[[Table], None] | None = None
        """Called with each captured table whose schema was (re)built: created, altered, recovered (the
        OpenLineage input datasets, as Debezium's ``RelationalDatabaseSchema.buildAndRegisterSchema``)."""

    def table(self, table_id: TableId) -> Table | None:
        return self.tables.get(table_id)

    def ignores(self, ddl: str) -> bool:
        """Whether a streamed statement stays out of the model, the history and the schema change topic:
        ``schema.history.internal.ddl.filter`` matches it whole, or it is one Debezium always ignores."""
        return ddl in _IGNORED_STATEMENTS or any(r.fullmatch(ddl) for r in self.ddl_filter)

    def apply_ddl(
        self, ddl: str, database: str | None, position: dict[str, Any], record: bool = True
    ) -> list[Any]:
        """Apply ``ddl``; record it in the history (unless filtered out); the changes made."""
        from cdc.history.errors import UnparseableDdlError

        try:
            changes = self.parser.apply(self.tables, ddl, database)
        except UnparseableDdlError:
            if self.skip_unparseable:
                log.warning("Ignoring unparseable DDL statement: %s", ddl)
                return []
            raise
        self.version += 1
        if record and self._should_store(changes, database):
            self._record(ddl, database, position, changes)
        if self.on_table is not None:
            for change in changes:
                if change.type is not TableChangeType.DROP and self.filters.table(change.id):
                    self.on_table(change.table)
        return list(changes)

    def record(self, ddl: str, database: str | None, position: dict[str, Any], changes: list[Any]) -> None:
        """Record ``ddl`` (already applied, e.g. one table of a multi-table DROP) unless filtered out."""
        if self._should_store(changes, database):
            self._record(ddl, database, position, changes)

    def _should_store(self, changes: list[Any], database: str | None) -> bool:
        if self.only_captured_dbs:
            # the tables' databases when the statement names tables (CREATE TABLE other.t run anywhere)
            names = {self._change_id(c).database for c in changes} or ({database} if database else set())
            if names and not any(self.filters.database(name) for name in names):
                return False
        if self.only_captured_tables and changes:
            return any(self.filters.table(self._change_id(c)) for c in changes)
        return True

    @staticmethod
    def _change_id(change: Any) -> TableId:
        cid = change.id
        return cid if isinstance(cid, TableId) else TableId.parse(str(cid))

    def _record(self, ddl: str, database: str | None, position: dict[str, Any], changes: list[Any]) -> None:
        from cdc.history.records import HistoryRecord

        if changes:  # the table's database when the statement names one, as Debezium records it
            database = self._change_id(changes[0]).database
        rec = HistoryRecord(
            source={"server": self.settings.prefix},
            position=position,
            ts_ms=int(time.time() * 1000),
            database_name=database,
            schema_name=None,
            ddl=ddl,
            table_changes=changes,
        )
        self.history.record(rec)

    def recover(self, position: dict[str, Any]) -> None:
        from cdc.mysql.positions import BinlogPositionComparator

        self.tables = self.history.recover(
            position,
            Tables(),
            self.parser,
            BinlogPositionComparator(),
            source={"server": self.settings.prefix},
        )
        self.version += 1
        if self.on_table is not None:
            for table_id in self.tables.ids():
                table = self.tables.get(table_id)
                if table is not None and self.filters.table(table_id):
                    self.on_table(table)
        log.info("Recovered the schema of %d tables from the history up to %s", len(self.tables), position)
