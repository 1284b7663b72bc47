"""``GET /ui`` in a real browser: headless Chromium (Debian's package) loads the status page of a worker
whose MySQL connector is in the middle of its snapshot and whose JDBC connector has a failed task.

The page must show both connectors with their states and worker, the failed task's trace, the snapshot's
progress with an ETA, the lag and events/s, and the plots (drawn from the history the page's JSON keeps).
The snapshot is slowed by a select override that sleeps per row, so that it is still running when the
browser looks. The screenshot is kept in ``$CDC_ARTIFACTS_DIR`` (default ``build/artifacts``).

A second page shows an incremental snapshot (a signal's ``execute-snapshot``) paused after its first
chunk by a ``pause-snapshot`` signal, so that the browser sees it in the middle, deterministically: the
task's line names the table, the rows scanned and the key reached of the table's last.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from worker_process import (
    REPO,
    WorkerProcess,
    jdbc_source,
    mysql_source,
    put_connectors,
    standalone_worker,
    wait_for,
)

TABLES = 6
ROWS = 800  # per table; 5 ms each: about 25 s of snapshot


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no Chromium: apt-get install chromium (scripts/install-deps.sh installs it)")


def browse(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--hide-scrollbars", "--window-size=1500,900", "--virtual-time-budget=6000", *args, url,
    ]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_status_page_in_headless_chromium(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers)
    names = [f"t{i}" for i in range(TABLES)]
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for name in names:
            cur.execute(f"CREATE TABLE {name} (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20))")
            cur.executemany(f"INSERT INTO {name} (v) VALUES (%s)", [(f"v{i}",) for i in range(ROWS)])
            cur.execute(f"ANALYZE TABLE {name}")
            cur.fetchall()
    prefix = kafka.topic("ui")
    kafka.topic(prefix + ".history")
    for name in names:
        kafka.topic(f"{prefix}.{mysql_db.name}.{name}")
    kafka.topic(f"{prefix}-items")
    qualified = [f"{mysql_db.name}.{n}" for n in names]
    overrides = {
        f"snapshot.select.statement.overrides.{q}": f"SELECT * FROM {q} WHERE SLEEP(0.005) = 0"
        for q in qualified
    }
    mysql = mysql_source(
        mysql_db,
        prefix,
        kafka.bootstrap_servers,
        23459,
        **{"snapshot.select.statement.overrides": ",".join(qualified), **overrides},
    )
    jdbc = jdbc_source(  # its task fails: the column does not exist
        mysql_db,
        f"{prefix}-",
        **{
            "incrementing.column.name": "no_such_column",
            "table.whitelist": "t0",
            "query.retry.attempts": "0",  # the first failed query fails the task
        },
    )
    put_connectors(worker, {"ui-mysql": mysql, "ui-jdbc": jdbc})

    def snapshot_under_way() -> dict[str, Any] | None:
        status = {c["name"]: c for c in worker.get("/ui/status").json()["connectors"]}
        snap = status.get("ui-mysql", {}).get("snapshot") or {}
        failed = [t for t in status.get("ui-jdbc", {}).get("tasks", []) if t["state"] == "FAILED"]
        return status if snap.get("running") and snap.get("rows", 0) > 0 and failed else None

    wait_for(snapshot_under_way, 60, "the snapshot under way and the JDBC task failed")
    for _ in range(2):  # history points for the plots (sampled every 2 s)
        time.sleep(2.1)
        worker.get("/ui/status")

    dom = browse(f"{worker.url}/ui", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-3000:]
    html = dom.stdout
    assert 'data-loaded="true"' in html, html[-3000:]  # the page's script fetched and rendered the JSON
    assert 'data-connector="ui-mysql"' in html and 'data-connector="ui-jdbc"' in html
    assert "state RUNNING" in html and "state FAILED" in html
    assert "no_such_column" in html  # the failed task's trace
    assert "127.0.0.1:" in html  # the worker running each
    assert "ETA" in html and "rows · tables" in html, html[-4000:]  # the snapshot in progress
    assert "MilliSecondsBehindSource" in html
    assert html.count("<polyline") >= 1  # events/s plotted from the history

    artifacts = Path(os.environ.get("CDC_ARTIFACTS_DIR") or REPO / "build" / "artifacts")
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "status-page.png"
    taken = browse(f"{worker.url}/ui", f"--screenshot={shot}")
    assert taken.returncode == 0, taken.stderr[-3000:]
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_incremental_snapshot_progress_in_headless_chromium(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers)
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT PRIMARY KEY, v VARCHAR(20))")
        cur.executemany("INSERT INTO items VALUES (%s, %s)", [(i, f"v{i}") for i in range(1, 1001)])
        cur.execute("CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32), data TEXT)")
    prefix = kafka.topic("uiinc")
    kafka.topic(prefix + ".history")
    kafka.topic(f"{prefix}.{mysql_db.name}.items")
    signals = tmp_path / "signals.txt"
    mysql = mysql_source(
        mysql_db,
        prefix,
        kafka.bootstrap_servers,
        23461,
        **{
            "snapshot.mode": "no_data",
            "signal.data.collection": f"{mysql_db.name}.debezium_signal",
            "signal.enabled.channels": "source,file",
            "signal.file": str(signals),
            "signal.poll.interval.ms": "200",
            "incremental.snapshot.chunk.size": "50",
        },
    )
    put_connectors(worker, {"ui-inc": mysql})
    wait_for(
        lambda: [t["state"] for t in worker.get("/connectors/ui-inc/status").json()["tasks"]] == ["RUNNING"],
        60,
        "the connector's task RUNNING",
    )
    table = f"{mysql_db.name}.items"
    execute = {"id": "s1", "type": "execute-snapshot", "data": {"data-collections": [table]}}
    pause = {"id": "p1", "type": "pause-snapshot", "data": {}}
    signals.write_text(json.dumps(execute) + "\n" + json.dumps(pause) + "\n")

    def paused() -> dict[str, Any] | None:
        tasks = worker.get("/ui/status").json()["connectors"][0]["tasks"]
        progress = tasks[0].get("incremental_snapshot") if tasks else None
        return progress if progress and progress["paused"] and progress["rows_scanned"] > 0 else None

    progress = wait_for(paused, 60, "the incremental snapshot paused after a chunk")
    rows = progress["rows_scanned"]
    assert 50 <= rows < 1000 and progress["table_to"] == "[1000]", progress

    dom = browse(f"{worker.url}/ui", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-3000:]
    html = dom.stdout
    assert 'data-loaded="true"' in html, html[-3000:]
    line = f"incremental snapshot of {table} (paused): {rows:,} rows, up to key [{rows}] of [1000]"
    assert line in html, html[-4000:]
