"""Micro benchmark: mysql-replication's row decoding vs ``cdc.mysql.rowdecoder`` (not a test).

Writes dataset A (``id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60),
updated_at DATETIME(6)``) into a database of its own: ``--rows`` rows inserted 100 per statement, then
``--rows`` single-row updates (``k = k + 1``, one autocommit transaction each). Each binlog range is
read with ``BinLogStreamReader`` as the streamer reads it, in chunks of events held in memory, and each
chunk is decoded by:

- ``library``: ``event.rows`` (the library's lazy decode),
- ``library+ordered``: ``event.rows`` then ``Streamer._ordered`` per image (the streamer's old path),
- ``ours.decode``: ``RowDecoder.decode`` (the library's view: values and none sources),
- ``ours.ordered``: ``RowDecoder.ordered`` (the streamer's new path),

alternately, best of ``--repeat`` per chunk (the library's lazy state is reset between repeats). The
machine is shared: compare the ratios of one run, not rows/s across runs.

    .venv/bin/python -m bench.rowdecoder_bench [--rows 100000] [--chunk 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pymysql
from pymysql.constants import CLIENT
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from bench.datagen import DATASET_A_DDL, rows_a
from cdc.mysql.row_changes import ordered_row as _ordered
from cdc.mysql.rowdecoder import RowDecoder

NAMES = ["id", "k", "c", "pad", "updated_at"]


def _connect(args: argparse.Namespace, database: str | None = None) -> Any:
    return pymysql.connect(
        host=args.host,
        port=args.port,
        user=args.user,
        password=args.password,
        database=database,
        autocommit=True,
        client_flag=CLIENT.MULTI_STATEMENTS,
    )


def _position(conn: Any) -> tuple[str, int]:
    with conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
    return str(row[0]), int(row[1])


def _run_batch(cur: Any, statements: list[str]) -> None:
    cur.execute("".join(statements))
    while cur.nextset():
        pass


def _write(args: argparse.Namespace, database: str) -> list[tuple[str, tuple[str, int], tuple[str, int]]]:
    """Writes both workloads; returns (name, start, end) of their binlog ranges."""
    ranges = []
    with _connect(args, database) as conn, conn.cursor() as cur:
        cur.execute(DATASET_A_DDL.format(table="a"))
        start = _position(conn)
        batch: list[str] = []
        values: list[str] = []
        for ident, k, c, pad, stamp in rows_a(args.rows, seed=1):
            values.append(f"({ident},{k},'{c}','{pad}','{stamp}')")
            if len(values) == 100:
                batch.append(f"INSERT INTO a (id, k, c, pad, updated_at) VALUES {','.join(values)};")
                values = []
            if len(batch) == 20:
                _run_batch(cur, batch)
                batch = []
        if values:
            batch.append(f"INSERT INTO a (id, k, c, pad, updated_at) VALUES {','.join(values)};")
        if batch:
            _run_batch(cur, batch)
        end = _position(conn)
        ranges.append(("inserts (100 rows/statement)", start, end))
        ids = list(range(1, args.rows + 1))
        random.Random(2).shuffle(ids)
        start = _position(conn)
        for i in range(0, len(ids), 500):
            _run_batch(cur, [f"UPDATE a SET k = k + 1 WHERE id = {j};" for j in ids[i : i + 500]])
        end = _position(conn)
        ranges.append(("single-row updates", start, end))
    return ranges


def _chunks(
    args: argparse.Namespace, database: str, start: tuple[str, int], end: tuple[str, int], size: int
) -> Iterator[list[Any]]:
    stream = BinLogStreamReader(
        connection_settings={
            "host": args.host,
            "port": args.port,
            "user": args.user,
            "password": args.password,
        },
        server_id=random.randint(100_000, 2**31),
        log_file=start[0],
        log_pos=start[1],
        resume_stream=True,
        blocking=False,
        is_mariadb=False,
        freeze_schema=True,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        only_schemas=[database],
    )
    chunk: list[Any] = []
    try:
        for event in stream:
            if stream.log_file == end[0] and event.packet.log_pos > end[1]:
                break  # the first event after the range (the range ends with a filtered XID)
            chunk.append(event)
            if len(chunk) == size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
    finally:
        stream.close()


def _library(events: list[Any]) -> int:
    n = 0
    for event in events:
        n += len(event.rows)
    return n


def _library_ordered(events: list[Any]) -> int:
    n = 0
    for event in events:
        update = isinstance(event, UpdateRowsEvent)
        for row in event.rows:
            if update:
                _ordered(row["before_values"], NAMES, row.get("before_none_sources"))
                _ordered(row["after_values"], NAMES, row.get("after_none_sources"))
            else:
                _ordered(row["values"], NAMES, row.get("none_sources"))
            n += 1
    return n


def _ours_decode(decoder: RowDecoder) -> Callable[[list[Any]], int]:
    def run(events: list[Any]) -> int:
        n = 0
        for event in events:
            images = decoder.decode(event)
            assert images is not None
            n += len(images) // 2 if isinstance(event, UpdateRowsEvent) else len(images)
        return n

    return run


def _ours_ordered(decoder: RowDecoder) -> Callable[[list[Any]], int]:
    def run(events: list[Any]) -> int:
        n = 0
        for event in events:
            images = decoder.ordered(event, NAMES)
            assert images is not None
            n += len(images) // 2 if isinstance(event, UpdateRowsEvent) else len(images)
        return n

    return run


def _reset(events: list[Any], marks: list[tuple[int, int]]) -> None:
    """Undoes the library's lazy decode: rows forgotten, packet back where the header ended."""
    for event, (position, read_bytes) in zip(events, marks, strict=True):
        event._RowsEvent__rows = None
        event._RowsEvent__none_sources = {}
        event.packet.packet._position = position
        event.packet.read_bytes = read_bytes


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--host", default=os.environ.get("CDC_MYSQL_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("CDC_MYSQL_PORT", "3306")))
    parser.add_argument("--user", default=os.environ.get("CDC_MYSQL_USER", "cdc"))
    parser.add_argument("--password", default=os.environ.get("CDC_MYSQL_PASSWORD", "cdc"))
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=5000, help="events held in memory at a time")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    database = f"rowdecoder_bench_{uuid.uuid4().hex[:8]}"
    with _connect(args) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {database} CHARACTER SET utf8mb4")
    try:
        t0 = time.perf_counter()
        ranges = _write(args, database)
        print(f"wrote {args.rows} inserted + {args.rows} updated rows in {time.perf_counter() - t0:.1f}s")
        for name, start, end in ranges:
            decoder = RowDecoder()
            methods: dict[str, Callable[[list[Any]], int]] = {
                "library": _library,
                "library+ordered": _library_ordered,
                "ours.decode": _ours_decode(decoder),
                "ours.ordered": _ours_ordered(decoder),
            }
            seconds = dict.fromkeys(methods, 0.0)
            events = total_rows = 0
            for chunk in _chunks(args, database, start, end, args.chunk):
                events += len(chunk)
                marks = [(e.packet.packet._position, e.packet.read_bytes) for e in chunk]
                best = dict.fromkeys(methods, float("inf"))
                counts: set[int] = set()
                for _ in range(args.repeat):
                    for method, run in methods.items():
                        _reset(chunk, marks)
                        began = time.perf_counter()
                        counts.add(run(chunk))
                        best[method] = min(best[method], time.perf_counter() - began)
                assert len(counts) == 1, counts  # every method saw the same rows
                total_rows += counts.pop()
                for method in methods:
                    seconds[method] += best[method]
            print(f"\n{name}: {events} events, {total_rows} rows; fallbacks: {decoder.stats or 'none'}")
            base = total_rows / seconds["library+ordered"]
            for method in methods:
                rate = total_rows / seconds[method]
                print(f"  {method:<16} {rate:>12,.0f} rows/s  {1e6 / rate:8.2f} µs/row  x{rate / base:5.2f}")
    finally:
        with _connect(args) as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {database}")


if __name__ == "__main__":
    main()
