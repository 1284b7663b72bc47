"""The MySQL connector with ``snapshot.engine=spark``, run by a worker like any connector.

One in-process distributed worker (offsets, configs and statuses in Kafka topics of the test's own):

- ``test_spark_engine_writes_what_local_writes_then_streams`` (slow): a ``spark`` connector
  (``local[2]``, 6 chunks) and a ``local`` one (another ``topic.prefix``) on the same 3,000-row table.
  The Spark topic holds exactly one ``op=r`` per row, each with the key bytes and the value of the local
  connector's record for that row (clock fields, the connector's name and the snapshot position aside),
  and the schema change topics match the same way (Debezium's snapshot DDL: SET, DROP TABLE IF EXISTS, DROP/
  CREATE DATABASE, USE, CREATE TABLE); the offsets topic holds the run's start flagged ``"snapshot":
  "INITIAL"`` and then the end without it; inserts, updates, a key change and deletes made afterwards
  stream exactly once, as the local connector streams them. The worker's converter sub-settings and
  ``producer.*`` reach the task as ``cdc.worker.*`` entries, and neither those keys nor the producer's
  JAAS password show in ``GET …/tasks``, ``…/tasks-config``, ``…/config``, the config topic or the logs.
- ``test_spark_engine_stops_resumes_and_ignores_stale_state`` (slow): stopping the connector in the middle
  of the Spark job ends it in bounded time (no record written afterwards); after its offsets are deleted
  the unfinished run's resume file is not used (a full new run); a run stopped again and resumed reads
  only the chunks not done, then streams from the end.
- The others check the resume rule and the pause gate without Spark.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from cdc.history.model import TableId
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.spark.connector import may_resume
from cdc.snapshot.chunks import Chunk, TablePlan
from cdc.snapshot.progress import ProgressState
from cdc.worker.runtime import ConnectRuntime, build_distributed

pytestmark = pytest.mark.integration

SECRET = "Pr0d-s3cret-jaas-pw"
JAAS = f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SECRET}";'


# ------------------------------------------------------------------------------------------- helpers


def _base(worker: ConnectRuntime) -> str:
    return worker.url.rstrip("/")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(predicate: Callable[[], Any], timeout: float, what: str, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException):
            last = predicate()
            if last:
                return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")


@pytest.fixture
def worker(kafka: Any) -> Iterator[ConnectRuntime]:
    """One distributed worker; key without schemas, value with: the sub-settings must reach Spark."""
    port = _free_port()
    runtime = build_distributed(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": f"{kafka.prefix}connect",
            "config.storage.topic": f"{kafka.prefix}configs",
            "offset.storage.topic": f"{kafka.prefix}offsets",
            "status.storage.topic": f"{kafka.prefix}status",
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "offset.storage.partitions": "1",
            "status.storage.partitions": "1",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter.schemas.enable": "true",
            "producer.linger.ms": "20",
            # Not used on a PLAINTEXT listener, but a secret the Spark producer is given like the worker's.
            "producer.sasl.jaas.config": JAAS,
            "offset.flush.interval.ms": "500",
            "task.shutdown.graceful.timeout.ms": "15000",
            # the connectors' snapshot.spark.state.dir is under the tests' temporary directory
            "connector.file.allowed.paths": tempfile.gettempdir(),
            "listeners": f"http://127.0.0.1:{port}",
            "rest.advertised.host.name": "127.0.0.1",
            "rest.advertised.port": str(port),
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "scheduled.rebalance.max.delay.ms": "0",
        }
    )
    runtime.start()
    try:
        _wait(lambda: requests.get(f"{_base(runtime)}/connectors", timeout=5).ok, 60, "the REST API")
        yield runtime
    finally:
        runtime.stop()


def _connector(
    mysql_db: Any, kafka: Any, tmp: Path, prefix: str, engine: str, **extra: str
) -> dict[str, str]:
    config = {
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "tasks.max": "1",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(100_000, 4_000_000)),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        # No brokers: the history falls back to the worker's (its context's worker_client_config).
        "schema.history.internal.kafka.topic": f"{prefix}.history",
        "snapshot.engine": engine,
    }
    if engine == "spark":
        config.update(
            {
                "snapshot.spark.master": "local[2]",
                "snapshot.spark.chunk.rows": "500",
                "snapshot.spark.state.dir": str(tmp / "snapshot-state"),
            }
        )
    config.update(extra)
    return config


def _create(worker: ConnectRuntime, name: str, config: dict[str, str]) -> None:
    response = requests.post(f"{_base(worker)}/connectors", json={"name": name, "config": config}, timeout=30)
    assert response.status_code in (200, 201), response.text


def _task_state(worker: ConnectRuntime, name: str) -> str | None:
    status = requests.get(f"{_base(worker)}/connectors/{name}/status", timeout=10)
    if not status.ok:
        return None
    tasks = status.json().get("tasks", [])
    if tasks and tasks[0]["state"] == "FAILED":
        pytest.fail(f"task of {name} failed: {tasks[0].get('trace')}")
    return str(tasks[0]["state"]) if tasks else None


def _messages(kafka: Any, topic: str) -> list[Any]:
    return list(kafka.read_to_end(topic, timeout=60))


def _wait_count(
    kafka: Any, topic: str, count: int, timeout: float, worker: Any = None, name: str = ""
) -> list[Any]:
    def enough() -> list[Any] | None:
        if worker is not None:
            _task_state(worker, name)  # fails the test at once when the task failed
        messages = _messages(kafka, topic)
        return messages if len(messages) >= count else None

    result: list[Any] = _wait(enough, timeout, f"{count} messages in {topic}", every=1.0)
    return result


def _offsets(worker: ConnectRuntime, name: str) -> list[dict[str, Any]]:
    response = requests.get(f"{_base(worker)}/connectors/{name}/offsets", timeout=10)
    assert response.ok, response.text
    return [o["offset"] for o in response.json()["offsets"]]


def _stored_offsets(kafka: Any, name: str, prefix: str) -> list[dict[str, Any] | None]:
    """Every value the offsets topic holds for the connector's partition, in order."""
    key = json.dumps([name, {"server": prefix}], separators=(",", ":")).encode()
    out: list[dict[str, Any] | None] = []
    for m in _messages(kafka, f"{kafka.prefix}offsets"):
        if m.key() == key:
            out.append(json.loads(m.value()) if m.value() is not None else None)
    return out


