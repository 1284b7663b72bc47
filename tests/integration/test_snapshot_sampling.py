"""The snapshot planner against a real MariaDB: boundaries from the key distribution, found by walking the
primary key (cdc.snapshot.sampling). Each plan's chunk predicates are run on the server: every row in
exactly one chunk, and chunk sizes within one row of each other however the keys cluster."""

from __future__ import annotations

from typing import Any

import pytest

from cdc.history.model import Table, TableId
from cdc.snapshot.chunks import TablePlan
from cdc.snapshot.sampling import plan_tables

pytestmark = pytest.mark.integration


def _plan(mysql_db: Any, name: str, key: tuple[str, ...], target: int, min_chunks: int = 1) -> TablePlan:
    table = Table(TableId(mysql_db.name, name), (), key)
    with mysql_db.connect() as conn:
        (plan,) = plan_tables(conn, [table], target, min_chunks)
    return plan


def _chunk_counts(mysql_db: Any, plan: TablePlan) -> list[int]:
    counts: list[int] = []
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for chunk in plan.chunks:
            clause, params = chunk.where()
            sql = f"SELECT COUNT(*) FROM {plan.table.sql()}" + (f" WHERE {clause}" if clause else "")
            cur.execute(sql, params or None)
            counts.append(int(cur.fetchone()[0]))
    return counts


def test_clustered_keys_get_equal_chunks(mysql_db: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE sparse (id BIGINT PRIMARY KEY, v INT)")
        # three dense clusters far apart: min/max strides would put nearly everything in two chunks
        ids = [*range(1, 601), *range(10**6, 10**6 + 300), *range(5 * 10**12, 5 * 10**12 + 100)]
        cur.executemany("INSERT INTO sparse VALUES (%s, 0)", [(i,) for i in ids])
        conn.commit()
    plan = _plan(mysql_db, "sparse", ("id",), target=100)
    counts = _chunk_counts(mysql_db, plan)
    assert len(plan.chunks) == 10
    assert sum(counts) == 1000 and set(counts) == {100}
    assert plan.chunks[6].lower == (10**6,) and plan.chunks[9].lower == (5 * 10**12,)


def test_composite_key_boundaries_split_inside_a_leading_value(mysql_db: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE comp (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b))")
        rows = [(a, f"k{b:04d}") for a in (1, 2, 3) for b in range(0, 70 * a)]  # 70, 140, 210 rows
        cur.executemany("INSERT INTO comp VALUES (%s, %s, 0)", rows)
        conn.commit()
    plan = _plan(mysql_db, "comp", ("a", "b"), target=60)
    counts = _chunk_counts(mysql_db, plan)
    assert sum(counts) == 420 and max(counts) - min(counts) <= 1, counts
    assert len(plan.chunks) == 7
    # a boundary falls inside a = 2 and one inside a = 3: row-value order, not the leading column alone
    assert (2, "k0050") in [c.lower for c in plan.chunks]


def test_small_and_empty_tables(mysql_db: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE tiny (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO tiny VALUES (7), (8), (9)")
        cur.execute("CREATE TABLE empty (id INT PRIMARY KEY)")
        conn.commit()
    tiny = _plan(mysql_db, "tiny", ("id",), target=1000, min_chunks=8)  # more readers than rows
    assert _chunk_counts(mysql_db, tiny) == [1, 1, 1]
    empty = _plan(mysql_db, "empty", ("id",), target=1000, min_chunks=4)
    assert len(empty.chunks) == 1 and empty.chunks[0].lower is None and empty.chunks[0].upper is None
