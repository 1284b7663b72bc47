"""Signals and incremental snapshots side by side with the real Debezium (MariaDB connector, Kafka Connect).

``python -m bench.peer_signals`` (the local stack up, the peers' jars fetched as bench/ does):

1. A table of 250 rows and a Debezium signal table in a database of its own.
2. Debezium's ``MariaDbConnector`` in Apache Kafka Connect (``snapshot.mode=no_data``, chunks of 100):
   an ``execute-snapshot`` row and a ``pause-snapshot`` row are inserted in one transaction, so both come
   before Debezium's first watermarks; Debezium reads one chunk and pauses. Its signal-table writes, change
   events and committed offset are captured, and the worker stops.
3. cdc's worker takes the same connector over, starting from Debezium's offset (``PATCH …/offsets``), and a
   ``resume-snapshot`` row is inserted: cdc must read the rest of the table, from after Debezium's last key.
4. The report prints both sides' formats next to each other and checks that the key sets match, that the
   reduced topic equals the table and that cdc re-read nothing Debezium had sent.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pymysql
from confluent_kafka import Consumer, TopicPartition

from bench import jars
from bench.workers import WorkerProcess, cdc_worker, connect_worker, free_port, worker_properties

BOOTSTRAP = "127.0.0.1:9092"
ROWS = 250


def _mysql(database: str | None = None) -> Any:
    return pymysql.connect(
        host="127.0.0.1", port=3306, user="cdc", password="cdc", database=database, autocommit=True
    )


def _read(topic: str) -> list[tuple[Any, Any]]:
    consumer = Consumer(
        {"bootstrap.servers": BOOTSTRAP, "group.id": f"peer-{uuid.uuid4()}", "enable.partition.eof": True}
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or meta.error is not None:
            return []
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        if high <= low:
            return []
        consumer.assign([TopicPartition(topic, 0, low)])
        out = []
        while True:
            msg = consumer.poll(5)
            if msg is None:
                break
            if msg.error() is not None:
                break
            out.append((_json(msg.key()), _json(msg.value())))
            if msg.offset() + 1 >= high:
                break
        return out
    finally:
        consumer.close()


def _json(data: bytes | None) -> Any:
    return None if data is None else json.loads(data)


def _wait(what: str, test: Any, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.5)


def _signal(db: str, signal_id: str, kind: str, data: dict[str, Any]) -> None:
    _signals(db, [(signal_id, kind, data)])


def _signals(db: str, signals: list[tuple[str, str, dict[str, Any]]]) -> None:
    """Signal rows in one transaction: the connector meets them together, before its own watermarks."""
    with _mysql(db) as conn, conn.cursor() as cur:
        cur.execute("BEGIN")
        for signal_id, kind, data in signals:
            cur.execute(
                "INSERT INTO debezium_signal VALUES (%s, %s, %s)", (signal_id, kind, json.dumps(data))
            )
        cur.execute("COMMIT")


def _config(db: str, prefix: str, klass: str) -> dict[str, str]:
    return {
        "connector.class": klass,
        "tasks.max": "1",
        "database.hostname": "127.0.0.1",
        "database.port": "3306",
        "database.user": "cdc",
        "database.password": "cdc",
        "database.server.id": str(random.randint(10_000, 90_000)),
        "database.ssl.mode": "disable",
        "topic.prefix": prefix,
        "database.include.list": db,
        "schema.history.internal.kafka.topic": prefix + ".history",
        "schema.history.internal.kafka.bootstrap.servers": BOOTSTRAP,
        "snapshot.mode": "no_data",
        "signal.data.collection": f"{db}.debezium_signal",
        "incremental.snapshot.chunk.size": "100",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/peer-signals"))
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "cdc")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    run = uuid.uuid4().hex[:6]
    db, prefix, name = f"peer_sig_{run}", f"peersig{run}", "peer-signals"
    with _mysql() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(
            f"CREATE TABLE {db}.items (id INT PRIMARY KEY, version INT NOT NULL, payload VARCHAR(20))"
        )
        cur.executemany(
            f"INSERT INTO {db}.items VALUES (%s, 1, %s)", [(i, f"p{i}") for i in range(1, ROWS + 1)]
        )
        cur.execute(
            f"CREATE TABLE {db}.debezium_signal (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
            "data VARCHAR(2048) NULL)"
        )
    items, signals = f"{prefix}.{db}.items", f"{prefix}.{db}.debezium_signal"
    report: dict[str, Any] = {"database": db, "prefix": prefix}

    # -- Debezium: one chunk, then paused ------------------------------------------------------------------
    port = free_port()
    props = worker_properties(BOOTSTRAP, f"peer-dbz-{run}", port, {"offset.flush.interval.ms": "500"})
    spec = connect_worker(args.workdir, args.cache, props, plugin_path=jars.debezium_plugin_path(args.cache))
    with WorkerProcess(spec) as worker:
        worker.wait_ready()
        worker.create_connector(name, _config(db, prefix, "io.debezium.connector.mariadb.MariaDbConnector"))
        worker.wait_running(name)
        time.sleep(5)
        _signals(
            db,
            [
                ("dbz-1", "execute-snapshot", {"data-collections": [f"{db}.items"], "type": "incremental"}),
                ("dbz-pause", "pause-snapshot", {}),
            ],
        )
        _wait("Debezium's first chunk", lambda: len(_read(items)) >= 100)
        time.sleep(5)  # more than the flush interval: the offset after the chunk is committed
        offsets = worker.request("GET", f"/connectors/{name}/offsets")
        worker.request("PUT", f"/connectors/{name}/stop")
        time.sleep(2)
    dbz_events = _read(items)
    dbz_signals = _read(signals)
    report["debezium"] = {
        "events": len(dbz_events),
        "first_event": dbz_events[0],
        "signal_rows": [v["after"] if v else None for _, v in dbz_signals],
        "offsets": offsets,
    }

    # -- cdc: takes over from Debezium's offset, resumes ------------------------------------------
    port = free_port()
    props = worker_properties(BOOTSTRAP, f"peer-cdc-{run}", port, {"offset.flush.interval.ms": "500"})
    spec = cdc_worker(args.workdir, sys.executable, props)
    with WorkerProcess(spec) as worker:
        worker.wait_ready()
        config = _config(db, prefix, "io.debezium.connector.mariadb.MariaDbConnector")
        # cdc's definition knows only the MySQL connector's ssl.mode values (disabled, …), not the MariaDB
        # connector's "disable": left at its default here (the server is on loopback without TLS).
        config.pop("database.ssl.mode")
        worker.create_connector(name, config, initial_state="STOPPED")
        time.sleep(2)
        worker.request("PATCH", f"/connectors/{name}/offsets", {"offsets": offsets["offsets"]})
        # Debezium keeps no pause in the offsets: a started task resumes the snapshot with a new chunk (cdc
        # too). This pause row, streamed before that chunk's close, stops cdc after one chunk, to compare
        # its offsets with Debezium's.
        _signal(db, "cdc-pause", "pause-snapshot", {})
        worker.request("PUT", f"/connectors/{name}/resume")
        worker.wait_running(name)
        _wait("cdc's first chunk", lambda: len({k["id"] for k, _ in _read(items)}) >= 200)
        time.sleep(3)
        paused_offsets = worker.request("GET", f"/connectors/{name}/offsets")
        _signal(db, "cdc-resume", "resume-snapshot", {})
        _wait("cdc's snapshot of the rest", lambda: len({k["id"] for k, _ in _read(items)}) >= ROWS)
        time.sleep(3)
        cdc_offsets = worker.request("GET", f"/connectors/{name}/offsets")
    events = _read(items)
    cdc_events = events[len(dbz_events) :]
    cdc_signals = _read(signals)[len(dbz_signals) :]
    report["cdc"] = {
        "events": len(cdc_events),
        "first_event": cdc_events[0] if cdc_events else None,
        "signal_rows": [v["after"] if v else None for _, v in cdc_signals],
        "offsets_paused": paused_offsets,
        "offsets": cdc_offsets,
    }
    dbz_offset = offsets["offsets"][0]["offset"]
    cdc_offset = paused_offsets["offsets"][0]["offset"]
    # -- checks ----------------------------------------------------------------------------------------
    dbz_ids = sorted(k["id"] for k, _ in dbz_events)
    cdc_ids = sorted(k["id"] for k, _ in cdc_events)
    dbz_value, cdc_value = dbz_events[0][1], cdc_events[0][1]
    checks = {
        "debezium read one chunk (ids 1..100)": dbz_ids == list(range(1, 101)),
        "cdc read the rest, after Debezium's last key": cdc_ids == list(range(101, ROWS + 1)),
        "same envelope fields": sorted(dbz_value) == sorted(cdc_value),
        "same source fields": sorted(dbz_value["source"]) == sorted(cdc_value["source"]),
        "source.snapshot both 'incremental'": {v["source"]["snapshot"] for _, v in events} == {"incremental"},
        # (event/row: how far into the binlog transaction each side committed, which varies by run)
        "same offset keys during a snapshot": set(dbz_offset) - {"event", "row"}
        == set(cdc_offset) - {"event", "row"},
        "same maximum key bytes": dbz_offset["incremental_snapshot_maximum_key"]
        == cdc_offset["incremental_snapshot_maximum_key"],
        "same collections JSON": dbz_offset["incremental_snapshot_collections"]
        == cdc_offset["incremental_snapshot_collections"],
        "primary key: Debezium's bytes with 100 → 200": cdc_offset["incremental_snapshot_primary_key"]
        == dbz_offset["incremental_snapshot_primary_key"][:-2] + "c8",
        "no snapshot keys once done": not any(k.startswith("incremental") for k in _offset_keys(cdc_offsets)),
        "same watermark types": {r["type"] for r in report["debezium"]["signal_rows"] if r}
        >= {r["type"] for r in report["cdc"]["signal_rows"] if r and r["type"].startswith("snapshot-window")},
        "same watermark data keys": _data_keys(report["debezium"]["signal_rows"])
        == _data_keys(report["cdc"]["signal_rows"]),
    }
    report["checks"] = checks
    out = args.workdir / f"report-{run}.json"
    out.write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(report, indent=2, default=str))
    with _mysql() as conn, conn.cursor() as cur:
        cur.execute(f"DROP DATABASE {db}")
    return 0 if all(checks.values()) else 1


def _offset_keys(offsets: dict[str, Any]) -> set[str]:
    return {k for item in offsets["offsets"] for k in item["offset"]}


def _data_keys(rows: list[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for row in rows:
        if row and row["type"].startswith("snapshot-window"):
            out[row["type"]] = sorted(json.loads(row["data"]))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