def _setup_table(mysql_db: Any, rows: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, "
            "amount DECIMAL(10,2), created DATETIME(3) NOT NULL, flag TINYINT(1) NOT NULL DEFAULT 0, "
            "data BLOB, d DATE, tm TIME(2))"
        )
        step = 1000
        for i in range(0, rows, step):
            values = ",".join(
                f"('name-{j}', {j * 3 % 10007}.{j % 100:02d}, "
                f"'2024-01-{1 + j % 28:02d} 10:{j % 60:02d}:00.{j % 1000:03d}', "
                f"{j % 2}, {'NULL' if j % 5 == 0 else repr(f'blob-{j}')}, '2020-02-{1 + j % 28:02d}', "
                f"'{j % 24:02d}:30:15.{j % 100:02d}')"
                for j in range(i, min(rows, i + step))
            )
            cur.execute(f"INSERT INTO t (name, amount, created, flag, data, d, tm) VALUES {values}")


def _table_ids(mysql_db: Any) -> set[int]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM t")
        return {int(r[0]) for r in cur.fetchall()}


def _normal(value: bytes | None, prefix: str, into: str, snapshot: bool) -> Any:
    """A JSON value with what legitimately differs between the two connectors taken out: the name
    (``topic.prefix``), the clock, and for snapshot records the snapshot's own binlog position."""
    if value is None:
        return None
    doc = json.loads(value.replace(prefix.encode(), into.encode()))
    payload = doc["payload"]
    for k in ("ts_ms", "ts_us", "ts_ns"):
        payload.pop(k, None)
    source = payload.get("source")
    if source is not None:
        for k in ("ts_us", "ts_ns"):
            source.pop(k, None)
        if snapshot:
            for k in ("ts_ms", "file", "pos", "gtid", "server_id"):
                source.pop(k, None)
    return doc


# ----------------------------------------------------------------------------- the resume rule, pause


def _state(directory: Path, start: BinlogOffset, completed: bool = False) -> None:
    table = TableId("db", "t")
    chunk = Chunk(table, 0, 1, ("id",), None, None, 10)
    state = ProgressState(
        ProgressState.path_for(directory, "c", "p"),
        "c",
        "p",
        start.to_dict(),
        [TablePlan(table, ("id",), 10, (chunk,), None)],
        {},
        completed,
    )
    state.save()


