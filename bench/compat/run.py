"""``make compat``: the real Debezium and cdc capture one database side by side; their records are compared.

A run makes a database of its own (``compat_<tag>``, :mod:`bench.compat.workload`), starts Apache Kafka
Connect with Debezium's MariaDB connector (jars from Maven Central through :mod:`bench.jars`) and a
``cdc distributed`` worker (:mod:`bench.workers`), each with its own group, internal topics, topic prefix
(``dbz_<tag>``/``cdc_<tag>``) and history topic, JsonConverter with schemas on. Both snapshot the database;
once both emitted their last snapshot record and committed the snapshot's completed offset, the streaming
workload runs; once both have its last insert, both workers are stopped (a final offset commit each) and
every topic is read back and compared (:mod:`bench.compat.compare`). Both connectors carry a transform that
passes every record (a ``Filter`` whose predicate matches no topic), so that Kafka Connect logs each record
with its source offset (``TransformationChain`` at TRACE): the offsets Debezium's records carry, against
which the offsets each worker happened to commit are checked. The comparison is then run once more on
copies of cdc's records with one value changed and with one offset's fields altered, and must find each
change (the self-test).

Exit status: 0 when every difference is listed as intentional in ``docs/debezium-compatibility.md``, 1 when
one is not, 2 when the self-test fails.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from bench import jars
from bench.compat import avro, churn, record_offsets, workload
from bench.compat import compare as cmp
from bench.compat.matrix import ROWS, Row, run_matrix
from bench.compat.matrix import row as matrix_row
from bench.stack import Stack, unique
from bench.workers import WorkerProcess, WorkerSpec, cdc_worker, connect_worker, free_port, worker_properties

__all__ = ["Side", "connector_config", "main", "read_topic", "run_compat"]

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "debezium-compatibility.md"
CONNECTOR = "compat"
MARIADB_CONNECTOR = "io.debezium.connector.mariadb.MariaDbConnector"
# Kafka Connect logs each record, its source offset included, before each transform of the chain
# (TRACE); a Filter whose predicate matches no topic passes every record unchanged.
TRACE_LOGGER = "org.apache.kafka.connect.runtime.TransformationChain"
TRACE_TRANSFORM = {
    "transforms": "passAll",
    "transforms.passAll.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.passAll.predicate": "noTopic",
    "predicates": "noTopic",
    "predicates.noTopic.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.noTopic.pattern": "compat-no-such-topic",
}


@dataclass
class Side:
    """One contender: its worker, its names."""

    name: str  # "debezium" | "cdc"
    prefix: str
    group: str
    server_id: int
    spec: WorkerSpec | None = None
    worker: WorkerProcess | None = None
    extra_config: dict[str, str] = field(default_factory=dict)
    shared_offsets: str | None = None  # another worker's offsets topic (a hand-over)
    trace_records: bool = False  # log every record's source offset (Kafka Connect: TRACE, a pass-through)
    snapshot_commits: int = 0  # offsets committed when the snapshot's completed offset was
    completed_superseded: bool = False  # the first offset committed after the snapshot was a later one
    converter: str = "json"  # the row's key and value converter (bench.compat.matrix.Row.converter)
    decode: Callable[[bytes | None], bytes | None] | None = None  # Avro -> JsonConverter's shape

    @property
    def history_topic(self) -> str:
        return f"{self.prefix}-history"

    @property
    def offsets_topic(self) -> str:
        return self.shared_offsets or f"{self.group}-offsets"

    def topics(self, stack: Stack) -> list[str]:
        own = [t for t in stack.topics_with_prefix(self.prefix)]
        return [
            *own,
            f"__debezium-heartbeat.{self.prefix}",
            f"{self.group}-configs",
            self.offsets_topic,
            f"{self.group}-status",
        ]


def connector_config(side: Side, stack: Stack, databases: list[str]) -> dict[str, str]:
    """What a Debezium user must write for this capture, every other key at Debezium's default (the
    ``minimal`` snapshot lock, schema changes on, the history of every database of the server); the same
    keys for both sides. A matrix row adds its family's keys (``extra_config``)."""
    return {
        "connector.class": MARIADB_CONNECTOR,
        "tasks.max": "1",
        "database.hostname": stack.mysql_host,
        "database.port": str(stack.mysql_port),
        "database.user": "cdc",
        "database.password": "cdc",
        "database.server.id": str(side.server_id),
        "topic.prefix": side.prefix,
        "database.include.list": ",".join(databases),
        "schema.history.internal.kafka.bootstrap.servers": stack.bootstrap,
        "schema.history.internal.kafka.topic": side.history_topic,
        **(TRACE_TRANSFORM if side.trace_records else {}),
        **side.extra_config,
    }


