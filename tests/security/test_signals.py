"""What a signal sender can do: no more than Debezium lets them (issue 24).

Whoever can insert into the signal table or produce to the signal topic writes an ``execute-snapshot``
signal's ``data-collections`` regexes and its ``additional-conditions`` SQL filter. Each test runs a real
worker process (basic auth on), a real MySQL connector task on MariaDB and Kafka, and sends the signals an
attacker sends:

* a filter that carries a second statement (``1=1; INSERT INTO canary SELECT … FROM salaries``, also hidden
  in an executable comment) runs nothing: the canary table stays empty, the signal is reported and skipped;
* every connection cdc opens refuses ``SELECT 1; SELECT 2`` (multi-statements off, both drivers);
* a poison signal (a filter the server refuses) is skipped, streaming goes on, a restart does not fail
  again; ``name LIKE "A%"`` simply works;
* a catastrophic regex leaves ``GET /connectors`` answering within 1 s and is skipped.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from attack import call, standalone_worker
from faultkit import mysql_connector
from worker_process import WorkerProcess, wait_for

from cdc.drivers import DRIVER_ENV, mysql_driver
from cdc.jdbc.dialects import MySqlDialect
from cdc.jdbc.url import parse_jdbc_url
from cdc.mysql.config import MySqlSettings
from cdc.mysql.connection import connect

pytestmark = pytest.mark.integration

ATTACK = "1=1; INSERT INTO {db}.canary SELECT * FROM {db}.salaries"
HIDDEN = "1=1 /*!; INSERT INTO {db}.canary SELECT * FROM {db}.salaries */"
EVIL_REGEXES = ["(.*.*)*x", r"(?:\w|\w\w|\w\w\w)*\.(?:\w|\w\w)*!"]
NAMES = ["Alice", "Bob", "Anna", "Carl", "Arthur", "Dora", "Eve", "Abel", "Ben", "Zoe"]
SIGNAL_DDL = (
    "CREATE TABLE debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
    "data VARCHAR(2048) NULL)"
)


# ------------------------------------------------------------------------------------------------ helpers
def _tables(mysql_db: Any, items: str = "items") -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(SIGNAL_DDL)
        cur.execute(f"CREATE TABLE `{items}` (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(40))")
        cur.executemany(f"INSERT INTO `{items}` (name) VALUES (%s)", [(n,) for n in NAMES])
        cur.execute("CREATE TABLE salaries (id INT PRIMARY KEY, amount INT)")
        cur.execute("INSERT INTO salaries VALUES (1, 90000), (2, 120000)")
        cur.execute("CREATE TABLE canary (id INT PRIMARY KEY, amount INT)")


def _connector(worker: WorkerProcess, mysql_db: Any, kafka: Any, prefix: str, **extra: str) -> str:
    config = mysql_connector(
        mysql_db,
        prefix,
        kafka.bootstrap_servers,
        **{
            "tasks.max": "1",
            "signal.data.collection": f"{mysql_db.name}.debezium_signal",
            "snapshot.mode": "no_data",
            "incremental.snapshot.chunk.size": "4",
            "max.batch.size": "100",
            **extra,
        },
    )
    response = call(worker, "PUT", f"/connectors/{prefix}/config", json=config)
    assert response.status_code == 201, response.text
    _await_task(worker, prefix)
    _await_binlog_client(mysql_db, str(config["database.server.id"]))
    return f"{prefix}.{mysql_db.name}"


def _await_binlog_client(mysql_db: Any, server_id: str) -> None:
    """Until the connector's binlog client is registered with the server: its snapshot has taken its
    position, so a signal written from now on is streamed (RUNNING comes before that, and a signal
    written in between was left behind the position on a loaded machine)."""

    def registered() -> bool:
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("SHOW SLAVE HOSTS")
            return any(str(row[0]) == server_id for row in cur.fetchall())

    wait_for(registered, 60, f"the binlog client {server_id} registered", 0.2)


def _task(worker: WorkerProcess, name: str) -> dict[str, Any]:
    status = call(worker, "GET", f"/connectors/{name}/status")
    tasks = status.json().get("tasks", []) if status.ok else []
    return dict(tasks[0]) if tasks else {}


def _await_task(worker: WorkerProcess, name: str) -> None:
    def running() -> bool:
        task = _task(worker, name)
        assert task.get("state") != "FAILED", task.get("trace")
        return task.get("state") == "RUNNING"

    wait_for(running, 60, f"the task of {name} running")


def _skipped(worker: WorkerProcess, name: str) -> int:
    task = _task(worker, name)
    assert task.get("state") == "RUNNING", task.get("trace")
    return int(task.get("signals", {}).get("skipped", 0))


def _signal(mysql_db: Any, signal_id: str, data: dict[str, Any], kind: str = "execute-snapshot") -> None:
    """The row a user with INSERT on the signal table (and nothing else) writes."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO debezium_signal VALUES (%s, %s, %s)", (signal_id, kind, json.dumps(data)))


