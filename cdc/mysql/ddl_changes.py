"""A DDL read from the binlog: applied to the schema, recorded in the history, and its records.

The :class:`~cdc.mysql.streaming.Streamer` decides where the statement sits (its history position, the
``source`` position); :class:`DdlChanges` does what Debezium does with it: ``ddl.filter``'s statements
are left out, a TRUNCATE is a data event only (``op=t`` per captured table, nothing in the history or the
schema change topic), a DROP TABLE of several tables is recorded once per table as ``DROP TABLE `db`.`t```,
any other statement is recorded as it is.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from cdc.api.records import SourceRecord
from cdc.history.model import TableId
from cdc.mysql.events import EventFactory, SourcePosition
from cdc.mysql.filters import Filters
from cdc.mysql.schema import SchemaState
from cdc.mysql.schema_events import SchemaChangeEvents

__all__ = ["DdlChanges"]

log = logging.getLogger(__name__)


class DdlChanges:
    """The schema state's and the records' side of a DDL (see the module docstring)."""

    def __init__(
        self,
        schema: SchemaState,
        events: EventFactory,
        filters: Filters,
        schema_events: SchemaChangeEvents,
        failure_mode: str,
    ) -> None:
        """``failure_mode``: ``event.processing.failure.handling.mode`` (fail, warn or skip)."""
        self.schema = schema
        self.events = events
        self.filters = filters
        self.schema_events = schema_events
        self.failure_mode = failure_mode

    def records(
        self, query: str, database: str | None, position: dict[str, Any], pos: SourcePosition, ts_ms: int
    ) -> list[SourceRecord]:
        """Apply ``query`` at the history ``position`` (also the records' offset); the records to emit."""
        truncate = bool(_TRUNCATE.match(query))
        if not truncate and self.schema.ignores(query):
            return []  # Debezium's ddl.filter (grants, users, views, routines, ...): no history, no record
        drop_tables = bool(_DROP_TABLE.match(query))
        try:
            # Debezium keeps TRUNCATE out of the history and the schema change topic (a data event only),
            # and records a DROP TABLE once per table, as DROP TABLE `db`.`t`
            changes = self.schema.apply_ddl(query, database, position, record=not (truncate or drop_tables))
        except Exception:
            if self.failure_mode == "fail":
                raise
            log.warning("Skipping DDL that failed to apply: %s", query, exc_info=True)
            return []
        for change in changes:
            self.events.forget(self.schema._change_id(change))
        if truncate:
            return self._truncates(query, database, pos, position, ts_ms)
        if drop_tables:
            records: list[SourceRecord] = []
            for change in changes:
                text = f"DROP TABLE {self.schema._change_id(change).sql()}"
                self.schema.record(text, database, position, [change])
                records += self.schema_events.records(text, database, [change], pos, position)
            return records
        return self.schema_events.records(query, database, changes, pos, position)

    def _truncates(
        self, query: str, database: str | None, pos: SourcePosition, offset: dict[str, Any], ts_ms: int
    ) -> list[SourceRecord]:
        out: list[SourceRecord] = []
        for table_id in _truncated_tables(query, database):
            table = self.schema.table(table_id)
            if table is None or not self.filters.table(table_id):
                continue
            ts = self.events.schema_for(table)
            source = self.events.source(pos, table_id, ts_ms, None)
            out.extend(self.events.truncate(ts, source, offset))
        return out


_TRUNCATE = re.compile(
    r"^\s*TRUNCATE\s+(?:TABLE\s+)?(?:`((?:[^`]|``)+)`|(\w+))"
    r"(?:\s*\.\s*(?:`((?:[^`]|``)+)`|(\w+)))?",
    re.IGNORECASE,
)


def _truncated_tables(query: str, database: str | None) -> list[TableId]:
    m = _TRUNCATE.match(query)
    if not m:
        return []
    first = (m.group(1) or m.group(2) or "").replace("``", "`")
    second = (m.group(3) or m.group(4) or "").replace("``", "`")
    if second:
        return [TableId(first, second)]
    return [TableId(database or "", first)] if database else []


_DROP_TABLE = re.compile(r"\s*DROP\s+(?:TEMPORARY\s+)?TABLES?\b", re.IGNORECASE)