def engine_config(engine: str, workdir: Path) -> dict[str, str]:
    """cdc's snapshot engine: ``local`` (its default, ``snapshot.engine=auto``, which reads the workload's
    small tables with the local engine) or ``spark`` (the parallel Spark read, JVM encoders
    where a table allows them, on ``local[2]`` with small chunks so that every table spans several)."""
    if engine == "local":
        return {}
    return {
        "snapshot.engine": "spark",
        "snapshot.spark.master": "local[2]",
        "snapshot.spark.partitions": "2",
        "snapshot.spark.chunk.rows": "40",
        "snapshot.spark.state.dir": str(workdir / "spark-state"),
    }


def worker_spec(side: Side, stack: Stack, workdir: Path, cache: Path, python: str) -> WorkerSpec:
    if side.converter == "avro":
        converters = avro.converter_props(side.name)
    else:
        converters = {"key.converter.schemas.enable": "true", "value.converter.schemas.enable": "true"}
    props = worker_properties(
        stack.bootstrap,
        side.group,
        free_port(),
        {**converters, "offset.flush.interval.ms": "1000", "offset.storage.topic": side.offsets_topic},
    )
    if side.name == "debezium":
        if side.converter != "avro":
            # Every plugin this worker loads (Debezium's connector, Kafka's converters, transforms and
            # predicates) has ServiceLoader manifests, as the worker's own WARN says under the default
            # hybrid_warn, whose extra reflection scan finds nothing more and took 91 of the worker's 113 s
            # start on the loaded machine. Apicurio's converter (the avro row) has no manifest.
            props["plugin.discovery"] = "service_load"
        plugin = jars.debezium_plugin_path(cache, "debezium-connector-mariadb")
        more = (jars.apicurio_converter_plugin_path(cache),) if side.converter == "avro" else ()
        levels = {TRACE_LOGGER: "TRACE"} if side.trace_records else None
        return connect_worker(workdir, cache, props, plugin_path=plugin, more_plugins=more, log_levels=levels)
    return cdc_worker(workdir, python, props)


