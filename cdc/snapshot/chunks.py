"""Chunk planning: split a table into primary-key ranges of about equal row counts. Pure logic.

A chunk is the half-open key range ``[lower, upper)``; the first chunk has no lower bound and the last
no upper bound, so no row is ever outside every chunk (Spark's JDBC partitioning does the same with its
open edge partitions). Boundaries come from the key *distribution*, not from ``min``/``max`` strides:
the planner is handed the keys found at evenly spaced ranks of the ordered key (a walk along the
primary key, see :mod:`cdc.snapshot.sampling`), so a table whose ids cluster in a few dense ranges
still gets chunks of equal size.

Composite keys compare as row values, ``(a, b) >= (x, y)``. The predicate is written out as
``a >= x AND (a > x OR (a = x AND b >= y))``: equal in meaning to the row constructor, and the
expanded form lets MariaDB (which does not range-scan row-constructor comparisons in every version)
and MySQL both use the primary key's leading column for the range.

A table without a primary key is one chunk (the caller logs a warning): without a unique, stable key
neither ranges nor the reconciliation of concurrent changes are possible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cdc.history.model import TableId

__all__ = [
    "Chunk",
    "TablePlan",
    "boundary_ranks",
    "chunk_count",
    "format_plan",
    "plan_table",
    "range_predicate",
]

KeyValue = tuple[Any, ...]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


@dataclass(frozen=True)
class Chunk:
    """One key range of one table: ``lower <= key < upper`` (``None`` = unbounded on that side)."""

    table: TableId
    index: int
    count: int
    key: tuple[str, ...]
    lower: KeyValue | None
    upper: KeyValue | None
    estimated_rows: int = 0

    @property
    def id(self) -> str:
        """Stable across runs of the same plan: the progress file's key."""
        return f"{self.table}#{self.index}"

    @property
    def first(self) -> bool:
        return self.index == 0

    @property
    def last(self) -> bool:
        return self.index == self.count - 1

    def where(self, placeholder: str = "%s") -> tuple[str, list[Any]]:
        """The WHERE clause (without ``WHERE``; ``""`` for the whole table) and its parameters."""
        return range_predicate(self.key, self.lower, self.upper, placeholder)

    def select(self, placeholder: str = "%s") -> tuple[str, list[Any]]:
        """``SELECT *`` of the range, in primary-key order: the order the ``snapshot`` markers of a
        chunk's first and last row are decided by (on both the Python and the JVM path)."""
        clause, params = self.where(placeholder)
        sql = f"SELECT * FROM {self.table.sql()}"
        if clause:
            sql += f" WHERE {clause}"
        if self.key:
            sql += " ORDER BY " + ", ".join(_quote(c) for c in self.key)
        return sql, params

    def describe(self) -> str:
        def bound(v: KeyValue | None) -> str:
            if v is None:
                return "…"
            return repr(v[0]) if len(v) == 1 else "(" + ", ".join(repr(x) for x in v) + ")"

        if not self.key:
            return "whole table"
        return f"[{bound(self.lower)}, {bound(self.upper)})"


def _compare(
    columns: Sequence[str], values: KeyValue, strict_op: str, last_op: str, placeholder: str
) -> tuple[str, list[Any]]:
    """``columns <op> values`` for a row value, as a disjunction over the key prefix."""
    if len(columns) != len(values):
        raise ValueError(f"key has {len(columns)} columns but the bound has {len(values)} values")
    cols = [_quote(c) for c in columns]
    if len(cols) == 1:
        return f"{cols[0]} {last_op} {placeholder}", [values[0]]
    terms: list[str] = []
    params: list[Any] = []
    for i in range(len(cols)):
        eqs = [f"{cols[j]} = {placeholder}" for j in range(i)]
        op = last_op if i == len(cols) - 1 else strict_op
        terms.append("(" + " AND ".join([*eqs, f"{cols[i]} {op} {placeholder}"]) + ")")
        params.extend(values[: i + 1])
    # The leading column's bound first: the optimizer's range over the primary key.
    lead_op = ">=" if strict_op == ">" else "<="
    return (f"{cols[0]} {lead_op} {placeholder} AND (" + " OR ".join(terms) + ")", [values[0], *params])


