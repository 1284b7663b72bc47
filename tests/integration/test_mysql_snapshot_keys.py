"""Snapshot keys shown on the stack's MariaDB: ``snapshot.tables.order.by.row.count`` (the order tables are
read in, and so which table's records carry ``snapshot=first``/``last``)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cdc.history.store import MemorySchemaHistory
from cdc.mysql.capture import CaptureContext
from cdc.mysql.config import MySqlSettings
from cdc.mysql.metrics import SnapshotMetrics
from cdc.mysql.snapshot import Snapshotter
from tests.conftest import MySqlDb


def _config(db: MySqlDb, **more: str) -> dict[str, str]:
    return {
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.password": db.password,
        "database.server.id": "5401",
        "topic.prefix": "p",
        "database.include.list": db.name,
        "schema.history.internal.kafka.topic": "unused",
        "snapshot.locking.mode": "none",  # the shared server: no global read lock (unless a test asks)
        **more,
    }


def _snapshot(config: dict[str, str], on_batch: Any = None) -> list[Any]:
    settings = MySqlSettings.parse(config)
    records: list[Any] = []

    def emit(batch: list[Any]) -> bool:
        records.extend(r for r in batch if r.value is not None and r.topic.count(".") == 2)
        if on_batch is not None:
            on_batch(batch)
        return True

    ctx = CaptureContext.build(settings, MemorySchemaHistory(), emit, threading.Event(), True)
    Snapshotter(ctx, SnapshotMetrics(settings.prefix), emit_schema_changes=False).run(data=True)
    return records


@pytest.mark.honours("snapshot.tables.order.by.row.count")
@pytest.mark.parametrize(
    ("order", "tables"),
    [
        ("disabled", ["a_small", "b_big", "c_mid"]),
        ("ascending", ["a_small", "c_mid", "b_big"]),
        ("DESCENDING", ["b_big", "c_mid", "a_small"]),
    ],
)
def test_tables_are_read_in_row_count_order(mysql_db: MySqlDb, order: str, tables: list[str]) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for name, rows in (("a_small", 3), ("b_big", 40), ("c_mid", 12)):
            cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB")
            cur.executemany(f"INSERT INTO {name} VALUES (%s, 'x')", [(i,) for i in range(rows)])
            cur.execute(f"ANALYZE TABLE {name}")  # exact estimates in information_schema.tables
            cur.fetchall()
        conn.commit()
    records = _snapshot(_config(mysql_db, **{"snapshot.tables.order.by.row.count": order}))
    read = [r.topic.rsplit(".", 1)[1] for r in records]
    assert list(dict.fromkeys(read)) == tables
    assert len(read) == 55
    markers = [r.value.get("source").get("snapshot") for r in records]
    assert (markers[0], markers[-1]) == ("first", "last")


@pytest.mark.honours("guardrail.collections.max", "guardrail.collections.limit.action")
def test_the_guardrail_counts_the_tables_the_task_holds(
    mysql_db: MySqlDb, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    from cdc.api.errors import ConnectError
    from cdc.mysql.filters import Filters
    from cdc.mysql.guardrail import check_guardrail

    with mysql_db.connect() as conn, conn.cursor() as cur:
        for name in ("t1", "t2", "t3"):
            cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY)")

    def check(**more: str) -> None:
        settings = MySqlSettings.parse(_config(mysql_db, **more))
        with mysql_db.connect() as conn:
            check_guardrail(conn, settings, Filters(settings))

    only_captured = {
        "schema.history.internal.store.only.captured.tables.ddl": "true",
        "table.include.list": f"{mysql_db.name}.t[12]",
    }
    check(**only_captured, **{"guardrail.collections.max": "2", "guardrail.collections.limit.action": "fail"})
    with pytest.raises(
        ConnectError, match="Guardrail limit exceeded: 3 tables/collections configured for capture, "
    ):
        check(
            **{"schema.history.internal.store.only.captured.tables.ddl": "true"},
            **{"guardrail.collections.max": "2", "guardrail.collections.limit.action": "fail"},
        )
    # the history holds every table of the captured databases: the message says why, and warn goes on
    with caplog.at_level(logging.WARNING, logger="cdc.mysql.guardrail"):
        check(
            **{
                **only_captured,
                "schema.history.internal.store.only.captured.tables.ddl": "false",
                "schema.history.internal.store.only.captured.databases.ddl": "true",
                "guardrail.collections.max": "2",
            }
        )
    assert "3 tables/collections configured for capture, but maximum allowed is 2. Since" in caplog.text
    check(**{"guardrail.collections.max": "0", "guardrail.collections.limit.action": "fail"})  # off


def _essence(records: list[Any]) -> list[tuple[Any, ...]]:
    """What a snapshot record says, without the read time: topic, key, row, snapshot marker."""
    return [
        (
            r.topic,
            None if r.key is None else tuple(r.key.values),
            tuple(r.value.get("after").values),
            r.value.get("source").get("snapshot"),
        )
        for r in records
    ]


@pytest.mark.honours("snapshot.max.threads", "snapshot.max.threads.multiplier")
def test_parallel_readers_write_the_single_readers_records_from_one_consistent_view(
    mysql_db: MySqlDb, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdc.mysql.parallel_snapshot import ChunkReaders

    reads: list[tuple[str, str, int]] = []
    original = ChunkReaders._read

    def spied(self: ChunkReaders, table: Any, chunk: Any, select: str) -> Any:
        reads.append((threading.current_thread().name, str(chunk.table), chunk.index))
        return original(self, table, chunk, select)

    monkeypatch.setattr(ChunkReaders, "_read", spied)
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(10,2))")
        cur.executemany("INSERT INTO big VALUES (%s, %s, %s)", [(i * 3, f"v{i}", i / 4) for i in range(7000)])
        cur.execute("CREATE TABLE pair (a VARCHAR(8), b INT, v INT, PRIMARY KEY (a, b))")
        cur.executemany("INSERT INTO pair VALUES (%s, %s, %s)", [(f"k{i % 7}", i, i) for i in range(900)])
        cur.execute("CREATE TABLE nokey (v INT)")
        cur.executemany("INSERT INTO nokey VALUES (%s)", [(i,) for i in range(50)])
        cur.execute("CREATE TABLE one (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO one VALUES (1)")
        conn.commit()
    single = _essence(_snapshot(_config(mysql_db)))
    assert len(single) == 7000 + 900 + 50 + 1
    threads = {"snapshot.max.threads": "4", "snapshot.max.threads.multiplier": "3"}
    assert _essence(_snapshot(_config(mysql_db, **threads))) == single
    # 12 chunks of big and of pair, one of nokey (no key) and of one (one row), on 4 threads
    assert max(i for _, t, i in reads if t.endswith(".big")) == 11
    assert len([r for r in reads if r[1].endswith(".nokey")]) == 1
    assert len({name for name, _, _ in reads}) == 4

    # rows written once the lock is released (after the first batch) are not read: every reader
    # connection opened its consistent snapshot under the global read lock
    written = threading.Event()

    def write_once(batch: list[Any]) -> None:
        if not written.is_set():
            written.set()
            with mysql_db.connect() as conn, conn.cursor() as cur:
                cur.executemany("INSERT INTO big VALUES (%s, 'late', 0)", [(30000 + i,) for i in range(100)])
                cur.execute("DELETE FROM pair WHERE b >= 800")
                conn.commit()

    locked = _config(mysql_db, **threads, **{"snapshot.locking.mode": "minimal"})
    assert _essence(_snapshot(locked, on_batch=write_once)) == single
    assert written.is_set()


@pytest.mark.honours(
    "table.exclude.list",
    "column.exclude.list",
    "column.include.list",
    "snapshot.include.collection.list",
    "snapshot.select.statement.overrides",
    "snapshot.delay.ms",
)
def test_filters_overrides_and_delay_shape_what_the_snapshot_reads(mysql_db: MySqlDb) -> None:
    import time

    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for name in ("a", "b", "c"):
            cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, v INT, secret VARCHAR(9))")
            cur.executemany(f"INSERT INTO {name} VALUES (%s, %s, 's')", [(i, i * 10) for i in range(4)])
        conn.commit()

    def read(**more: str) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for r in _snapshot(_config(mysql_db, **more)):
            after = r.value.get("after")
            out.setdefault(r.topic.rsplit(".", 1)[1], []).append(
                {f.name: after.values[i] for i, f in enumerate(after.schema.fields)}
            )
        return out

    got = read(**{"table.exclude.list": rf"{db}\.b", "column.exclude.list": rf"{db}\.a\.secret"})
    assert sorted(got) == ["a", "c"] and got["a"][0] == {"id": 0, "v": 0}
    assert got["c"][0] == {"id": 0, "v": 0, "secret": "s"}
    got = read(**{"column.include.list": rf"{db}\.[ab]\.id,{db}\.c\..*"})
    assert got["a"][0] == {"id": 0} and got["c"][0] == {"id": 0, "v": 0, "secret": "s"}
    got = read(
        **{
            "snapshot.include.collection.list": rf"{db}\.(a|c)",
            "snapshot.select.statement.overrides": f"{db}.c",
            f"snapshot.select.statement.overrides.{db}.c": f"SELECT * FROM `{db}`.c WHERE id >= 2",
        }
    )
    assert sorted(got) == ["a", "c"] and len(got["a"]) == 4 and [r["id"] for r in got["c"]] == [2, 3]
    started = time.monotonic()
    read(**{"snapshot.delay.ms": "1500", "table.include.list": rf"{db}\.a"})
    assert time.monotonic() - started >= 1.5


@pytest.mark.honours("snapshot.locking.mode")
def test_extended_locking_blocks_writes_for_the_whole_read_and_minimal_only_for_the_schema(
    mysql_db: MySqlDb,
) -> None:
    import pymysql

    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        cur.executemany("INSERT INTO t VALUES (%s)", [(i,) for i in range(5)])
        conn.commit()
    outcome: dict[str, str] = {}

    def try_write(mode: str) -> Any:
        def during_read(batch: list[Any]) -> None:
            if mode in outcome:
                return
            with mysql_db.connect() as conn, conn.cursor() as cur:
                cur.execute("SET SESSION lock_wait_timeout = 1")
                try:
                    cur.execute(f"INSERT INTO t VALUES ({100 + len(outcome)})")
                    conn.commit()
                    outcome[mode] = "written"
                except pymysql.err.OperationalError as exc:  # 1205: the global read lock held
                    outcome[mode] = f"blocked {exc.args[0]}"

        return during_read

    for mode in ("minimal", "extended"):
        _snapshot(_config(mysql_db, **{"snapshot.locking.mode": mode}), on_batch=try_write(mode))
    assert outcome == {"minimal": "written", "extended": "blocked 1205"}


def _count_into(sizes: list[int]) -> Any:
    """An on_batch that notes how many of t's rows each emitted batch carries."""
    return lambda batch: sizes.append(sum(r.topic.endswith(".t") for r in batch))


@pytest.mark.honours("snapshot.fetch.size")
@pytest.mark.parametrize("threads", ["1", "2"])
def test_fetch_size_is_how_many_rows_the_snapshot_reads_and_emits_at_once(
    mysql_db: MySqlDb, threads: str
) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        cur.execute("INSERT INTO t SELECT seq, seq FROM seq_1_to_250")
    for fetch in ("100", None):
        sizes: list[int] = []
        more = {
            "snapshot.max.threads": threads,
            # only this database's DDL: another test's database dropped meanwhile would not matter
            "schema.history.internal.store.only.captured.databases.ddl": "true",
            **({"snapshot.fetch.size": fetch} if fetch else {}),
        }
        records = _snapshot(_config(mysql_db, **more), on_batch=_count_into(sizes))
        assert sorted(r.value.get("after").get("id") for r in records) == list(range(1, 251))
        data = [n for n in sizes if n]
        # (the table's last row waits to be marked last_in_data_collection, and comes in a batch of its own)
        if fetch:
            assert max(data) == 100 and sum(data) == 250, sizes
        else:
            assert max(data) > 100, sizes  # the parallel readers' chunks (125 rows), or all 249 at once
