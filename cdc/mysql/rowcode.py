"""How :class:`~cdc.mysql.rowdecoder.RowDecoder` reads one column value: the code per column type.

:func:`column_code` gives, for one column of a table map, either a ``struct`` code (fixed-width numbers,
read in runs by one ``unpack_from``) or lines of Python the row function is generated from; the rarer types
get a reader closure built once per column from its metadata (temporal types with their fractional
seconds, DECIMAL, SET, BIT, JSON). Every value equals the one the library's ``__read_values_name`` gives,
its quirks included (see :mod:`cdc.mysql.rowdecoder`); a value the library reports with a particular "none
source" is a :class:`Mark` in the decoded row. A column this module cannot read raises
:class:`Unsupported`: the event goes to the library.
"""

from __future__ import annotations

import datetime
import decimal
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE, NONE_SOURCE
from pymysqlreplication.json_binary import parse_json
from pymysqlreplication.row_event import RowsEvent

__all__ = ["EMPTY_SET", "ColumnCode", "Image", "Mark", "Reader", "Unsupported", "column_code"]

Image = list[Any]
Reader = Callable[[bytes, int, list[int]], tuple[Any, int]]


class Unsupported(Exception):
    """The table (or event) cannot be decoded here: the library's rows are used."""


class Mark:
    """Stands in a decoded row for a None the library gives with a particular "none source"."""

    __slots__ = ("source",)

    def __init__(self, source: str | None) -> None:
        self.source = source

    def __repr__(self) -> str:
        return f"<none: {self.source}>"


EMPTY_SET = Mark(NONE_SOURCE.EMPTY_SET)
_OUT_OF_DATE = Mark(NONE_SOURCE.OUT_OF_DATE_RANGE)
_OUT_OF_DATETIME = Mark(NONE_SOURCE.OUT_OF_DATETIME_RANGE)
_OUT_OF_DATETIME2 = Mark(NONE_SOURCE.OUT_OF_DATETIME2_RANGE)
# A JSON value of length 0: the library sets no source, so it reports the column's last one in the event.
_JSON_NONE = Mark(None)

_utcfromtimestamp = datetime.datetime.utcfromtimestamp
_datetime = datetime.datetime
_date = datetime.date
_timedelta = datetime.timedelta
_Decimal = decimal.Decimal
_unpack_i4_be = struct.Struct(">i").unpack_from

# --------------------------------------------------------------------------------------------- charsets

_ENCODINGS: dict[str | None, str | None] = {}


def _encoding(charset_name: str | None) -> str | None:
    """The codec the library decodes a column with, or None where it returns the bytes (LookupError)."""
    try:
        return _ENCODINGS[charset_name]
    except KeyError:
        pass
    encoding: str | None
    if charset_name is None:
        encoding = "utf-8"  # the library's default (MySQL 5.x without charset metadata)
    else:
        encoding = RowsEvent.charset_to_encoding(charset_name)
        try:  # what the library's decode raises LookupError for (incl. non-text codecs); b"" skips lookup
            b"\x00".decode(encoding)
        except LookupError:
            encoding = None
        except UnicodeError:
            pass
    _ENCODINGS[charset_name] = encoding
    return encoding


# ------------------------------------------------------------------------------- readers of rarer types


def _fsp_reader(fsp: int | None) -> tuple[int, Callable[[bytes, int], int]]:
    """``__read_fsp``: the bytes of the fractional seconds and a reader of them as microseconds."""
    size = {1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3}.get(fsp or 0, 0)
    if not size or fsp is None:
        return 0, lambda data, pos: 0
    scale = 10 ** (6 - fsp)
    odd = bool(fsp % 2)
    half = 1 << (8 * size - 1)
    full = 1 << (8 * size)

    def read(data: bytes, pos: int) -> int:
        value = int.from_bytes(data[pos : pos + size], "big")
        if value >= half:  # the library reads it signed
            value -= full
        if odd:
            value = int(value / 10)
        return value * scale

    return size, read


# DATETIME2 with its fraction (0-3 bytes) in one struct read: the format and how to join its parts.
_DATETIME2_STRUCTS = {5: (">IB", 8), 6: (">IH", 16), 7: (">IBH", 8), 8: (">Q", 0)}