def read_topic(
    bootstrap: str,
    topic: str,
    timeout: float = 30.0,
    decode: Callable[[bytes | None], bytes | None] | None = None,
) -> list[cmp.Record]:
    """Every record of ``topic`` up to its end now (all partitions, in partition then offset order); keys
    and values through ``decode`` if given (the avro row's, :class:`bench.compat.avro.Decoder`)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("compat-read"), "enable.auto.commit": False}
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or meta.error is not None:
            return []
        out: list[cmp.Record] = []
        for p in sorted(meta.partitions):
            tp = TopicPartition(topic, p)
            low, high = consumer.get_watermark_offsets(tp, timeout=10, cached=False)
            if high <= low:
                continue
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING)])
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                msg = consumer.poll(1.0)
                if msg is not None and msg.error() is None:
                    deadline = (
                        time.monotonic() + timeout
                    )  # a stall, not a slow read (Avro decoding), times out
                    key, value = msg.key(), msg.value()
                    if decode is not None:
                        key, value = decode(key), decode(value)
                    out.append(cmp.Record(key, value, list(msg.headers() or [])))
                    if msg.offset() >= high - 1:
                        break
                # A transaction's commit marker (cdc's exactly-once Spark chunks) ends a partition with an
                # offset no record has: the position passes it.
                if consumer.position([tp])[0].offset >= high:
                    break
            else:
                raise TimeoutError(f"could not read {topic}[{p}] to its end {high}")
        return out
    finally:
        consumer.close()


def committed_offsets(stack: Stack, side: Side) -> list[cmp.Record]:
    """The offsets ``side``'s worker committed for its connector's partition, in order."""
    return [
        r for r in read_topic(stack.bootstrap, side.offsets_topic) if r.key and side.prefix.encode() in r.key
    ]


def snapshot_committed(stack: Stack, side: Side) -> bool:
    """Whether ``side``'s worker committed the snapshot's completed offset (its last offset is not flagged
    ``snapshot``); notes how many offsets it had committed by then."""
    for i, rec in enumerate(committed_offsets(stack, side)):
        value = rec.value_json()
        # {}: Debezium's offset at a sink notification record, not the completed offset
        if isinstance(value, dict) and value and value.get("snapshot") in (None, False, "false"):
            # another client's DDL (or, with transaction metadata, any transaction's BEGIN/END) streamed
            # before the worker's flush supersedes the completed offset, which names no server id
            side.completed_superseded = "event" in value or "server_id" in value
            side.snapshot_commits = i if side.completed_superseded else i + 1
            return True
    return False


def capture(side: Side, stack: Stack, names: dict[str, str]) -> cmp.Captured:
    """Read back everything ``side`` wrote."""
    got = cmp.Captured(
        side.name,
        side.prefix,
        names,
        snapshot_commits=side.snapshot_commits,
        completed_superseded=side.completed_superseded,
    )
    for topic in stack.topics_with_prefix(side.prefix + "."):
        got.data[topic.removeprefix(side.prefix + ".")] = read_topic(
            stack.bootstrap, topic, decode=side.decode
        )
    heartbeat = read_topic(stack.bootstrap, f"__debezium-heartbeat.{side.prefix}", decode=side.decode)
    if heartbeat:
        got.data["__debezium-heartbeat"] = heartbeat
    notifications = side.extra_config.get("notification.sink.topic.name")
    if notifications:
        got.data[cmp.NOTIFICATION_TOPIC] = read_topic(stack.bootstrap, notifications, decode=side.decode)
    got.schema_changes = read_topic(stack.bootstrap, side.prefix, decode=side.decode)
    got.history = read_topic(stack.bootstrap, side.history_topic)
    got.offsets = committed_offsets(stack, side)
    if side.trace_records and side.spec is not None:
        log = side.spec.log.read_text(encoding="utf-8", errors="replace")
        if side.name == "debezium":
            got.record_offsets = cmp.record_offsets_from_log(log, side.prefix)
            got.heartbeat_offsets = cmp.heartbeat_offsets_from_log(log, side.prefix)
            got.traced = record_offsets.connect_traced(log, side.prefix)
        else:
            got.traced = record_offsets.cdc_traced(log, side.prefix)
    return got


def _signal_names(side: Side) -> dict[str, str]:
    """Each side's own signal table is ``<signal>``, the other one's ``<other signal>``."""
    return {t: "<signal>" if n == side.name else "<other signal>" for n, t in workload.SIGNAL_TABLES.items()}


def _incremental_reads(stack: Stack, side: Side, db: str) -> dict[str, int]:
    """How many ``op=r`` records of an incremental snapshot each table's topic has."""
    out = {}
    for table in workload.INCREMENTAL_TABLES:
        out[table] = sum(
            1
            for p in _payloads(stack, side, f"{db}.{table}")
            if isinstance(p, dict)
            and p.get("op") == "r"
            and p.get("source", {}).get("snapshot") == "incremental"
        )
    return out