def range_predicate(
    columns: Sequence[str],
    lower: KeyValue | None,
    upper: KeyValue | None,
    placeholder: str = "%s",
    strict: bool = False,
) -> tuple[str, list[Any]]:
    """``lower <= (columns) < upper`` as SQL text and parameters; either bound may be ``None``;
    ``strict``: ``lower < (columns)``."""
    parts: list[str] = []
    params: list[Any] = []
    if lower is not None:
        sql, p = _compare(columns, lower, ">", ">" if strict else ">=", placeholder)
        parts.append(f"({sql})")
        params.extend(p)
    if upper is not None:
        sql, p = _compare(columns, upper, "<", "<", placeholder)
        parts.append(f"({sql})")
        params.extend(p)
    return " AND ".join(parts), params


def chunk_count(rows: int, target_rows: int, min_chunks: int = 1) -> int:
    """How many chunks for ``rows`` rows: about ``target_rows`` each, at least ``min_chunks`` (so every
    reader has work), never more chunks than rows, and one for an empty table."""
    if rows <= 0:
        return 1
    n = max(math.ceil(rows / max(1, target_rows)), max(1, min_chunks))
    return max(1, min(n, rows))


def boundary_ranks(rows: int, chunks: int) -> list[int]:
    """The 1-based ranks (in key order) of the first row of chunks 2..n: evenly spaced, so chunk sizes
    differ by at most one row."""
    if chunks <= 1 or rows <= 1:
        return []
    chunks = min(chunks, rows)
    return [1 + (i * rows) // chunks for i in range(1, chunks)]


@dataclass(frozen=True)
class TablePlan:
    table: TableId
    key: tuple[str, ...]
    rows: int
    chunks: tuple[Chunk, ...]
    warning: str | None = None


def plan_table(table: TableId, key: Sequence[str], rows: int, boundaries: Sequence[KeyValue]) -> TablePlan:
    """Chunks of ``table`` from the keys at the boundary ranks (ascending; duplicates are dropped)."""
    key = tuple(key)
    if not key:
        only = Chunk(table, 0, 1, (), None, None, rows)
        return TablePlan(
            table,
            key,
            rows,
            (only,),
            f"{table} has no primary key: read as one chunk, without reconciliation of concurrent changes",
        )
    cuts: list[KeyValue] = []
    for b in boundaries:
        b = tuple(b)
        if len(b) != len(key):
            raise ValueError(f"{table}: boundary {b!r} does not match the key {key!r}")
        if not cuts or b != cuts[-1]:
            cuts.append(b)
    n = len(cuts) + 1
    edges: list[KeyValue | None] = [None, *cuts, None]
    per = rows // n if n else rows
    chunks = tuple(
        Chunk(table, i, n, key, edges[i], edges[i + 1], per + (1 if i < rows % n else 0)) for i in range(n)
    )
    return TablePlan(table, key, rows, chunks)


def format_plan(plans: Sequence[TablePlan], partitions: int) -> str:
    """The dry-run printout: one line per table, one per chunk."""
    lines: list[str] = []
    total_rows = sum(p.rows for p in plans)
    total_chunks = sum(len(p.chunks) for p in plans)
    lines.append(
        f"Snapshot plan: {len(plans)} tables, ~{total_rows:,} rows, {total_chunks} chunks, "
        f"{partitions} parallel readers"
    )
    for plan in plans:
        key = ", ".join(plan.key) if plan.key else "(no primary key)"
        lines.append(f"  {plan.table}  key ({key})  ~{plan.rows:,} rows  {len(plan.chunks)} chunks")
        if plan.warning:
            lines.append(f"    WARNING: {plan.warning}")
        for c in plan.chunks:
            lines.append(f"    #{c.index:<4} {c.describe():<48} ~{c.estimated_rows:,} rows")
    return "\n".join(lines)
