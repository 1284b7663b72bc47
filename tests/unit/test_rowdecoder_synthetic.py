"""``cdc.mysql.rowdecoder`` against the library on synthetic rows events (no server).

The events are built around real pymysql packets and library ``Column``/``Table`` objects, so both the
library's ``event.rows`` and our decoder read the same bytes. This covers what MariaDB cannot produce
for the integration test (MySQL's binary JSON, the pre-5.6 temporal types, a JSON null literal's stale
none source), the fallbacks, and the cache's invalidation. The differential test against a server is
``tests/integration/test_rowdecoder.py``.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from typing import Any

import pytest
from pymysql.protocol import MysqlPacket
from pymysqlreplication.column import Column
from pymysqlreplication.constants import BINLOG
from pymysqlreplication.constants import FIELD_TYPE as F
from pymysqlreplication.packet import BinLogPacketWrapper
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    PartialUpdateRowsEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from pymysqlreplication.table import Table

from cdc.mysql.rowdecoder import RowDecoder

JSON_OBJECT = bytes([0, 1, 0, 12, 0, 11, 0, 1, 0, 5, 1, 0]) + b"a"  # {"a": 1}, small object
JSON_NULL = bytes([4, 0])  # the literal null
JSON_TRUE = bytes([4, 1])
EVENT_TYPES = {
    WriteRowsEvent: BINLOG.WRITE_ROWS_EVENT_V2,
    UpdateRowsEvent: BINLOG.UPDATE_ROWS_EVENT_V2,
    DeleteRowsEvent: BINLOG.DELETE_ROWS_EVENT_V2,
}


def col(type_: int, name: str | None, **kw: Any) -> Column:
    data = {
        "type": type_,
        "name": name,
        "unsigned": False,
        "is_primary": False,
        "character_set_name": None,
        "collation_name": None,
        "enum_values": None,
        "set_values": None,
        "visibility": False,
        "charset_id": None,
    }
    data.update(kw)
    return Column(**data)


def event(
    cls: Any,
    columns: list[Column],
    body: bytes,
    bitmap: bytes | None = None,
    bitmap2: bytes | None = None,
    table: Table | None = None,
    table_id: int = 7,
) -> Any:
    """A rows event as the library leaves it after the header: the packet at the first row."""
    wrapper = BinLogPacketWrapper.__new__(BinLogPacketWrapper)
    wrapper.read_bytes = 0
    wrapper._BinLogPacketWrapper__data_buffer = b""
    wrapper.packet = MysqlPacket(body, "utf8")
    table = table or Table(table_id, "db", "t", columns)
    ev = cls.__new__(cls)
    full = bytes([0xFF] * ((len(columns) + 7) // 8))
    ev.__dict__.update(
        {
            "packet": wrapper,
            "event_size": len(body),
            "table_map": {table_id: table},
            "table_id": table_id,
            "columns": table.columns,
            "number_of_columns": len(columns),
            "complete": True,
            "columns_present_bitmap": bitmap or full,
            "columns_present_bitmap2": bitmap2 or bitmap or full,
            "event_type": EVENT_TYPES.get(cls, BINLOG.PARTIAL_UPDATE_ROWS_EVENT),
            "_ignore_decode_errors": False,
            "_RowsEvent__rows": None,
            "_RowsEvent__none_sources": {},
            "_RowsEvent__use_column_name_cache": False,
            "_RowsEvent__enable_logging": False,
            "_ctl_connection": None,
            "schema": "db",
            "table": "t",
            "is_partial_json_update": False,
        }
    )
    return ev


def library(ev: Any) -> list[tuple[list[Any], dict[str, str]]]:
    out = []
    for row in ev.rows:
        keys = ["before_values", "after_values"] if "before_values" in row else ["values"]
        for key in keys:
            sources = row[key.replace("values", "none_sources")]
            out.append((list(row[key].values()), dict(sources)))
    return out


def same(ours: Any, theirs: Any) -> None:
    assert ours is not None
    assert [(list(map(repr, v)), s) for v, s in ours] == [(list(map(repr, v)), s) for v, s in theirs]


def check(cls: type, columns: list[Column], body: bytes, **kw: Any) -> list[tuple[list[Any], dict[str, str]]]:
    decoder = RowDecoder()
    ours = decoder.decode(event(cls, columns, body, **kw))
    theirs = library(event(cls, columns, body, **kw))
    same(ours, theirs)
    assert not decoder.stats
    return theirs


def test_json_binary_and_its_none_sources() -> None:
    columns = [col(F.LONG, "id"), col(F.JSON, "doc", length_size=4)]

    def row(ident: int, doc: bytes | None) -> bytes:
        nulls = b"\x02" if doc is None else b"\x00"
        value = b"" if doc is None else struct.pack("<I", len(doc)) + doc
        return nulls + struct.pack("<i", ident) + value

    # NULL, then the null literal (no source of its own: the library reports the column's last one).
    body = row(1, JSON_OBJECT) + row(2, None) + row(3, JSON_NULL) + row(4, JSON_TRUE)
    theirs = check(WriteRowsEvent, columns, body)
    assert theirs[0][0] == [1, {b"a": 1}] and theirs[2] == ([3, None], {"doc": "null"})
    # A length of 0 is None as well.
    check(WriteRowsEvent, columns, b"\x00" + struct.pack("<i", 5) + struct.pack("<I", 0))


def test_old_temporal_types_and_zero_dates() -> None:
    columns = [
        col(F.DATETIME, "dt"),
        col(F.TIME, "tm"),
        col(F.TIMESTAMP, "ts"),
        col(F.DATE, "d"),
        col(F.YEAR, "y"),
    ]

    def row(dt: int, tm: int, ts: int, d: int, y: int) -> bytes:
        return (
            b"\x00"
            + struct.pack("<Q", dt)
            + tm.to_bytes(3, "little")
            + struct.pack("<I", ts)
            + d.to_bytes(3, "little")
            + bytes([y])
        )

    date = (2024 << 9) | (2 << 5) | 29
    body = (
        row(20240229123456, 235959, 1_700_000_000, date, 124)
        + row(0, 0, 0, 0, 0)
        + row(20240000000000, 100, 1, (2024 << 9), 255)
    )
    theirs = check(WriteRowsEvent, columns, body)
    assert theirs[0][0][0] == datetime.datetime(2024, 2, 29, 12, 34, 56)
    assert theirs[1][1] == {"dt": "out of datetime range", "d": "out of date range"}


def test_numbers_decimals_bits() -> None:
    columns = [
        col(F.TINY, "t"),
        col(F.INT24, "m", unsigned=True),
        col(F.INT24, "ms"),
        col(F.NEWDECIMAL, "dec", precision=12, decimals=4),
        col(F.BIT, "b", bits=10, bytes=2),
        col(F.FLOAT, "f"),
        col(F.DOUBLE, "dd"),
    ]

    def decimal_12_4(text: str) -> bytes:  # 8 integral digits (4 bytes), 4 fractional (2 bytes)
        negative = text.startswith("-")
        whole, frac = text.lstrip("-").split(".")
        raw = bytearray(int(whole).to_bytes(4, "big") + int(frac).to_bytes(2, "big"))
        if negative:
            raw = bytearray(b ^ 0xFF for b in raw)
        raw[0] ^= 0x80
        return bytes(raw)

    def row(t: int, m: int, ms: int, dec: str, b: int, f: float, d: float) -> bytes:
        return (
            b"\x00"
            + struct.pack("<b", t)
            + m.to_bytes(3, "little")
            + ms.to_bytes(3, "little", signed=True)
            + decimal_12_4(dec)
            + b.to_bytes(2, "big")
            + struct.pack("<fd", f, d)
        )

    body = (
        row(-128, 16777215, -8388608, "-12345678.0001", 0x3FF, 1.5, -2.25)
        + row(127, 0, 8388607, "0.0000", 5, 0.0, 1e300)
        + row(0, 1, -1, "00000042.5000", 0, -1e-5, 0.1)
    )
    theirs = check(WriteRowsEvent, columns, body)
    assert theirs[0][0][3] == decimal.Decimal("-12345678.0001") and theirs[0][0][4] == "1111111111"


def test_strings_charsets_enum_set_and_nulls() -> None:
    columns = [
        col(F.VARCHAR, "v", max_length=400, character_set_name="utf8"),
        col(F.STRING, "c", max_length=10, character_set_name="cp1252"),
        col(F.BLOB, "bl", length_size=2, character_set_name="binary"),
        col(F.GEOMETRY, "g", length_size=4),
        col(F.ENUM, "e", size=1, enum_values=["", "a", "b"]),
        col(F.SET, "s", size=1, set_values=["x", "y"]),
        col(F.LONGLONG, "u", unsigned=True),
    ]

    def row(nulls: int, values: list[bytes]) -> bytes:
        return bytes([nulls]) + b"".join(values)

    text = "é€中😀".encode()
    body = row(
        0,
        [
            struct.pack("<H", len(text)) + text,
            b"\x02\xe9\x80",
            b"\x00\x00",
            b"\x01\x00\x00\x00\x01",
            b"\x02",
            b"\x03",
            struct.pack("<Q", 2**64 - 1),
        ],
    )
    body += row(
        0,
        [
            b"\x00\x00",
            b"\x00",
            b"\x03\x00\x00\x01\x02",
            b"\x00\x00\x00\x00",
            b"\x00",
            b"\x00",
            struct.pack("<Q", 0),
        ],
    )
    body += row(0b1111111, [])
    theirs = check(WriteRowsEvent, columns, body)
    assert theirs[0][0][:3] == ["é€中😀", "é€", ""] and theirs[1][0][2] == b"\x00\x01\x02"
    assert theirs[1][1] == {"s": "empty set"}


def test_update_with_minimal_images_and_ordered() -> None:
    columns = [col(F.LONG, "id"), col(F.SET, "s", size=1, set_values=["x"]), col(F.LONG, "n")]
    # before: id only; after: s and n
    before = b"\x00" + struct.pack("<i", 1)
    after = b"\x00" + b"\x00" + struct.pack("<i", 9)
    body = before + after + before + b"\x02" + b"\x01"
    theirs = check(UpdateRowsEvent, columns, body, bitmap=b"\x01", bitmap2=b"\x06")
    assert theirs[0][1] == {"s": "cols bitmap", "n": "cols bitmap"} and theirs[1][1] == {
        "id": "cols bitmap",
        "s": "empty set",
    }
    ordered = RowDecoder().ordered(
        event(UpdateRowsEvent, columns, body, bitmap=b"\x01", bitmap2=b"\x06"), ["n", "s", "id", "gone"]
    )
    assert ordered == [
        [None, None, 1, None],
        [9, "", None, None],
        [None, None, 1, None],
        [None, {"x"}, None, None],
    ]


def test_fallbacks_leave_the_library_working() -> None:
    decoder = RowDecoder()
    columns = [col(F.LONG, "id"), col(F.ENUM, "e", size=1, enum_values=None)]
    body = b"\x00" + struct.pack("<i", 1) + b"\x01"
    ev = event(WriteRowsEvent, columns, body)
    assert decoder.ordered(ev, ["id", "e"]) is None  # ENUM without labels
    assert ev.rows[0]["values"] == {"id": 1, "e": None}

    ok = [col(F.LONG, "id")]
    assert decoder.decode(event(PartialUpdateRowsEvent, ok, b"")) is None
    read = event(WriteRowsEvent, ok, b"\x00" + struct.pack("<i", 3))
    assert read.rows and decoder.decode(read) is None  # rows already read
    truncated = event(WriteRowsEvent, ok, b"\x00\x01\x02")
    assert decoder.decode(truncated) is None
    assert decoder.decode(event(WriteRowsEvent, [col(F.VAR_STRING, "x")], b"\x00\x00")) is None
    assert decoder.decode(event(WriteRowsEvent, [col(F.LONG, None)], b"\x00\x00\x00\x00\x00")) is None
    assert set(decoder.stats) == {
        "ENUM without labels (no binlog_row_metadata=FULL)",
        "not a plain rows event",
        "rows already read",
        "error while decoding",
        "column type 253",
        "columns without names",
    }


def test_plans_follow_the_table_map() -> None:
    decoder = RowDecoder()
    body = b"\x00" + struct.pack("<i", -5)
    first = [col(F.LONG, "a")]
    assert decoder.decode(event(WriteRowsEvent, first, body)) == [([-5], {})]
    # Same table id, another table map (a restart, a rotate): unsigned now.
    second = [col(F.LONG, "a", unsigned=True)]
    assert decoder.decode(event(WriteRowsEvent, second, body)) == [([2**32 - 5], {})]
    assert decoder.decoded == 2


@pytest.mark.parametrize("fsp", [0, 1, 2, 3, 4, 5, 6])
def test_fractional_temporals(fsp: int) -> None:
    columns = [col(F.DATETIME2, "dt", fsp=fsp), col(F.TIME2, "tm", fsp=fsp), col(F.TIMESTAMP2, "ts", fsp=fsp)]
    size = (fsp + 1) // 2
    frac = (123456 // 10 ** (6 - fsp)) * (10 if fsp % 2 else 1)

    def datetime2(y: int, mo: int, d: int, h: int, mi: int, s: int) -> bytes:
        v = 1 << 39 | (y * 13 + mo) << 22 | d << 17 | h << 12 | mi << 6 | s
        return v.to_bytes(5, "big") + frac.to_bytes(size, "big")

    def time2(negative: bool, h: int, mi: int, s: int) -> bytes:
        magnitude = h << 12 | mi << 6 | s
        v = (1 << 23) - magnitude if negative else 1 << 23 | magnitude
        return v.to_bytes(3, "big") + frac.to_bytes(size, "big")

    cases = [
        ((2024, 2, 29, 23, 59, 59), (False, 838, 59, 59), 2**31 - 1),
        ((0, 0, 0, 0, 0, 0), (False, 1, 2, 3), 0),
        ((2023, 2, 29, 1, 1, 1), (True, 0, 0, 1), 1),
    ]
    body = b"".join(
        b"\x00" + datetime2(*d) + time2(*t) + struct.pack(">i", ts) + frac.to_bytes(size, "big")
        for d, t, ts in cases
    )
    if fsp:  # the library gets a negative TIME2 with a fraction wrong (below): positive times only
        body = body[: len(body) // 3 * 2]
    theirs = check(WriteRowsEvent, columns, body)
    assert theirs[1][1] == {"dt": "out of datetime2 range"}


def _time2_bytes(micros: int, fsp: int) -> bytes:
    """MySQL's ``my_time_packed_to_binary``: C's shift (floor) for the integer part, C's ``%`` and ``/``
    (truncation) for the fraction, which is stored as a two's complement byte (or two)."""
    negative, magnitude = micros < 0, abs(micros)
    seconds, frac = divmod(magnitude, 1_000_000)
    hms = (seconds // 3600) << 12 | (seconds // 60 % 60) << 6 | seconds % 60
    packed = (hms << 24) + frac
    packed = -packed if negative else packed
    size = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3}[fsp]
    if size == 3:
        return (packed + 0x800000000000).to_bytes(6, "big")
    head = ((packed >> 24) + 0x800000).to_bytes(3, "big")
    if not size:
        return head
    remainder = int(math.fmod(packed, 1 << 24))
    units = int(remainder / (10_000 if size == 1 else 100))
    return head + (units & ((1 << (8 * size)) - 1)).to_bytes(size, "big")


@pytest.mark.parametrize(
    ("fsp", "micros"),
    [
        (6, -1),
        (6, -1_500_000),
        (6, -(838 * 3600 + 59 * 60 + 59) * 1_000_000),
        (3, -1000),
        (3, -(12 * 3600 + 34 * 60 + 56) * 1_000_000 - 789_000),
        (2, -250_000),
        (1, -100_000),
        (4, -(3600 * 1_000_000) - 100),
        (0, -3723 * 1_000_000),
        (6, 90_000_000_000 + 5),
    ],
)
def test_negative_time2_with_fractions(fsp: int, micros: int) -> None:
    """A negative TIME(n) is the two's complement of its integer part and fraction together: -00:00:00.000001
    is one microsecond below zero (Debezium's MicroTime -1), not 999 999 (the library's reading)."""
    decoder = RowDecoder()
    rows = decoder.decode(
        event(WriteRowsEvent, [col(F.TIME2, "tm", fsp=fsp)], b"\x00" + _time2_bytes(micros, fsp))
    )
    assert rows == [([datetime.timedelta(microseconds=micros)], {})]
