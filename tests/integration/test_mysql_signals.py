"""Signals and incremental snapshots through a real worker, MariaDB and Kafka, with the JSON a Debezium
user sends.

Each test runs the MySQL connector in an in-process standalone worker on a database of its own, sends
signals through one channel (the signal table, a file, a Kafka topic) and reads the topics back. The
incremental snapshot runs while a writer updates, inserts and deletes rows: the topic reduced by key
must equal the table at the end, and no ``op=r`` record may follow a newer change of its key (stale).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from faultkit import mysql_connector
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from cdc.worker.rest.metrics import exposition
from cdc.worker.runtime import ConnectRuntime, build_standalone

pytestmark = pytest.mark.integration

DEBEZIUM_OFFSET = (
    Path(__file__).resolve().parent.parent / "fixtures" / "mysql" / "debezium_incremental_offset.json"
)
SIGNAL_DDL = (
    "CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
    "data VARCHAR(2048) NULL)"
)


@pytest.fixture
def worker(tmp_path: Path, kafka: Any) -> Iterator[ConnectRuntime]:
    runtime = _runtime(tmp_path, kafka)
    try:
        yield runtime
    finally:
        runtime.stop()


def _runtime(tmp_path: Path, kafka: Any) -> ConnectRuntime:
    runtime = build_standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false",
            "value.converter.schemas.enable": "false",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "300",
            "listeners": "http://127.0.0.1:0",
        }
    )
    runtime.start()
    return runtime


def _config(mysql_db: Any, kafka: Any, prefix: str, **extra: str) -> dict[str, str]:
    """faultkit's connector (schema history in Kafka), with a signal table and small chunks."""
    return mysql_connector(
        mysql_db,
        prefix,
        kafka.bootstrap_servers,
        **{
            "tasks.max": "1",
            "max.batch.size": "500",
            "signal.data.collection": f"{mysql_db.name}.debezium_signal",
            "snapshot.mode": "no_data",
            "incremental.snapshot.chunk.size": "100",
            **extra,
        },
    )


def _start(worker: ConnectRuntime, name: str, config: dict[str, str], **body: Any) -> None:
    base = worker.url.rstrip("/")
    response = requests.post(f"{base}/connectors", json={"name": name, "config": config, **body}, timeout=30)
    assert response.status_code in (200, 201), response.text
    if body.get("initial_state") == "STOPPED":
        return
    _await_running(worker, name)


def _await_running(worker: ConnectRuntime, name: str) -> None:
    base = worker.url.rstrip("/")
    deadline = time.monotonic() + 60
    while True:
        status = requests.get(f"{base}/connectors/{name}/status", timeout=30)
        tasks = status.json().get("tasks", []) if status.ok else []
        if tasks and tasks[0]["state"] == "RUNNING":
            return
        if tasks and tasks[0]["state"] == "FAILED":
            pytest.fail(f"task of {name} failed: {tasks[0].get('trace')}")
        if time.monotonic() > deadline:
            pytest.fail(f"task of {name} not running after 60 s: {status.text}")
        time.sleep(0.3)


def _task_progress(worker: ConnectRuntime, name: str) -> dict[str, Any] | None:
    """The ``incremental_snapshot`` entry of the task in the connector's and the task's REST status."""
    base = worker.url.rstrip("/")
    connector = requests.get(f"{base}/connectors/{name}/status", timeout=30)
    task = requests.get(f"{base}/connectors/{name}/tasks/0/status", timeout=30)
    assert connector.status_code == task.status_code == 200, (connector.text, task.text)
    entry = connector.json()["tasks"][0]
    assert entry == {"id": 0, **task.json()}
    assert entry["state"] == "RUNNING" and entry["worker_id"]
    assert set(entry) <= {"id", "state", "worker_id", "trace", "incremental_snapshot", "signals"}
    progress: dict[str, Any] | None = entry.get("incremental_snapshot")
    return progress


def _create_items(mysql_db: Any, rows: int, table: str = "items") -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            f"CREATE TABLE {table} (id INT PRIMARY KEY AUTO_INCREMENT, version INT NOT NULL, "
            "payload VARCHAR(40))"
        )
        cur.executemany(
            f"INSERT INTO {table} (version, payload) VALUES (1, %s)", [(f"p{i}",) for i in range(rows)]
        )