def _payloads(stack: Stack, side: Side, suffix: str) -> list[Any]:
    out = []
    for rec in read_topic(stack.bootstrap, f"{side.prefix}.{suffix}", decode=side.decode):
        value = rec.value_json()
        if isinstance(value, dict):
            out.append(value.get("payload", value))
    return out


def wait_for(
    what: str, test: Callable[[], bool], sides: list[Side], timeout: float, own: set[str] | None = None
) -> None:
    """Until ``test()``; a connector FAILED meanwhile raises. ``own``: the run's databases, given while the
    snapshots read the server's schema: a failure on another client's dropped table or database is then
    :class:`churn.ServerChanged` (the run is redone, :mod:`bench.compat.churn`)."""
    deadline = time.monotonic() + timeout
    while not test():
        for side in sides:
            assert side.worker is not None
            try:
                status = side.worker.status(CONNECTOR)
            except RuntimeError:  # 404 until the worker wrote the connector's first status
                continue
            if "FAILED" in json.dumps(status):
                foreign = churn.foreign_vanished(json.dumps(status), own) if own is not None else None
                if foreign is not None:
                    raise churn.ServerChanged(
                        f"{side.name}: the snapshot failed on database {foreign!r}, which another client "
                        f"changed meanwhile: {json.dumps(status)[:1500]}"
                    )
                raise RuntimeError(
                    f"{side.name}: connector failed waiting for {what}: {json.dumps(status)[:3000]}"
                )
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(1.0)


def snapshot_done(stack: Stack, side: Side) -> bool:
    for topic in stack.topics_with_prefix(side.prefix + "."):
        for rec in read_topic(stack.bootstrap, topic, decode=side.decode):
            value = rec.value_json()
            source = (value or {}).get("payload", {}).get("source") if isinstance(value, dict) else None
            if isinstance(source, dict) and source.get("snapshot") == "last":
                return True
    return False


def _new_differences(
    dbz: cmp.Captured,
    before: list[cmp.Difference],
    altered: cmp.Captured,
    areas: tuple[str, ...],
    topic: str | None = None,
) -> list[cmp.Difference]:
    """What comparing ``altered`` finds that ``before`` (the run's differences) did not, in ``areas``."""
    seen = {(d.kind, d.index) for d in before}
    topics = {altered.normalise_text(topic)} if topic is not None else None
    return [d for d in cmp.compare(dbz, altered, areas, topics) if (d.kind, d.index) not in seen]


def _altered_offset(side: cmp.Captured, index: int, change: Callable[[dict[str, Any]], None]) -> cmp.Captured:
    altered = copy.deepcopy(side)
    rec = altered.offsets[index]
    value = rec.value_json()
    change(value)
    altered.offsets[index] = cmp.Record(rec.key, json.dumps(value).encode(), rec.headers)
    return altered


