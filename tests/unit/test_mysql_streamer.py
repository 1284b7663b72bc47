"""``Streamer`` on a fake event source: DDL, inserts, updates, deletes, and a reconnect mid-transaction.

The fake reader replays a recorded binlog (events at their positions) from the offset the streamer asks
for, the way the server does; the first connection is lost inside a transaction, after one of its two
row events. The streamer must reconnect from the transaction's start and skip what it already emitted,
so every row comes exactly once, each with the offset a restart would resume from.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from pymysql.err import OperationalError
from pymysqlreplication.column import Column
from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.event import RotateEvent
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
from pymysqlreplication.table import Table

from cdc.api.records import SourceRecord
from cdc.history.store import MemorySchemaHistory
from cdc.mysql.binlog_events import BinlogEvent, Query, Rows, Xid, from_library
from cdc.mysql.capture import CaptureContext
from cdc.mysql.config import MySqlSettings
from cdc.mysql.metrics import REGISTRY, StreamingMetrics
from cdc.mysql.offsets import DEBEZIUM_OFFSET_ORDER, BinlogOffset
from cdc.mysql.streaming import Streamer

FILE = "bin.000001"
SERVER = 11
TS = 1_700_000_000
CONFIG = {
    "database.hostname": "unused",
    "database.user": "u",
    "database.server.id": "5400",
    "topic.prefix": "fake",
    "database.include.list": "db",
    "schema.history.internal.kafka.topic": "h",
}


def _query(end: int, query: str, schema: str, thread: int) -> Query:
    return Query(TS, SERVER, end, 0, query, schema, thread)


def _xid(end: int, xid: int) -> Xid:
    return Xid(TS, SERVER, end, 0, xid)


def _rows(cls: type, end: int, rows: list[dict[str, Any]]) -> BinlogEvent:
    """A library rows event whose rows are already decoded (the decoder then takes the library's rows),
    with the table map a server sending full metadata gives (named columns), as the reader adapts it."""
    event = object.__new__(cls)
    event.schema, event.table, event.timestamp = "db", "t", TS
    event.packet = SimpleNamespace(server_id=SERVER, log_pos=end, event_size=0)  # size 0: not known
    event._RowsEvent__rows = rows
    names = list(rows[0].get("values") or rows[0]["after_values"])
    columns = [Column(name=n, type=FIELD_TYPE.VARCHAR, unsigned=False, is_primary=False) for n in names]
    event.table_id = 1
    event.table_map = {1: Table(1, "db", "t", columns)}
    # Full images (binlog_row_image=FULL): every column present, as the library reads the bitmaps.
    event.columns_present_bitmap = event.columns_present_bitmap2 = ((1 << len(names)) - 1).to_bytes(
        (len(names) + 7) // 8, "little"
    )
    return from_library(event)


def _rotate(pos: int) -> Any:
    """What a server sends first on a new connection: the file and the position asked for."""
    event = object.__new__(RotateEvent)
    event.next_binlog, event.position = FILE, pos
    return event


def _log() -> list[tuple[int, BinlogEvent]]:
    """(start position, event) in binlog order; each event's ``log_pos`` is where the next one starts.
    The rows events (and the rotate) are the library's, as the reader adapts them."""
    return [
        (4, _query(200, "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))", "db", 1)),
        (200, _query(260, "BEGIN", "db", 7)),
        (260, _rows(WriteRowsEvent, 320, [{"values": {"id": 1, "name": "a"}}])),
        (
            320,
            _rows(
                WriteRowsEvent, 380, [{"values": {"id": 2, "name": "b"}}, {"values": {"id": 3, "name": "c"}}]
            ),
        ),
        (380, _xid(411, 1)),
        (411, _query(470, "BEGIN", "db", 7)),
        (
            470,
            _rows(
                UpdateRowsEvent,
                540,
                [{"before_values": {"id": 2, "name": "b"}, "after_values": {"id": 2, "name": "B"}}],
            ),
        ),
        (540, _rows(DeleteRowsEvent, 600, [{"values": {"id": 3, "name": "c"}}])),
        (600, _xid(631, 2)),
        (631, _query(700, "ALTER TABLE t ADD COLUMN note VARCHAR(10)", "db", 1)),
        (700, _query(760, "BEGIN", "db", 7)),
        (760, _rows(WriteRowsEvent, 820, [{"values": {"id": 4, "name": "d", "note": "n"}}])),
        (820, _xid(851, 3)),
    ]


class FakeBinlog:
    """Opens readers over :func:`_log` from a position; the first one loses its connection at ``cut``."""

    def __init__(self, stopping: threading.Event, cut: int) -> None:
        self.stopping = stopping
        self.cut = cut
        self.opened: list[tuple[str, int]] = []
        self.closed = 0

    def __call__(self, start: BinlogOffset) -> FakeBinlog.Reader:
        self.opened.append((start.file, start.pos))
        return FakeBinlog.Reader(self, start.pos, lose_at=self.cut if len(self.opened) == 1 else None)

    class Reader:
        table_maps_read = 0  # the recording has no TABLE_MAP events

        def __init__(self, log: FakeBinlog, pos: int, lose_at: int | None) -> None:
            self.log = log
            self.events: Iterator[tuple[int, BinlogEvent]] = iter(
                [(pos, from_library(_rotate(pos))), *((p, e) for p, e in _log() if p >= pos)]
            )
            self.lose_at = lose_at

        def read(self) -> BinlogEvent | None:
            found = next(self.events, None)
            if found is None:  # the end of the recording: nothing more will come
                self.log.stopping.set()
                return None
            pos, event = found
            if self.lose_at is not None and pos >= self.lose_at:
                raise OperationalError(2013, "Lost connection to MySQL server during query")
            return event

        def close(self) -> None:
            self.log.closed += 1


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[SourceRecord], FakeBinlog, Streamer]]:
    settings = MySqlSettings.parse(CONFIG)
    stopping = threading.Event()
    out: list[SourceRecord] = []

    def emit(records: list[SourceRecord]) -> bool:
        out.extend(records)
        return True

    # the reconnect's back-off: no need to wait a second in a unit test
    monkeypatch.setattr(stopping, "wait", lambda timeout=None: stopping.is_set())
    ctx = CaptureContext.build(settings, MemorySchemaHistory(), emit, stopping, mariadb=True)
    binlog = FakeBinlog(stopping, cut=320)  # lost after the transaction's first row event
    streamer = Streamer(ctx, StreamingMetrics(settings.prefix), reader_factory=binlog)
    try:
        streamer.run(BinlogOffset(FILE, 4))
        yield out, binlog, streamer
    finally:
        REGISTRY.unregister("streaming", settings.prefix)


