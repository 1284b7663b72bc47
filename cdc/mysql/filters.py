"""Which databases, tables and columns are captured: Debezium's anchored include/exclude regexes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from cdc.history.model import TableId
from cdc.mysql.config import MySqlSettings

__all__ = ["BUILTIN_DATABASES", "Filters", "quoted_table_id"]

BUILTIN_DATABASES = frozenset({"mysql", "performance_schema", "sys", "information_schema"})


def _compile(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    return [re.compile(p.strip(), re.IGNORECASE | re.DOTALL) for p in patterns if p.strip()]


def _matches(patterns: list[re.Pattern[str]], text: str) -> bool:
    return any(p.fullmatch(text) for p in patterns)


class Filters:
    def __init__(self, settings: MySqlSettings) -> None:
        self.db_include = _compile(settings.database_include_list)
        self.db_exclude = _compile(settings.database_exclude_list)
        self.table_include = _compile(settings.table_include_list)
        self.table_exclude = _compile(settings.table_exclude_list)
        self.col_include = _compile(settings.column_include_list)
        self.col_exclude = _compile(settings.column_exclude_list)
        self.ignore_builtin = settings.table_ignore_builtin
        self.snapshot_include = _compile(settings.snapshot_include_collection_list)
        signal = settings.signal_data_collection
        # The signal table is always captured: its rows are signals and watermarks (as Debezium does).
        self.signal_table = TableId.parse(signal) if signal else None
        self._tables: dict[TableId, bool] = {}  # the filters never change: one regex pass per table

    def database(self, name: str) -> bool:
        if self.ignore_builtin and name.lower() in BUILTIN_DATABASES:
            return False
        if self.db_include:
            return _matches(self.db_include, name)
        return not _matches(self.db_exclude, name)

    def table(self, table_id: TableId) -> bool:
        known = self._tables.get(table_id)
        if known is None:
            if len(self._tables) >= 65536:
                self._tables.clear()
            known = self._tables[table_id] = self._table(table_id)
        return known

    def _table(self, table_id: TableId) -> bool:
        if table_id == self.signal_table:
            return True
        if not self.database(table_id.database):
            return False
        text = str(table_id)
        if self.table_include:
            return _matches(self.table_include, text)
        return not _matches(self.table_exclude, text)

    def snapshot_table(self, table_id: TableId) -> bool:
        if not self.table(table_id):
            return False
        return not self.snapshot_include or _matches(self.snapshot_include, str(table_id))

    def column(self, table_id: TableId, column: str) -> bool:
        text = f"{table_id}.{column}"
        if self.col_include:
            return _matches(self.col_include, text)
        return not _matches(self.col_exclude, text)


def quoted_table_id(collection: str | None) -> str | None:
    """The first of a comma-separated list of ``db.table`` names as Debezium's
    ``TableId.toQuotedString('`')`` spells it, lower-cased (``db.table`` -> ```db`.`table```); None when
    empty. The streamer compares MariaDB's ANNOTATE_ROWS queries with the signal table's spelt this way."""
    first = (collection or "").split(",")[0].strip()
    if not first:
        return None
    return ".".join(f"`{part.strip('`')}`" for part in first.split(".")).lower()
