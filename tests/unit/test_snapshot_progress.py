"""``cdc snapshot``'s progress line: Spark starting rather than 0 rows/s, rows moving within a chunk, and
the advice on small tables (the B1 threshold)."""

from __future__ import annotations

from cdc.cli.snapshot_guard import built_in_would_be_faster
from cdc.history.model import TableId
from cdc.snapshot.chunks import plan_table
from cdc.snapshot.progress import Progress

T = TableId("db", "t")


def test_before_the_first_record_it_says_spark_is_starting() -> None:
    plans = [plan_table(T, ["id"], 100_000, [(50_000,)])]
    line = Progress(plans, {}).line()
    assert line.startswith("[snapshot] starting Spark (") and "rows/s" not in line, line
    assert "chunks 0/2" in line


def test_rows_move_while_a_chunk_is_written() -> None:
    plans = [plan_table(T, ["id"], 100_000, [(50_000,)])]
    topic = {"end": 1_000}  # records already in the topic before the run
    progress = Progress(plans, {}, written=lambda: topic["end"])
    topic["end"] += 12_345  # part of the first chunk, not finished
    line = progress.line()
    assert "12,345/100,000 rows" in line and "chunks 0/2" in line, line
    progress.chunk_done("db.t#0", 50_000)
    topic["end"] += 50_000 - 12_345 + 1  # the rest of chunk 0 and its transaction marker
    line = progress.line()
    assert "50,001/100,000 rows" in line and "chunks 1/2" in line, line
    topic["end"] += 60_000  # more than the plan: the line never passes the total
    assert "100,000/100,000 rows" in progress.line()


def test_a_failing_probe_falls_back_to_finished_chunks() -> None:
    plans = [plan_table(T, ["id"], 100, [(50,)])]

    def broken() -> int:
        raise OSError("broker down")

    progress = Progress(plans, {}, written=broken)
    progress.chunk_done("db.t#0", 50)
    assert "50/100 rows" in progress.line()


def test_small_tables_get_the_advice_from_b1() -> None:
    advice = built_in_would_be_faster(200, 2)
    assert advice is not None and "snapshot.engine=auto" in advice and "docs/benchmarks.md, B1" in advice
    assert built_in_would_be_faster(10_000_000, 2) is None