def _insert(mysql_db: Any, name: str, table: str = "items") -> int:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(f"INSERT INTO `{table}` (name) VALUES (%s)", (name,))
        return int(cur.lastrowid)


def _records(kafka: Any, topic: str) -> list[dict[str, Any]]:
    return [json.loads(m.value())["payload"] for m in kafka.read_to_end(topic, timeout=30) if m.value()]


def _await_streamed(mysql_db: Any, kafka: Any, topic: str, name: str) -> list[dict[str, Any]]:
    """Insert ``name`` into the topic's table; the topic's records once that insert is among them
    (streaming went on)."""
    _insert(mysql_db, name, topic.rsplit(".", 1)[1])

    def arrived() -> list[dict[str, Any]] | None:
        records = _records(kafka, topic)
        done = any(r["op"] == "c" and r["after"]["name"] == name for r in records)
        return records if done else None

    result: list[dict[str, Any]] = wait_for(arrived, 60, f"the insert of {name} streamed", 0.5)
    return result


def _canary(mysql_db: Any) -> int:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM canary")
        return int(cur.fetchone()[0])


def _metric(worker: WorkerProcess, name: str, server: str) -> float:
    """``name``'s value for ``server`` (its series carry the connector's name as well)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = call(worker, "GET", "/metrics").text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels.get("server") == server:
                return float(sample.value)
    raise AssertionError(f"{name} for {server} not in /metrics")


# -------------------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("driver", ["mysqlclient", "pymysql"])
def test_every_connection_refuses_a_second_statement(
    mysql_db: Any, kafka: Any, driver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Multi-statements are off on the connector's connections (plain and row-reading) and the JDBC
    source's, whichever driver reads: ``SELECT 1; SELECT 2`` is a syntax error, the canary stays empty."""
    monkeypatch.setenv(DRIVER_ENV, driver)
    assert mysql_driver() == driver
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE canary (id INT PRIMARY KEY)")
    settings = MySqlSettings.parse(mysql_connector(mysql_db, kafka.topic("multi"), kafka.bootstrap_servers))
    url = f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}?user={mysql_db.user}"
    dialect = MySqlDialect(parse_jdbc_url(url + f"&password={mysql_db.password}"), dt.UTC)
    connections = {
        "connector": connect(settings, database=mysql_db.name),
        "connector rows": connect(settings, streaming=True, database=mysql_db.name),
        "jdbc source": dialect.connect(),
    }
    try:
        for what, conn in connections.items():
            cur = conn.cursor()
            with pytest.raises(Exception) as refused:  # each driver has its own class
                cur.execute("SELECT 1; INSERT INTO canary VALUES (1)")
                while cur.nextset():
                    pass
            assert refused.value.args[0] == 1064, (what, refused.value)  # ER_PARSE_ERROR
            cur.close()
    finally:
        for conn in connections.values():
            conn.close()
    assert _canary(mysql_db) == 0


