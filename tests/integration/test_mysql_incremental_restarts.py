"""The incremental snapshot under crashes: a worker process killed with SIGKILL five times while an
incremental snapshot runs and a writer updates, inserts and deletes rows.

Each restart resumes the snapshot from the state in the committed offsets (Debezium's keys); at the end
the topic reduced by key equals the table, every row that existed when the signal was sent was read or
streamed, and no snapshot read follows a newer change of its key.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from faultkit import Worker, free_port
from test_mysql_restarts import _worker_files
from test_mysql_signals import SIGNAL_DDL, Writer, _await_equal, _signal, _stale

# ~1 minute on an idle machine; the snapshot's thousands of small windows slow down a lot under load.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

ROWS = 40_000
KILLS = 5


def _files(tmp: Path, kafka: Any, mysql_db: Any, prefix: str, port: int) -> list[str]:
    """test_mysql_restarts' worker and connector files, the connector with a signal table."""
    worker, connector = _worker_files(tmp, kafka, mysql_db, prefix, port)
    body = json.loads(connector.read_text())
    body["name"] = "inc-restarts"
    body["config"].update(
        {
            "snapshot.mode": "no_data",
            "signal.data.collection": f"{mysql_db.name}.debezium_signal",
            # small chunks: thousands of windows, so every kill falls inside the snapshot
            "incremental.snapshot.chunk.size": "8",
            "max.batch.size": "500",
        }
    )
    connector.write_text(json.dumps(body))
    return [str(worker), str(connector)]


def test_kill_9_during_an_incremental_snapshot_under_writes(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    port = free_port()
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE items (id INT PRIMARY KEY AUTO_INCREMENT, version INT NOT NULL, "
            "payload VARCHAR(40))"
        )
        for start in range(0, ROWS, 5000):
            cur.executemany(
                "INSERT INTO items (version, payload) VALUES (1, %s)",
                [(f"p{i}",) for i in range(start, start + 5000)],
            )
        cur.execute(SIGNAL_DDL)
    prefix = kafka.prefix + "srv"
    worker = Worker("standalone", _files(tmp_path, kafka, mysql_db, prefix, port), port, tmp_path / "w.log")
    writer = Writer(mysql_db, hot=ROWS)
    rng = random.Random(5)
    worker.start()
    try:
        writer.start()
        time.sleep(2)
        _signal(mysql_db, "ad-hoc-kill", "execute-snapshot", {"data-collections": [f"{mysql_db.name}.items"]})
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.8, 1.5))
            worker.kill9()
            worker.start()
        time.sleep(2)
        writer.finish()
        topic = f"{prefix}.{mysql_db.name}.items"
        events = _await_equal(kafka, topic, mysql_db, timeout=240)
    finally:
        writer.stop_event.set()
        worker.stop()
    log = worker.log_path.read_text(errors="replace")
    resumed = log.count("reading a new chunk on start")
    assert resumed >= 3, f"the snapshot was resumed from the offsets only {resumed} times"
    assert "Incremental snapshot completed" in log
    assert writer.transactions > 100
    read = {k for k, v in events if v is not None and v["op"] == "r"}
    assert len(read) > ROWS // 2
    assert _stale(events) == []
