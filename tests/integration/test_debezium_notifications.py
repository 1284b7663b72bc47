"""Notifications side by side with the real Debezium (MariaDB connector, sink channel): the initial snapshot
of two tables and an incremental snapshot by a signal, as each connector writes them to its notification
topic. Compared: the key and value schemas, and per notification its aggregate type, type, id (the signal's,
for the incremental snapshot) and additional data, with prefixes and database names normalised;
ids of the initial snapshot (random UUIDs) and timestamps aside. Slow: a JVM worker."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from bench import jars
from bench.compat import compare as cmp
from bench.compat.run import CONNECTOR, Side, connector_config, read_topic, worker_spec
from bench.stack import Stack, unique
from bench.workers import WorkerProcess
from cdc.api.records import SourceRecord
from cdc.converters import JsonConverter
from cdc.mysql.task import MariaDbSourceTask
from tests.integration.inprocess import NoOffsetsContext

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SIGNAL_DDL = "(id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL)"


def _done(values: list[Any]) -> bool:
    return any(
        v["payload"]["aggregate_type"] == "Incremental Snapshot" and v["payload"]["type"] == "COMPLETED"
        for v in values
    )


def test_notifications_as_debezium_writes_them(stack: object, tmp_path: Path) -> None:
    bench_stack = Stack(REPO)
    cache = Path("~/.cache/cdc").expanduser()
    tag = unique("x").split("-", 1)[1].replace("-", "_")
    db = f"ntf_{tag}"
    bench_stack.sql(
        f"CREATE DATABASE `{db}`; CREATE TABLE `{db}`.a (id INT PRIMARY KEY); "
        f"CREATE TABLE `{db}`.b (id INT PRIMARY KEY); INSERT INTO `{db}`.a VALUES (1), (2), (3); "
        f"INSERT INTO `{db}`.b VALUES (1); CREATE TABLE `{db}`.sig_dbz {SIGNAL_DDL}; "
        f"CREATE TABLE `{db}`.sig_cdc {SIGNAL_DDL};"
    )
    server_id = int(tag[-4:], 16) % 500
    sides = {
        "debezium": Side("debezium", f"dbz_{tag}", f"ntf-dbz-{tag}", 5400 + server_id),
        "cdc": Side("cdc", f"cdc_{tag}", f"ntf-cdc-{tag}", 6000 + server_id),
    }
    for name, side in sides.items():
        own, other = ("sig_dbz", "sig_cdc") if name == "debezium" else ("sig_cdc", "sig_dbz")
        side.extra_config.update(
            {
                "notification.enabled.channels": "sink",
                "notification.sink.topic.name": f"{side.prefix}-notifications",
                "signal.data.collection": f"{db}.{own}",
                "table.exclude.list": f"{db}.{other}",
                "incremental.snapshot.chunk.size": "2",
            }
        )
    dbz, ours = sides["debezium"], sides["cdc"]
    jars.connect_libs(cache)
    jars.debezium_plugin_path(cache, "debezium-connector-mariadb")
    task = MariaDbSourceTask()
    polled: list[SourceRecord] = []
    values = JsonConverter()
    values.configure({"schemas.enable": "true"}, False)

    def our_notes() -> list[Any]:
        topic = ours.extra_config["notification.sink.topic.name"]
        return [
            json.loads(values.from_connect_data(r.topic, r.value_schema, r.value) or b"null")
            for r in polled
            if r.topic == topic
        ]

    def their_notes() -> list[Any]:
        topic = dbz.extra_config["notification.sink.topic.name"]
        return [r.value_json() for r in read_topic(bench_stack.bootstrap, topic)]

    try:
        dbz.spec = worker_spec(dbz, bench_stack, tmp_path, cache, "python")
        dbz.worker = WorkerProcess(dbz.spec)
        dbz.worker.wait_ready()
        dbz.worker.create_connector(CONNECTOR, connector_config(dbz, bench_stack, [db]))
        config = connector_config(ours, bench_stack, [db])
        config["schema.history.internal"] = "io.debezium.relational.history.MemorySchemaHistory"
        task.initialize(NoOffsetsContext())
        task.start(config)

        def initial_done(notes: list[Any]) -> bool:
            return any(n["payload"]["type"] == "COMPLETED" for n in notes)

        deadline = time.monotonic() + 240
        while not (initial_done(our_notes()) and initial_done(their_notes())):
            polled += task.poll() or []
            assert time.monotonic() < deadline, "the initial snapshots did not end"
            status = json.dumps(dbz.worker.status(CONNECTOR)) if time.monotonic() % 5 < 0.3 else ""
            assert "FAILED" not in status, f"Debezium's task failed: {status[:3000]}"
        time.sleep(3)
        data = json.dumps({"data-collections": [f"{db}.a"], "type": "incremental"})
        for table in ("sig_dbz", "sig_cdc"):
            bench_stack.sql(f"INSERT INTO `{db}`.{table} VALUES ('inc-1', 'execute-snapshot', '{data}');")
        deadline = time.monotonic() + 240
        while not (_done(our_notes()) and _done(their_notes())):
            polled += task.poll() or []
            assert time.monotonic() < deadline, "the incremental snapshots did not end"
    finally:
        task.stop()
        if dbz.worker is not None:
            dbz.worker.stop()

    names = {db: "<db>", "sig_dbz": "<signal>", "sig_cdc": "<signal>"}

    def shape(side: Side, notes: list[Any]) -> list[Any]:
        captured = cmp.Captured(side.name, side.prefix, names)
        out = []
        for note in notes:
            p = note["payload"]
            out.append(
                (
                    p["aggregate_type"],
                    p["type"],
                    p["id"] if p["aggregate_type"] == "Incremental Snapshot" else "<uuid>",
                    # keys sharing a HashMap bucket (status, data_collections) come in the order of the
                    # Map.of Debezium copies, which Java randomises per JVM: compared as a set of entries
                    captured.normalise_text(json.dumps(p["additional_data"], sort_keys=True)),
                )
            )
        return out

    theirs, mine = their_notes(), our_notes()
    assert mine[0]["schema"] == theirs[0]["schema"]
    expected, got = shape(dbz, theirs), shape(ours, mine)
    assert got == expected, "\n".join(f"{a}\n{b}\n" for a, b in zip(expected, got, strict=False))
    bench_stack.delete_topics([t for s in sides.values() for t in s.topics(bench_stack)])
    bench_stack.sql(f"DROP DATABASE IF EXISTS `{db}`;")