def test_a_filter_runs_no_second_statement(
    tmp_path: Path, mysql_db: Any, kafka: Any, workers: list[WorkerProcess]
) -> None:
    """``…; INSERT INTO canary SELECT * FROM salaries`` as a blocking and an incremental snapshot's
    filter, in the 1.x ``additional-condition``, hidden in an executable comment, from the signal table and
    the signal topic: nothing is inserted, each signal is reported and skipped, streaming goes on."""
    _tables(mysql_db)
    worker = standalone_worker(tmp_path, kafka, workers)
    prefix = kafka.topic("sqlsig")
    signal_topic = kafka.create_topic("sqlsig-signals")
    topic = (
        _connector(
            worker,
            mysql_db,
            kafka,
            prefix,
            **{
                "signal.enabled.channels": "source,kafka",
                "signal.kafka.topic": signal_topic,
                "signal.kafka.bootstrap.servers": kafka.bootstrap_servers,
                "signal.kafka.groupId": prefix + "-signals",
                "signal.poll.interval.ms": "200",
            },
        )
        + ".items"
    )
    items = f"{mysql_db.name}.items"
    attack, hidden_attack = ATTACK.format(db=mysql_db.name), HIDDEN.format(db=mysql_db.name)
    condition = [{"data-collection": items, "filter": attack}]
    _signal(
        mysql_db, "s1", {"data-collections": [items], "type": "blocking", "additional-conditions": condition}
    )
    _signal(
        mysql_db,
        "s2",
        {"data-collections": [items], "type": "incremental", "additional-conditions": condition},
    )
    _signal(mysql_db, "s3", {"data-collections": [items], "type": "blocking", "additional-condition": attack})
    hidden = [{"data-collection": items, "filter": hidden_attack}]
    _signal(
        mysql_db, "s4", {"data-collections": [items], "type": "blocking", "additional-conditions": hidden}
    )
    producer = kafka.producer()
    body = {"data-collections": [items], "type": "blocking", "additional-conditions": condition}
    producer.produce(
        signal_topic, key=prefix, value=json.dumps({"id": "k1", "type": "execute-snapshot", "data": body})
    )
    producer.flush(10)

    def settled() -> bool:
        task = _task(worker, prefix)
        skipped = int(task.get("signals", {}).get("skipped", 0))
        return _canary(mysql_db) > 0 or task.get("state") != "RUNNING" or skipped >= 5

    wait_for(settled, 60, "five signals skipped")
    assert _canary(mysql_db) == 0, "a signal ran a statement as the connector's user"
    assert _skipped(worker, prefix) >= 5
    records = _await_streamed(mysql_db, kafka, topic, "after the attack")
    assert [r for r in records if r["op"] == "r"] == []  # nothing was read for those signals
    last = _task(worker, prefix)["signals"]["last_skipped"]
    assert last["id"] in {"s4", "k1"} and "not one SQL expression" in last["reason"]
    assert _metric(worker, "cdc_mysql_signals_skipped_total", prefix) >= 5
    time.sleep(2)
    assert _canary(mysql_db) == 0


