"""Incremental snapshots back-filled by the Spark engine (``incremental.snapshot.engine=spark``), through a
real worker, MariaDB, Kafka and Spark (``local[2]``, two readers).

- ``test_spark_backfill_under_writes``: a 20 000-row table back-filled by an ``execute-snapshot`` signal
  while a writer updates, inserts and deletes rows all over it. Spark writes one ``op=r`` per row
  (``source.snapshot=incremental``) in exactly-once chunks; the keys changed meanwhile are read again in
  watermark windows; read ``read_committed`` and reduced by key, the topic equals the final table (0
  missing, 0 stale), and the stream went on during the back-fill.
- ``test_spark_backfill_resumes_after_a_task_restart``: the same, with the task restarted (REST) after
  a few chunks: the new task resumes the run from its resume file (no chunk read twice), reads the keys
  changed since the start back from the binlog, and the reduced topic equals the table.
- ``test_stop_snapshot_cancels_the_spark_backfill``: ``pause-snapshot`` holds chunks back and
  ``resume-snapshot`` lets them go on; ``stop-snapshot`` in the middle: no more chunks, the snapshot is
  aborted, streaming goes on.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from faultkit import Worker, free_port
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from test_mysql_restarts import _worker_files
from test_mysql_signals import (
    Writer,
    _await_equal,
    _await_running,
    _config,
    _create_signal_table,
    _events,
    _signal,
    _stale,
    _start,
    _table,
    worker,  # noqa: F401 (the fixture)
)

from cdc.worker.rest.metrics import exposition
from cdc.worker.runtime import ConnectRuntime

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

pytest.importorskip("pyspark")

ROWS = 20_000


def _create(mysql_db: Any, rows: int, table: str = "items") -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            f"CREATE TABLE {table} (id INT PRIMARY KEY AUTO_INCREMENT, version INT NOT NULL, "
            "payload VARCHAR(40))"
        )
        for start in range(0, rows, 5000):
            cur.executemany(
                f"INSERT INTO {table} (version, payload) VALUES (1, %s)",
                [(f"p{i}",) for i in range(start, min(rows, start + 5000))],
            )
        cur.execute(f"ANALYZE TABLE {table}")
        cur.fetchall()


def _spark_config(mysql_db: Any, kafka: Any, prefix: str, state: Path, **extra: str) -> dict[str, str]:
    return _config(
        mysql_db,
        kafka,
        prefix,
        **{
            "incremental.snapshot.engine": "spark",
            "incremental.snapshot.spark.min.rows": "1000",
            "incremental.snapshot.chunk.size": "500",
            "snapshot.spark.master": "local[2]",
            "snapshot.spark.partitions": "2",
            "snapshot.spark.chunk.rows": "2000",
            "snapshot.spark.state.dir": str(state),
            **extra,
        },
    )


def _metric(name: str, prefix: str) -> float | None:
    """``debezium_mysql_snapshot_<name>{server=<prefix>}`` (whatever other labels it has)."""
    for family in text_string_to_metric_families(generate_latest(exposition(None)).decode()):
        for sample in family.samples:
            if sample.name == f"debezium_mysql_snapshot_{name}" and sample.labels.get("server") == prefix:
                return float(sample.value)
    return None


def _await_completed(runtime: ConnectRuntime, name: str, prefix: str, timeout: float = 600) -> None:
    """Until the incremental snapshot has started (the schema-only snapshot at the connector's start left
    ``SnapshotCompleted`` at 1) and then completed; fails at once when the task failed."""
    base = runtime.url.rstrip("/")
    deadline = time.monotonic() + timeout
    started = False
    while not (started and _metric("SnapshotCompleted", prefix) == 1.0):
        started = started or _metric("SnapshotRunning", prefix) == 1.0
        tasks = requests.get(f"{base}/connectors/{name}/status", timeout=30).json().get("tasks", [])
        if tasks and tasks[0]["state"] == "FAILED":
            pytest.fail(f"task failed: {tasks[0].get('trace')}")
        assert time.monotonic() < deadline, "the Spark back-fill did not complete"
        time.sleep(0.5)


def _state(state: Path, name: str, prefix: str) -> dict[str, Any]:
    path = state / f"{name}.incremental__{prefix}.json"
    return dict(json.loads(path.read_text())) if path.exists() else {}


@dataclass
class Env:
    """A test's worker, database, Kafka and Spark state directory (``cdc.mysql.incremental`` logs captured
    at INFO)."""

    worker: ConnectRuntime
    mysql_db: Any
    kafka: Any
    state: Path


@pytest.fixture
def env(
    worker: ConnectRuntime,  # noqa: F811
    mysql_db: Any,
    kafka: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> Env:
    caplog.set_level("INFO", logger="cdc.mysql.incremental")
    return Env(worker, mysql_db, kafka, tmp_path / "state")


class Backfill:
    """A connector on a fresh ``items`` table of ``ROWS`` rows with a signal table; ``writer`` (started by
    :meth:`signal`) changes rows all over the table."""

    def __init__(self, env: Env, name: str, **extra: str) -> None:
        runtime, mysql_db, kafka, state = env.worker, env.mysql_db, env.kafka, env.state
        self.mysql_db, self.name, self.state = mysql_db, name, state
        self.prefix = kafka.topic(name.replace("-", ""))
        _create(mysql_db, ROWS)
        _create_signal_table(mysql_db)
        _start(runtime, name, _spark_config(mysql_db, kafka, self.prefix, state, **extra))
        self.topic = f"{self.prefix}.{mysql_db.name}.items"
        self.writer = Writer(mysql_db, hot=ROWS)
        self.before: set[int] = set()

    def signal(self, signal_id: str, writes: bool = True) -> None:
        """Start the writer (when ``writes``), note the table's keys, send ``execute-snapshot``."""
        if writes:
            self.writer.start()
            time.sleep(1)
        self.before = set(_table(self.mysql_db))
        table = f"{self.mysql_db.name}.items"
        _signal(self.mysql_db, signal_id, "execute-snapshot", {"data-collections": [table]})

    def run(self) -> dict[str, Any]:
        """The resume file of the back-fill's Spark run ({} before it has one)."""
        return _state(self.state, self.name, self.prefix)

    def await_chunks(self, count: int) -> dict[str, Any]:
        deadline = time.monotonic() + 300
        while len(self.run().get("done", {})) < count:
            assert time.monotonic() < deadline, f"fewer than {count} Spark chunks done"
            time.sleep(0.3)
        return self.run()

    def verify(self, kafka: Any) -> tuple[list[Any], dict[str, int]]:
        """Read ``read_committed`` and reduced by key, the topic equals the table (waiting for the stream
        to catch up); every row that existed at the signal was read or streamed, reads are marked
        ``incremental`` and cover nine tenths of those rows at least. Counted, not judged: reads older than
        a change of their key already in the topic (Spark and the stream write side by side; the re-read
        windows put the newer state last, which the equality proves)."""
        events = _await_equal(kafka, self.topic, self.mysql_db, timeout=180, isolation="read_committed")
        reads = [(k, v) for k, v in events if v is not None and v["op"] == "r"]
        assert {v["source"]["snapshot"] for _, v in reads} == {"incremental"}
        assert self.before <= {k for k, _ in events}
        figures = {
            "reads": len(reads),
            "read_keys": len({k for k, _ in reads}),
            "out_of_order": len({k for k, _, _ in _stale(events)}),
        }
        assert figures["read_keys"] >= len(self.before) * 0.9, figures
        return events, figures


