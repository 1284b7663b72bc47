"""Chunk planning for the parallel snapshot: counts, ranks, boundaries and the range predicates.

The predicates are checked by running them: an in-memory SQLite table (row values and the expanded
form both work there) must be covered by the chunks exactly once, for single and composite keys.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import pytest

from cdc.history.model import Column, Table, TableId
from cdc.mysql.spark.executor import ChunkResult, ChunkTask, _marker
from cdc.mysql.spark.reconcile import after, binlog_seq
from cdc.snapshot.chunks import (
    Chunk,
    TablePlan,
    boundary_ranks,
    chunk_count,
    format_plan,
    plan_table,
    range_predicate,
)
from cdc.snapshot.progress import Progress, ProgressState
from cdc.snapshot.runners import _drive, _with_retries

T = TableId("db", "t")


def test_chunk_count() -> None:
    assert chunk_count(0, 1000) == 1
    assert chunk_count(1, 1000, min_chunks=4) == 1
    assert chunk_count(10_000, 1000) == 10
    assert chunk_count(10_001, 1000) == 11
    assert chunk_count(500, 1000, min_chunks=4) == 4
    assert chunk_count(3, 1, min_chunks=8) == 3


def test_boundary_ranks_are_even() -> None:
    assert boundary_ranks(100, 1) == []
    assert boundary_ranks(100, 4) == [26, 51, 76]
    ranks = boundary_ranks(1003, 10)
    sizes = [b - a for a, b in zip([1, *ranks], [*ranks, 1004], strict=True)]
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == 1003


def test_plan_from_boundaries() -> None:
    plan = plan_table(T, ["id"], 300, [(100,), (200,), (200,)])
    assert [(c.lower, c.upper) for c in plan.chunks] == [(None, (100,)), ((100,), (200,)), ((200,), None)]
    assert [c.id for c in plan.chunks] == ["db.t#0", "db.t#1", "db.t#2"]
    assert plan.chunks[0].first and plan.chunks[-1].last
    assert sum(c.estimated_rows for c in plan.chunks) == 300
    assert plan.warning is None


def test_table_without_key_is_one_chunk_with_a_warning() -> None:
    plan = plan_table(T, [], 5000, [])
    assert len(plan.chunks) == 1 and plan.chunks[0].where() == ("", [])
    assert plan.warning and "no primary key" in plan.warning
    assert plan.chunks[0].select()[0] == "SELECT * FROM `db`.`t`"


def test_single_key_predicate() -> None:
    assert range_predicate(["id"], (10,), (20,)) == ("(`id` >= %s) AND (`id` < %s)", [10, 20])
    assert range_predicate(["id"], None, (20,), "?") == ("(`id` < ?)", [20])
    assert range_predicate(["id"], None, None) == ("", [])


def test_composite_predicate_text() -> None:
    sql, params = range_predicate(["a", "b"], (1, "x"), None)
    assert sql == "(`a` >= %s AND ((`a` > %s) OR (`a` = %s AND `b` >= %s)))"
    assert params == [1, 1, 1, "x"]


def _sqlite(rows: list[tuple[int, ...]], cols: list[str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE t ({', '.join(cols)}, PRIMARY KEY ({', '.join(cols)}))")
    db.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(cols))})", rows)
    return db


@pytest.mark.parametrize("width", [1, 2, 3])
def test_chunks_cover_every_row_exactly_once(width: int) -> None:
    rng = random.Random(width)
    cols = ["a", "b", "c"][:width]
    # Clustered, sparse keys: equal strides over min..max would be badly skewed here.
    rows = sorted(
        {
            tuple(rng.choice([rng.randint(0, 5), rng.randint(1000, 1_000_000)]) for _ in cols)
            for _ in range(3000)
        }
    )
    db = _sqlite(rows, cols)
    n = 7
    ranks = boundary_ranks(len(rows), n)
    plan = plan_table(T, cols, len(rows), [rows[r - 1] for r in ranks])
    seen: list[tuple[int, ...]] = []
    sizes = []
    for chunk in plan.chunks:
        where, params = chunk.where("?")
        sql = "SELECT * FROM t" + (f" WHERE {where}" if where else "")
        got = [tuple(r) for r in db.execute(sql.replace("`", '"'), params)]
        sizes.append(len(got))
        seen.extend(got)
        # The expanded predicate equals SQLite's own row-value comparison.
        if chunk.lower is not None:
            marks = ", ".join("?" * width)
            rv = db.execute(
                f"SELECT COUNT(*) FROM t WHERE ({', '.join(cols)}) >= ({marks})"
                + (f" AND ({', '.join(cols)}) < ({marks})" if chunk.upper else ""),
                [*chunk.lower, *(chunk.upper or ())],
            ).fetchone()[0]
            assert rv == len(got)
    assert sorted(seen) == rows
    assert len(seen) == len(set(seen))
    assert max(sizes) - min(sizes) <= 1  # sized from the distribution, not from min/max


def test_format_plan_dry_run() -> None:
    plans = [plan_table(T, ["id"], 100, [(50,)]), plan_table(TableId("db", "nokey"), [], 10, [])]
    text = format_plan(plans, 2)
    assert "2 tables, ~110 rows, 3 chunks, 2 parallel readers" in text
    assert "[…, 50)" in text and "[50, …)" in text
    assert "WARNING: db.nokey has no primary key" in text


def _table() -> Table:
    return Table(T, (Column("id", 1, "INT", "INT", 4, optional=False),), ("id",))


@pytest.mark.parametrize(
    ("index", "count", "first_overall", "last_overall", "first", "last", "expected"),
    [
        (0, 2, True, False, True, False, "first"),
        (0, 2, False, False, True, False, "first_in_data_collection"),
        (1, 2, False, False, False, True, "last_in_data_collection"),
        (1, 2, False, True, False, True, "last"),
        (0, 1, True, True, True, True, "first"),  # one row overall: first stays first
        (0, 1, False, True, True, True, "last"),
        (0, 3, False, False, False, True, "true"),  # a middle chunk's last row
        (1, 3, False, False, True, False, "true"),
    ],
)
def test_snapshot_markers_match_the_single_reader(
    index: int, count: int, first_overall: bool, last_overall: bool, first: bool, last: bool, expected: str
) -> None:
    chunk = Chunk(T, index, count, ("id",), None, None)
    assert _marker(ChunkTask(chunk, _table(), first_overall, last_overall), first, last) == expected


def test_progress_state_round_trip(tmp_path) -> None:
    import datetime as dt
    import decimal

    plan = plan_table(
        T, ["d", "n", "b"], 10, [(dt.datetime(2024, 1, 2, 3, 4, 5, 6), decimal.Decimal("1.50"), b"\x00\xff")]
    )
    state = ProgressState(
        ProgressState.path_for(tmp_path, "my conn", "srv"),
        "my conn",
        "srv",
        {"file": "binlog.000001", "pos": 4},
        [plan],
        {"db.t#0": {"rows": 5}},
    )
    state.save()
    loaded = ProgressState.load(tmp_path, "my conn", "srv")
    assert loaded is not None
    assert loaded.plans == [plan]
    assert loaded.done == {"db.t#0": {"rows": 5}} and not loaded.completed
    assert ProgressState.load(tmp_path, "other", "srv") is None


def test_progress_line() -> None:
    plans = [plan_table(T, ["id"], 100, [(50,)])]
    progress = Progress(plans, {"db.t#0": {"rows": 50}})
    progress.chunk_done("db.t#1", 50)
    line = progress.line()
    assert "100/100 rows" in line and "chunks 2/2" in line and "tables 1/1" in line


def test_binlog_positions_compare_by_file_number() -> None:
    from cdc.mysql.offsets import BinlogOffset

    assert binlog_seq("mysql-bin.000010") == 10
    assert after("mysql-bin.000010", 4, BinlogOffset("mysql-bin.000009", 999))
    assert not after("mysql-bin.000009", 999, BinlogOffset("mysql-bin.000009", 999))


def test_local_masters_get_task_retries() -> None:
    assert _with_retries("local[*]") == "local[*,4]"
    assert _with_retries("local[2]") == "local[2,4]"
    assert _with_retries("local[2,3]") == "local[2,3]"
    assert _with_retries("spark://h:7077") == "spark://h:7077"


def _tasks(n: int) -> list[ChunkTask]:
    return [ChunkTask(Chunk(T, i, n, ("id",), None, None), _table(), i == 0, i == n - 1) for i in range(n)]


def test_drive_keeps_parallelism_and_reports_each_chunk() -> None:
    active, peak, lock = [0], [0], threading.Lock()

    def submit(task: ChunkTask) -> ChunkResult:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        return ChunkResult(task.chunk.id, 1, ("f.1", 4), ("f.1", 4), 0.02)

    done: list[str] = []
    _drive(submit, _tasks(9), 3, lambda r: done.append(r.chunk_id), threading.Event())
    assert sorted(done) == sorted(t.chunk.id for t in _tasks(9))
    assert peak[0] <= 3


def test_drive_stops_submitting_after_a_failure() -> None:
    def submit(task: ChunkTask) -> ChunkResult:
        if task.chunk.index == 1:
            raise RuntimeError("boom")
        return ChunkResult(task.chunk.id, 1, ("f.1", 4), ("f.1", 4), 0.0)

    done: list[str] = []
    with pytest.raises(RuntimeError, match="boom"):
        _drive(submit, _tasks(20), 1, lambda r: done.append(r.chunk_id), threading.Event())
    assert done == ["db.t#0"]  # reported chunks are the ones a resumed run skips


def test_the_snapshot_markers_skip_empty_tables_at_either_end() -> None:
    from cdc.mysql.spark.engine import marker_tables

    def plan(name: str, rows: int) -> TablePlan:
        return plan_table(TableId("db", name), ["id"], rows, [])

    assert marker_tables([plan("sig", 0), plan("a", 5), plan("b", 0), plan("c", 7), plan("z", 0)]) == (1, 3)
    assert marker_tables([plan("a", 5)]) == (0, 0)
    assert marker_tables([plan("e", 0), plan("f", 0)]) == (0, 1)  # nothing is sent: no marker either