def self_test(dbz: cmp.Captured, ours: cmp.Captured, before: list[cmp.Difference]) -> str | None:
    """Alter copies of cdc's records: one value of a data record, the field set of the snapshot's completed
    offset (a ``row`` added) and the last offset (``event`` one lower); the comparison must report each."""
    altered = copy.deepcopy(ours)
    for topic, records in altered.data.items():
        for i, rec in enumerate(records):
            value = rec.value_json()
            after = value.get("payload", {}).get("after") if isinstance(value, dict) else None
            if isinstance(after, dict) and "id" in after and isinstance(after["id"], int):
                after["id"] += 1_000_000
                records[i] = cmp.Record(rec.key, json.dumps(value).encode(), rec.headers)
                now = _new_differences(dbz, before, altered, ("data",), topic)
                if not any(d.path == "value.payload.after.id" for d in now):
                    return f"the altered id was not reported (new differences: {now[:3]})"
                break
        else:
            continue
        break
    else:
        return "no record with an integer after.id to alter"
    if not ours.offsets:
        return "cdc committed no offset to alter"

    def add_row(value: dict[str, Any]) -> None:
        value["row"] = 1

    def event_lower(value: dict[str, Any]) -> None:
        value["event"] = int(value.get("event", 1)) - 1

    # the last offset Debezium's records carried too (one past them all is not checked: timing)
    last = next(
        (i for i in range(len(ours.offsets) - 1, -1, -1) if cmp.checkable(ours.offsets[i].value_json(), dbz)),
        None,
    )
    if last is None:
        return "cdc committed no streaming offset Debezium's records carried"
    checks = [("the last checkable offset's event one lower", last, event_lower)]
    if ours.completed is not None:
        checks.insert(0, ("a row in the snapshot's completed offset", ours.snapshot_commits - 1, add_row))
    elif not ours.completed_superseded:
        return "cdc committed no snapshot-completed offset to alter"
    for what, index, change in checks:
        now = _new_differences(dbz, before, _altered_offset(ours, index, change), ("offsets",))
        if not any(d.area == "offsets" for d in now):
            return f"{what} was not reported (new differences: {now[:3]})"
    return None


def run_compat(args: argparse.Namespace, row: Row | None = None) -> int:
    """One run (one row of the matrix: ``base`` unless given): 0, 1 (unexplained differences), 2 (the
    self-test failed). A run whose snapshot another client's DROP failed is redone
    (:mod:`bench.compat.churn`)."""
    row = row or ROWS[0]
    if row.per_key:
        from bench.compat.snapshot_writes import run_snapshot_writes

        return run_snapshot_writes(args, row)
    for attempt in range(1, churn.ATTEMPTS + 1):
        try:
            return _run_once(args, row)
        except churn.ServerChanged as exc:
            if attempt == churn.ATTEMPTS:
                raise
            print(f"[compat] not a difference: the server changed under a snapshot; rerun: {exc}"[:600])
    raise AssertionError("unreachable")