def test_an_unfinished_run_is_resumed_only_under_its_own_offset(tmp_path: Path) -> None:
    start = BinlogOffset("mysql-bin.000007", 1234, gtids="0-1-99", ts_sec=5)
    assert not may_resume(tmp_path, "c", "p", start.with_(snapshot=True))  # no resume file
    _state(tmp_path, start)
    assert may_resume(tmp_path, "c", "p", start.with_(snapshot=True))
    # As read back from the offsets topic: Debezium 3.x's "INITIAL" the task stores, an older cdc's true.
    stored = start.with_(snapshot=True).to_dict()
    assert stored["snapshot"] == "INITIAL"
    assert may_resume(tmp_path, "c", "p", BinlogOffset.from_dict(stored))
    assert may_resume(tmp_path, "c", "p", BinlogOffset.from_dict({**stored, "snapshot": True}))
    assert not may_resume(tmp_path, "c", "p", None)  # the connector's offsets were deleted
    assert not may_resume(tmp_path, "c", "p", start)  # a completed snapshot's offset
    assert not may_resume(tmp_path, "c", "p", start.with_(pos=99, snapshot=True))  # another run
    assert not may_resume(tmp_path, "other", "p", start.with_(snapshot=True))
    _state(tmp_path, start, completed=True)
    assert not may_resume(tmp_path, "c", "p", start.with_(snapshot=True))
    ProgressState.path_for(tmp_path, "c", "p").write_text("{not json")
    assert not may_resume(tmp_path, "c", "p", start.with_(snapshot=True))


def test_chunks_wait_while_the_worker_does_not_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    import cdc.mysql.task as task_mod
    from cdc.mysql.queue import ChangeEventQueue
    from cdc.mysql.task import MySqlSourceTask

    monkeypatch.setattr(task_mod, "PAUSED_AFTER_S", 0.3)
    task = MySqlSourceTask()
    task.queue = ChangeEventQueue(10, 10)
    task.poll_timeout = 0.05
    task._await_polling()  # polled (started) just now: no wait
    time.sleep(0.4)  # paused: no poll
    passed = threading.Event()

    def gate() -> None:
        task._await_polling()
        passed.set()

    waiter = threading.Thread(target=gate, daemon=True)
    waiter.start()
    assert not passed.wait(1.0)
    polling = threading.Event()

    def poll() -> None:  # resumed: the worker polls again, as often as it does
        while not polling.is_set():
            task.poll()

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        assert passed.wait(2.0)
    finally:
        polling.set()
        poller.join(2.0)
    time.sleep(0.4)
    failed: list[BaseException] = []

    def gate_until_stopped() -> None:
        try:
            task._await_polling()
        except BaseException as exc:
            failed.append(exc)

    waiter = threading.Thread(target=gate_until_stopped, daemon=True)
    waiter.start()
    time.sleep(0.3)
    task.stopping.set()
    waiter.join(2.0)
    assert failed and isinstance(failed[0], InterruptedError)


# ---------------------------------------------------------------------------------------------- Spark


