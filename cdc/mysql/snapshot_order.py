"""``snapshot.tables.order.by.row.count``: the order the initial snapshot reads its tables in.

Debezium (``RelationalSnapshotChangeEventSource.sortByRowCount``) sorts the captured tables by the server's
row estimate (``information_schema.tables.table_rows``), ascending or descending, stably (tables of one
estimate stay in name order); a table read through ``snapshot.select.statement.overrides`` has no estimate
and counts as 0. ``disabled`` (the default) keeps name order. The order decides which table's last record
carries ``snapshot=last``, so it shows in the records.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence

from cdc.history.model import TableId

__all__ = ["ORDERS", "order_by_row_count"]

log = logging.getLogger(__name__)

ORDERS = ("disabled", "ascending", "descending")


def order_by_row_count(
    tables: Sequence[TableId], estimates: Mapping[str, int], order: str, overridden: Collection[str] = ()
) -> list[TableId]:
    """``tables`` in the order ``order`` gives them (``estimates``: ``db.table`` → estimated rows)."""
    order = order.lower()
    if order == "disabled":
        return list(tables)
    log.info("Sort tables by row count '%s'", order.upper())

    def rows(t: TableId) -> int:
        return 0 if str(t) in overridden else estimates.get(str(t), 0)

    sign = 1 if order == "ascending" else -1  # Java's stable sort: ties keep their (name) order
    return sorted(tables, key=lambda t: sign * rows(t))
