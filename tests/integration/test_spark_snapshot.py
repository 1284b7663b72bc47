"""The parallel snapshot against the real stack: ``cdc snapshot`` on Spark, then the connector.

- ``test_spark_snapshot_then_connector_streams`` (slow, needs pyspark): a 100k-row dataset-A table,
  ``cdc snapshot`` with ``local[2]``: exactly one ``op=r`` record per row, byte-identical to the record
  the single-reader snapshot builds for the same row; then the MySQL connector, started with the worker
  file, streams later changes from the stored offset with no gap and no overlap.
- ``test_cdc_snapshot_killed_with_sigkill_resumes_from_done_chunks`` (needs pyspark; ~1 min): the
  command's whole process group killed with SIGKILL after five chunks, then run again: only the chunks
  not done are read, and the chunk in flight at the kill is the only one written twice.
- The others run the same engine on threads (no Spark) to check the parts Spark does not change:
  reconciliation of concurrent writes and resuming a killed run.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from cdc.cli.snapshot import write_offsets
from cdc.mysql.spark.engine import SnapshotOptions, SnapshotRun
from cdc.mysql.spark.executor import ChunkResult, ChunkTask, RunContext
from cdc.mysql.spark.runners import MySqlThreadRunner as ThreadRunner

REPO = Path(__file__).resolve().parents[2]


def _dataset_a(mysql_db: Any, rows: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, "
            "c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', "
            "updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), "
            "INDEX(updated_at))"
        )
        step = 10_000
        for i in range(0, rows, step):
            values = ",".join(
                f"({(j * 7919) % 1_000_000}, 'c-{j}', 'pad-{j % 97}')" for j in range(i, min(rows, i + step))
            )
            cur.execute(f"INSERT INTO a (k, c, pad) VALUES {values}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _configs(tmp: Path, kafka: Any, mysql_db: Any) -> tuple[dict[str, str], dict[str, str], Path, Path]:
    prefix = kafka.prefix + "srv"
    worker = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        "offset.storage.file.filename": str(tmp / "offsets"),
        "offset.flush.interval.ms": "300",
        "listeners": f"http://127.0.0.1:{_free_port()}",
    }
    config = {
        "name": "spark-snap",
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(20_000 + int(time.time()) % 10_000),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal.kafka.topic": prefix + ".history",
        "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
        "include.schema.changes": "false",
    }
    worker_file = tmp / "worker.properties"
    worker_file.write_text("".join(f"{k}={v}\n" for k, v in worker.items()))
    connector_file = tmp / "connector.json"
    connector_file.write_text(
        json.dumps({"name": config["name"], "config": {k: v for k, v in config.items() if k != "name"}})
    )
    return config, worker, worker_file, connector_file


def _messages(kafka: Any, topic: str) -> list[Any]:
    return list(kafka.read_to_end(topic, timeout=120))


def _reduced(messages: Sequence[Any]) -> dict[int, dict[str, Any] | None]:
    state: dict[int, dict[str, Any] | None] = {}
    for m in messages:
        key = json.loads(m.key())["id"]
        value = json.loads(m.value()) if m.value() is not None else None
        state[key] = None if value is None or value["op"] == "d" else value["after"]
    return {k: v for k, v in state.items() if v is not None}


def _table(mysql_db: Any) -> dict[int, tuple[Any, ...]]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT id, k, c, pad FROM a")
        return {int(r[0]): (r[1], r[2], r[3]) for r in cur.fetchall()}


def _as_rows(reduced: dict[int, dict[str, Any] | None]) -> dict[int, tuple[Any, ...]]:
    return {k: (v["k"], v["c"], v["pad"]) for k, v in reduced.items() if v is not None}


# ------------------------------------------------------------------------------------------ on Spark


def _single_reader_record(
    config: dict[str, str],
    id_: int,
    spark_value: dict[str, Any],
    start: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[bytes, bytes]:
    """The record the single-reader snapshot builds for row ``id_``, at the Spark record's clock and the
    run's position, through the same JsonConverter."""
    import cdc.mysql.events as events_mod
    import cdc.mysql.snapshot as snapshot_mod
    from cdc.converters.json_converter import JsonConverter
    from cdc.mysql.capture import CaptureContext
    from cdc.mysql.config import MySqlSettings
    from cdc.mysql.metrics import REGISTRY, SnapshotMetrics
    from cdc.mysql.offsets import BinlogOffset
    from cdc.mysql.snapshot import Snapshotter

    class _Clock:
        def __init__(self, module: Any, ts_ms: int, ts_ns: int) -> None:
            self._m, self._ms, self._ns = module, ts_ms, ts_ns

        def time(self) -> float:
            return (self._ms + 0.5) / 1000

        def time_ns(self) -> int:
            return self._ns

        def __getattr__(self, name: str) -> Any:
            return getattr(self._m, name)

    clock = _Clock(time, spark_value["source"]["ts_ms"], spark_value["ts_ns"])
    monkeypatch.setattr(events_mod, "time", clock)
    monkeypatch.setattr(snapshot_mod, "time", clock)
    monkeypatch.setattr(Snapshotter, "_position", lambda self, cur: BinlogOffset.from_dict(start))
    settings = MySqlSettings.parse(config)

    class _NoHistory:
        def record(self, record: Any) -> None:
            pass

    found: list[Any] = []

    def emit(records: list[Any]) -> bool:
        found.extend(r for r in records if r.key is not None and r.key.get("id") == id_)
        return True

    ctx = CaptureContext.build(settings, _NoHistory(), emit, threading.Event(), True)
    Snapshotter(ctx, SnapshotMetrics(settings.prefix), emit_schema_changes=False).run(data=True)
    REGISTRY.unregister("snapshot", settings.prefix)
    assert len(found) == 1
    key_conv, value_conv = JsonConverter(), JsonConverter()
    key_conv.configure({"schemas.enable": "false"}, True)
    value_conv.configure({"schemas.enable": "false"}, False)
    rec = found[0]
    return (
        key_conv.from_connect_data(rec.topic, rec.key_schema, rec.key),
        value_conv.from_connect_data(rec.topic, rec.value_schema, rec.value),
    )