def _run_once(args: argparse.Namespace, row: Row) -> int:
    stack = Stack(REPO)
    cache = Path(args.cache).expanduser()
    workdir = Path(args.workdir or (cache / "compat" / unique("run")))
    workdir.mkdir(parents=True, exist_ok=True)
    tag = unique("x").split("-", 1)[1].replace("-", "_")
    db, other, bystander = f"compat_{tag}", f"compat_{tag}_o", f"compat_{tag}_b"
    names = {db: "<db>", other: "<other>", bystander: "<bystander>"}
    # A binlog client's server id must be unique on the server: rows the matrix runs side by side get one
    # per job slot (--slot); a lone run a random one.
    server_id = 480 + args.slot if getattr(args, "slot", None) is not None else int(tag[-4:], 16) % 480
    sides = [
        Side("debezium", f"dbz_{tag}", f"compat-dbz-{tag}", 5400 + server_id, trace_records=True),
        Side(
            "cdc",
            f"cdc_{tag}",
            f"compat-cdc-{tag}",
            6000 + server_id,
            trace_records=True,
            extra_config=engine_config(args.engine, workdir),
        ),
    ]
    if row.converter == "avro":
        decoder = avro.Decoder()
        for side in sides:
            side.converter, side.decode = "avro", decoder
    for side in sides:  # each its own signal table; the other side's is not captured
        own = workload.SIGNAL_TABLES[side.name]
        foreign = next(t for n, t in workload.SIGNAL_TABLES.items() if n != side.name)
        side.extra_config.update(
            {
                "signal.data.collection": f"{db}.{own}",
                "table.exclude.list": f"{db}.{foreign},{db}.{workload.EXCLUDED_TABLE}",
                "incremental.snapshot.chunk.size": "2",
                **row.config(db, side.prefix),
            }
        )
    print(f"[compat] row {row.name}: {row.family} {row.config(db)}")
    print(f"[compat] database {db}; prefixes {sides[0].prefix}, {sides[1].prefix}; workdir {workdir}")
    stack.sql(workload.snapshot_sql(db))
    stack.sql(workload.bystander_sql(bystander))
    jars.connect_libs(cache, jars.MARIADB_CONNECT_VERSION)
    jars.debezium_plugin_path(cache, "debezium-connector-mariadb")
    changed: churn.ServerChanged | None = None
    try:
        for side in sides:
            side.spec = worker_spec(side, stack, workdir, cache, args.python)
            side.worker = WorkerProcess(side.spec)
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda s: s.worker.wait_ready(), sides))  # type: ignore[union-attr]
        for side in sides:
            assert side.worker is not None
            if side.trace_records and side.name == "cdc":  # the log of every record, as Connect's at TRACE
                side.worker.request("PUT", f"/admin/loggers/{TRACE_LOGGER}", {"level": "TRACE"})
            side.worker.create_connector(CONNECTOR, connector_config(side, stack, [db, other]))
        run_dbs = {db, other, bystander}
        wait_for("both snapshots", lambda: all(snapshot_done(stack, s) for s in sides), sides, 300, run_dbs)
        # Each worker commits the snapshot's completed offset at its next flush (nothing follows it until
        # the streaming workload): waiting for it makes that commit part of every run on both sides.
        wait_for(
            "both snapshot-completed offsets committed",
            lambda: all([snapshot_committed(stack, s) for s in sides]),
            sides,
            300,
            run_dbs,
        )
        print("[compat] both snapshots ended and their completed offsets are committed; streaming workload")
        stack.sql(workload.streaming_sql(db, other, bystander))
        end = f"{db}.{workload.END_TABLE}"
        wait_for("the last streamed insert", lambda: all(_payloads(stack, s, end) for s in sides), sides, 300)
        # An incremental snapshot by a signal (Debezium's JSON, each side's signal table), chunks of two
        # rows, nothing else written meanwhile; then one more insert, which both stream after it.
        rows = {
            t: int(stack.sql(f"SELECT COUNT(*) FROM `{db}`.{t};").strip())
            for t in workload.INCREMENTAL_TABLES
        }
        print(f"[compat] incremental snapshot of {rows} by a signal")
        stack.sql(workload.incremental_sql(db))
        wait_for(
            "both incremental snapshots",
            lambda: all(_incremental_reads(stack, s, db) == rows for s in sides),
            sides,
            300,
        )
        stack.sql(f"INSERT INTO `{db}`.{workload.END_TABLE} VALUES (2);")
        wait_for(
            "the insert after it", lambda: all(len(_payloads(stack, s, end)) == 2 for s in sides), sides, 300
        )
        time.sleep(3)
    except churn.ServerChanged as exc:
        changed = exc
    finally:  # both at once: each its own process group, each its own final offset commit
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda w: w.stop(), [s.worker for s in sides if s.worker is not None]))
    if changed is not None:
        if not args.keep:
            stack.delete_topics([t for s in sides for t in s.topics(stack)])
            stack.sql("".join(f"DROP DATABASE IF EXISTS `{d}`;" for d in (db, other, bystander)))
        raise changed
    got = {side.name: capture(side, stack, {**names, **_signal_names(side)}) for side in sides}
    got["cdc"].parallel_snapshot = args.engine == "spark"
    versions = {
        "Kafka Connect": jars.MARIADB_CONNECT_VERSION,
        "Debezium": f"debezium-connector-mariadb {jars.MARIADB_VERSION}",
        "MariaDB": stack.sql("SELECT VERSION();").strip(),
        "Java": jars.java_version(),
    }
    diffs = cmp.compare(got["debezium"], got["cdc"])
    intentional = cmp.load_intentional(DOC)
    bad = cmp.unexplained(diffs, intentional)
    failed_self_test = self_test(got["debezium"], got["cdc"], diffs)
    counts = {
        side: {
            "data records": sum(len(v) for v in c.data.values()),
            "schema changes": len(c.schema_changes),
            "history": len(c.history),
            "foreign DDL (schema changes, history)": [
                cmp.own_ddl(c.schema_changes, c)[1],
                cmp.own_ddl(c.history, c)[1],
            ],
            "offsets": len(c.offsets),
            **({"record offsets logged": len(c.record_offsets)} if c.record_offsets is not None else {}),
            **(
                {
                    "transaction records not compared": cmp.transactions_left_out(
                        c, got["debezium"], got["cdc"]
                    )
                }
                if cmp.TRANSACTION_TOPIC in c.data
                else {}
            ),
        }
        for side, c in got.items()
    }
    report = "\n".join(
        [
            f"row: {row.name} ({row.family}) {json.dumps(row.keys)}",
            "versions: " + "; ".join(f"{k} {v}" for k, v in versions.items()),
            "records: " + "; ".join(f"{s}: {json.dumps(c)}" for s, c in counts.items()),
            "ignored: " + "; ".join(cmp.IGNORED),
            "",
            cmp.render(diffs, intentional),
            "",
            f"{len(diffs)} differences in {len({d.kind for d in diffs})} kinds; "
            f"{len(bad)} unexplained in {len({d.kind for d in bad})} kinds; "
            "self-test: "
            + (
                f"FAILED: {failed_self_test}"
                if failed_self_test
                else "the altered value was found; the altered offsets were found"
            ),
        ]
    )
    print(report)
    (workdir / "report.md").write_text(report + "\n", encoding="utf-8")
    if args.dump:
        for side, c in got.items():
            dump = {
                "data": {t: [_rec(r) for r in rs] for t, rs in c.data.items()},
                "schema_changes": [_rec(r) for r in c.schema_changes],
                "history": [_rec(r) for r in c.history],
                "offsets": [_rec(r) for r in c.offsets],
            }
            (workdir / f"{side}.json").write_text(json.dumps(dump, indent=1, ensure_ascii=False))
    if not args.keep:
        stack.delete_topics([t for s in sides for t in s.topics(stack)])
        stack.sql("".join(f"DROP DATABASE IF EXISTS `{d}`;" for d in (db, other, bystander)))
    if failed_self_test:
        return 2
    return 1 if bad else 0