def test_poison_signals_are_skipped_and_streaming_goes_on(
    tmp_path: Path, mysql_db: Any, kafka: Any, workers: list[WorkerProcess]
) -> None:
    """``name LIKE "A%"`` works; a filter the server refuses (blocking and incremental) is reported and
    skipped; streaming goes on, and a restarted task neither fails nor acts on them again."""
    _tables(mysql_db)
    worker = standalone_worker(tmp_path, kafka, workers, {"offset.flush.interval.ms": "500"})
    prefix = kafka.topic("poison")
    topic = _connector(worker, mysql_db, kafka, prefix) + ".items"
    items = f"{mysql_db.name}.items"

    def filtered(kind: str, text: str) -> dict[str, Any]:
        return {
            "data-collections": [items],
            "type": kind,
            "additional-conditions": [{"data-collection": items, "filter": text}],
        }

    _signal(mysql_db, "like", filtered("incremental", 'name LIKE "A%"'))

    def a_names() -> list[str] | None:
        read = sorted(r["after"]["name"] for r in _records(kafka, topic) if r["op"] == "r")
        return read if len(read) >= 4 else None

    expected = sorted(n for n in NAMES if n.startswith("A"))
    assert wait_for(a_names, 60, "the A names snapshotted") == expected
    _signal(mysql_db, "bad-blocking", filtered("blocking", "no_such_column = 1"))
    _signal(mysql_db, "bad-incremental", filtered("incremental", "no_such_column = 1"))
    wait_for(lambda: _skipped(worker, prefix) >= 2, 60, "two poison signals skipped")
    _await_streamed(mysql_db, kafka, topic, "after the poison")
    assert _metric(worker, "cdc_mysql_signals_skipped_total", prefix) >= 2
    time.sleep(2)  # the offsets past the poison signals are flushed
    restart = call(worker, "POST", f"/connectors/{prefix}/restart?includeTasks=true")
    assert restart.status_code in (200, 202, 204), restart.text
    time.sleep(2)
    _await_task(worker, prefix)
    records = _await_streamed(mysql_db, kafka, topic, "after the restart")
    time.sleep(2)
    assert _task(worker, prefix).get("state") == "RUNNING"
    assert sorted(r["after"]["name"] for r in records if r["op"] == "r") == expected  # not again


def test_a_catastrophic_regex_leaves_the_worker_answering(
    tmp_path: Path, mysql_db: Any, kafka: Any, workers: list[WorkerProcess]
) -> None:
    """``(.*.*)*x`` (hours of backtracking in Python's ``re``, with the GIL held) and a pattern that
    backtracks in any engine, in ``data-collections`` and an additional condition's ``data-collection``:
    ``GET /connectors`` keeps answering within 1 s throughout, each signal is skipped, streaming goes on."""
    long_table = "customers_and_orders_archive_by_region_and_year"
    _tables(mysql_db, long_table)
    worker = standalone_worker(tmp_path, kafka, workers)
    prefix = kafka.topic("regex")
    topic = _connector(worker, mysql_db, kafka, prefix) + f".{long_table}"
    latencies: list[float] = []
    failures: list[str] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            started = time.monotonic()
            try:
                answer = call(worker, "GET", "/connectors", timeout=5)
                if answer.status_code != 200:
                    failures.append(f"{answer.status_code} {answer.text[:200]}")
            except Exception as exc:  # a timeout is the failure this test is about
                failures.append(repr(exc))
            latencies.append(time.monotonic() - started)
            time.sleep(0.1)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    try:
        time.sleep(1)
        _signal(mysql_db, "r1", {"data-collections": [EVIL_REGEXES[0]], "type": "incremental"})
        _signal(mysql_db, "r2", {"data-collections": [EVIL_REGEXES[1]], "type": "blocking"})
        condition = [{"data-collection": EVIL_REGEXES[1], "filter": "id > 0"}]
        table = f"{mysql_db.name}.{long_table}"
        _signal(mysql_db, "r3", {"data-collections": [table], "additional-conditions": condition})
        wait_for(lambda: _skipped(worker, prefix) >= 3, 60, "three regex signals skipped")
        _await_streamed(mysql_db, kafka, topic, "after the regexes")
        time.sleep(1)
    finally:
        done.set()
        prober.join(10)
    assert failures == []
    assert len(latencies) > 20 and max(latencies) < 1.0, sorted(latencies)[-5:]
    last = _task(worker, prefix)["signals"]["last_skipped"]
    assert last["id"] == "r3" and "took longer than" in last["reason"]
