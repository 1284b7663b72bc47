"""``legacy.snapshot.max.threads`` (alias ``internal.legacy.snapshot.max.threads``): Debezium's
table-per-thread parallel snapshot, on cdc's reader connections (:mod:`cdc.mysql.parallel_snapshot`)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from cdc.mysql.parallel_snapshot import ChunkReaders
from tests.conftest import MySqlDb
from tests.integration.test_mysql_snapshot_keys import _config, _essence, _snapshot

pytestmark = pytest.mark.integration


@pytest.mark.honours("legacy.snapshot.max.threads")
@pytest.mark.parametrize("key", ["legacy.snapshot.max.threads", "internal.legacy.snapshot.max.threads"])
def test_each_table_is_read_whole_on_one_reader_while_the_next_ones_are_read(
    mysql_db: MySqlDb, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """The records are the single reader's (same rows, order and snapshot markers, a SELECT override
    applied to a table read ahead); no table is cut in chunks; each is one SELECT on one reader thread,
    and the next tables are read while the first one is written."""
    chunks: list[str] = []
    streams: list[tuple[str, str, float, float]] = []  # thread, select, started, ended
    chunked, streamed = ChunkReaders._read, ChunkReaders._stream

    def read(self: ChunkReaders, table: Any, chunk: Any, select: str) -> Any:
        chunks.append(str(chunk.table))
        return chunked(self, table, chunk, select)

    def stream(self: ChunkReaders, s: Any, select: str, size: int) -> None:
        started = time.monotonic()
        try:
            streamed(self, s, select, size)
        finally:
            streams.append((threading.current_thread().name, select, started, time.monotonic()))

    monkeypatch.setattr(ChunkReaders, "_read", read)
    monkeypatch.setattr(ChunkReaders, "_stream", stream)
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE a_big (id INT PRIMARY KEY, v VARCHAR(20))")
        cur.executemany("INSERT INTO a_big VALUES (%s, %s)", [(i, f"v{i}") for i in range(6000)])
        cur.execute("CREATE TABLE b_mid (a VARCHAR(8), b INT, PRIMARY KEY (a, b))")
        cur.executemany("INSERT INTO b_mid VALUES (%s, %s)", [(f"k{i % 7}", i) for i in range(900)])
        cur.execute("CREATE TABLE c_nokey (v INT)")
        cur.executemany("INSERT INTO c_nokey VALUES (%s)", [(i,) for i in range(50)])
        conn.commit()
    more = {
        "snapshot.fetch.size": "100",
        "snapshot.select.statement.overrides": f"{db}.c_nokey",
        f"snapshot.select.statement.overrides.{db}.c_nokey": f"SELECT * FROM `{db}`.c_nokey WHERE v < 20",
    }
    single = _essence(_snapshot(_config(mysql_db, **more)))
    assert len(single) == 6000 + 900 + 20
    legacy = _essence(_snapshot(_config(mysql_db, **more, **{"snapshot.max.threads": "3", key: "true"})))
    assert legacy == single
    assert chunks == []  # no key-range chunk was read
    selects = sorted(s for _, s, _, _ in streams)
    assert len(selects) == 3 and "WHERE v < 20" in selects[2] and "a_big" in selects[0], selects
    by_table = {
        ("a_big" if "a_big" in s else "b_mid" if "b_mid" in s else "c"): (t, b, e) for t, s, b, e in streams
    }
    assert len({t for t, _, _ in by_table.values()}) >= 2  # on more than one reader thread
    # b_mid's reader started before a_big's was done: tables are read at the same time
    assert by_table["b_mid"][1] < by_table["a_big"][2]
    # without the key, the same threads cut the tables in chunks (Debezium 3.6's default algorithm)
    assert _essence(_snapshot(_config(mysql_db, **more, **{"snapshot.max.threads": "3"}))) == single
    assert chunks and len(streams) == 3