def _rec(r: cmp.Record) -> dict[str, Any]:
    return {
        "key": r.key_json(),
        "value": r.value_json(),
        "headers": [[k, (v or b"").decode("utf-8", "replace")] for k, v in r.headers],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compat", description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default="~/.cache/cdc")
    parser.add_argument("--workdir")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--keep", action="store_true", help="keep the database and topics")
    parser.add_argument("--dump", action="store_true", help="write each side's records as JSON")
    parser.add_argument("--handover", action="store_true", help="hand a running capture over, both ways")
    parser.add_argument(
        "--engine",
        choices=["local", "spark"],
        default="local",
        help="cdc's snapshot engine (spark: the parallel Spark read of `cdc snapshot`)",
    )
    parser.add_argument("--row", action="append", help="a row of the matrix (bench/compat/matrix.py); base")
    parser.add_argument("--matrix", action="store_true", help="every row of the matrix, one run each")
    parser.add_argument("--jobs", type=int, default=1, help="the matrix's rows run this many at a time")
    parser.add_argument("--slot", type=int, help=argparse.SUPPRESS)  # set by --jobs for each row's process
    parser.add_argument(
        "--publish",
        action="store_true",
        help="write the rows' summary and the base row's report into docs/debezium-compatibility.md",
    )
    args = parser.parse_args(argv)
    if args.matrix or args.publish or (args.row and len(args.row) > 1):
        return run_matrix(args, [r.name for r in ROWS] if args.matrix else args.row or ["base"])
    if args.row:
        return run_compat(args, matrix_row(args.row[0]))
    if args.handover:
        from bench.compat.handover import run_handover

        return run_handover(args)
    return run_compat(args)
