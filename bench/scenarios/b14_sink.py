"""B14: the JDBC sink. Change events in Debezium's envelope, from a topic into PostgreSQL and into MariaDB.

The load (``--rows N`` change events, default 1 000 000): inserts of ``K = N / 2.2`` keys, then an update of
every key, then deletes of a tenth of them (op=d then the tombstone Debezium writes after it), all on one
partition, produced once per format into a topic of its own: JSON with schemas (JsonConverter,
``schemas.enable=true``) and Avro (cdc's AvroConverter against the stack's registry). The table has the
shape of dataset A: ``id BIGINT`` key, ``k INT``, ``c VARCHAR(120)``, ``pad VARCHAR(60)``,
``updated_at`` (MicroTimestamp).

Cases: ``{json,avro}-{postgresql,mariadb}``. Each run drops the target table, starts the contender (a
worker: started, then its sink connector created), and times from there until the target table
equals the expected final state (``K - K/10`` rows, every row at its updated version): rows/s is
change events per second; CPU-seconds of the contender's process tree and of the database server
(``postgres`` or ``mariadbd``, from the stack's pid files, all its processes) over the same span; the
contender's peak RSS. The final table is compared row by row with
the expected one (``mismatched`` counts missing, extra and different rows; 0 or the run is not valid).

Contenders (``bench/contenders/b14_*.py``): cdc's ``io.debezium.connector.jdbc.JdbcSinkConnector`` in
``cdc distributed``; Debezium's JDBC sink in Kafka Connect at its defaults and at its best settings; a
ceiling that applies the same changes from Python (PostgreSQL: ``COPY`` into the table and into a
staging table merged by one ``UPDATE … FROM`` and one ``DELETE … = ANY``; MariaDB: multi-row ``INSERT``,
``INSERT … ON DUPLICATE KEY UPDATE`` and ``DELETE … IN``, 1 000 rows per statement) without Kafka.
Confluent's JDBC sink is not on Maven Central (only on Confluent's own repository): not run here.

Options: ``--set formats=json,avro``, ``--set targets=postgresql,mariadb``, ``--set timeout=1800``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import psycopg
import pymysql

from bench.core import Case, Contender, Metric, Sample, Scenario, scenario
from bench.procstat import TreeMonitor, cpu_seconds, descendants
from bench.stack import Stack, unique

__all__ = ["TARGETS", "B14Sink", "Load", "SinkContender", "changes", "read_target"]

PG: dict[str, Any] = {"host": "127.0.0.1", "port": 5432, "user": "cdc", "password": "cdc", "dbname": "cdc"}
MY: dict[str, Any] = {"host": "127.0.0.1", "port": 3306, "user": "cdc", "password": "cdc"}
SCHEMA = "bench_b14"
TARGETS = {
    "postgresql": "jdbc:postgresql://127.0.0.1:5432/cdc",
    "mariadb": f"jdbc:mysql://127.0.0.1:3306/{SCHEMA}",
}
_EPOCH = dt.datetime(1970, 1, 1)
_BASE_US = int((dt.datetime(2024, 1, 1) - _EPOCH).total_seconds()) * 1_000_000

_FIELDS = [
    {"type": "int64", "optional": False, "field": "id"},
    {"type": "int32", "optional": True, "field": "k"},
    {"type": "string", "optional": True, "field": "c"},
    {"type": "string", "optional": True, "field": "pad"},
    {
        "type": "int64",
        "optional": True,
        "name": "io.debezium.time.MicroTimestamp",
        "version": 1,
        "field": "updated_at",
    },
]
_ROW = {"type": "struct", "fields": _FIELDS, "optional": True, "name": "bench.b14.items.Value"}
KEY_SCHEMA = {"type": "struct", "fields": [_FIELDS[0]], "optional": False, "name": "bench.b14.items.Key"}
VALUE_SCHEMA = {
    "type": "struct",
    "optional": False,
    "name": "bench.b14.items.Envelope",
    "version": 2,
    "fields": [
        {**_ROW, "field": "before"},
        {**_ROW, "field": "after"},
        {
            "type": "struct",
            "optional": False,
            "name": "io.debezium.connector.mysql.Source",
            "field": "source",
            "fields": [
                {"type": "string", "optional": False, "field": "connector"},
                {"type": "string", "optional": False, "field": "db"},
                {"type": "string", "optional": True, "field": "table"},
            ],
        },
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
    ],
}


def row(i: int, version: int) -> dict[str, Any]:
    """Key ``i`` at ``version`` (1: inserted, 2: updated)."""
    # whole seconds: Debezium's sink drops the fraction on MariaDB (docs/jdbc-sink.md), and B14 measures
    # speed; the fraction's fate is the side-by-side test's
    micros = _BASE_US + ((i * 7919 + version * 86_400) % (3 * 365 * 86_400)) * 1_000_000
    return {
        "id": i,
        "k": (i * 7 + version) % 100_000,
        "c": f"c-{i:012d}-{version}-" + "x" * 60,
        "pad": f"pad-{version}-{i % 997:04d}",
        "updated_at": micros,
    }


@dataclass(frozen=True)
class Load:
    events: int

    @property
    def keys(self) -> int:
        return max(10, int(self.events / 2.2))

    @property
    def records(self) -> int:
        """Records in the topic: an insert and an update per key, an op=d and a tombstone per tenth."""
        return 2 * self.keys + 2 * (self.keys // 10)

    def deleted(self, i: int) -> bool:
        return i % 10 == 0

    def final(self) -> dict[int, tuple[Any, ...]]:
        out = {}
        for i in range(1, self.keys + 1):
            if not self.deleted(i):
                r = row(i, 2)
                out[i] = (i, r["k"], r["c"], r["pad"], _EPOCH + dt.timedelta(microseconds=r["updated_at"]))
        return out


def changes(load: Load) -> Iterator[tuple[str, int, dict[str, Any] | None, dict[str, Any] | None]]:
    """(op, id, before, after) in topic order; op ``tombstone`` for the null value after a delete."""
    for i in range(1, load.keys + 1):
        yield "c", i, None, row(i, 1)
    for i in range(1, load.keys + 1):
        yield "u", i, row(i, 1), row(i, 2)
    for i in range(1, load.keys + 1):
        if load.deleted(i):
            yield "d", i, row(i, 2), None
            yield "tombstone", i, None, None


def produce(stack: Stack, topic: str, load: Load, fmt: str) -> int:
    """Write the load into ``topic`` (created with one partition); returns the number of records."""
    from confluent_kafka import Producer

    stack.create_topic(topic, 1)
    producer = Producer(
        {
            "bootstrap.servers": stack.bootstrap,
            "linger.ms": 50,
            "batch.size": 1_000_000,
            "compression.type": "lz4",
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    encode_key, encode_value = _encoders(topic, fmt)
    count = 0
    for op, i, before, after in changes(load):
        source = {"connector": "mysql", "db": SCHEMA, "table": "items"}
        value = (
            None
            if op == "tombstone"
            else {"before": before, "after": after, "source": source, "op": op, "ts_ms": 0}
        )
        while True:
            try:
                producer.produce(
                    topic, key=encode_key({"id": i}), value=None if value is None else encode_value(value)
                )
                break
            except BufferError:
                producer.poll(0.1)
        count += 1
        if count % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300) != 0:
        raise RuntimeError(f"B14: {topic}: records left unsent")
    return count


def _encoders(topic: str, fmt: str) -> tuple[Any, Any]:
    if fmt == "json":
        key_head = '{"schema":' + json.dumps(KEY_SCHEMA) + ',"payload":'
        value_head = '{"schema":' + json.dumps(VALUE_SCHEMA) + ',"payload":'
        return (
            lambda k: (key_head + json.dumps(k) + "}").encode(),
            lambda v: (value_head + json.dumps(v) + "}").encode(),
        )
    # Avro: cdc's own AvroConverter (Confluent's wire format) against the stack's registry
    from cdc.converters.json_converter import JsonConverter

    reader = JsonConverter()
    reader.configure({"schemas.enable": "true"}, is_key=False)
    key_reader = JsonConverter()
    key_reader.configure({"schemas.enable": "true"}, is_key=True)
    from cdc.converters.avro_converter import AvroConverter

    registry = os.environ.get("CDC_SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081")
    key_writer, value_writer = AvroConverter(), AvroConverter()
    key_writer.configure({"schema.registry.url": registry}, is_key=True)
    value_writer.configure({"schema.registry.url": registry}, is_key=False)
    json_key, json_value = _encoders(topic, "json")

    def key(k: dict[str, Any]) -> bytes:
        sv = key_reader.to_connect_data(topic, json_key(k))
        return value_or_fail(key_writer.from_connect_data(topic, sv.schema, sv.value))

    def value(v: dict[str, Any]) -> bytes:
        sv = reader.to_connect_data(topic, json_value(v))
        return value_or_fail(value_writer.from_connect_data(topic, sv.schema, sv.value))

    return key, value


def value_or_fail(data: bytes | None) -> bytes:
    if data is None:
        raise RuntimeError("the converter gave no bytes")
    return data


def reset_target(target: str) -> None:
    if target == "postgresql":
        with psycopg.connect(**PG, autocommit=True) as pg:
            pg.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}".encode())
            pg.execute(f"DROP TABLE IF EXISTS {SCHEMA}.items".encode())
        return
    my = pymysql.connect(**MY, autocommit=True)
    try:
        with my.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
            cur.execute(f"DROP TABLE IF EXISTS {SCHEMA}.items")
    finally:
        my.close()


def _query(target: str, sql: str) -> list[tuple[Any, ...]] | None:
    """The rows of ``sql`` on the target; None when it fails (no table yet)."""
    try:
        if target == "postgresql":
            with psycopg.connect(**PG, autocommit=True) as pg:
                return [tuple(r) for r in pg.execute(sql.encode()).fetchall()]
        my = pymysql.connect(**MY, autocommit=True)
        try:
            with my.cursor() as cur:
                cur.execute(sql)
                return [tuple(r) for r in cur.fetchall()]
        finally:
            my.close()
    except (psycopg.Error, pymysql.Error):
        return None


def read_target(target: str) -> dict[int, tuple[Any, ...]] | None:
    rows = _query(target, f"SELECT id, k, c, pad, updated_at FROM {SCHEMA}.items")
    return None if rows is None else {int(r[0]): r for r in rows}


def count_target(target: str) -> int:
    rows = _query(target, f"SELECT count(*) FROM {SCHEMA}.items")
    return -1 if not rows else int(rows[0][0])


def mismatched(expected: dict[int, tuple[Any, ...]], got: dict[int, tuple[Any, ...]] | None) -> int:
    if got is None:
        return len(expected)
    missing = sum(1 for k in expected if k not in got)
    extra = sum(1 for k in got if k not in expected)
    differ = sum(1 for k, v in expected.items() if k in got and _norm(got[k]) != v)
    return missing + extra + differ


def _norm(values: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for v in values:
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        out.append(v)
    return tuple(out)


def database_cpu(stack: Stack, target: str) -> float | None:
    pid = stack.pid("postgres" if target == "postgresql" else "mariadb")
    if pid is None:
        return None
    # living processes (PostgreSQL's backends, MariaDB's one process) plus the reaped ones (a backend that
    # ended: its CPU moved into the postmaster's children's time)
    return cpu_seconds(pid, children=True) + sum(cpu_seconds(p) for p in descendants(pid))


@scenario
class B14Sink(Scenario):
    id = "B14"
    title = "JDBC sink: Debezium change events from a topic into PostgreSQL and MariaDB"
    measures = (
        "Change events per second from a topic (inserts of K keys, updates of all, deletes of a tenth; "
        "Debezium's envelope, JSON with schemas and Avro) until the target table equals the expected final "
        "state; CPU-seconds of the contender and of the database server over that span; the contender's "
        "peak RSS; rows that differ from the expected table (must be 0)."
    )
    metrics = (
        Metric("events_per_s", "change events/s", "", "higher", 0),
        Metric("cpu_s", "contender CPU", "s", "lower", 1),
        Metric("db_cpu_s", "database CPU", "s", "lower", 1),
        Metric("peak_rss_mb", "contender peak RSS", "MB", "lower", 0),
        Metric("mismatched", "rows unlike the source", "", "lower", 0, ratio=False),
    )
    default_rows = 1_000_000

    def cases(self) -> list[Case]:
        formats = self.ctx.options.get("formats", "json,avro").split(",")
        targets = self.ctx.options.get("targets", "postgresql,mariadb").split(",")
        load = Load(self.rows())
        return [
            Case(f"{f}-{t}", f"{load.events:,} events, {f.upper()}, into {t}", {"format": f, "target": t})
            for f in formats
            for t in targets
        ]

    def setup(self) -> None:
        self.topics: dict[str, str] = {}

    def prepare(self, case: Case) -> None:
        fmt = case.params["format"]
        if fmt in self.topics:
            return
        stack = Stack(self.ctx.repo)
        topic = unique(f"bench-b14-{fmt}")
        started = time.monotonic()
        count = produce(stack, topic, Load(self.rows()), fmt)
        self.ctx.log(f"[bench]   B14: {count:,} records into {topic} in {time.monotonic() - started:.0f} s")
        self.topics[fmt] = topic

    def teardown(self, case: Case) -> None:
        pass


class SinkContender(Contender):
    """One run: the target dropped, the contender started, timed until the table is final."""

    scenario_id = "B14"
    label: ClassVar[str] = ""

    @property
    def b14(self) -> B14Sink:
        assert isinstance(self.scenario, B14Sink)
        return self.scenario

    def start(self, case: Case, topic: str, workdir: Path) -> Any:
        """Start writing; returns a handle given to :meth:`stop` (and to :meth:`monitor_pid`)."""
        raise NotImplementedError

    def monitor(self, handle: Any) -> TreeMonitor:
        """The monitor of the contender's process tree (CPU and peak RSS)."""
        raise NotImplementedError

    def peak_rss_kb(self, handle: Any) -> int:
        raise NotImplementedError

    def failed(self, handle: Any) -> str | None:
        """Why the contender cannot finish (its task FAILED), or None while it works."""
        return None

    def stop(self, handle: Any) -> None:
        raise NotImplementedError

    def run(self, case: Case, run: int) -> Sample:
        target, fmt = case.params["target"], case.params["format"]
        topic = self.b14.topics[fmt]
        load = Load(self.ctx.rows or self.b14.rows())
        expected = load.final()
        reset_target(target)
        stack = Stack(self.ctx.repo)
        timeout = float(self.ctx.options.get("timeout", "1800"))
        db0 = database_cpu(stack, target)
        handle = self.start(case, topic, self.ctx.workdir)
        started = time.monotonic()  # the connector exists (a worker's start-up is not the sink's work)
        try:
            monitor = self.monitor(handle)
            cpu0 = monitor.cpu()
            done_at = None
            failure = None
            while time.monotonic() - started < timeout:
                failure = self.failed(handle)
                if failure:
                    break
                if count_target(target) == len(expected):
                    got = read_target(target)
                    if mismatched(expected, got) == 0:
                        done_at = time.monotonic()
                        break
                time.sleep(0.5)
            time.sleep(monitor.interval * 2)  # a last sample
            cpu = monitor.cpu() - cpu0
            db = database_cpu(stack, target)
            rss = self.peak_rss_kb(handle)
        finally:
            self.stop(handle)
        got = read_target(target)
        wrong = mismatched(expected, got)
        elapsed = (done_at or time.monotonic()) - started
        return Sample(
            {
                "events_per_s": load.records / elapsed if done_at else None,
                "cpu_s": cpu,
                "db_cpu_s": (db - db0) if db is not None and db0 is not None else None,
                "peak_rss_mb": rss / 1024 if rss else None,
                "mismatched": float(wrong),
            },
            []
            if done_at
            else [failure or f"not final after {timeout:.0f} s ({wrong} rows unlike the source)"],
        )
