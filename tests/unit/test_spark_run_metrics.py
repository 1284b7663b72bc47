"""A Spark run's chunks feed Debezium's snapshot metrics (what /metrics and the status page's ETA read)."""

from __future__ import annotations

from cdc.history.model import TableId
from cdc.metrics import REGISTRY
from cdc.mysql.spark.engine import _run_metrics
from cdc.snapshot.chunks import plan_table


def test_chunks_done_count_rows_and_tables() -> None:
    a, b = TableId("db", "a"), TableId("db", "b")
    plans = [plan_table(a, ["id"], 300, [(100,), (200,)]), plan_table(b, ["id"], 50, [])]
    assert [len(p.chunks) for p in plans] == [3, 1]
    ids = [c.id for p in plans for c in p.chunks]
    try:
        run = _run_metrics("srv", plans, {ids[0]: {"rows": 100}})  # one chunk done in an earlier run
        attributes = run.snapshot.attributes()
        assert attributes["RowsScanned"] == {"db.a": 100}
        assert attributes["RemainingTableCount"] == 2 and attributes["SnapshotRunning"]
        run.chunk_done(ids[3], 50)
        run.chunk_done(ids[1], 100)
        run.chunk_done(ids[2], 101)
        attributes = run.snapshot.attributes()
        assert attributes["RowsScanned"] == {"db.a": 301, "db.b": 50}
        assert attributes["RemainingTableCount"] == 0
        estimates = {
            r.labels["table"]: r.value
            for r in REGISTRY.readings()
            if r.name == "cdc_mysql_snapshot_estimated_rows" and r.labels["server"] == "srv"
        }
        assert estimates == {"db.a": 300, "db.b": 50}
    finally:
        REGISTRY.unregister("snapshot", "srv")
