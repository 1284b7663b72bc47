"""The planner's questions to the database: how many rows, and which keys sit at given ranks.

``COUNT(*)`` walks the smallest index. The boundaries are found by walking the primary key from one
boundary to the next: ``SELECT pk … WHERE pk > <previous boundary> ORDER BY pk LIMIT 1 OFFSET <gap>``
reads ``gap`` index entries and sends one row, so the whole walk is one pass over the key (in pieces)
and only ``chunks - 1`` rows travel. Ranking the key with ``ROW_NUMBER() OVER (ORDER BY pk)`` in one
query gives the same quantiles but makes the server materialise and sort every key in a temporary
table (on disk beyond ``tmp_table_size``): 2.1 s against 0.36 s for 1 M rows on MariaDB 10.11, on the
critical path before the first chunk. Under concurrent writes the walk's ranks drift by the rows
written meanwhile; any keys make valid boundaries, only the chunk sizes vary.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from cdc.history.model import Table
from cdc.snapshot.chunks import (
    KeyValue,
    TablePlan,
    boundary_ranks,
    chunk_count,
    plan_table,
    range_predicate,
)

__all__ = ["plan_tables"]

log = logging.getLogger(__name__)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def count_rows(cur: Any, table: Table) -> int:
    cur.execute(f"SELECT COUNT(*) FROM {table.id.sql()}")
    return int(cur.fetchone()[0])


def keys_at_ranks(cur: Any, table: Table, key: Sequence[str], ranks: Sequence[int]) -> list[KeyValue]:
    """The keys at the 1-based ``ranks`` (ascending) of the key order, fewer if the table ends first."""
    cols = ", ".join(_quote(c) for c in key)
    found: list[KeyValue] = []
    previous_rank = 0
    for rank in ranks:
        gap = int(rank) - previous_rank - 1  # rows strictly between the previous boundary and this one
        if gap < 0:
            continue
        sql = f"SELECT {cols} FROM {table.id.sql()}"
        params: list[Any] = []
        if found:
            clause, params = range_predicate(key, found[-1], None, "%s", strict=True)
            sql += f" WHERE {clause}"
        cur.execute(f"{sql} ORDER BY {cols} LIMIT 1 OFFSET {gap}", params or None)
        row = cur.fetchone()
        if row is None:
            break
        found.append(tuple(row))
        previous_rank = int(rank)
    return found


def plan_tables(
    conn: Any, tables: Sequence[Table], target_rows: int, min_chunks: int, single: Sequence[str] = ()
) -> list[TablePlan]:
    """A plan per table. Tables named in ``single`` (e.g. with a SELECT override) are one chunk."""
    plans: list[TablePlan] = []
    with conn.cursor() as cur:
        for table in tables:
            rows = count_rows(cur, table)
            key = tuple(table.primary_key)
            if str(table.id) in single:
                plan = plan_table(table.id, (), rows, [])
                plan = TablePlan(
                    plan.table,
                    plan.key,
                    plan.rows,
                    plan.chunks,
                    f"{table.id} has a snapshot.select.statement.overrides SELECT: read as one chunk",
                )
            elif not key:
                plan = plan_table(table.id, (), rows, [])
            else:
                ranks = boundary_ranks(rows, chunk_count(rows, target_rows, min_chunks))
                plan = plan_table(table.id, key, rows, keys_at_ranks(cur, table, key, ranks))
            if plan.warning:
                log.warning("%s", plan.warning)
            plans.append(plan)
    return plans