def _datetime2_reader(fsp: int | None) -> Reader:
    """DATETIME2: 1 bit sign, 17 bits year*13+month, 5 day, 5 hour, 6 minute, 6 second; a fraction."""
    fsize, _ = _fsp_reader(fsp)
    width = 5 + fsize
    fmt, join = _DATETIME2_STRUCTS[width]
    unpack = struct.Struct(fmt).unpack_from
    fbits = 8 * fsize
    fmask, fhalf = (1 << fbits) - 1, 1 << max(fbits - 1, 0)
    odd = bool(fsp and fsp % 2)
    scale = 10 ** (6 - (fsp or 0)) if fsize else 0

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        parts = unpack(data, pos)
        if len(parts) == 1:
            v = parts[0]
        elif len(parts) == 2:
            v = parts[0] << join | parts[1]
        else:
            v = (parts[0] << 8 | parts[1]) << 16 | parts[2]
        if fbits:
            d = v >> fbits
            us = v & fmask
            if us >= fhalf:  # the library reads the fraction signed, and applies only a positive one
                us = 0
            elif odd:
                us = int(us / 10) * scale
            else:
                us *= scale
            if us > 999999:
                raise Unsupported("datetime2 fraction out of range")
        else:
            d, us = v, 0
        ym = (d >> 22) & 0x1FFFF
        try:
            value = _datetime(ym // 13, ym % 13, (d >> 17) & 31, (d >> 12) & 31, (d >> 6) & 63, d & 63, us)
        except ValueError:
            hits.append(1)
            return _OUT_OF_DATETIME2, pos + width
        return value, pos + width

    return read


def _timestamp2_reader(fsp: int | None) -> Reader:
    fsize, frac = _fsp_reader(fsp)
    width = 4 + fsize
    unpack = struct.Struct(">i").unpack_from

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        value = _utcfromtimestamp(unpack(data, pos)[0])
        us = frac(data, pos + 4)
        if us > 0:
            value = value.replace(microsecond=us)
        return value, pos + width

    return read


def _time2_reader(fsp: int | None) -> Reader:
    """TIME2 as MySQL's ``my_time_packed_from_binary`` reads it: a negative time is the two's complement of
    the integer part and the fraction together, so ``-00:00:00.000001`` is one microsecond below zero (the
    integer part borrows one when the fraction is not zero)."""
    fsize = {1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3}.get(fsp or 0, 0)
    width = 3 + fsize
    unit = {0: 0, 1: 10_000, 2: 100, 3: 1}[fsize]

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        if fsize == 3:
            packed = int.from_bytes(data[pos : pos + 6], "big") - 0x800000000000
        else:
            intpart = int.from_bytes(data[pos : pos + 3], "big") - 0x800000
            frac = int.from_bytes(data[pos + 3 : pos + width], "big") if fsize else 0
            if intpart < 0 and frac:
                intpart += 1
                frac -= 1 << (8 * fsize)
            packed = (intpart << 24) + frac * unit
        negative = packed < 0
        packed = -packed if negative else packed
        hms = packed >> 24
        value = _timedelta(
            hours=(hms >> 12) & 0x3FF,
            minutes=(hms >> 6) & 0x3F,
            seconds=hms & 0x3F,
            microseconds=packed & 0xFFFFFF,
        )
        return (-value if negative else value), pos + width

    return read


def _date_reader() -> Reader:
    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        t = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        year, month, day = (t >> 9) & 0x7FFF, (t >> 5) & 15, t & 31
        if not (year and month and day):
            hits.append(1)
            return _OUT_OF_DATE, pos + 3
        return _date(year, month, day), pos + 3

    return read


def _datetime_reader() -> Reader:
    """The old 8-byte DATETIME, with the library's float arithmetic."""
    unpack = struct.Struct("<Q").unpack_from

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        value = unpack(data, pos)[0]
        if value == 0:
            hits.append(1)
            return _OUT_OF_DATETIME, pos + 8
        date = value / 1000000
        time = int(value % 1000000)
        year, month, day = int(date / 10000), int((date % 10000) / 100), int(date % 100)
        if year == 0 or month == 0 or day == 0:
            hits.append(1)
            return _OUT_OF_DATETIME, pos + 8
        return _datetime(
            year=year,
            month=month,
            day=day,
            hour=int(time / 10000),
            minute=int((time % 10000) / 100),
            second=int(time % 100),
        ), pos + 8

    return read


def _time_reader() -> Reader:
    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        t = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
        return _timedelta(hours=int(t / 10000), minutes=int((t % 10000) / 100), seconds=int(t % 100)), pos + 3

    return read


def _timestamp_reader() -> Reader:
    unpack = struct.Struct("<I").unpack_from

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        return _utcfromtimestamp(unpack(data, pos)[0]), pos + 4

    return read


_COMPRESSED_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def _decimal_reader(precision: int, decimals: int) -> Reader:
    """NEWDECIMAL: the library's digit string (same leading zeros, same exponent) from one big integer."""
    integral = precision - decimals
    uncomp_int, comp_int = divmod(integral, 9)
    uncomp_frac, comp_frac = divmod(decimals, 9)
    int_size, frac_size = _COMPRESSED_BYTES[comp_int], _COMPRESSED_BYTES[comp_frac]
    size = int_size + 4 * uncomp_int + 4 * uncomp_frac + frac_size
    if size == 0:
        raise Unsupported("decimal of no digits")
    bits = 8 * size
    sign_bit = 1 << (bits - 1)
    ones = (1 << bits) - 1
    int_shift = bits - 8 * int_size
    int_mask = (1 << (8 * int_size)) - 1
    word_shifts = [int_shift - 32 * (k + 1) for k in range(uncomp_int)]
    frac_word_shifts = [int_shift - 32 * (uncomp_int + k + 1) for k in range(uncomp_frac)]
    frac_mask = (1 << (8 * frac_size)) - 1
    frac_format = f"0{comp_frac}d"

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        n = int.from_bytes(data[pos : pos + size], "big")
        if n & sign_bit:
            n ^= sign_bit
            parts = [""]
        else:
            n ^= ones ^ sign_bit
            parts = ["-"]
        if int_size:
            parts.append(str(n >> int_shift & int_mask))
        for shift in word_shifts:
            parts.append(f"{n >> shift & 0xFFFFFFFF:09d}")
        parts.append(".")
        for shift in frac_word_shifts:
            parts.append(f"{n >> shift & 0xFFFFFFFF:09d}")
        if frac_size:
            parts.append(format(n & frac_mask, frac_format))
        return _Decimal("".join(parts)), pos + size

    return read


def _set_reader(size: int, labels: Sequence[str] | None) -> Reader:
    pairs = [(1 << i, label) for i, label in enumerate(labels or ())]

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        mask = int.from_bytes(data[pos : pos + size], "little")
        value = {label for bit, label in pairs if mask & bit}
        if not value:
            hits.append(1)
            return EMPTY_SET, pos + size
        return value, pos + size

    return read


def _bit_reader(bits: int, nbytes: int) -> Reader:
    total = bits if nbytes == 1 else (bits % 8 or 8) + 8 * (nbytes - 1)
    mask = (1 << total) - 1
    spec = f"0{total}b"

    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        return format(int.from_bytes(data[pos : pos + nbytes], "big") & mask, spec), pos + nbytes

    return read


def _json_reader(length_size: int) -> Reader:
    def read(data: bytes, pos: int, hits: list[int]) -> tuple[Any, int]:
        n = int.from_bytes(data[pos : pos + length_size], "little")
        pos += length_size
        if n == 0:
            hits.append(1)
            return _JSON_NONE, pos
        chunk = data[pos : pos + n]
        value = parse_json(chunk[0], chunk[1:])
        if value is None:  # a JSON null literal: a None without a source of its own, too
            hits.append(1)
            return _JSON_NONE, pos + n
        return value, pos + n

    return read


# ----------------------------------------------------------------------------------------- code per type


@dataclass
class ColumnCode:
    """How one column is read: a struct code (fixed-width numbers), or lines of code using ``{v}``."""

    struct_code: str = ""
    width: int = 0
    post: str = ""  # applied to the struct value, e.g. " + 1900"
    lines: list[str] = field(default_factory=list)
    names: dict[str, Any] = field(default_factory=dict)
    mark: bool = False  # may yield a Mark


_INT_CODES = {
    FIELD_TYPE.TINY: ("b", 1),
    FIELD_TYPE.SHORT: ("h", 2),
    FIELD_TYPE.LONG: ("i", 4),
    FIELD_TYPE.LONGLONG: ("q", 8),
}


def _length_line(size: int, k: int, names: dict[str, Any]) -> str:
    if size == 1:
        return "n = data[pos]"
    if size == 2:
        return "n = data[pos] | data[pos + 1] << 8"
    if size == 3:
        return "n = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16"
    if size == 4:
        names[f"_u4_{k}"] = struct.Struct("<I").unpack_from
        return f"n = _u4_{k}(data, pos)[0]"
    raise Unsupported(f"length size {size}")


def _string_code(size: int, column: Any, k: int, decode_errors: str) -> ColumnCode:
    """``__read_string``: a length-prefixed value decoded with the column's charset, or its bytes."""
    names: dict[str, Any] = {}
    encoding = _encoding(getattr(column, "character_set_name", None))
    lines = [_length_line(size, k, names)]
    if encoding is None:
        # The library's decode of b"" skips the codec lookup: an empty binary value comes back as ''.
        lines.append(f'{{v}} = data[pos + {size}:pos + {size} + n] or ""')
    else:
        names[f"_enc{k}"] = encoding
        names[f"_err{k}"] = decode_errors
        lines.append(f"{{v}} = data[pos + {size}:pos + {size} + n].decode(_enc{k}, _err{k})")
    lines.append(f"pos += {size} + n")
    return ColumnCode(lines=lines, names=names)


def _bytes_code(size: int, k: int) -> ColumnCode:
    names: dict[str, Any] = {}
    lines = [
        _length_line(size, k, names),
        f"{{v}} = data[pos + {size}:pos + {size} + n]",
        f"pos += {size} + n",
    ]
    return ColumnCode(lines=lines, names=names)


def _call_code(reader: Reader, k: int, mark: bool = False) -> ColumnCode:
    return ColumnCode(lines=[f"{{v}}, pos = _r{k}(data, pos, hits)"], names={f"_r{k}": reader}, mark=mark)


def column_code(column: Any, k: int, decode_errors: str) -> ColumnCode:
    """The code reading column ``k``: the same value as the library's ``__read_values_name``."""
    t = column.type
    unsigned = bool(column.unsigned)
    if t in _INT_CODES:
        code, width = _INT_CODES[t]
        return ColumnCode(struct_code=code.upper() if unsigned else code, width=width)
    if t == FIELD_TYPE.INT24:
        line = f'{{v}} = int.from_bytes(data[pos:pos + 3], "little", signed={not unsigned})'
        return ColumnCode(lines=[line, "pos += 3"])
    if t == FIELD_TYPE.FLOAT:
        return ColumnCode(struct_code="f", width=4)
    if t == FIELD_TYPE.DOUBLE:
        return ColumnCode(struct_code="d", width=8)
    if t == FIELD_TYPE.YEAR:
        return ColumnCode(struct_code="B", width=1, post=" + 1900")
    if t in (FIELD_TYPE.VARCHAR, FIELD_TYPE.STRING):
        return _string_code(2 if column.max_length > 255 else 1, column, k, decode_errors)
    if t == FIELD_TYPE.BLOB:
        return _string_code(int(column.length_size), column, k, decode_errors)
    if t == FIELD_TYPE.GEOMETRY:
        return _bytes_code(int(column.length_size), k)
    if t == FIELD_TYPE.NEWDECIMAL:
        return _call_code(_decimal_reader(int(column.precision), int(column.decimals)), k)
    if t == FIELD_TYPE.DATETIME2:
        return _call_code(_datetime2_reader(column.fsp), k, mark=True)
    if t == FIELD_TYPE.TIMESTAMP2:
        if not column.fsp:
            return ColumnCode(
                lines=[f"{{v}} = _ts{k}(_i4_{k}(data, pos)[0])", "pos += 4"],
                names={f"_ts{k}": _utcfromtimestamp, f"_i4_{k}": _unpack_i4_be},
            )
        return _call_code(_timestamp2_reader(column.fsp), k)
    if t == FIELD_TYPE.TIME2:
        return _call_code(_time2_reader(column.fsp), k)
    if t == FIELD_TYPE.DATE:
        return _call_code(_date_reader(), k, mark=True)
    if t == FIELD_TYPE.DATETIME:
        return _call_code(_datetime_reader(), k, mark=True)
    if t == FIELD_TYPE.TIME:
        return _call_code(_time_reader(), k)
    if t == FIELD_TYPE.TIMESTAMP:
        return _call_code(_timestamp_reader(), k)
    if t == FIELD_TYPE.ENUM:
        if not column.enum_values:
            raise Unsupported("ENUM without labels (no binlog_row_metadata=FULL)")
        size = int(column.size)
        index = "data[pos]" if size == 1 else f'int.from_bytes(data[pos:pos + {size}], "little")'
        return ColumnCode(
            lines=[f"{{v}} = _labels{k}[{index}]", f"pos += {size}"],
            names={f"_labels{k}": list(column.enum_values)},
        )
    if t == FIELD_TYPE.SET:
        return _call_code(_set_reader(int(column.size), column.set_values), k, mark=True)
    if t == FIELD_TYPE.BIT:
        return _call_code(_bit_reader(int(column.bits), int(column.bytes)), k)
    if t == FIELD_TYPE.JSON:
        return _call_code(_json_reader(int(column.length_size)), k, mark=True)
    raise Unsupported(f"column type {t}")
