"""B14's ceiling: the load's changes applied straight to the database, as fast as a script can, no Kafka.

``python -m bench.tools.b14_ceiling postgresql|mariadb EVENTS``: the same changes as B14's topic, in the
same order of phases (inserts, updates, deletes of a tenth), each phase as bulk statements:

* PostgreSQL: ``COPY`` of the inserted rows; ``COPY`` of the updated rows into a temporary table, then one
  ``UPDATE … FROM``; one ``DELETE … WHERE id = ANY(%s)``; one transaction per phase.
* MariaDB: multi-row ``INSERT`` (1 000 rows per statement), ``INSERT … ON DUPLICATE KEY UPDATE`` for the
  updates, ``DELETE … WHERE id IN (…)``; one transaction per phase.

The table is created first with the column types the sinks create.
"""

from __future__ import annotations

import datetime as dt
import sys

import psycopg
import pymysql

from bench.scenarios.b14_sink import MY, PG, SCHEMA, Load, row

_EPOCH = dt.datetime(1970, 1, 1)
_CHUNK = 1000


def _values(i: int, version: int) -> tuple[object, ...]:
    r = row(i, version)
    return (i, r["k"], r["c"], r["pad"], _EPOCH + dt.timedelta(microseconds=r["updated_at"]))


def postgresql(load: Load) -> None:
    with psycopg.connect(**PG) as conn:
        conn.execute(
            f"CREATE TABLE {SCHEMA}.items"
            " (id BIGINT PRIMARY KEY, k INT, c TEXT, pad TEXT, updated_at TIMESTAMP(6))"
        )
        conn.commit()
        with conn.cursor() as cur, cur.copy(f"COPY {SCHEMA}.items FROM STDIN") as copy:
            for i in range(1, load.keys + 1):
                copy.write_row(_values(i, 1))
        conn.commit()
        conn.execute("CREATE TEMP TABLE staged (LIKE bench_b14.items)")
        with conn.cursor() as cur, cur.copy("COPY staged FROM STDIN") as copy:
            for i in range(1, load.keys + 1):
                copy.write_row(_values(i, 2))
        conn.execute(
            f"UPDATE {SCHEMA}.items t SET k = s.k, c = s.c, pad = s.pad, updated_at = s.updated_at"
            " FROM staged s WHERE t.id = s.id"
        )
        conn.commit()
        gone = [i for i in range(1, load.keys + 1) if load.deleted(i)]
        conn.execute(f"DELETE FROM {SCHEMA}.items WHERE id = ANY(%s)", (gone,))
        conn.commit()


def mariadb(load: Load) -> None:
    conn = pymysql.connect(**MY, database=SCHEMA)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "CREATE TABLE items"
                " (id BIGINT PRIMARY KEY, k INT, c LONGTEXT, pad LONGTEXT, updated_at DATETIME(6))"
            )
            for version, tail in (
                (1, ""),
                (
                    2,
                    " ON DUPLICATE KEY UPDATE k=VALUES(k), c=VALUES(c),"
                    " pad=VALUES(pad), updated_at=VALUES(updated_at)",
                ),
            ):
                for start in range(1, load.keys + 1, _CHUNK):
                    ids = range(start, min(start + _CHUNK, load.keys + 1))
                    marks = ",".join(["(%s,%s,%s,%s,%s)"] * len(ids))
                    params = [v for i in ids for v in _values(i, version)]
                    cur.execute(f"INSERT INTO items VALUES {marks}{tail}", params)
                conn.commit()
            gone = [i for i in range(1, load.keys + 1) if load.deleted(i)]
            for start in range(0, len(gone), _CHUNK):
                chunk = gone[start : start + _CHUNK]
                cur.execute(f"DELETE FROM items WHERE id IN ({','.join(['%s'] * len(chunk))})", chunk)
            conn.commit()
    finally:
        conn.close()


def main() -> None:
    target, events = sys.argv[1], int(sys.argv[2])
    (postgresql if target == "postgresql" else mariadb)(Load(events))


if __name__ == "__main__":
    main()
