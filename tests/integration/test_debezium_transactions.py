"""``provide.transaction.metadata`` side by side with the real Debezium (3.6.1.Final's MariaDB connector).

Debezium runs in Apache Kafka Connect (jars from Maven Central, :mod:`bench.jars`), with Connect's
``TransformationChain`` at TRACE so that its worker log holds every record's source offset; cdc's task runs
in this process, its records converted by our JsonConverter. Both capture one database from the same
moment; a workload of transactions (several tables, a key change, a delete with its tombstone, a
transaction of a database neither captures, a DDL) runs once both stream. For every transaction of the
workload, the records of both sides must be the same bytes: the transaction topic's BEGIN/END (keys,
values, schemas), the change events (wall clocks and ``source.version`` aside) and each record's source
offset, keys in the same order (Debezium's ``HashMap``). Slow: a JVM worker, about two minutes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pymysql
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
EXTRA = {"provide.transaction.metadata": "true", "snapshot.mode": "no_data"}


def _gtid(cur: Any) -> str:
    cur.execute("SELECT @@last_gtid")
    return str(cur.fetchone()[0])


def _workload(stack: Stack, db: str, other: str) -> list[str]:
    """The transactions both sides must describe alike; their GTIDs (Debezium's transaction ids)."""
    conn = pymysql.connect(host=stack.mysql_host, port=stack.mysql_port, user="cdc", password="cdc")
    ids = []
    try:
        with conn.cursor() as cur:
            cur.execute(f"USE `{db}`")
            cur.execute("BEGIN")
            cur.execute("INSERT INTO a VALUES (1, 'x')")
            cur.execute("INSERT INTO b VALUES (1)")
            cur.execute("INSERT INTO a VALUES (2, 'y'), (3, 'z')")
            cur.execute("UPDATE a SET id = 10 WHERE id = 1")  # delete + tombstone + create
            cur.execute("DELETE FROM b WHERE id = 1")
            cur.execute("COMMIT")
            ids.append(_gtid(cur))
            cur.execute(f"INSERT INTO `{other}`.t VALUES (1)")  # a transaction of no captured table
            conn.commit()
            ids.append(_gtid(cur))
            cur.execute("ALTER TABLE a ADD COLUMN c INT")  # a DDL: BEGIN without END
            ids.append(_gtid(cur))
            cur.execute("UPDATE a SET c = 5 WHERE id = 2")
            conn.commit()
            ids.append(_gtid(cur))
    finally:
        conn.close()
    return ids


def _java_map(offset: Any) -> dict[str, str]:
    return {k: cmp._text(v) for k, v in dict(offset or {}).items()}


def _json_bytes(converter: JsonConverter, rec: SourceRecord, key: bool) -> bytes | None:
    if key:
        return converter.from_connect_data(rec.topic, rec.key_schema, rec.key)
    return converter.from_connect_data(rec.topic, rec.value_schema, rec.value)


def test_transaction_metadata_as_debezium_writes_it(stack: object, tmp_path: Path) -> None:
    bench_stack = Stack(REPO)
    cache = Path("~/.cache/cdc").expanduser()
    tag = unique("x").split("-", 1)[1].replace("-", "_")
    db, other = f"txc_{tag}", f"txc_{tag}_o"
    bench_stack.sql(
        f"CREATE DATABASE `{db}`; CREATE DATABASE `{other}`;"
        f"CREATE TABLE `{db}`.a (id INT PRIMARY KEY, v VARCHAR(10));"
        f"CREATE TABLE `{db}`.b (id INT PRIMARY KEY);"
        f"CREATE TABLE `{other}`.t (id INT PRIMARY KEY);"
    )
    server_id = int(tag[-4:], 16) % 500
    dbz = Side("debezium", f"dbz_{tag}", f"txc-dbz-{tag}", 5400 + server_id, trace_records=True)
    dbz.extra_config.update(EXTRA)
    ours = Side("cdc", f"cdc_{tag}", f"txc-cdc-{tag}", 6000 + server_id, extra_config=dict(EXTRA))
    jars.connect_libs(cache)
    jars.debezium_plugin_path(cache, "debezium-connector-mariadb")
    task = MariaDbSourceTask()
    polled: list[SourceRecord] = []
    try:
        dbz.spec = worker_spec(dbz, bench_stack, tmp_path, cache, "python")
        dbz.worker = WorkerProcess(dbz.spec)
        dbz.worker.wait_ready()
        dbz.worker.create_connector(CONNECTOR, connector_config(dbz, bench_stack, [db]))
        config = connector_config(ours, bench_stack, [db])
        config["schema.history.internal"] = "io.debezium.relational.history.MemorySchemaHistory"
        task.initialize(NoOffsetsContext())
        task.start(config)
        # Both stream once their schema-only snapshot wrote its schema changes (the CREATE TABLEs).
        deadline = time.monotonic() + 240
        while not (
            len(read_topic(bench_stack.bootstrap, dbz.prefix)) >= 3
            and sum(1 for r in polled if r.topic == ours.prefix) >= 3
        ):
            polled += task.poll() or []
            assert time.monotonic() < deadline, "the snapshots did not end"
            status = json.dumps(dbz.worker.status(CONNECTOR)) if time.monotonic() % 5 < 0.3 else ""
            assert "FAILED" not in status, f"Debezium's task failed: {status[:3000]}"
            time.sleep(0.2)
        time.sleep(3)
        ids = _workload(bench_stack, db, other)

        def done(records: list[Any]) -> bool:
            return any(ids[-1] in str(r) and "END" in str(r) for r in records)

        deadline = time.monotonic() + 240
        while not done([r.value for r in polled]) or not done(
            [r.value for r in read_topic(bench_stack.bootstrap, f"{dbz.prefix}.transaction")]
        ):
            polled += task.poll() or []
            assert time.monotonic() < deadline, "the workload's last END did not arrive on both sides"
        time.sleep(2)
        polled += task.poll() or []
    finally:
        task.stop()
        if dbz.worker is not None:
            dbz.worker.stop()

    names = {db: "<db>", other: "<other>"}
    side = {s.name: cmp.Captured(s.name, s.prefix, names) for s in (dbz, ours)}
    keys, values = JsonConverter(), JsonConverter()
    keys.configure({"schemas.enable": "true"}, True)
    values.configure({"schemas.enable": "true"}, False)

    def ours_records(suffix: str) -> list[cmp.Record]:
        topic = f"{ours.prefix}.{suffix}"
        return [
            cmp.Record(_json_bytes(keys, r, True), _json_bytes(values, r, False))
            for r in polled
            if r.topic == topic
        ]

    def ours_tx(rec: cmp.Record) -> bool:
        value = rec.value_json()
        return value is not None and value["payload"]["id"] in ids

    compared = 0
    # The transaction topic: every BEGIN/END of the workload's transactions, byte for byte.
    theirs = [r for r in read_topic(bench_stack.bootstrap, f"{dbz.prefix}.transaction") if ours_tx(r)]
    mine = [r for r in ours_records("transaction") if ours_tx(r)]
    statuses = [(r.value_json()["payload"]["status"], r.value_json()["payload"]["id"]) for r in theirs]
    assert statuses == [
        ("BEGIN", ids[0]),
        ("END", ids[0]),
        ("BEGIN", ids[1]),
        ("END", ids[1]),
        ("BEGIN", ids[2]),
        ("BEGIN", ids[3]),
        ("END", ids[3]),
    ], statuses
    assert len(mine) == len(theirs), [r.value_json()["payload"] for r in mine]
    for i, (a, b) in enumerate(zip(theirs, mine, strict=True)):
        assert side["cdc"].normalise_bytes(b.key) == side["debezium"].normalise_bytes(a.key), i
        assert side["cdc"].normalise_bytes(b.value) == side["debezium"].normalise_bytes(a.value), (
            i,
            b.value_json()["payload"],
            a.value_json()["payload"],
        )
    compared += len(theirs)
    # The change events of the workload's transactions: the same records, the transaction block included.
    for table in ("a", "b"):
        suffix = f"{db}.{table}"
        theirs = read_topic(bench_stack.bootstrap, f"{dbz.prefix}.{suffix}")
        mine = ours_records(suffix)
        assert len(theirs) == len(mine) > 0, (table, len(theirs), len(mine))
        for a, b in zip(theirs, mine, strict=True):
            assert side["cdc"].normalise_bytes(b.key) == side["debezium"].normalise_bytes(a.key)
            expected = cmp._Normaliser.envelope(
                json.loads(side["debezium"].normalise_bytes(a.value) or b"null")
            )
            got = cmp._Normaliser.envelope(json.loads(side["cdc"].normalise_bytes(b.value) or b"null"))
            assert got == expected, (table, got["payload"], expected["payload"])
            compared += 1
    # Every record's source offset while a workload transaction is in progress: same keys, same order.
    assert dbz.spec is not None
    log = dbz.spec.log.read_text(encoding="utf-8", errors="replace")
    their_offsets = [
        o for o in cmp.record_offsets_from_log(log, dbz.prefix) if o.get("transaction_id") in ids
    ]
    my_offsets = [
        _java_map(r.source_offset) for r in polled if (r.source_offset or {}).get("transaction_id") in ids
    ]
    assert len(their_offsets) >= 10
    assert len(my_offsets) == len(their_offsets), (my_offsets, their_offsets)
    topics = [r.topic for r in polled if (r.source_offset or {}).get("transaction_id") in ids]
    differ = [
        (i, topics[i], mine_offset, their_offset)
        for i, (mine_offset, their_offset) in enumerate(zip(my_offsets, their_offsets, strict=True))
        if list(mine_offset.items()) != list(their_offset.items())
    ]
    assert differ == [], "\n".join(map(str, differ))
    assert compared >= 12
    bench_stack.delete_topics(
        [t for s in (dbz, ours) for t in s.topics(bench_stack)] + [f"{ours.prefix}.transaction"]
    )
    bench_stack.sql(f"DROP DATABASE IF EXISTS `{db}`; DROP DATABASE IF EXISTS `{other}`;")