# --------------------------------------------------------------------------------------------------- tests


def test_spark_backfill_under_writes(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    b = Backfill(env, "spark-inc")
    b.signal("spark-1")
    try:
        _await_completed(env.worker, b.name, b.prefix)
        time.sleep(1)
    finally:
        b.writer.finish()
    assert b.writer.transactions > 50
    events, figures = b.verify(env.kafka)
    run = b.run()
    assert run["completed"] and len(run["done"]) >= 5, run
    assert sum(d["rows"] for d in run["done"].values()) >= len(b.before) * 0.9
    text = caplog.text
    assert "on Spark from" in text
    finished = [r.getMessage() for r in caplog.records if "read again:" in r.getMessage()]
    assert finished and " 0 found" not in finished[0], finished  # the touched keys were read again
    # The stream went on while Spark read: changes were streamed between Spark's first and last records
    # (those carry the back-fill's start position; the re-read windows' carry their close watermark's).
    values = [v for _, v in events if v is not None]
    spark = [i for i, v in enumerate(values) if v["op"] == "r"]
    start = (values[spark[0]]["source"]["file"], values[spark[0]]["source"]["pos"])
    spark = [i for i in spark if (values[i]["source"]["file"], values[i]["source"]["pos"]) == start]
    assert len(spark) >= len(b.before) * 0.9
    assert sum(1 for v in values[spark[0] : spark[-1]] if v["op"] in ("c", "u")) > 20
    signals = [
        json.loads(m.value())["after"]["type"]
        for m in env.kafka.read_to_end(f"{b.prefix}.{env.mysql_db.name}.debezium_signal")
        if m.value() is not None
    ]
    assert signals.count("snapshot-window-open") == signals.count("snapshot-window-close") >= 1
    # Spark's records carry the task's Debezium context headers, as the streamed ones do: one run id.
    run_ids = Counter(
        dict(m.headers() or []).get("__debezium.context.runId")
        for m in env.kafka.read_to_end(b.topic)
        if m.value() is not None
    )
    assert len(run_ids) == 1 and None not in run_ids, run_ids
    print("figures:", figures, "chunks:", len(run["done"]), finished[0])


def test_spark_backfill_resumes_after_a_task_restart(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    b = Backfill(env, "spark-restart", **{"snapshot.spark.chunk.rows": "1000"})
    b.signal("spark-2")
    try:
        run_before = b.await_chunks(3)
        done_before = set(run_before["done"])
        base = env.worker.url.rstrip("/")
        restart = requests.post(f"{base}/connectors/{b.name}/restart?includeTasks=true", timeout=60)
        assert restart.status_code in (200, 202, 204), restart.text
        _await_running(env.worker, b.name)
        _await_completed(env.worker, b.name, b.prefix)
        time.sleep(1)
    finally:
        b.writer.finish()
    _, figures = b.verify(env.kafka)
    run = b.run()
    assert run["completed"] and run["run_id"] == run_before["run_id"]  # the same run, resumed
    assert run["start"] == run_before["start"]
    # The chunks done before the restart were not submitted again.
    assert all(run["submitted"][c] == 1 for c in done_before), {c: run["submitted"][c] for c in done_before}
    text = caplog.text
    assert "(resumed)" in text and "changed since it started" in text, text[-3000:]
    print("figures:", figures, "chunks done before the restart:", len(done_before))


def test_stop_snapshot_cancels_the_spark_backfill(env: Env) -> None:
    b = Backfill(env, "spark-stop", **{"snapshot.spark.chunk.rows": "500"})
    b.signal("spark-3", writes=False)
    b.await_chunks(2)
    # pause-snapshot: no chunk is submitted any more (those in flight finish); resume-snapshot goes on.
    _signal(env.mysql_db, "pause-3", "pause-snapshot", {})
    time.sleep(6)
    paused = len(b.run()["done"])
    time.sleep(6)
    assert len(b.run()["done"]) == paused, "chunks were read while the snapshot was paused"
    _signal(env.mysql_db, "resume-3", "resume-snapshot", {})
    b.await_chunks(paused + 1)
    _signal(env.mysql_db, "stop-3", "stop-snapshot", {"type": "incremental"})
    deadline = time.monotonic() + 60
    while _metric("SnapshotAborted", b.prefix) != 1.0:
        assert time.monotonic() < deadline, "the snapshot was not aborted"
        time.sleep(0.5)
    time.sleep(5)  # chunks in flight are cancelled (their transactions fenced)
    reads = len(_events(env.kafka, b.topic, "read_committed"))
    time.sleep(8)
    assert len(_events(env.kafka, b.topic, "read_committed")) == reads, "records were written after the stop"
    assert reads < ROWS
    assert not b.run().get("completed")
    # The stream goes on.
    with env.mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO items (version, payload) VALUES (7, 'after-stop')")
        new_id = int(cur.lastrowid)
    deadline = time.monotonic() + 60
    while not any(
        k == new_id and v is not None and v["op"] == "c"
        for k, v in _events(env.kafka, b.topic, "read_committed")
    ):
        assert time.monotonic() < deadline, "the insert after the stop was not streamed"
        time.sleep(1)


def _descendants(pid: int) -> set[int]:
    """The process ids below ``pid`` (from /proc's children lists)."""
    out: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError):
                for child in (task / "children").read_text().split():
                    if int(child) not in out:
                        out.add(int(child))
                        todo.append(int(child))
    return out


def test_kill_9_during_a_spark_backfill_under_writes(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    """The worker process SIGKILLed twice while Spark reads, under writes: each new process resumes the
    same Spark run (finished chunks kept) and reads the keys changed since the start back from the
    binlog; the reduced topic equals the table. The killed worker's Spark JVM and executors end with it."""
    port = free_port()
    _create(mysql_db, ROWS)
    _create_signal_table(mysql_db)
    prefix = kafka.prefix + "kill"
    state = tmp_path / "state"
    worker_file, connector_file = _worker_files(tmp_path, kafka, mysql_db, prefix, port)
    body = json.loads(connector_file.read_text())
    body["name"] = "spark-kill"
    body["config"].update(
        _spark_config(mysql_db, kafka, prefix, state, **{"snapshot.spark.chunk.rows": "1000"})
    )
    body["config"]["topic.prefix"] = prefix
    connector_file.write_text(json.dumps(body))
    process = Worker("standalone", [str(worker_file), str(connector_file)], port, tmp_path / "w.log")
    writer = Writer(mysql_db, hot=ROWS)
    topic = f"{prefix}.{mysql_db.name}.items"
    process.start()
    try:
        writer.start()
        time.sleep(2)
        before = set(_table(mysql_db))
        _signal(mysql_db, "spark-kill", "execute-snapshot", {"data-collections": [f"{mysql_db.name}.items"]})
        run_id = None
        for done in (2, 6):
            deadline = time.monotonic() + 300
            while len(_state(state, "spark-kill", prefix).get("done", {})) < done:
                assert time.monotonic() < deadline, f"fewer than {done} Spark chunks done"
                time.sleep(0.3)
            run = _state(state, "spark-kill", prefix)
            assert run_id is None or run["run_id"] == run_id  # the same run, resumed
            run_id = run["run_id"]
            assert process.proc is not None
            children = _descendants(process.proc.pid)
            assert children, "the Spark JVM runs in the worker's process tree"
            process.kill9()
            deadline = time.monotonic() + 60
            while any(Path(f"/proc/{pid}").exists() for pid in children):
                assert time.monotonic() < deadline, "the killed worker's Spark processes live on"
                time.sleep(0.5)
            process.start()
        deadline = time.monotonic() + 600
        while "Incremental snapshot completed" not in process.log_path.read_text(errors="replace"):
            assert time.monotonic() < deadline, "the back-fill did not complete"
            assert process.proc is not None and process.proc.poll() is None, "the worker died"
            time.sleep(1)
        time.sleep(1)
        writer.finish()
        events = _await_equal(kafka, topic, mysql_db, timeout=180, isolation="read_committed")
    finally:
        writer.stop_event.set()
        process.stop()
    log = process.log_path.read_text(errors="replace")
    assert log.count("changed since it started") >= 2, "the back-fill was not resumed twice"
    run = _state(state, "spark-kill", prefix)
    assert run["completed"] and run["run_id"] == run_id
    reads = {k for k, v in events if v is not None and v["op"] == "r"}
    assert len(reads) >= len(before) * 0.9
    assert before <= {k for k, _ in events}


def test_a_small_table_is_read_in_chunks(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    """Below ``incremental.snapshot.spark.min.rows`` the DBLog chunks read the table (asked once, not
    at every chunk), no Spark run is made, and the guarantee is the chunks' own."""
    b = Backfill(
        env,
        "spark-small",
        **{"incremental.snapshot.spark.min.rows": str(10 * ROWS), "incremental.snapshot.chunk.size": "2000"},
    )
    b.signal("spark-4")
    try:
        _await_completed(env.worker, b.name, b.prefix)
    finally:
        b.writer.finish()
    events, _ = b.verify(env.kafka)
    assert _stale(events) == []  # chunks: no read ever follows a newer change of its key
    assert b.run() == {} and not env.state.exists()
    declined = [r for r in caplog.records if "in DBLog chunks, not on Spark" in r.getMessage()]
    assert len(declined) == 1, [r.getMessage() for r in declined]
