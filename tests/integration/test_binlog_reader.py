"""Differential test of ``cdc.mysql.binlog.BinlogReader`` against mysql-replication's ``BinLogStreamReader``.

A workload on a database of the test's own writes, on the real server: single- and multi-row inserts,
updates and deletes in autocommit and in multi-statement transactions (two tables interleaved in one of
them), NULLs everywhere, a table of 300 columns (column count on 3 bytes, MINIMAL row images too), a
MyISAM table (its transactions end with a ``COMMIT`` query, not an XID), an ALTER TABLE ADD COLUMN between
rows events of the same table (a new TABLE_MAP the fast path must not take for the old one), a row whose
rows event is larger than one protocol packet (16 MiB), ``FLUSH BINARY LOGS`` in the middle (the library
clears its table map on the rotate, the same TABLE_MAP bytes come again) and a TRUNCATE.

The binlog range, from SHOW MASTER STATUS before the workload to SHOW MASTER STATUS after it, is then read
twice with the streamer's arguments (``only_events``, ``freeze_schema=True``, ``is_mariadb=False``, here
``blocking=False``): once by ``BinlogReader``, once by the plain library. Both must give the same events
in the same order: same kind (our ``Gtid``/``Xid``/``Query``/``Rows`` standing for the library's
``MariadbGtidEvent``/``XidEvent``/``QueryEvent``/rows events), timestamp, server id, log position, reader
position, GTID and standalone flag, query and schema, table, column count and bitmaps, and the same rows:
``RowDecoder.decode`` of what ``BinlogReader`` returned, and ``Rows.library_event().rows``, both equal to
the plain library's ``rows``. The reader's counters must show that both its paths ran; the library's events
adapted to ours (what ``BinlogReader.read`` gives) must say the same.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import random
from typing import Any

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import (
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    XidEvent,
)
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from cdc.mysql.binlog import BinlogReader
from cdc.mysql.binlog_events import Gtid, Query, Rows, Xid, from_library
from cdc.mysql.rowdecoder import RowDecoder
from cdc.mysql.streaming import STREAM_EVENTS

pytestmark = pytest.mark.integration

ONLY_EVENTS = list(STREAM_EVENTS)  # what the streamer asks the reader for
FAST_KIND: dict[type, type] = {Gtid: MariadbGtidEvent, Xid: XidEvent, Query: QueryEvent}
OURS = (Gtid, Xid, Query, Rows)
ROWS_KIND: dict[str, type] = {"c": WriteRowsEvent, "u": UpdateRowsEvent, "d": DeleteRowsEvent}
ROWS_CLASSES = (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)
ROWS_TYPES = (Rows, *ROWS_CLASSES)
WIDE = 300  # columns of the wide table, id included (> 250: the rows events' column count takes 3 bytes)
BIG = 9_000_000  # bytes of the big row's blob: its UPDATE's before and after images exceed 2**24 - 1
UTF = "aZ09 éß€中文😀—"


# ------------------------------------------------------------------------------------------- helpers


def _master_status(conn: Any) -> tuple[str, int]:
    with conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
    return str(row[0]), int(row[1])


def _norm(value: Any) -> Any:
    """Equal values of equal types (large byte strings by length and digest, to keep the test fast)."""
    if isinstance(value, bytes | str) and len(value) > 4096:
        raw = value.encode() if isinstance(value, str) else value
        return (type(value).__name__, len(value), hashlib.sha256(raw).hexdigest())
    if isinstance(value, set | frozenset):
        return ("set", sorted(value))
    if isinstance(value, dict):
        return ("dict", sorted((k, _norm(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", [_norm(v) for v in value])
    return (type(value).__name__, repr(value))


def _library_images(event: Any) -> list[tuple[list[str], list[Any], dict[str, str]]]:
    """(column names, normalized values, none sources) per row image, as the library gives them."""
    pairs = (
        [("before_values", "before_none_sources"), ("after_values", "after_none_sources")]
        if isinstance(event, UpdateRowsEvent)
        else [("values", "none_sources")]
    )
    out = []
    for row in event.rows:
        for values, sources in pairs:
            out.append((list(row[values]), [_norm(v) for v in row[values].values()], dict(row[sources])))
    return out


def _kind(event: Any) -> type:
    if type(event) is Rows:
        return ROWS_KIND[event.kind]
    return FAST_KIND.get(type(event), type(event))


# ------------------------------------------------------------------------------------------- workload


def _wide_columns() -> list[tuple[str, str]]:
    types = ["INT NULL", "VARCHAR(6) CHARACTER SET latin1 NULL", "DOUBLE NULL"]
    return [(f"c{i}", types[i % 3]) for i in range(1, WIDE)]


def _write_workload(mysql_db: Any, seed: int) -> None:
    rng = random.Random(seed)
    wide = _wide_columns()

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.25 else value

    def a_row(i: int) -> tuple[Any, ...]:
        text = "".join(rng.choice(UTF) for _ in range(rng.randint(0, 40)))
        at = datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=rng.randint(0, 10**8))
        amount = decimal.Decimal(rng.randint(-(10**12), 10**12)) / 1000
        return (
            i,
            maybe(text),
            maybe(rng.randint(-(2**63), 2**63 - 1)),
            maybe(amount),
            maybe(at),
            maybe(rng.randbytes(rng.randint(0, 300))),
        )

    def wide_row(i: int) -> list[Any]:
        values: list[Any] = [i]
        for k, (_, ddl) in enumerate(wide, start=1):
            if ddl.startswith("INT"):
                values.append(maybe(rng.randint(-(2**31), 2**31 - 1)))
            elif ddl.startswith("VARCHAR"):
                values.append(maybe("".join(rng.choice("abcéü ") for _ in range(rng.randint(0, 6)))))
            else:
                values.append(maybe(rng.uniform(-1e9, 1e9) * k))
        return values

    a_insert = "INSERT INTO a (id, name, n, amount, at, data) VALUES "
    a_values = "(%s, %s, %s, %s, %s, %s)"
    wide_insert = f"INSERT INTO wide VALUES ({', '.join(['%s'] * WIDE)})"

    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION time_zone = '+00:00'")
        cur.execute(
            "CREATE TABLE a (id INT PRIMARY KEY, name VARCHAR(40) CHARACTER SET utf8mb4 NULL, n BIGINT NULL, "
            "amount DECIMAL(15,3) NULL, at DATETIME(6) NULL, data BLOB NULL)"
        )
        cur.execute(
            "CREATE TABLE b (id BIGINT AUTO_INCREMENT PRIMARY KEY, a_id INT NOT NULL, note TEXT NULL, "
            "flag TINYINT NULL)"
        )
        cur.execute(
            "CREATE TABLE wide (id INT PRIMARY KEY, "
            + ", ".join(f"{name} {ddl}" for name, ddl in wide)
            + ") ROW_FORMAT=DYNAMIC"
        )
        cur.execute("CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(20) NULL) ENGINE=MyISAM")
        cur.execute("CREATE TABLE big (id INT PRIMARY KEY, v LONGBLOB NULL)")

        # Autocommit, one row per statement: the same TABLE_MAP again and again (the fast path skips it).
        for i in range(1, 9):
            cur.execute(a_insert + a_values, a_row(i))
        cur.execute(a_insert + ", ".join([a_values] * 40), [x for i in range(9, 49) for x in a_row(i)])
        cur.execute("UPDATE a SET n = NULL, name = %s WHERE id = 3", ("ü€",))
        cur.execute("UPDATE a SET amount = amount + 1, data = NULL WHERE id BETWEEN 10 AND 30")
        cur.execute("DELETE FROM a WHERE id = 5")
        cur.execute("DELETE FROM a WHERE id BETWEEN 40 AND 44")

        # Two tables interleaved in one transaction, several statements of each.
        cur.execute("BEGIN")
        cur.execute(a_insert + a_values, a_row(100))
        cur.execute("INSERT INTO b (a_id, note, flag) VALUES (100, %s, NULL)", ("first",))
        cur.execute("UPDATE a SET name = NULL WHERE id IN (1, 2, 100)")
        cur.execute("INSERT INTO b (a_id, note, flag) VALUES (1, NULL, 1), (2, 'é', 0), (3, '', NULL)")
        cur.execute("DELETE FROM a WHERE id = 6")
        cur.execute("UPDATE b SET flag = 7, note = NULL WHERE a_id < 100")
        cur.execute("DELETE FROM b WHERE a_id = 2")
        cur.execute("COMMIT")

        # The wide table: full images, then MINIMAL ones (partial column bitmaps).
        for i in range(1, 4):
            cur.execute(wide_insert, wide_row(i))
        cur.execute(
            "INSERT INTO wide VALUES " + ", ".join([f"({', '.join(['%s'] * WIDE)})"] * 6),
            [x for i in range(4, 10) for x in wide_row(i)],
        )
        cur.execute("UPDATE wide SET c1 = 'x', c2 = NULL, c299 = 1.5 WHERE id = 2")
        cur.execute("UPDATE wide SET c150 = c150 + 1, c151 = NULL WHERE id > 4")
        cur.execute("DELETE FROM wide WHERE id = 1")
        cur.execute("SET SESSION binlog_row_image = 'MINIMAL'")
        cur.execute("UPDATE wide SET c3 = 42, c298 = NULL WHERE id = 3")
        cur.execute("UPDATE wide SET c200 = 2.5, c199 = 'mm' WHERE id >= 7")
        cur.execute("DELETE FROM wide WHERE id = 8")
        cur.execute("SET SESSION binlog_row_image = 'FULL'")
        cur.execute("BEGIN")
        cur.execute(wide_insert, wide_row(20))
        cur.execute(a_insert + a_values, a_row(101))
        cur.execute("UPDATE wide SET c10 = NULL WHERE id = 20")
        cur.execute("COMMIT")

        # Non-transactional: the transaction ends with a COMMIT query event.
        cur.execute("INSERT INTO m VALUES (1, 'x'), (2, NULL)")
        cur.execute("UPDATE m SET v = 'y' WHERE id = 2")
        cur.execute("DELETE FROM m WHERE id = 1")
        cur.execute("INSERT INTO m VALUES (3, NULL)")

        # A rows event larger than a protocol packet (the reader joins the 16 MiB packets).
        cur.execute("INSERT INTO big VALUES (1, REPEAT('a', %s)), (2, NULL)", (BIG,))
        cur.execute("UPDATE big SET v = REPEAT('b', %s) WHERE id = 1", (BIG,))

        # DDL between rows events of the same table: its rows events have another TABLE_MAP.
        cur.execute(a_insert + a_values, a_row(200))
        cur.execute("ALTER TABLE a ADD COLUMN extra VARCHAR(10) NULL DEFAULT 'x'")
        for i in range(201, 204):
            cur.execute(a_insert + a_values, a_row(i))
        cur.execute("UPDATE a SET extra = NULL WHERE id IN (201, 202)")
        cur.execute("UPDATE a SET extra = 'z' WHERE id < 20")
        cur.execute("DELETE FROM a WHERE id = 203")

        # Rotate: the library clears its table map, the next TABLE_MAPs may repeat the same bytes.
        cur.execute("FLUSH BINARY LOGS")
        for i in range(300, 303):
            cur.execute(a_insert + a_values, a_row(i))
        cur.execute("BEGIN")
        cur.execute("UPDATE a SET n = 1 WHERE id = 300")
        cur.execute("INSERT INTO b (a_id, note, flag) VALUES (300, 'after rotate', 1)")
        cur.execute("UPDATE wide SET c4 = 'r' WHERE id = 2")
        cur.execute("DELETE FROM a WHERE id = 301")
        cur.execute("COMMIT")
        cur.execute("TRUNCATE TABLE b")
        cur.execute("INSERT INTO b (a_id, note, flag) VALUES (1, NULL, NULL), (2, 'after truncate', 2)")
        cur.execute("DELETE FROM a WHERE id = 302")


# -------------------------------------------------------------------------------------------- reading


def _open(cls: type, mysql_db: Any, start: tuple[str, int]) -> Any:
    return cls(
        connection_settings={
            "host": mysql_db.host,
            "port": mysql_db.port,
            "user": mysql_db.user,
            "password": mysql_db.password,
        },
        server_id=random.randint(100_000, 2**31),
        resume_stream=True,
        log_file=start[0],
        log_pos=start[1],
        blocking=False,
        only_events=ONLY_EVENTS,
        is_mariadb=False,
        freeze_schema=True,
        enable_logging=False,
    )


def _record(event: Any, reader: Any) -> dict[str, Any]:
    """What both readers must agree on for one event (rows are read here, while the table map holds)."""
    ours = isinstance(event, OURS)
    record: dict[str, Any] = {
        "kind": _kind(event).__name__,
        "timestamp": event.timestamp,
        "server_id": event.server_id if ours else event.packet.server_id,
        "log_pos": event.log_pos if ours else event.packet.log_pos,
        "position": (reader.log_file, reader.log_pos),
    }
    if isinstance(event, Gtid):
        record.update(gtid=event.gtid, standalone=event.standalone)
    elif isinstance(event, MariadbGtidEvent):
        record.update(gtid=event.gtid, standalone=bool(event.flags & 1))
    elif isinstance(event, Xid | XidEvent):
        record.update(xid=event.xid)
    elif isinstance(event, Query):
        record.update(query=event.query, schema=event.schema)
    elif isinstance(event, QueryEvent):
        record.update(query=event.query, schema=event.schema.decode())
    elif isinstance(event, RotateEvent):
        record.update(next_binlog=event.next_binlog, rotate_position=event.position)
    if isinstance(event, ROWS_TYPES):
        record.update(schema=event.schema, table=event.table, table_id=event.table_id)
    return record


def _rows_header(event: Any) -> dict[str, Any]:
    # after the library read its rows: it reads the bitmaps with them
    return {
        "number_of_columns": event.number_of_columns,
        "bitmap": bytes(event.columns_present_bitmap),
        "bitmap2": bytes(getattr(event, "columns_present_bitmap2", b"")),
    }


def _read_library(mysql_db: Any, start: tuple[str, int], end: tuple[str, int]) -> list[dict[str, Any]]:
    reader = _open(BinLogStreamReader, mysql_db, start)
    records = []
    try:
        while (event := reader.fetchone()) is not None:
            if (reader.log_file, reader.log_pos) > end:
                break  # past the workload (other tests may write to the server meanwhile)
            record = _record(event, reader)
            if isinstance(event, ROWS_CLASSES):
                record["images"] = _library_images(event)
                record.update(_rows_header(event))
            records.append(record)
    finally:
        reader.close()
    return records


def _read_fast(
    mysql_db: Any, start: tuple[str, int], end: tuple[str, int]
) -> tuple[list[dict[str, Any]], list[Any], BinlogReader]:
    """The records, the events themselves (their types), and the reader (its counters)."""
    reader = _open(BinlogReader, mysql_db, start)
    decoder = RowDecoder()
    records, events = [], []
    try:
        while (event := reader.fetchone()) is not None:
            if (reader.log_file, reader.log_pos) > end:
                break
            record = _record(event, reader)
            if isinstance(event, ROWS_TYPES):
                decoded = decoder.decode(event)  # before the library's rows (it declines events already read)
                if decoded is not None:
                    record["decoded"] = [([_norm(v) for v in values], sources) for values, sources in decoded]
                elif event.schema == mysql_db.name:
                    pytest.fail(f"RowDecoder fell back on {event.table}: {decoder.stats}")
                library = event.library_event() if type(event) is Rows else event
                assert type(library) is _kind(event)
                assert library.table_id == event.table_id and library.table == event.table
                record["images"] = _library_images(library)
                record.update(_rows_header(library))
                if type(event) is Rows:
                    assert _rows_header(event) == _rows_header(library)
            if not isinstance(event, OURS):  # what read() gives for it: the same event in our types
                adapted = from_library(event)
                if isinstance(adapted, OURS):
                    record_adapted = _record(adapted, reader)
                    assert record_adapted == {k: v for k, v in record.items() if k in record_adapted}
            records.append(record)
            events.append(event)
    finally:
        reader.close()
    return records, events, reader


# ---------------------------------------------------------------------------------------------- test


def test_fast_reader_equals_library(mysql_db: Any) -> None:
    with mysql_db.connect() as conn:
        start = _master_status(conn)
        _write_workload(mysql_db, seed=20250101)
        end = _master_status(conn)
    assert end[0] > start[0], "FLUSH BINARY LOGS did not rotate"

    theirs = _read_library(mysql_db, start, end)
    ours, events, reader = _read_fast(mysql_db, start, end)

    # Same events, same order, same everything.
    assert len(ours) == len(theirs), ([r["kind"] for r in ours], [r["kind"] for r in theirs])
    for index, (mine, lib) in enumerate(zip(ours, theirs, strict=True)):
        decoded = mine.pop("decoded", None)
        assert mine == lib, f"event {index}: {type(events[index]).__name__}"
        if "images" in lib and decoded is not None:
            assert len(decoded) == len(lib["images"]), f"event {index}"
            for (values, sources), (_, lib_values, lib_sources) in zip(decoded, lib["images"], strict=True):
                assert values == lib_values, f"event {index}"
                assert sources == lib_sources, f"event {index}"

    # The workload's events, as BinlogReader returned them.
    schemas = {mysql_db.name, mysql_db.name.encode()}
    own = [
        (event, record)
        for event, record in zip(events, ours, strict=True)
        if not isinstance(event, (*ROWS_TYPES, QueryEvent, Query)) or event.schema in schemas
    ]
    fast_types = {type(e) for e, _ in own}
    assert {Gtid, Xid, Query, Rows} <= fast_types
    assert {e.query for e, _ in own if type(e) is Query} == {"COMMIT"}  # MyISAM's transactions
    fast_rows = [(e, r) for e, r in own if type(e) is Rows]
    assert {(e.table, e.kind) for e, _ in fast_rows} >= {
        (table, kind) for table in ("a", "b", "wide", "m") for kind in "cud"
    }
    assert any(len(r["images"]) > 2 for e, r in fast_rows if e.kind != "u")  # multi-row events
    assert any(len(r["images"]) > 4 for e, r in fast_rows if e.kind == "u")
    assert any(e.table == "wide" and e.number_of_columns == WIDE for e, _ in fast_rows)
    assert any(e.table == "big" and e.end > 2**24 for e, _ in fast_rows)  # several protocol packets
    nulls = sum(
        src == "null" for _, r in fast_rows for _, _, sources in r["images"] for src in sources.values()
    )
    assert nulls > 100
    minimal = [
        r for e, r in fast_rows if e.table == "wide" and r["bitmap"] != b"\xff" * (WIDE // 8) + b"\x0f"
    ]
    assert minimal, "no MINIMAL image went through the fast path"

    # Two tables interleaved in one transaction.
    tables: list[list[str]] = []
    for event, _ in own:
        if isinstance(event, Gtid | MariadbGtidEvent):
            tables.append([])
        elif isinstance(event, ROWS_TYPES) and tables:
            tables[-1].append(event.table)
    assert any(t[:4] == ["a", "b", "a", "b"] for t in tables), tables

    # The DDL went to the library; the rows of `a` after it use the new TABLE_MAP (7 columns, another id),
    # through the library for the first event and the fast path afterwards.
    queries = [(i, e) for i, (e, _) in enumerate(own) if isinstance(e, QueryEvent)]
    alter = next(i for i, e in queries if e.query.startswith("ALTER TABLE a"))
    assert type(own[alter][0]) is QueryEvent
    assert any(type(e) is QueryEvent and e.query.startswith("TRUNCATE") for _, e in queries)
    before = [e for e, _ in own[:alter] if isinstance(e, ROWS_TYPES) and e.table == "a"]
    after = [e for e, _ in own[alter:] if isinstance(e, ROWS_TYPES) and e.table == "a"]
    assert {e.number_of_columns for e in before} == {6}
    assert {e.number_of_columns for e in after} == {7}
    assert {e.table_id for e in before}.isdisjoint({e.table_id for e in after})
    assert type(after[0]) is not Rows and any(type(e) is Rows for e in after)

    # After the rotate the first rows event of `a` is the library's (its table map was cleared), even
    # when the server repeats the same TABLE_MAP with the same table id.
    rotate = next(
        i for i, (e, _) in enumerate(own) if isinstance(e, RotateEvent) and e.timestamp and i > alter
    )
    after_rotate = [e for e, _ in own[rotate:] if isinstance(e, ROWS_TYPES) and e.table == "a"]
    assert type(after_rotate[0]) is not Rows and any(type(e) is Rows for e in after_rotate)

    # Both paths ran: events read from the bytes, TABLE_MAPs skipped, and the library for the rest.
    returned_fast = sum(type(e) in OURS for e in events)
    assert reader.fast > returned_fast > 0, "no TABLE_MAP was skipped"
    assert reader.slow > 0
