"""Side by side with the real Debezium JDBC sink (``io.debezium:debezium-connector-jdbc`` from Maven Central,
in Apache Kafka Connect): the same topic, written by cdc's class of the same name and by Debezium's, into
PostgreSQL and MariaDB; the two tables compared column type by column type and row by row.

The topic is cdc's MySQL source capturing the table of every type of the MySQL connector's type table
(``tests/fixtures/mysql/all_types.sql``): its rows snapshotted, the same rows inserted while streaming,
two updates and a delete, as JSON with schemas. Each database gets two tables per sink: the peers'
defaults (``insert.mode=insert``, no key; ``schema.evolution=basic`` so that the table is created) and
``insert.mode=upsert`` + ``primary.key.mode=record_key`` + ``delete.enabled=true``.

Every difference found must be one of ``bench/sink_known.py``'s (each with its reason, listed in
docs/jdbc-sink.md); a difference that goes away must leave that list too. Needs java and mvn (the peer's
jars are fetched into ``${CDC_CACHE:-~/.cache/cdc}/peers`` on first use). About 2 minutes: slow.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests

from bench import jars
from bench.sink_compare import Difference, TableImage, compare, read_table, render
from bench.sink_known import KNOWN, PEER_FAIL_LOGS, PEER_FAILS, known_keys
from bench.workers import WorkerProcess, connect_worker, free_port, worker_properties
from tests.integration.inprocess import standalone

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mysql"
SQL = (FIXTURES / "all_types.sql").read_text()
PG: dict[str, Any] = {"host": "127.0.0.1", "port": 5432, "user": "cdc", "password": "cdc", "dbname": "cdc"}
_EMPTY = TableImage({}, [])
CACHE = Path(os.environ.get("CDC_CACHE", "~/.cache/cdc")).expanduser()


def _statements(text: str) -> list[str]:
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*\n", body) if s.strip()]


CREATE = _statements(SQL.split("-- @@ROWS")[0])
ROWS = _statements(SQL.split("-- @@ROWS")[1])


@pytest.fixture
def pg_schema() -> Iterator[str]:
    schema = "peer_" + uuid.uuid4().hex[:10]
    with psycopg.connect(**PG, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with psycopg.connect(**PG, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def peer_worker(tmp_path: Path, kafka: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[WorkerProcess]:
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("java and mvn are needed to run Debezium's JDBC sink (scripts/install-deps.sh)")
    plugin_path = jars.debezium_jdbc_sink_plugin_path(CACHE)
    monkeypatch.setenv("BENCH_CONNECT_HEAP", "-Xms128M -Xmx768M")
    port = free_port()
    group = f"{kafka.prefix}peer-connect"
    props = worker_properties(
        kafka.bootstrap_servers,
        group,
        port,
        {"key.converter.schemas.enable": "true", "value.converter.schemas.enable": "true"},
    )
    spec = connect_worker(tmp_path, CACHE, props, plugin_path=plugin_path)
    spec.argv = ["nice", "-n", "10", *spec.argv]  # a shared machine: the JVM yields
    with WorkerProcess(spec) as worker:
        worker.wait_ready(240)
        yield worker


def _post(url: str, name: str, config: dict[str, str]) -> None:
    response = requests.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=60)
    assert response.status_code in (200, 201), response.text


def _state(url: str, name: str) -> tuple[str | None, str]:
    response = requests.get(f"{url}/connectors/{name}/status", timeout=10)
    tasks = response.json().get("tasks") or [] if response.ok else []
    return (tasks[0]["state"], tasks[0].get("trace") or "") if tasks else (None, "")


def _sink_configs(
    family: str, topic: str, namespace: str, mysql_db: Any, owner: str
) -> dict[str, dict[str, str]]:
    """The two sinks of one side (``owner`` cdc or dbz) into one database: defaults and keyed."""
    url = (
        "jdbc:postgresql://127.0.0.1:5432/cdc"
        if family == "postgresql"
        else f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}"
    )
    modes: dict[str, dict[str, str]] = {
        "plain": {},
        "keyed": {"insert.mode": "upsert", "primary.key.mode": "record_key", "delete.enabled": "true"},
    }
    out: dict[str, dict[str, str]] = {}
    excluded = ",".join(f"{topic}:{column}" for column in PEER_FAILS[family])
    for mode, keys in modes.items():
        out[f"{owner}-{mode}"] = {
            "connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector",
            "tasks.max": "1",
            "topics": topic,
            "connection.url": url,
            "connection.username": "cdc",
            "connection.password": "cdc",
            "schema.evolution": "basic",
            "collection.name.format": f"{namespace}.{owner}_{mode}",
            "field.exclude.list": excluded,
            **keys,
        }
    return out


def _run(mysql_db: Any, statements: list[str], base: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SET @base = %s", (base,))
        for statement in statements:
            cur.execute(statement)


def _tables_ready(family: str, namespace: str, plain_rows: int, keyed_rows: int) -> bool:
    for owner in ("cdc", "dbz"):
        for mode, count in (("plain", plain_rows), ("keyed", keyed_rows)):
            image = read_table(family, namespace, f"{owner}_{mode}")
            if image is None or len(image.rows) != count:
                return False
    return True


@pytest.mark.parametrize("family", ["postgresql", "mysql"])
def test_side_by_side_with_debeziums_jdbc_sink(
    family: str, tmp_path: Path, kafka: Any, mysql_db: Any, pg_schema: str, peer_worker: WorkerProcess
) -> None:
    # one database per test and per Connect worker: Debezium's sinks into PostgreSQL and into MariaDB in
    # one JVM mix their type names (Hibernate's type registry is shared): a PostgreSQL table got
    # datetime(6) and longtext columns, and its CREATE TABLE failed
    namespace = pg_schema if family == "postgresql" else mysql_db.name
    # the rows compared: the ordinary one and the one of NULLs (the edge rows 2 and 4: see below)
    rows = [ROWS[0], ROWS[1], ROWS[2], ROWS[4]]
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for statement in CREATE:
            cur.execute(statement)
    _run(mysql_db, rows, 0)
    prefix = kafka.topic("peer")
    topic = f"{prefix}.{mysql_db.name}.all_types"
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
        }
    ) as runtime:
        ours = runtime.url.rstrip("/")
        _post(
            ours,
            "peer-source",
            {
                "connector.class": "io.debezium.connector.mysql.MySqlConnector",
                "database.hostname": mysql_db.host,
                "database.port": str(mysql_db.port),
                "database.user": mysql_db.user,
                "database.password": mysql_db.password,
                "database.server.id": str(random.randint(100_000, 4_000_000)),
                "topic.prefix": prefix,
                "database.include.list": mysql_db.name,
                "table.include.list": f"{mysql_db.name}.all_types",
                "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
            },
        )
        deadline = time.monotonic() + 60
        while len(kafka.read_to_end(topic)) < 2:  # the snapshot's rows (read_to_end: [] until it exists)
            assert time.monotonic() < deadline, "no snapshot events"
            time.sleep(0.5)
        _run(mysql_db, rows, 100)  # the same rows again, streamed (op=c)
        _run(
            mysql_db,
            [
                "UPDATE all_types SET c_varchar = 'updated', c_int = c_int + 1, c_datetime6 = NOW(6)"
                " WHERE id IN (1, 101)",
                "DELETE FROM all_types WHERE id = 103",
            ],
            0,
        )
        configs = {
            **_sink_configs(family, topic, namespace, mysql_db, "cdc"),
            **_sink_configs(family, topic, namespace, mysql_db, "dbz"),
        }
        for name, config in configs.items():
            _post(ours if name.startswith("cdc") else peer_worker.url, name, config)
        # plain inserts: 2 snapshot + 2 streamed + 2 updates (the delete is not written); keyed: 4 - 1
        deadline = time.monotonic() + 120
        while not _tables_ready(family, namespace, 6, 3):
            failed = {
                n: t
                for n in configs
                for s, t in [_state(ours if n.startswith("cdc") else peer_worker.url, n)]
                if s == "FAILED"
            }
            assert not failed, "\n".join(f"{n}: {t[:3000]}" for n, t in failed.items())
            if time.monotonic() > deadline:
                break  # compared as they are: a missing row is a difference the comparison names
            time.sleep(1)
        # what PEER_FAILS says: the columns left out are those Debezium's sink fails on (and cdc's not)
        full = {**configs["dbz-keyed"], "collection.name.format": f"{namespace}.dbz_full"}
        del full["field.exclude.list"]
        _post(peer_worker.url, "dbz-full", full)
        _post(ours, "cdc-full", {**full, "collection.name.format": f"{namespace}.cdc_full"})
        deadline = time.monotonic() + 90
        while _state(peer_worker.url, "dbz-full")[0] != "FAILED":
            assert time.monotonic() < deadline, "Debezium's sink wrote the columns PEER_FAILS names"
            time.sleep(1)
        assert PEER_FAIL_LOGS[family] in peer_worker.spec.log.read_text(errors="replace")
        deadline = time.monotonic() + 60
        while len((read_table(family, namespace, "cdc_full") or _EMPTY).rows) != 3:
            assert _state(ours, "cdc-full")[0] != "FAILED", _state(ours, "cdc-full")[1]
            assert time.monotonic() < deadline, "cdc's sink did not write the full rows"
            time.sleep(1)

    found: dict[tuple[str, str], list[Difference]] = {}
    for mode in ("plain", "keyed"):
        ours_image = read_table(family, namespace, f"cdc_{mode}")
        peer_image = read_table(family, namespace, f"dbz_{mode}")
        assert ours_image is not None and peer_image is not None
        found[(family, mode)] = compare(ours_image, peer_image, keyed=mode == "keyed")
    report = "\n".join(f"== {family} {mode}\n{render(d)}" for (family, mode), d in found.items())
    print(report)
    observed = {(family, d.column, d.what) for (family, _mode), ds in found.items() for d in ds}
    known = {k for k in known_keys() if k[0] == family}
    unexplained = sorted(observed - known)
    assert not unexplained, f"differences without a reason in bench/sink_known.py: {unexplained}\n{report}"
    gone = sorted(known - observed)
    assert not gone, f"bench/sink_known.py lists differences no longer seen: {gone}\n{report}"
    assert KNOWN  # every reason is rendered into docs/jdbc-sink.md
