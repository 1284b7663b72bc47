"""bench/query_cpu.py: mysqld CPU of the threads serving one table's reads, against the stack's MariaDB.

A scan of the watched table is counted (the CPU of its connection's thread, however short-lived the
connection); a scan of another table on another connection at the same time is not.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from bench.query_cpu import QueryCpu
from bench.stack import Stack

pytestmark = pytest.mark.integration


def _fill(mysql_db: Any, name: str, rows: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {name} (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)")
        for start in range(0, rows, 5000):
            values = ",".join(f"({i}, 'value-{i}')" for i in range(start, min(rows, start + 5000)))
            cur.execute(f"INSERT INTO {name} VALUES {values}")


def _scan(mysql_db: Any, name: str, times: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for _ in range(times):
            cur.execute(f"SELECT SUM(CRC32(CONCAT(v, SHA2(v, 512)))) FROM {name}")
            cur.fetchall()


def test_only_the_threads_reading_the_table_are_counted(mysql_db: Any) -> None:
    import MySQLdb

    stack = Stack(Path(__file__).resolve().parents[2])
    mysqld = stack.pid("mariadb")
    if mysqld is None:
        pytest.skip("the stack's mariadb was not started from this checkout (no pid file)")
    _fill(mysql_db, "watched_tbl", 60_000)
    _fill(mysql_db, "other_tbl", 60_000)

    def watch(table: str) -> QueryCpu:
        return QueryCpu(mysqld, lambda: MySQLdb.connect(unix_socket=str(stack.socket), user="root"), table)

    watched = watch(f"{mysql_db.name}.watched_tbl").start()
    idle = watch(f"{mysql_db.name}.nothing_reads_this").start()
    other = threading.Thread(target=_scan, args=(mysql_db, "other_tbl", 3))
    other.start()
    _scan(mysql_db, "watched_tbl", 3)
    other.join()
    cpu = watched.stop()
    assert watched.error is None and idle.stop() == 0.0 and idle.threads == 0
    assert watched.threads == 1 and cpu > 0.05, (cpu, watched.threads)