def _data(records: list[SourceRecord]) -> list[SourceRecord]:
    return [r for r in records if r.topic == "fake.db.t"]


def test_inserts_updates_deletes_once_each_across_a_reconnect(
    streamed: tuple[list[SourceRecord], FakeBinlog, Streamer],
) -> None:
    records, binlog, streamer = streamed
    data = _data(records)
    ops = [
        (r.value.get("op"), r.key.get("id")) if r.value is not None else (None, r.key.get("id")) for r in data
    ]
    assert ops == [("c", 1), ("c", 2), ("c", 3), ("u", 2), ("d", 3), (None, 3), ("c", 4)]
    # the second connection starts at the interrupted transaction's BEGIN
    assert binlog.opened == [(FILE, 4), (FILE, 200)]
    assert binlog.closed == 2
    assert streamer.metrics.disconnects == 1
    updated = data[3].value
    assert updated.get("before").get("name") == "b" and updated.get("after").get("name") == "B"
    assert data[6].value.get("after").get("note") == "n"  # described with the altered table


def test_offsets_resume_inside_and_after_transactions(
    streamed: tuple[list[SourceRecord], FakeBinlog, Streamer],
) -> None:
    records, _binlog, streamer = streamed
    offsets = [dict(r.source_offset) for r in _data(records)]
    # rows of the first transaction: resume at its BEGIN (200), skipping the events and rows done, counted
    # as Debezium counts them (the BEGIN is event 0; after a rows event's last row, row = its row count)
    assert [(o["pos"], o.get("event"), o.get("row")) for o in offsets[:3]] == [
        (200, 1, 1),
        (200, 2, 1),
        (200, 2, 2),
    ]
    assert all(o["file"] == FILE and o["server_id"] == SERVER for o in offsets)
    # each in Debezium's key order (its HashMap's), so connect-offsets holds Debezium's bytes
    assert all(list(o) == DEBEZIUM_OFFSET_ORDER.order(o) for o in offsets)
    assert streamer.checkpoint() == BinlogOffset(FILE, 851, None, 0, 0, SERVER, TS)


def test_ddl_becomes_schema_change_events_and_history(
    streamed: tuple[list[SourceRecord], FakeBinlog, Streamer],
) -> None:
    records, _binlog, streamer = streamed
    changes = [r for r in records if r.topic == "fake"]
    assert [r.value.get("ddl") for r in changes] == [
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))",
        "ALTER TABLE t ADD COLUMN note VARCHAR(10)",
    ]
    table = streamer.schema.table(next(iter(streamer.schema.tables.ids())))
    assert table is not None and [c.name for c in table.columns] == ["id", "name", "note"]


class MappedBinlog(FakeBinlog):
    """:class:`FakeBinlog` whose readers count a TABLE_MAP before each rows event, as the server sends one."""

    class Reader(FakeBinlog.Reader):
        def read(self) -> BinlogEvent | None:
            event = super().read()
            if isinstance(event, Rows):
                self.table_maps_read += 1
            return event

    def __call__(self, start: BinlogOffset) -> FakeBinlog.Reader:
        self.opened.append((start.file, start.pos))
        lose_at = self.cut if len(self.opened) == 1 else None
        return MappedBinlog.Reader(self, start.pos, lose_at=lose_at)


def test_offsets_count_table_maps_as_debezium_and_a_reconnect_still_emits_each_row_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Debezium's ``event`` counts the BEGIN and every TABLE_MAP: the first rows event of a transaction is
    event 2, the second (after its own TABLE_MAP) event 4; a reconnect after the first skips events 0-2."""
    settings = MySqlSettings.parse(CONFIG)
    stopping = threading.Event()
    out: list[SourceRecord] = []

    def emit(records: list[SourceRecord]) -> bool:
        out.extend(records)
        return True

    monkeypatch.setattr(stopping, "wait", lambda timeout=None: stopping.is_set())
    ctx = CaptureContext.build(settings, MemorySchemaHistory(), emit, stopping, mariadb=True)
    binlog = MappedBinlog(stopping, cut=320)
    streamer = Streamer(ctx, StreamingMetrics(settings.prefix), reader_factory=binlog)
    try:
        streamer.run(BinlogOffset(FILE, 4))
    finally:
        REGISTRY.unregister("streaming", settings.prefix)
    data = _data(out)
    assert [r.key.get("id") for r in data if r.value is not None] == [1, 2, 3, 2, 3, 4]
    offsets = [(dict(r.source_offset).get("event"), dict(r.source_offset).get("row")) for r in data[:3]]
    assert offsets == [(2, 1), (4, 1), (4, 2)]
