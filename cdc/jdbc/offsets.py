"""Source partitions and offsets exactly as kafka-connect-jdbc stores them.

* Partition v1 ``{"protocol": "1", "table": "<db>.<table>"}``; the legacy v0 ``{"table": "<table>"}`` is
  read too (v1 first), and bulk records carry v0 with a null offset as Confluent's do. Query mode uses
  ``{"query": "query"}``.
* Offset ``{"timestamp_nanos": …, "incrementing": …, "timestamp": …}``, keys in the order Java's HashMap
  gives them: ``timestamp`` is epoch milliseconds and ``timestamp_nanos`` the whole sub-second part in
  nanoseconds (it overlaps the milliseconds, as ``java.sql.Timestamp.getNanos`` does).
* Our look-back extra adds ``incrementing_gaps`` (ids skipped below the offset, with the time each was
  first missed) only when ``incrementing.lookback.ms`` is set; Confluent ignores the key.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc.api.errors import InvalidOffsetError
from cdc.api.offsets import offset_int, offset_str
from cdc.jdbc.config import INCREMENTING, TIMESTAMP, TIMESTAMP_INCREMENTING
from cdc.jdbc.tables import TableId

__all__ = [
    "INCREMENTING_FIELD",
    "QUERY_PARTITION",
    "TIMESTAMP_FIELD",
    "TIMESTAMP_NANOS_FIELD",
    "TimestampIncrementingOffset",
    "check_offset",
    "datetime_to_nanos",
    "nanos_to_datetime",
    "partition_v0",
    "partition_v1",
]

INCREMENTING_FIELD = "incrementing"
TIMESTAMP_FIELD = "timestamp"
TIMESTAMP_NANOS_FIELD = "timestamp_nanos"
GAPS_FIELD = "incrementing_gaps"
QUERY_PARTITION: dict[str, Any] = {"query": "query"}

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_GAP = re.compile(r"-?\d+@\d+")


def partition_v1(table: TableId) -> dict[str, Any]:
    return {"protocol": "1", "table": table.unquoted()}


def partition_v0(table: TableId) -> dict[str, Any]:
    return {"table": table.name}


def datetime_to_nanos(value: dt.datetime) -> int:
    """Epoch nanoseconds of an aware datetime."""
    delta = value - _EPOCH
    return ((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000


def nanos_to_datetime(nanos: int) -> dt.datetime:
    """Aware UTC datetime (sub-microsecond digits dropped: Python's datetime stops at microseconds)."""
    return _EPOCH + dt.timedelta(microseconds=nanos // 1000)


@dataclass(frozen=True)
class TimestampIncrementingOffset:
    """Where a querier stands: the last timestamp (epoch ns) and/or incrementing id it has passed."""

    timestamp_ns: int | None = None
    incrementing: int | None = None
    gaps: tuple[tuple[int, int], ...] = field(default=())
    """(id, epoch ms first missed): ids below ``incrementing`` not seen yet (look-back only)."""

    def incrementing_or(self, default: int) -> int:
        return default if self.incrementing is None else self.incrementing

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.timestamp_ns is not None:
            out[TIMESTAMP_NANOS_FIELD] = self.timestamp_ns % 1_000_000_000
        if self.incrementing is not None:
            out[INCREMENTING_FIELD] = self.incrementing
        if self.timestamp_ns is not None:
            out[TIMESTAMP_FIELD] = self.timestamp_ns // 1_000_000
        if self.gaps:
            out[GAPS_FIELD] = ",".join(f"{i}@{t}" for i, t in self.gaps)
        return out

    @classmethod
    def from_dict(cls, offset: Mapping[str, Any] | None) -> TimestampIncrementingOffset:
        if not offset:
            return cls()
        inc = offset.get(INCREMENTING_FIELD)
        millis = offset.get(TIMESTAMP_FIELD)
        nanos = offset.get(TIMESTAMP_NANOS_FIELD)
        ts: int | None = None
        if millis is not None:
            seconds = int(millis) // 1000
            sub = int(nanos) if nanos is not None else (int(millis) % 1000) * 1_000_000
            ts = seconds * 1_000_000_000 + sub
        gaps: list[tuple[int, int]] = []
        for item in str(offset.get(GAPS_FIELD) or "").split(","):
            if "@" in item:
                i, t = item.split("@", 1)
                gaps.append((int(i), int(t)))
        return cls(ts, None if inc is None else int(inc), tuple(gaps))


def check_offset(mode: str, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
    """Refuse an offset given over REST that a querier in ``mode`` could not resume from, naming the field:
    the partition names a table (``table``, v1 with ``protocol``) or the query; ``incrementing`` is needed by
    the incrementing modes, ``timestamp`` (epoch ms) by the timestamp modes, all of them integers."""
    if partition.get("query") is None:
        offset_str(partition, "table", required=True)
        if "protocol" in partition and partition["protocol"] != "1":
            raise InvalidOffsetError(
                "protocol", f'of the partition must be "1", not {partition["protocol"]!r}'
            )
    incrementing = mode in (INCREMENTING, TIMESTAMP_INCREMENTING)
    timestamped = mode in (TIMESTAMP, TIMESTAMP_INCREMENTING)
    offset_int(offset, INCREMENTING_FIELD, required=incrementing, minimum=None)
    offset_int(offset, TIMESTAMP_FIELD, required=timestamped, minimum=None)
    offset_int(offset, TIMESTAMP_NANOS_FIELD, maximum=999_999_999)
    if TIMESTAMP_NANOS_FIELD in offset and TIMESTAMP_FIELD not in offset:
        raise InvalidOffsetError(TIMESTAMP_FIELD, f"is missing (it goes with {TIMESTAMP_NANOS_FIELD})")
    gaps = offset.get(GAPS_FIELD)
    if gaps is not None:
        items = [g for g in str(gaps).split(",") if g] if isinstance(gaps, str) else None
        if items is None or not all(_GAP.fullmatch(g) for g in items):
            raise InvalidOffsetError(
                GAPS_FIELD, f"must be 'id@epoch_ms' items joined by commas, not {gaps!r}"
            )