@pytest.mark.slow
def test_spark_engine_writes_what_local_writes_then_streams(
    tmp_path: Path,
    kafka: Any,
    mysql_db: Any,
    worker: ConnectRuntime,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    import logging
    import re

    caplog.set_level(logging.INFO, logger="cdc.mysql.spark.connector")
    rows = 3000
    _setup_table(mysql_db, rows)
    local_prefix, spark_prefix = kafka.prefix + "loc", kafka.prefix + "spk"
    local_topic = f"{local_prefix}.{mysql_db.name}.t"
    spark_topic = f"{spark_prefix}.{mysql_db.name}.t"
    try:
        # A connector cannot hand its task worker entries (they would show in GET …/tasks, and pass the
        # client override policy): the worker drops them.
        local_config = _connector(mysql_db, kafka, tmp_path, local_prefix, "local")
        local_config["cdc.worker.producer.acks"] = "0"
        _create(worker, "mysql-local", local_config)
        started = time.monotonic()
        _create(worker, "mysql-spark", _connector(mysql_db, kafka, tmp_path, spark_prefix, "spark"))
        local = _wait_count(kafka, local_topic, rows, 180, worker, "mysql-local")
        spark = _wait_count(kafka, spark_topic, rows, 300, worker, "mysql-spark")

        # The snapshot's end is committed: an offset without the snapshot flag.
        def done() -> dict[str, Any] | None:
            found = _offsets(worker, "mysql-spark")
            return found[0] if found and not found[0].get("snapshot") else None

        end = _wait(done, 120, "the Spark snapshot's end offset")
        print(f"spark engine, {rows} rows, local[2]: {time.monotonic() - started:.1f} s to the end offset")
        spark = _messages(kafka, spark_topic)

        # Exactly one op=r per row; the same key bytes and value as the local connector's record.
        assert len(spark) == rows and len(local) == rows
        by_key = {m.key(): m for m in local}
        assert Counter(m.key() for m in spark) == Counter(m.key() for m in local)
        for m in spark:
            doc = _normal(m.value(), spark_prefix, local_prefix, snapshot=True)
            assert doc["payload"]["op"] == "r"
            assert doc == _normal(by_key[m.key()].value(), local_prefix, local_prefix, snapshot=True), m.key()
        markers = Counter(json.loads(m.value())["payload"]["source"]["snapshot"] for m in spark)
        assert markers == {"first": 1, "true": rows - 2, "last": 1}

        # The same schema change events (the schema history is written the same way).
        ddl_local = [
            _normal(m.value(), local_prefix, local_prefix, True) for m in _messages(kafka, local_prefix)
        ]
        ddl_spark = [
            _normal(m.value(), spark_prefix, local_prefix, True) for m in _messages(kafka, spark_prefix)
        ]
        # The snapshot's events only: both connectors stream what other tests' DDL may put there after.
        ddl_local = [d for d in ddl_local if d["payload"]["source"].get("snapshot") == "true"]
        ddl_spark = [d for d in ddl_spark if d["payload"]["source"].get("snapshot") == "true"]
        for doc in ddl_local + ddl_spark:
            doc["payload"].pop("ts_ms", None)
        assert ddl_spark == ddl_local
        # Debezium's snapshot DDL (as `make compat` shows it): the server's character set, DROP TABLE IF
        # EXISTS per table, DROP/CREATE DATABASE, USE, CREATE TABLE.
        db = f"`{mysql_db.name}`"
        expected = [
            "SET character_set_server=",
            f"DROP TABLE IF EXISTS {db}.`t`",
            f"DROP DATABASE IF EXISTS {db}",
            f"CREATE DATABASE {db} CHARSET ",
            f"USE {db}",
            "CREATE TABLE `t` (",
        ]
        ddl = [d["payload"]["ddl"] for d in ddl_spark]
        assert len(ddl) == len(expected), ddl
        assert all(d.startswith(e) for d, e in zip(ddl, expected, strict=True)), ddl

        # The offsets topic: the run's start S flagged snapshot as Debezium 3.x flags it (what a restart
        # resumes), then the end.
        snap = json.loads(spark[0].value())["payload"]["source"]
        stored = [o for o in _stored_offsets(kafka, "mysql-spark", spark_prefix) if o is not None]
        assert stored[0]["snapshot"] == "INITIAL" and (stored[0]["file"], stored[0]["pos"]) == (
            snap["file"],
            snap["pos"],
        )
        assert stored[-1] == end and "snapshot" not in end
        summary = re.search(r"end (\S+):(\d+)", caplog.text)  # the run's summary line
        assert summary is not None and (end["file"], end["pos"]) == (summary[1], int(summary[2]))
        assert (end["file"], end["pos"]) >= (snap["file"], snap["pos"])

        # After the snapshot: every change exactly once, as the local connector streams it.
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO t (name, created) VALUES ('new-1', NOW(3)), ('new-2', NOW(3))")
            cur.execute("UPDATE t SET amount = -1, name = 'upd' WHERE id IN (1, 1500, 3000)")
            cur.execute("DELETE FROM t WHERE id = 777")
            cur.execute("UPDATE t SET id = 100000 WHERE id = 42")  # a key change: d + tombstone + c
            cur.execute("INSERT INTO t (name, created) VALUES ('new-3', NOW(3))")
        expected_later = 2 + 3 + 2 + 3 + 1  # the delete's tombstone and the key change's three records
        local_later = _wait_count(kafka, local_topic, rows + expected_later, 120)[rows:]
        spark_later = _wait_count(kafka, spark_topic, rows + expected_later, 120)[rows:]
        time.sleep(2)  # nothing more may come
        spark_later = _messages(kafka, spark_topic)[rows:]
        ops = [json.loads(m.value())["payload"]["op"] if m.value() else None for m in spark_later]
        assert ops == ["c", "c", "u", "u", "u", "d", None, "d", None, "c", "c"], ops
        assert [m.key() for m in spark_later] == [m.key() for m in local_later]
        assert [_normal(m.value(), spark_prefix, local_prefix, False) for m in spark_later] == [
            _normal(m.value(), local_prefix, local_prefix, False) for m in local_later
        ]

        # Debezium's context headers on every record, the snapshot's (written by Spark) and the
        # stream's alike, with the task's one run id (the local connector's task has its own).
        def context(m: Any) -> tuple[tuple[str, bytes], ...]:
            return tuple((k, v) for k, v in (m.headers() or []) if k.startswith("__debezium.context."))

        names = ("connectorLogicalName", "taskId", "connectorName", "runId")
        spark_headers = {context(m) for m in spark + [m for m in spark_later if m.value()]}
        assert len(spark_headers) == 1, spark_headers
        (only,) = spark_headers
        assert [k for k, _ in only] == [f"__debezium.context.{n}" for n in names]
        assert [v for _, v in only][:3] == [spark_prefix.encode(), b"0", b"mysql"]
        local_headers = {context(m) for m in local}
        assert len(local_headers) == 1 and local_headers != spark_headers

        # The worker's client settings reached the task through its context, and show nowhere.
        from cdc.worker.stores.base import TaskId

        task = worker.herder.worker.task(TaskId("mysql-spark", 0))
        assert task is not None
        clients = task.task.context.worker_client_config()  # type: ignore[attr-defined]
        assert clients["value.converter.schemas.enable"] == "true"
        assert clients["key.converter.schemas.enable"] == "false"
        assert clients["producer.sasl.jaas.config"] == JAAS
        assert not [k for k in task.task_config if k.startswith("cdc.worker")]  # type: ignore[attr-defined]
        local_task = worker.herder.worker.task(TaskId("mysql-local", 0))
        assert local_task is not None
        assert not [k for k in local_task.task_config if k.startswith("cdc.worker.producer")]  # type: ignore[attr-defined]
        for path in ("tasks", "tasks-config", "config", "status", "offsets"):
            text = requests.get(f"{_base(worker)}/connectors/mysql-spark/{path}", timeout=10).text
            assert "cdc.worker" not in text and SECRET not in text, (path, text[:300])
        for path in ("tasks", "tasks-config"):
            text = requests.get(f"{_base(worker)}/connectors/mysql-local/{path}", timeout=10).text
            assert "cdc.worker" not in text, (path, text[:300])
        tasks = requests.get(f"{_base(worker)}/connectors/mysql-spark/tasks", timeout=10).json()
        assert tasks and tasks[0]["config"]["snapshot.engine"] == "spark"
        for m in _messages(kafka, f"{kafka.prefix}configs"):
            assert SECRET.encode() not in (m.value() or b"")
            if (m.key() or b"").startswith(b"task-"):  # connector configs are kept as submitted
                assert b"cdc.worker" not in (m.value() or b""), m.value()
        assert SECRET not in caplog.text
        out, err = capfd.readouterr()
        assert SECRET not in out and SECRET not in err
    finally:
        with contextlib.suppress(Exception):
            kafka.admin.delete_topics([f"__debezium-heartbeat.{p}" for p in (local_prefix, spark_prefix)])


@pytest.mark.slow
def test_spark_engine_stops_resumes_and_ignores_stale_state(
    tmp_path: Path,
    kafka: Any,
    mysql_db: Any,
    worker: ConnectRuntime,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    import logging

    import cdc.mysql.task as task_mod

    monkeypatch.setattr(task_mod, "PAUSED_AFTER_S", 2.0)  # the worker runs in this process
    # Chunks at most ~3 a second: on an idle machine a run (50 chunks) otherwise ended in about 5 s, before
    # the test, reading the whole topic back at each step, could stop it midway a second time.
    gate = task_mod.MySqlSourceTask._await_polling

    def slow_gate(self: Any) -> None:
        time.sleep(0.3)
        gate(self)

    monkeypatch.setattr(task_mod.MySqlSourceTask, "_await_polling", slow_gate)
    caplog.set_level(logging.INFO, logger="cdc.mysql.spark.connector")
    rows = 20_000
    _setup_table(mysql_db, rows)
    prefix = kafka.prefix + "spk"
    topic = f"{prefix}.{mysql_db.name}.t"
    name = "mysql-spark"
    config = _connector(mysql_db, kafka, tmp_path, prefix, "spark", **{"snapshot.spark.chunk.rows": "400"})
    url = f"{_base(worker)}/connectors/{name}"

    def stop_midway(after: int) -> float:
        """Stop the connector once ``after`` records are in; the seconds until its capture thread (and with
        it the Spark run: jobs cancelled, session stopped) is over. No record is written after that."""
        _wait_count(kafka, topic, after, 300, worker, name)
        assert not [o for o in _offsets(worker, name) if not o.get("snapshot")], "snapshot already over"
        stopped = time.monotonic()
        assert requests.put(f"{url}/stop", timeout=60).status_code == 204
        _wait(
            lambda: requests.get(f"{url}/status", timeout=10).json()["connector"]["state"] == "STOPPED",
            60,
            "STOPPED",
        )

        def over() -> bool:
            from pyspark import SparkContext

            alive = [t.name for t in threading.enumerate() if t.name == f"mysql-capture-{prefix}"]
            return not alive and SparkContext._active_spark_context is None

        _wait(over, 60, "the capture thread and its Spark run to end", every=0.1)
        took = time.monotonic() - stopped
        count = len(_messages(kafka, topic))
        time.sleep(4)
        assert len(_messages(kafka, topic)) == count, "records written after the Spark run ended"
        return took

    try:
        _create(worker, name, config)
        took = stop_midway(1500)
        print(f"stopped in {took:.1f} s")
        assert took < 30
        written = len(_messages(kafka, topic))
        assert written < rows
        assert "a new run" in caplog.text
        unfinished = _offsets(worker, name)
        assert unfinished and unfinished[0]["snapshot"] == "INITIAL"

        # Offsets deleted: the resume file of the stopped run must not be used: a new run reads every row.
        before_offsets_deleted = written
        assert requests.delete(f"{url}/offsets", timeout=60).ok
        assert _offsets(worker, name) == []
        caplog.clear()
        assert requests.put(f"{url}/resume", timeout=60).status_code == 202
        _wait_count(kafka, topic, written + 1500, 300, worker, name)
        assert "a new run" in caplog.text and "resuming" not in caplog.text

        # Paused: the worker stops polling, and after PAUSED_AFTER_S the Spark job submits no chunk.
        assert requests.put(f"{url}/pause", timeout=60).status_code == 202
        paused = time.monotonic()

        def quiet() -> int | None:
            count = len(_messages(kafka, topic))
            time.sleep(3)
            return count if len(_messages(kafka, topic)) == count else None

        held = _wait(quiet, 60, "no more records while paused", every=0)
        print(f"paused: no record written {time.monotonic() - paused:.1f} s after the pause")
        assert held < before_offsets_deleted + rows, "the snapshot ended while paused"
        assert requests.put(f"{url}/resume", timeout=60).status_code == 202
        _wait_count(kafka, topic, held + 400, 120, worker, name)
        before_second = written
        took = stop_midway(held + 800)
        print(f"stopped again in {took:.1f} s")
        written = len(_messages(kafka, topic))

        # Resumed: the chunks done are not read again; then streaming from the end.
        caplog.clear()
        assert requests.put(f"{url}/resume", timeout=60).status_code == 202

        def finished() -> bool:
            _task_state(worker, name)
            found = _offsets(worker, name)
            return bool(found) and not found[0].get("snapshot")

        _wait(finished, 300, "the end offset")
        assert "resuming the unfinished run" in caplog.text
        messages = _messages(kafka, topic)
        second_run = messages[before_second:]
        ids = Counter(json.loads(m.key())["id"] for m in second_run)
        assert set(ids) == _table_ids(mysql_db)  # the new run (with its resumption) covers every row
        # Only chunks in flight when it was stopped are read twice (at most one per reader).
        assert len(second_run) - rows <= 2 * 400 + 50, len(second_run) - rows
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("UPDATE t SET name = 'after' WHERE id = 5")
            cur.execute("DELETE FROM t WHERE id = 6")
        later = _wait_count(kafka, topic, len(messages) + 3, 120, worker, name)[len(messages) :]
        time.sleep(2)
        later = _messages(kafka, topic)[len(messages) :]
        assert [json.loads(m.value())["payload"]["op"] if m.value() else None for m in later] == [
            "u",
            "d",
            None,
        ]
    finally:
        with contextlib.suppress(Exception):
            requests.delete(url, timeout=30)
        with contextlib.suppress(Exception):
            kafka.admin.delete_topics([f"__debezium-heartbeat.{prefix}"])
