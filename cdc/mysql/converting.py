"""``event.converting.failure.handling.mode``: a column value the converter cannot turn into its field's type.

As Debezium's ``TableSchemaBuilder.createValueGenerator`` (3.6): the value struct is built column by column;
when one column's converter fails, ``fail`` stops the task with ``Failed to properly convert data value for
'<db>.<table>.<column>' of type <TYPE>``; ``warn`` (Debezium's default) logs that at WARN and leaves the field
null; ``skip`` does the same, logged at DEBUG. Each such value is counted (``failures``, exposed with the
streaming metrics as ``NumberOfConvertingFailures``). The fast path (one generated list display per row,
:mod:`cdc.mysql.events`) is not touched: this runs only after it raised.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from cdc.api.errors import ConnectError
from cdc.history.model import TableId

__all__ = ["ConvertingFailures", "converting_failures"]

log = logging.getLogger(__name__)


class _Counter:
    """The failures of every table of the process's connectors (one task per process in practice)."""

    def __init__(self) -> None:
        self.count = 0


converting_failures = _Counter()


class ConvertingFailures:
    def __init__(self, mode: str, table: TableId, columns: Sequence[Any]) -> None:
        self.mode = mode.lower()
        self.table = table
        self.columns = list(columns)  # per value field: its ColumnMapping (column name and type)

    def values(self, row: Sequence[Any], converters: Sequence[tuple[int, Any, Any]]) -> list[Any]:
        """The value fields of ``row`` one column at a time, the mode applied to a converter that fails."""
        out: list[Any] = []
        for mapping, (index, convert, null) in zip(self.columns, converters, strict=True):
            raw = row[index]
            if raw is None:
                out.append(null)
                continue
            try:
                out.append(convert(raw) if convert is not None else raw)
            except Exception as exc:
                self._failed(mapping, exc)  # raises under fail
                out.append(None)
        return out

    def _failed(self, mapping: Any, exc: Exception) -> None:
        """Counts and logs a failed value; raises under ``fail``."""
        column = mapping.column
        where = f"'{self.table}.{column.name}' of type {column.type_name}"
        message = f"Failed to properly convert data value for {where}"
        converting_failures.count += 1
        if self.mode == "fail":
            raise ConnectError(f"{message}: {exc}") from exc
        if self.mode == "warn":
            log.warning("%s: %s", message, exc)
        else:
            log.debug("%s: %s", message, exc)
