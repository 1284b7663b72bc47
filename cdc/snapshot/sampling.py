"""The planner's questions to the database: how many rows, and which keys sit at given ranks.

``COUNT(*)`` walks the smallest index; the boundary query ranks the primary key with
``ROW_NUMBER() OVER (ORDER BY pk)`` (MySQL 8, MariaDB 10.2+) and returns only the rows at the wanted
ranks, so one index scan on the server yields exact quantiles and only ``chunks - 1`` rows travel.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from cdc.history.model import Table
from cdc.snapshot.chunks import KeyValue, TablePlan, boundary_ranks, chunk_count, plan_table

__all__ = ["plan_tables"]

log = logging.getLogger(__name__)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def count_rows(cur: Any, table: Table) -> int:
    cur.execute(f"SELECT COUNT(*) FROM {table.id.sql()}")
    return int(cur.fetchone()[0])


def keys_at_ranks(cur: Any, table: Table, key: Sequence[str], ranks: Sequence[int]) -> list[KeyValue]:
    if not ranks:
        return []
    cols = ", ".join(_quote(c) for c in key)
    wanted = ", ".join(str(int(r)) for r in ranks)
    cur.execute(
        f"SELECT {cols} FROM (SELECT {cols}, ROW_NUMBER() OVER (ORDER BY {cols}) AS `__cdc_rn` "
        f"FROM {table.id.sql()}) AS `__cdc_ranked` WHERE `__cdc_rn` IN ({wanted}) ORDER BY `__cdc_rn`"
    )
    return [tuple(row) for row in cur.fetchall()]


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
