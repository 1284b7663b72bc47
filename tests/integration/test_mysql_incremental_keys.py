"""The incremental snapshot's keys on the real stack (in-process task):
``incremental.snapshot.watermarking.strategy`` (what the watermarks leave in the signal table) and
``incremental.snapshot.allow.schema.changes`` (only Debezium's default, false, is implemented)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from cdc.api.records import SourceRecord
from cdc.mysql.validation import validate_mysql
from tests.integration.stream_task import config, sql, streaming_task

pytestmark = pytest.mark.integration

ROWS = 250


def _snapshot_reads(records: list[SourceRecord]) -> set[int]:
    return {
        r.value.get("after").get("id")
        for r in records
        if r.topic.endswith(".items") and r.value is not None and r.value.get("op") == "r"
    }


@pytest.mark.honours("incremental.snapshot.watermarking.strategy")
@pytest.mark.parametrize("strategy", ["insert_insert", "insert_delete"])
def test_watermarking_strategy_decides_what_the_windows_leave_in_the_signal_table(
    mysql_db: Any, kafka: Any, strategy: str
) -> None:
    """insert_insert writes an open and a close row per chunk; insert_delete deletes each open row to close
    its window, so the signal table keeps only the signals (Debezium's way of keeping it small)."""
    db = mysql_db.name
    sql(
        mysql_db,
        "CREATE TABLE items (id INT PRIMARY KEY, v INT)",
        "INSERT INTO items SELECT seq, seq FROM seq_1_to_250",
        "CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
        "data VARCHAR(2048))",
    )
    props = config(
        mysql_db,
        kafka.topic("wm"),
        **{
            "table.include.list": f"{db}.items",
            "signal.data.collection": f"{db}.debezium_signal",
            "incremental.snapshot.chunk.size": "100",
            "incremental.snapshot.watermarking.strategy": strategy,
        },
    )
    with streaming_task(props) as task:
        body = {"data-collections": [f"{db}.items"], "type": "incremental"}
        sql(mysql_db, f"INSERT INTO debezium_signal VALUES ('go', 'execute-snapshot', '{json.dumps(body)}')")
        read: set[int] = set()
        deadline = time.monotonic() + 60
        while len(read) < ROWS and time.monotonic() < deadline:
            read |= _snapshot_reads(task.poll() or [])
        assert read == set(range(1, ROWS + 1))
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT type, COUNT(*) FROM debezium_signal GROUP BY type")
            left = dict(cur.fetchall())
    if strategy == "insert_insert":  # three chunks (and the empty one that ends the table) with both rows
        assert left["execute-snapshot"] == 1 and left["snapshot-window-open"] >= 3, left
        assert left["snapshot-window-close"] == left["snapshot-window-open"], left
    else:
        assert left == {"execute-snapshot": 1}, left


@pytest.mark.honours("incremental.snapshot.allow.schema.changes")
def test_allowing_schema_changes_during_an_incremental_snapshot_is_refused(mysql_db: Any) -> None:
    props = config(mysql_db, "p", **{"incremental.snapshot.allow.schema.changes": "true"})
    errors = {v.name: v.errors for v in validate_mysql(props) if v.errors}
    assert list(errors) == ["incremental.snapshot.allow.schema.changes"], errors
    assert "is not supported by cdc" in errors["incremental.snapshot.allow.schema.changes"][0]
    props["incremental.snapshot.allow.schema.changes"] = "false"  # Debezium's default
    assert not [v for v in validate_mysql(props) if v.errors]