@pytest.mark.slow
def test_spark_snapshot_then_connector_streams(
    tmp_path: Path, kafka: Any, mysql_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    rows = 100_000
    _dataset_a(mysql_db, rows)
    config, _worker, worker_file, connector_file = _configs(tmp_path, kafka, mysql_db)
    topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    started = time.monotonic()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "cdc.cli",
            "snapshot",
            str(connector_file),
            "--worker-config",
            str(worker_file),
            "--master",
            "local[2]",
            "--chunk-rows",
            "25000",
            "--state-dir",
            str(tmp_path / "state"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO,
    )
    took = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Snapshot done: 100,000 rows" in result.stdout, result.stdout
    print(f"cdc snapshot local[2], {rows} rows: {took:.1f} s")

    messages = _messages(kafka, topic)
    assert len(messages) == rows
    values = [json.loads(m.value()) for m in messages]
    assert {v["op"] for v in values} == {"r"}
    assert sorted(json.loads(m.key())["id"] for m in messages) == list(range(1, rows + 1))
    markers = [v["source"]["snapshot"] for v in values]
    assert markers.count("first") == 1 and markers.count("last") == 1
    assert set(markers) == {"first", "last", "true"}

    # Byte for byte the single reader's record (same clock, same position).
    state = json.loads(next((tmp_path / "state").glob("*.json")).read_text())
    probe = next(m for m in messages if json.loads(m.key())["id"] == 4242)
    key, value = _single_reader_record(config, 4242, json.loads(probe.value()), state["start"], monkeypatch)
    assert probe.key() == key
    assert probe.value() == value

    # The stored offset is the end position, without the snapshot flag.
    from cdc.worker.stores.file import read_offset_file

    offsets = read_offset_file(tmp_path / "offsets")
    stored = json.loads(offsets[b'["spark-snap",{"server":"%s"}]' % config["topic.prefix"].encode()])
    assert "snapshot" not in stored and stored["file"].startswith(state["start"]["file"].rsplit(".", 1)[0])

    # Changes between the snapshot and the connector's start, and after it: each exactly once.
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("UPDATE a SET k = -1 WHERE id IN (1, 50000, 100000)")
        cur.execute("DELETE FROM a WHERE id = 777")
        cur.execute("INSERT INTO a (k, c, pad) VALUES (7, 'new', 'x')")
    log = (tmp_path / "worker.log").open("wb")
    worker_proc = subprocess.Popen(
        [sys.executable, "-m", "cdc.cli", "standalone", str(worker_file), str(connector_file)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=REPO,
    )
    try:
        time.sleep(3)
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("UPDATE a SET k = -2 WHERE id = 2")
            cur.execute("INSERT INTO a (k, c, pad) VALUES (8, 'newer', 'y')")
        deadline = time.monotonic() + 120
        while True:
            later = _messages(kafka, topic)[rows:]
            if len([m for m in later if m.value() is not None]) >= 8 or time.monotonic() > deadline:
                break
            time.sleep(1)
    finally:
        worker_proc.terminate()
        worker_proc.wait(30)
        log.close()
    later_values = [json.loads(m.value()) for m in later if m.value() is not None]
    ops = [(v["op"], (v["after"] or v["before"])["id"]) for v in later_values]
    assert sorted(ops) == sorted(
        [("u", 1), ("u", 50000), ("u", 100000), ("d", 777), ("c", rows + 1), ("u", 2), ("c", rows + 2)]
    ), (ops, (tmp_path / "worker.log").read_text()[-3000:])
    assert _as_rows(_reduced(_messages(kafka, topic))) == _table(mysql_db)


# ------------------------------------------------------------------------------------------ on threads


class _Hooked(ThreadRunner):
    """Threads, with a hook after each chunk (to write concurrently, or to die like a killed run)."""

    def __init__(self, parallelism: int, after_chunk: Callable[[int], None]) -> None:
        super().__init__(parallelism)
        self.after_chunk = after_chunk
        self.submitted: list[str] = []

    def run(
        self,
        tasks: Sequence[ChunkTask],
        ctx: RunContext,
        on_done: Callable[[ChunkResult], None],
        stopping: threading.Event,
        on_start: Callable[[ChunkTask], None] | None = None,
    ) -> None:
        self.submitted.extend(t.chunk.id for t in tasks)
        count = [0]

        def hooked(result: ChunkResult) -> None:
            on_done(result)
            count[0] += 1
            self.after_chunk(count[0])

        super().run(tasks, ctx, hooked, stopping, on_start)


def test_concurrent_writes_are_reconciled(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    rows = 4000
    _dataset_a(mysql_db, rows)
    config, worker, _w, _c = _configs(tmp_path, kafka, mysql_db)
    topic = f"{config['topic.prefix']}.{mysql_db.name}.a"

    def write(n: int) -> None:
        # After every chunk: rows of chunks already read and of chunks still to come change.
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute(f"UPDATE a SET k = k + 1000000 WHERE id % 97 = {n}")
            cur.execute(f"DELETE FROM a WHERE id % 101 = {n}")
            cur.execute(f"INSERT INTO a (k, c, pad) VALUES ({n}, 'during', 'x')")
            cur.execute(f"UPDATE a SET id = id + 100000 WHERE id = {n * 13}")  # a key change

    runner = _Hooked(1, write)
    job = SnapshotRun(
        config,
        worker,
        SnapshotOptions(chunk_rows=500, state_dir=tmp_path / "state", progress=False),
        runner=runner,
    )
    summary = job.run()
    assert summary.chunks == 8 and summary.window_events > 0 and summary.deleted > 0
    messages = _messages(kafka, topic)
    assert _as_rows(_reduced(messages)) == _table(mysql_db)
    # a consumer that drops tombstones (ExtractNewRecordState's default) sees the deletes as op=d
    assert _as_rows(_reduced([m for m in messages if m.value() is not None])) == _table(mysql_db)


def test_killed_run_resumes_without_rereading_done_chunks(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    rows = 3000
    _dataset_a(mysql_db, rows)
    config, worker, _w, _c = _configs(tmp_path, kafka, mysql_db)
    topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    options = SnapshotOptions(chunk_rows=500, state_dir=tmp_path / "state", progress=False)

    def die(n: int) -> None:
        if n == 3:
            raise KeyboardInterrupt  # like Ctrl-C / a kill between chunks

    first = _Hooked(1, die)
    with pytest.raises(KeyboardInterrupt):
        SnapshotRun(config, worker, options, runner=first).run()
    second = _Hooked(2, lambda n: None)
    summary = SnapshotRun(config, worker, options, runner=second).run()
    assert summary.resumed and summary.chunks_skipped == 3 and summary.chunks == 3
    assert not set(second.submitted) & set(first.submitted[:3])
    messages = _messages(kafka, topic)
    assert len(messages) == rows  # no chunk read twice
    assert _as_rows(_reduced(messages)) == _table(mysql_db)
    where = write_offsets(worker, "spark-snap", config["topic.prefix"], summary.end)
    assert "offsets file" in where


@pytest.mark.slow  # 45 s; make test keeps the Spark snapshot's resume from its state file without the kill
def test_cdc_snapshot_killed_with_sigkill_resumes_from_done_chunks(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    """``kill -9`` of the whole ``cdc snapshot`` process group (driver, Spark's JVM, its Python workers)
    half-way, then the same command again: it reads only the chunks not done, and the topic reduced by key
    equals the table, with at most the chunk in flight at the kill written twice."""
    pytest.importorskip("pyspark")
    import os
    import signal

    rows, chunk_rows = 24_000, 1_000
    _dataset_a(mysql_db, rows)
    config, _worker, worker_file, connector_file = _configs(tmp_path, kafka, mysql_db)
    topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    state_dir = tmp_path / "state"
    argv = [
        sys.executable, "-m", "cdc.cli", "snapshot", str(connector_file), "--worker-config", str(worker_file),
        "--master", "local[1]", "--partitions", "1", "--chunk-rows", str(chunk_rows),
        "--state-dir", str(state_dir), "--quiet",
    ]  # fmt: skip

    def done_chunks() -> dict[str, Any]:
        files = list(state_dir.glob("*.json"))
        if not files:
            return {}
        try:
            return dict(json.loads(files[0].read_text()).get("done", {}))
        except (OSError, ValueError):
            return {}  # caught mid-write

    first_log = (tmp_path / "first.log").open("wb")
    first = subprocess.Popen(
        argv, cwd=REPO, stdout=first_log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 240
        while len(done_chunks()) < 5:
            assert first.poll() is None, (tmp_path / "first.log").read_text()
            assert time.monotonic() < deadline, "the first run did not finish 5 chunks in 240 s"
            time.sleep(0.1)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(30)
        first_log.close()
    done_before = done_chunks()
    total_chunks = rows // chunk_rows
    assert 5 <= len(done_before) < total_chunks, f"killed too late to test a resume: {len(done_before)}"
    in_kafka_at_kill = len(_messages(kafka, topic))

    second = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"{len(done_before)} already done in an earlier run" in second.stdout, second.stdout
    assert f"{total_chunks - len(done_before)} chunks read" in second.stdout, second.stdout
    messages = _messages(kafka, topic)
    # every row once, plus at most what the killed run had written of chunks it had not finished
    assert (
        rows
        <= len(messages)
        <= rows + max(0, in_kafka_at_kill - sum(d["rows"] for d in done_before.values()))
    )
    assert len(messages) - rows <= chunk_rows
    assert _as_rows(_reduced(messages)) == _table(mysql_db)


# ------------------------------------------------------------------ delivery and stalls, on threads
# What an executor's death does to a chunk attempt, played in this process: the attempt stops writing
# half-way (its transaction stays open, as a killed executor leaves it) or dies right after its commit.
# The runs on a real cluster with killed executors are in test_spark_across_hosts.py (slow).


def _ids_per_key(kafka: Any, topic: str, isolation: str) -> Counter[int]:
    messages = kafka.read_to_end(topic, timeout=60, isolation=isolation)
    assert {json.loads(m.value())["op"] for m in messages} <= {"r"}
    return Counter(json.loads(m.key())["id"] for m in messages)


class _AttemptDies:
    """One chunk attempt dies like a lost executor: after ``records`` records produced in this run (its
    transaction left open), or (``commits``) right after the ``commits``-th chunk transaction committed,
    before the runner hears of it. Chunks run one at a time, so the count names one chunk."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, records: int = 0, commits: int = 0) -> None:
        from cdc.snapshot.delivery import ChunkTransaction
        from cdc.snapshot.writer import RecordWriter

        self.produced = self.committed = 0
        produce, commit = RecordWriter.produce, ChunkTransaction.commit

        def dying_produce(writer: Any, record: Any) -> None:
            self.produced += 1
            if self.produced == records:
                writer.producer.flush(30)  # what it wrote reached Kafka before it died
                raise RuntimeError("executor lost")
            produce(writer, record)

        def dying_commit(txn: Any, topic: Any, rows: int) -> None:
            commit(txn, topic, rows)
            self.committed += 1
            if self.committed == commits:
                raise RuntimeError("executor lost after its commit")

        monkeypatch.setattr(RecordWriter, "produce", dying_produce)
        monkeypatch.setattr(ChunkTransaction, "commit", dying_commit)


@pytest.mark.parametrize("death", ["mid-chunk", "after-commit"])
def test_a_chunk_attempt_that_dies_is_never_seen_twice_read_committed(
    tmp_path: Path, kafka: Any, mysql_db: Any, monkeypatch: pytest.MonkeyPatch, death: str
) -> None:
    rows = 3000
    _dataset_a(mysql_db, rows)
    config, worker, _w, _c = _configs(tmp_path, kafka, mysql_db)
    topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    options = SnapshotOptions(chunk_rows=500, state_dir=tmp_path / "state", progress=False)
    with monkeypatch.context() as m:
        _AttemptDies(m, records=1250) if death == "mid-chunk" else _AttemptDies(m, commits=2)
        with pytest.raises(RuntimeError, match="executor lost"):
            SnapshotRun(config, worker, options, runner=ThreadRunner(1)).run()
    summary = SnapshotRun(config, worker, options, runner=ThreadRunner(2)).run()
    # mid-chunk: chunks 1 and 2 were done, 3 died; after-commit: 1 was done, 2 committed unheard of
    assert summary.resumed and summary.chunks_skipped == (2 if death == "mid-chunk" else 1)
    assert summary.chunks_reread == 1
    assert "records written twice: 0 for read_committed consumers" in summary.render()
    committed = _ids_per_key(kafka, topic, "read_committed")
    assert set(committed) == set(range(1, rows + 1)) and set(committed.values()) == {1}
    everything = sum(_ids_per_key(kafka, topic, "read_uncommitted").values())
    if death == "mid-chunk":  # the dead attempt's 249 records are in the log, aborted by the fence
        assert everything == rows + 249
    else:  # the retry found the chunk committed and wrote nothing
        assert everything == rows
        assert [r.replayed for r in summary.per_chunk].count(True) == 1


def test_at_least_once_counts_the_records_written_twice(
    tmp_path: Path, kafka: Any, mysql_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = 2000
    _dataset_a(mysql_db, rows)
    config, worker, _w, _c = _configs(tmp_path, kafka, mysql_db)
    topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    options = SnapshotOptions(
        chunk_rows=500, state_dir=tmp_path / "state", progress=False, delivery="at_least_once"
    )
    with monkeypatch.context() as m:
        _AttemptDies(m, records=1250)
        with pytest.raises(RuntimeError, match="executor lost"):
            SnapshotRun(config, worker, options, runner=ThreadRunner(1)).run()
    summary = SnapshotRun(config, worker, options, runner=ThreadRunner(2)).run()
    assert summary.chunks_reread == 1 and summary.written_twice == 249, summary.render()
    assert "records written twice: 249" in summary.render()
    assert sum(_ids_per_key(kafka, topic, "read_committed").values()) == rows + 249


class _Hanging(ThreadRunner):
    """Chunks after the first ``fine`` hang like a job whose executors are all gone, until cancelled."""

    def __init__(self, fine: int) -> None:
        super().__init__(1)
        self.cancelled = threading.Event()
        count, real = [0], self.run_chunk

        def run_chunk(item: tuple[ChunkTask, RunContext]) -> ChunkResult:
            count[0] += 1
            if count[0] > fine:
                self.cancelled.wait(600)
                raise RuntimeError("Job cancelled")
            result: ChunkResult = real(item)
            return result

        self.run_chunk = run_chunk

    def cancel(self) -> None:
        self.cancelled.set()


def test_a_run_without_progress_stops_keeps_its_state_and_resumes(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    from cdc.snapshot.watchdog import SnapshotStalled

    rows = 2000
    _dataset_a(mysql_db, rows)
    config, worker, _w, _c = _configs(tmp_path, kafka, mysql_db)
    topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    options = SnapshotOptions(chunk_rows=500, state_dir=tmp_path / "state", progress=False, stall_timeout=3)
    started = time.monotonic()
    with pytest.raises(SnapshotStalled, match="no executor made progress") as stalled:
        SnapshotRun(config, worker, options, runner=_Hanging(2)).run()
    assert time.monotonic() - started < 3 + 20
    assert "2 chunks are done" in str(stalled.value) and "run the same command again" in str(stalled.value)
    summary = SnapshotRun(config, worker, options, runner=ThreadRunner(2)).run()
    assert summary.resumed and summary.chunks_skipped == 2 and summary.chunks == 2
    committed = _ids_per_key(kafka, topic, "read_committed")
    assert set(committed) == set(range(1, rows + 1)) and set(committed.values()) == {1}