def _create_signal_table(mysql_db: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(SIGNAL_DDL)


def _signal(mysql_db: Any, signal_id: str, kind: str, data: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO debezium_signal VALUES (%s, %s, %s)",
            (signal_id, kind, data if isinstance(data, str) or data is None else json.dumps(data)),
        )


class Writer(threading.Thread):
    """Updates (bumping ``version``), inserts and deletes, in small transactions. Updates and deletes hit
    the first ``hot`` ids, so they fall inside the snapshot's windows while those ids are read."""

    def __init__(self, mysql_db: Any, table: str = "items", hot: int = 600) -> None:
        super().__init__(daemon=True)
        self.conn = mysql_db.connect(autocommit=False)
        self.table = table
        self.hot = hot
        self.stop_event = threading.Event()
        self.rng = random.Random(11)
        self.transactions = 0

    def run(self) -> None:
        with self.conn.cursor() as cur:
            while not self.stop_event.is_set():
                ids = [self.rng.randint(1, self.hot) for _ in range(4)]
                listed = ",".join(map(str, ids[:3]))
                cur.execute(f"UPDATE {self.table} SET version = version + 1 WHERE id IN ({listed})")
                cur.execute(f"INSERT INTO {self.table} (version, payload) VALUES (1, 'new')")
                if self.transactions % 3 == 0:
                    cur.execute(f"DELETE FROM {self.table} WHERE id = %s", (ids[3],))
                self.conn.commit()
                self.transactions += 1
                time.sleep(0.002)

    def finish(self) -> None:
        self.stop_event.set()
        self.join(10)
        self.conn.close()


def _events(
    kafka: Any, topic: str, isolation: str = "read_uncommitted"
) -> list[tuple[int, dict[str, Any] | None]]:
    """(id, value) of every record of ``topic`` in order (value None for a tombstone)."""
    out = []
    for msg in kafka.read_to_end(topic, timeout=60, isolation=isolation):
        key = json.loads(msg.key())
        out.append((int(key["id"]), None if msg.value() is None else json.loads(msg.value())))
    return out


def _table(mysql_db: Any, table: str = "items") -> dict[int, int]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(f"SELECT id, version FROM {table}")
        return {int(r[0]): int(r[1]) for r in cur.fetchall()}


def _reduce(events: list[tuple[int, dict[str, Any] | None]]) -> dict[int, int]:
    state: dict[int, int] = {}
    for key, value in events:
        if value is None or value["after"] is None:
            state.pop(key, None)
        else:
            state[key] = int(value["after"]["version"])
    return state


def _stale(events: list[tuple[int, dict[str, Any] | None]]) -> list[tuple[int, int, int]]:
    """Snapshot reads older than a change of their key already in the topic: (id, read, newest)."""
    newest: dict[int, int] = {}
    deleted: set[int] = set()
    stale = []
    for key, value in events:
        if value is None:
            continue
        if value["op"] == "d":
            deleted.add(key)
            continue
        version = int(value["after"]["version"])
        if value["op"] == "r" and (key in deleted or version < newest.get(key, 0)):
            stale.append((key, version, newest.get(key, -1)))
        newest[key] = max(newest.get(key, 0), version)
    return stale


def _await_equal(
    kafka: Any,
    topic: str,
    mysql_db: Any,
    timeout: float = 120,
    table: str = "items",
    isolation: str = "read_uncommitted",
) -> list[Any]:
    expected = _table(mysql_db, table)
    deadline = time.monotonic() + timeout
    while True:
        events = _events(kafka, topic, isolation)
        reduced = _reduce(events)
        if reduced == expected:
            return events
        if time.monotonic() > deadline:
            missing = [k for k in expected if reduced.get(k) != expected[k]]
            extra = [k for k in reduced if k not in expected]
            pytest.fail(
                f"{topic}: {len(missing)} keys missing/different (e.g. {missing[:5]}), {len(extra)} extra"
            )
        time.sleep(1)


# --------------------------------------------------------------------------------------------------- tests


@pytest.mark.honours("incremental.snapshot.parallelism")
@pytest.mark.parametrize("parallelism", ["1", "2", "4"])
def test_incremental_snapshot_from_the_signal_table_under_writes(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, parallelism: str
) -> None:
    prefix = kafka.topic("inc")
    _create_items(mysql_db, 3000)
    _create_signal_table(mysql_db)
    _start(
        worker,
        "inc",
        _config(mysql_db, kafka, prefix, **{"incremental.snapshot.parallelism": parallelism}),
    )
    writer = Writer(mysql_db)
    writer.start()
    time.sleep(1)
    # Skipped, logged with their ids, and the stream goes on:
    _signal(mysql_db, "bad-1", "no-such-action", {})
    _signal(mysql_db, "bad-2", "execute-snapshot", "{not json")
    _signal(mysql_db, "bad-3", "execute-snapshot", {"data-collections": []})
    _signal(mysql_db, "log-1", "log", {"message": "signal log line at {}"})
    _signal(
        mysql_db,
        "ad-hoc-1",
        "execute-snapshot",
        {"data-collections": [f"{mysql_db.name}.items"], "type": "incremental"},
    )
    time.sleep(8)
    writer.finish()
    assert writer.transactions > 50
    topic = f"{prefix}.{mysql_db.name}.items"
    events = _await_equal(kafka, topic, mysql_db)
    reads = [v for _, v in events if v is not None and v["op"] == "r"]
    assert len({v["after"]["id"] for v in reads}) >= 2500
    assert {v["source"]["snapshot"] for v in reads} == {"incremental"}
    assert _stale(events) == []
    # The watermarks went through the signal table, as Debezium writes them.
    signals = [
        json.loads(m.value())["after"]
        for m in kafka.read_to_end(f"{prefix}.{mysql_db.name}.debezium_signal")
        if m.value() is not None
    ]
    kinds = [s["type"] for s in signals]
    assert kinds[:5] == ["no-such-action", "execute-snapshot", "execute-snapshot", "log", "execute-snapshot"]
    # Debezium's snapshot metrics, on /metrics.
    rendered = generate_latest(exposition(None)).decode()
    ours = [
        (s.name, s.labels, s.value)
        for family in text_string_to_metric_families(rendered)
        for s in family.samples
        if s.labels.get("server") == prefix  # (and the connector's name in a `connector` label)
    ]
    assert ("debezium_mysql_snapshot_SnapshotCompleted", 1.0) in [(n, v) for n, _, v in ours]
    table = f"{mysql_db.name}.items"
    assert any(
        n == "debezium_mysql_snapshot_RowsScanned" and labels.get("table") == table and v >= 3000
        for n, labels, v in ours
    )
    assert (
        kinds.count("snapshot-window-open")
        == kinds.count("snapshot-window-close")
        >= 3000 // (100 * int(parallelism))
    )
    opened = next(s for s in signals if s["type"] == "snapshot-window-open")
    assert opened["id"].endswith("-open")
    assert set(json.loads(opened["data"])) == {"openWindowTimestamp"}


@pytest.mark.honours("signal.file", "incremental.snapshot.chunk.size")
def test_actions_from_a_file(worker: ConnectRuntime, mysql_db: Any, kafka: Any, tmp_path: Path) -> None:
    """file channel: a malformed line and an unknown type are skipped; pause, resume, stop, log, and a
    filtered snapshot (additional-conditions) with a surrogate key."""
    prefix = kafka.topic("file")
    _create_items(mysql_db, 1000)
    _create_signal_table(mysql_db)
    signal_file = tmp_path / "signals.txt"
    _start(
        worker,
        "file",
        _config(
            mysql_db,
            kafka,
            prefix,
            **{
                "signal.enabled.channels": "source,file",
                "signal.file": str(signal_file),
                "signal.poll.interval.ms": "200",
                "incremental.snapshot.chunk.size": "50",
            },
        ),
    )
    topic = f"{prefix}.{mysql_db.name}.items"
    lines = [
        "not json",
        json.dumps({"id": "x1", "type": "no-such-action", "data": {}}),
        json.dumps({"id": "l1", "type": "log", "data": {"message": "hello from a file at {}"}}),
        json.dumps(
            {
                "id": "s1",
                "type": "execute-snapshot",
                "data": {
                    "data-collections": [f"{mysql_db.name}\\.it.*"],
                    "type": "INCREMENTAL",
                    "additional-conditions": [
                        {"data-collection": f"{mysql_db.name}.items", "filter": "id <= 300"}
                    ],
                    "surrogate-key": "id",
                },
            }
        ),
    ]
    signal_file.write_text("\n".join(lines) + "\n")
    deadline = time.monotonic() + 60
    while len(_events(kafka, topic)) < 300:
        assert time.monotonic() < deadline, "the filtered snapshot did not complete"
        time.sleep(0.5)
    time.sleep(2)
    events = _events(kafka, topic)
    assert sorted(k for k, _ in events) == list(range(1, 301))
    assert signal_file.read_text() == ""
    # pause → nothing more is read; resume → the rest; stop → nothing after.
    signal_file.write_text(
        json.dumps(
            {"id": "s2", "type": "execute-snapshot", "data": {"data-collections": [f"{mysql_db.name}.items"]}}
        )
        + "\n"
        + json.dumps({"id": "p1", "type": "pause-snapshot", "data": {}})
        + "\n"
    )
    time.sleep(4)
    paused_count = len(_events(kafka, topic))
    assert paused_count < 300 + 1000
    # The REST status shows the paused snapshot on the task's entry, as /metrics shows its progress.
    progress = _task_progress(worker, "file")
    assert progress is not None and progress["paused"] is True
    assert progress["signal_id"] == "s2" and progress["table"] == f"{mysql_db.name}.items"
    assert progress["tables"] == [f"{mysql_db.name}.items"]
    assert 50 <= progress["rows_scanned"] < 1000 and progress["rows_scanned"] % 50 == 0
    assert progress["table_from"] == "[1]" and progress["table_to"] == "[1000]"
    assert progress["chunk_to"] == f"[{progress['rows_scanned']}]" and progress["chunk"]
    time.sleep(2)
    assert len(_events(kafka, topic)) == paused_count
    signal_file.write_text(json.dumps({"id": "r1", "type": "resume-snapshot", "data": {}}) + "\n")
    deadline = time.monotonic() + 60
    while len(_events(kafka, topic)) < 1300:
        assert time.monotonic() < deadline, "the resumed snapshot did not complete"
        time.sleep(0.5)
    time.sleep(1)
    assert _task_progress(worker, "file") is None  # completed: the task's entry is Connect's again
    # stop-snapshot of a running snapshot: no more reads after it.
    signal_file.write_text(
        json.dumps(
            {"id": "s3", "type": "execute-snapshot", "data": {"data-collections": [f"{mysql_db.name}.items"]}}
        )
        + "\n"
        + json.dumps({"id": "t1", "type": "stop-snapshot", "data": {"type": "incremental"}})
        + "\n"
    )
    time.sleep(4)
    stopped = len(_events(kafka, topic))
    assert stopped < 1300 + 1000
    time.sleep(2)
    assert len(_events(kafka, topic)) == stopped


@pytest.mark.honours(
    "signal.enabled.channels",
    "signal.kafka.topic",
    "signal.kafka.bootstrap.servers",
    "signal.kafka.groupId",
    "signal.poll.interval.ms",
)
def test_execute_snapshot_from_kafka(worker: ConnectRuntime, mysql_db: Any, kafka: Any) -> None:
    """kafka channel: records keyed by the topic prefix are signals; other keys are not."""
    prefix = kafka.topic("kafka")
    signal_topic = kafka.create_topic("signals")
    _create_items(mysql_db, 500)
    _create_signal_table(mysql_db)
    _start(
        worker,
        "kafka",
        _config(
            mysql_db,
            kafka,
            prefix,
            **{
                "signal.enabled.channels": "kafka",
                "signal.kafka.topic": signal_topic,
                "signal.kafka.bootstrap.servers": kafka.bootstrap_servers,
                "signal.kafka.groupId": prefix + "signals",
                "signal.poll.interval.ms": "200",
            },
        ),
    )
    producer = kafka.producer()
    body = {
        "type": "execute-snapshot",
        "data": {"data-collections": [f"{mysql_db.name}.items"], "type": "INCREMENTAL"},
    }
    producer.produce(signal_topic, key="someone-else", value=json.dumps({"id": "k0", **body}))
    producer.produce(signal_topic, key=prefix, value="{broken")
    producer.produce(signal_topic, key=prefix, value=json.dumps({"id": "k1", **body}))
    producer.flush(10)
    topic = f"{prefix}.{mysql_db.name}.items"
    events = _await_equal(kafka, topic, mysql_db, timeout=60)
    assert len(events) == 500  # one snapshot, not two
    assert {v["source"]["snapshot"] for _, v in events if v} == {"incremental"}
    # A restarted task does not act on the signal again: the group's offset passed it once acted on.
    time.sleep(1)
    base = worker.url.rstrip("/")
    restart = requests.post(f"{base}/connectors/kafka/restart?includeTasks=true", timeout=30)
    assert restart.status_code in (200, 202, 204), restart.text
    time.sleep(3)
    _await_running(worker, "kafka")
    time.sleep(4)
    assert len(_events(kafka, topic)) == 500


def test_table_added_to_the_include_list_is_back_filled_and_blocking_snapshot(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any
) -> None:
    """A table added to table.include.list over REST (the task restarts from its offsets, the stream goes
    on) is back-filled by an incremental snapshot signal while another table streams; then a blocking
    snapshot of the streaming table re-reads it while streaming waits."""
    prefix = kafka.topic("add")
    _create_items(mysql_db, 500)
    _create_items(mysql_db, 300, table="extra")
    _create_signal_table(mysql_db)
    db = mysql_db.name
    config = _config(
        mysql_db,
        kafka,
        prefix,
        **{
            "snapshot.mode": "initial",
            "table.include.list": f"{db}.items",
        },
    )
    _start(worker, "add", config)
    items_topic, extra_topic = f"{prefix}.{db}.items", f"{prefix}.{db}.extra"
    writer = Writer(mysql_db, hot=500)
    writer.start()
    try:
        # Not captured yet: a snapshot signal for it is skipped.
        _signal(mysql_db, "too-early", "execute-snapshot", {"data-collections": [f"{db}.extra"]})
        time.sleep(3)
        assert _events(kafka, extra_topic) == []
        config["table.include.list"] = f"{db}.items,{db}.extra"
        base = worker.url.rstrip("/")
        response = requests.put(f"{base}/connectors/add/config", json=config, timeout=30)
        assert response.status_code == 200, response.text
        time.sleep(2)
        _await_running(worker, "add")
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("UPDATE extra SET version = 5 WHERE id <= 10")  # streamed: extra is captured now
        _signal(mysql_db, "add-extra", "execute-snapshot", {"data-collections": [f"{db}.extra"]})
        events = _await_equal(kafka, extra_topic, mysql_db, table="extra", timeout=60)
        assert len([v for _, v in events if v and v["op"] == "r"]) >= 290
        assert {v["op"] for _, v in events if v} == {"u", "r"}
        assert _stale(events) == []
        # Blocking: items is read again as the initial snapshot reads it, the writer still running.
        so_far = _events(kafka, items_topic)
        before = len(so_far)
        # The config change restarted the task from its offsets: the initial snapshot was not taken again.
        assert len([v for _, v in so_far if v and v["op"] == "r"]) == 500
        _signal(
            mysql_db,
            "block-items",
            "execute-snapshot",
            {"data-collections": [f"{db}.items"], "type": "blocking"},
        )
        time.sleep(4)
    finally:
        writer.finish()
    events = _await_equal(kafka, items_topic, mysql_db)
    blocking = [v for _, v in events[before:] if v and v["op"] == "r"]
    assert len(blocking) >= 500
    markers = [v["source"]["snapshot"] for v in blocking]
    assert markers[0] == "first" and markers[-1] == "last" and set(markers[1:-1]) == {"true"}
    streamed_after = [v for _, v in events[before:] if v and v["op"] != "r"]
    assert streamed_after, "streaming went on after the blocking snapshot"


@pytest.mark.honours("read.only", "signal.data.collection")
def test_read_only_incremental_snapshot_writes_nothing(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any, tmp_path: Path
) -> None:
    """read.only=true: no signal table at all; the signal comes from a file, the watermarks are the
    server's GTID set; the same guarantees under writes."""
    prefix = kafka.topic("ro")
    _create_items(mysql_db, 3000)
    signal_file = tmp_path / "signals.txt"
    config = _config(
        mysql_db,
        kafka,
        prefix,
        **{
            "read.only": "true",
            "signal.enabled.channels": "file",
            "signal.file": str(signal_file),
            "signal.poll.interval.ms": "200",
        },
    )
    del config["signal.data.collection"]
    _start(worker, "ro", config)
    writer = Writer(mysql_db)
    writer.start()
    try:
        time.sleep(1)
        signal_file.write_text(
            json.dumps(
                {
                    "id": "ro-1",
                    "type": "execute-snapshot",
                    "data": {"data-collections": [f"{mysql_db.name}.items"], "type": "incremental"},
                }
            )
            + "\n"
        )
        time.sleep(8)
    finally:
        writer.finish()
    events = _await_equal(kafka, f"{prefix}.{mysql_db.name}.items", mysql_db)
    reads = [v for _, v in events if v is not None and v["op"] == "r"]
    assert len({v["after"]["id"] for v in reads}) >= 2500
    assert {v["source"]["snapshot"] for v in reads} == {"incremental"}
    assert _stale(events) == []
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SHOW TABLES")
        assert sorted(r[0] for r in cur.fetchall()) == ["items"]


def test_stop_snapshot_of_one_table_keeps_the_others(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any
) -> None:
    """stop-snapshot naming a queued table drops it; the table being read goes on to its end."""
    prefix = kafka.topic("stop")
    _create_items(mysql_db, 2000)
    _create_items(mysql_db, 500, table="other")
    _create_signal_table(mysql_db)
    _start(worker, "stop", _config(mysql_db, kafka, prefix, **{"incremental.snapshot.chunk.size": "20"}))
    db = mysql_db.name
    _signal(mysql_db, "two", "execute-snapshot", {"data-collections": [f"{db}.items", f"{db}.other"]})
    _signal(
        mysql_db, "stop-other", "stop-snapshot", {"data-collections": [f"{db}.other"], "type": "incremental"}
    )
    _await_equal(kafka, f"{prefix}.{db}.items", mysql_db, timeout=60)
    time.sleep(3)
    assert _events(kafka, f"{prefix}.{db}.other") == []


def test_an_offset_debezium_wrote_mid_snapshot_resumes_under_cdc(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any
) -> None:
    """The offset Debezium committed after the first chunk of 250 rows (recorded by bench/peer_signals.py)
    is given to cdc over PATCH /offsets: cdc reads ids 101-250, nothing of what Debezium had sent."""
    recorded = json.loads(DEBEZIUM_OFFSET.read_text().replace("${db}", mysql_db.name))["offset"]
    prefix = kafka.topic("dbz")
    _create_items(mysql_db, 250)
    _create_signal_table(mysql_db)
    _start(worker, "dbz", _config(mysql_db, kafka, prefix))
    base = worker.url.rstrip("/")
    assert requests.put(f"{base}/connectors/dbz/stop", timeout=30).status_code == 204
    time.sleep(2)
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        file, pos = cur.fetchone()[:2]
        cur.execute("SELECT @@GLOBAL.gtid_binlog_pos")
        gtids = cur.fetchone()[0]
    # Debezium's offset, at this server's current position (its own was in another run's binlog).
    offset = {**recorded, "file": file, "pos": int(pos), "gtids": gtids}
    offset.pop("event", None)
    response = requests.patch(
        f"{base}/connectors/dbz/offsets",
        json={"offsets": [{"partition": {"server": prefix}, "offset": offset}]},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert requests.put(f"{base}/connectors/dbz/resume", timeout=30).status_code == 202
    _await_running(worker, "dbz")
    topic = f"{prefix}.{mysql_db.name}.items"
    deadline = time.monotonic() + 60
    while len(events := _events(kafka, topic)) < 150:
        assert time.monotonic() < deadline, f"{len(events)} of ids 101-250 after 60 s"
        time.sleep(0.5)
    time.sleep(2)
    events = _events(kafka, topic)
    assert sorted(k for k, _ in events) == list(range(101, 251))
    assert {v["source"]["snapshot"] for _, v in events if v} == {"incremental"}


def test_composite_key_in_parallel_chunks_reads_each_row_once(
    worker: ConnectRuntime, mysql_db: Any, kafka: Any
) -> None:
    """A two-column primary key (INT, VARCHAR), three ranges per window: every row read exactly once."""
    prefix = kafka.topic("ck")
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE pairs (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (a, b))")
        cur.executemany(
            "INSERT INTO pairs VALUES (%s, %s, 1)", [(a, f"k{b:03d}") for a in range(20) for b in range(37)]
        )
    _create_signal_table(mysql_db)
    _start(
        worker,
        "ck",
        _config(
            mysql_db,
            kafka,
            prefix,
            **{"incremental.snapshot.parallelism": "3", "incremental.snapshot.chunk.size": "25"},
        ),
    )
    _signal(mysql_db, "ck-1", "execute-snapshot", {"data-collections": [f"{mysql_db.name}.pairs"]})
    topic = f"{prefix}.{mysql_db.name}.pairs"
    deadline = time.monotonic() + 60
    while len(messages := kafka.read_to_end(topic)) < 740:
        assert time.monotonic() < deadline, f"{len(messages)} of 740 rows after 60 s"
        time.sleep(0.5)
    time.sleep(2)
    keys = [tuple(json.loads(m.key()).values()) for m in kafka.read_to_end(topic)]
    assert len(keys) == len(set(keys)) == 740
    assert set(keys) == {(a, f"k{b:03d}") for a in range(20) for b in range(37)}
