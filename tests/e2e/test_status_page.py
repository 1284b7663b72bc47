"""``GET /ui`` in a real browser: headless Chromium (Debian's package) loads the status page of a worker
whose MySQL connector is in the middle of its snapshot and whose JDBC connector has a failed task.

The page must show both connectors with their states and worker, the failed task's trace, the snapshot's
progress with an ETA, the lag and events/s, and the plots (drawn from the history the page's JSON keeps).
The snapshot is slowed by a select override that sleeps per row, so that it is still running when the
browser looks. The screenshot is kept in ``$CDC_ARTIFACTS_DIR`` (default ``build/artifacts``).

A second page shows an incremental snapshot (a signal's ``execute-snapshot``) paused after its first
chunk by a ``pause-snapshot`` signal, so that the browser sees it in the middle, deterministically: the
task's line names the table, the rows scanned and the key reached of the table's last; the progress is
measured against the table's rows (not the rows read so far: it once said 100 % at a tenth), with an ETA;
the binlog position, cdc's own version, events/s at 0 once nothing moves, and a 1 400 px window that does
not scroll sideways (read over the DevTools protocol, :mod:`cdp`).
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
from cdp import Browser
from worker_process import (
    REPO,
    WorkerProcess,
    jdbc_source,
    mysql_source,
    put_connectors,
    standalone_worker,
    wait_for,
)

from cdc import __version__
from cdc.worker.status_view import RATE_WINDOW_S

TABLES = 6
ROWS = 800  # per table; 5 ms each: about 25 s of snapshot
WIDTH = 1400


def artifacts() -> Path:
    path = Path(os.environ.get("CDC_ARTIFACTS_DIR") or REPO / "build" / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def page_width(url: str, shot: str) -> tuple[int, int]:
    """The status page's (scrollWidth, innerWidth) in a ``WIDTH`` px wide window; a screenshot kept."""
    with Browser(WIDTH, 900) as browser:
        browser.open(url)
        browser.wait_for("document.body && document.body.getAttribute('data-loaded') === 'true'")
        (artifacts() / shot).write_bytes(browser.screenshot())
        width: list[int] = browser.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        return width[0], width[1]


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

    scroll, inner = page_width(f"{worker.url}/ui", "status-page-1400.png")  # with the trace shown
    assert inner == WIDTH and scroll <= WIDTH, (scroll, inner)

    shot = artifacts() / "status-page.png"
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
        cur.execute("ANALYZE TABLE items")  # InnoDB's row estimate: the progress' total
        cur.fetchall()
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

    # Nothing moves while paused: after RATE_WINDOW_S of page requests, events/s reads 0 (Connect's own
    # rate, over a minute, still counts the chunk's records).
    deadline = time.monotonic() + RATE_WINDOW_S + 2
    while time.monotonic() < deadline:
        worker.get("/ui/status")
        time.sleep(1)
    status = worker.get("/ui/status").json()
    connector = status["connectors"][0]
    assert connector["events_per_s"] == 0, connector
    assert status["worker"]["cdc_version"] == __version__

    snap = connector["snapshot"]
    assert snap["running"] and not snap["completed"], snap
    assert 900 <= snap["total"] <= 1100 and snap["rows"] == rows, snap  # the table's rows, not the chunk's
    assert snap["fraction"] == pytest.approx(rows / snap["total"]) and snap["fraction"] < 0.5, snap
    assert snap["eta_s"] and snap["eta_s"] > 0, snap
    binlog = connector["binlog"]
    assert binlog and binlog["file"] and binlog["position"] > 0, binlog

    with Browser(WIDTH, 900) as browser:
        browser.open(f"{worker.url}/ui")
        browser.wait_for("document.body && document.body.getAttribute('data-loaded') === 'true'")
        (artifacts() / "status-page-incremental.png").write_bytes(browser.screenshot())
        row = "document.querySelector('tr[data-connector=\"ui-inc\"]')"
        events = browser.evaluate(f"{row}.querySelector('td.events').textContent")
        snapshot = browser.evaluate(f"{row}.querySelector('.snapshot').textContent")
        position = browser.evaluate(f"{row}.querySelector('.binlog').textContent")
        meta = browser.evaluate("document.getElementById('meta').textContent")
        scroll, inner = browser.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert events == "0.0", events
    percent = round(100 * rows / snap["total"])
    assert f"{percent}% · {rows:,} / {snap['total']:,} rows · tables 0/1 · ETA " in snapshot, snapshot
    assert "ETA \u2013" not in snapshot, snapshot  # the dash of an unknown ETA
    assert position.startswith(f"{binlog['file']}:"), position
    assert meta.startswith(f"cdc {__version__} · "), meta
    assert inner == WIDTH and scroll <= WIDTH, (scroll, inner)
