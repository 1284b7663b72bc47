"""Binlog positions: GTID sets (MySQL and MariaDB formats) and Debezium's position comparison.

The comparator answers "is this history record's position at or before the connector's offset?"
exactly as Debezium's ``BinlogHistoryRecordComparator`` does (reference §8.4 step 3):

1. both sides have GTID sets → compare them (after the ``gtid.source.includes/excludes`` filter):
   equal sets → a non-snapshot record is after a snapshot offset, else compare ``event`` counts;
   otherwise the record is before iff its set is contained in the offset's;
2. GTIDs only on the offset → the record is before (servers enable GTIDs, rarely disable them);
   only on the record → after;
3. different ``server_id`` → compare ``ts_sec``;
4. otherwise binlog file index, then ``pos``, ``event``, ``row``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "BinlogPositionComparator",
    "GtidSet",
    "gtid_source_filter",
]

_MARIADB_GTID = re.compile(r"^\s*(\d+)-(\d+)-(\d+)\s*$")


class GtidSet:
    """A set of GTIDs in the server's own format.

    MySQL: ``uuid:1-5:7,uuid2:1-3`` — intervals of transaction numbers per source UUID.
    MariaDB: ``domain-server-seq,…`` — the last sequence number per replication domain (and server).
    """

    def __init__(self, text: str = "", mariadb: bool | None = None) -> None:
        text = (text or "").replace("\n", "").replace("\r", "").strip()
        if mariadb is None:
            first = text.split(",")[0].strip()
            mariadb = bool(first) and ":" not in first and _MARIADB_GTID.match(first) is not None
        self.mariadb = mariadb
        self._intervals: dict[str, list[tuple[int, int]]] = {}  # MySQL
        self._positions: dict[tuple[int, int], int] = {}  # MariaDB: (domain, server) -> seq
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            if mariadb:
                m = _MARIADB_GTID.match(part)
                if m is None:
                    raise ValueError(f"Not a MariaDB GTID: {part!r}")
                key = (int(m.group(1)), int(m.group(2)))
                self._positions[key] = max(self._positions.get(key, 0), int(m.group(3)))
            else:
                uuid, *ranges = part.split(":")
                if not ranges:
                    raise ValueError(f"Not a MySQL GTID set element: {part!r}")
                intervals = self._intervals.setdefault(uuid.strip().lower(), [])
                for r in ranges:
                    lo, _, hi = r.partition("-")
                    intervals.append((int(lo), int(hi or lo)))
        for uuid, ivs in self._intervals.items():
            self._intervals[uuid] = _merge(ivs)

    # -- building --------------------------------------------------------------------------------
    def add(self, gtid: str) -> GtidSet:
        """Add one GTID (``uuid:n`` or ``domain-server-seq``) in place; returns self."""
        gtid = gtid.strip()
        if self.mariadb or (":" not in gtid and _MARIADB_GTID.match(gtid)):
            m = _MARIADB_GTID.match(gtid)
            if m is None:
                raise ValueError(f"Not a MariaDB GTID: {gtid!r}")
            self.mariadb = True
            key = (int(m.group(1)), int(m.group(2)))
            # a domain's position moves on; an older server's entry for the same domain is replaced
            for k in [k for k in self._positions if k[0] == key[0] and k != key]:
                del self._positions[k]
            self._positions[key] = max(self._positions.get(key, 0), int(m.group(3)))
            return self
        uuid, _, number = gtid.rpartition(":")
        n = int(number)
        uuid = uuid.lower()
        self._intervals[uuid] = _merge([*self._intervals.get(uuid, []), (n, n)])
        return self

    def retain_all(self, predicate: Callable[[str], bool]) -> GtidSet:
        """A copy with only the sources (UUIDs, or ``domain-server`` for MariaDB) ``predicate`` accepts."""
        out = GtidSet("", self.mariadb)
        out._intervals = {u: list(iv) for u, iv in self._intervals.items() if predicate(u)}
        out._positions = {k: s for k, s in self._positions.items() if predicate(f"{k[0]}-{k[1]}")}
        return out

    def copy(self) -> GtidSet:
        return self.retain_all(lambda _: True)

    # -- querying --------------------------------------------------------------------------------
    def is_empty(self) -> bool:
        return not self._intervals and not self._positions

    def contains(self, gtid: str) -> bool:
        """Whether one GTID is in the set."""
        gtid = gtid.strip()
        m = _MARIADB_GTID.match(gtid)
        if m is not None and ":" not in gtid:
            domain, seq = int(m.group(1)), int(m.group(3))
            return any(d == domain and s >= seq for (d, _), s in self._positions.items())
        uuid, _, number = gtid.rpartition(":")
        n = int(number)
        return any(lo <= n <= hi for lo, hi in self._intervals.get(uuid.lower(), ()))

    def is_contained_within(self, other: GtidSet) -> bool:
        """Every GTID of this set is in ``other``."""
        if self.mariadb or other.mariadb:
            theirs: dict[int, int] = {}
            for (d, _), s in other._positions.items():
                theirs[d] = max(theirs.get(d, 0), s)
            return all(d in theirs and s <= theirs[d] for (d, _), s in self._positions.items())
        for uuid, ivs in self._intervals.items():
            other_ivs = other._intervals.get(uuid)
            if other_ivs is None:
                return False
            for lo, hi in ivs:
                if not any(olo <= lo and hi <= ohi for olo, ohi in other_ivs):
                    return False
        return True

    def uuids(self) -> list[str]:
        return sorted(self._intervals)

    def __contains__(self, gtid: object) -> bool:
        return isinstance(gtid, str) and self.contains(gtid)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GtidSet):
            return NotImplemented
        return self._intervals == other._intervals and self._positions == other._positions

    def __hash__(self) -> int:
        return hash(str(self))

    def __str__(self) -> str:
        if self.mariadb:
            return ",".join(f"{d}-{s}-{q}" for (d, s), q in sorted(self._positions.items()))
        parts = []
        for uuid in sorted(self._intervals):
            ranges = ":".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in self._intervals[uuid])
            parts.append(f"{uuid}:{ranges}")
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"GtidSet({str(self)!r})"


def _merge(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def gtid_source_filter(
    includes: str | None = None, excludes: str | None = None
) -> Callable[[str], bool] | None:
    """The predicate of ``gtid.source.includes``/``.excludes`` (comma-separated anchored regexes)."""

    def patterns(value: str | None) -> list[re.Pattern[str]]:
        return [re.compile(p.strip(), re.IGNORECASE) for p in (value or "").split(",") if p.strip()]

    inc, exc = patterns(includes), patterns(excludes)
    if inc:
        return lambda source: any(p.fullmatch(source) for p in inc)
    if exc:
        return lambda source: not any(p.fullmatch(source) for p in exc)
    return None


def _int(doc: Mapping[str, Any], key: str) -> int:
    value = doc.get(key)
    if value is None or value == "":
        return 0
    return int(value)


def _is_snapshot(doc: Mapping[str, Any]) -> bool:
    value = doc.get("snapshot")
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false")
    return bool(value)


def _binlog_file(name: str) -> tuple[str, int]:
    base, dot, ext = name.rpartition(".")
    if not dot:
        raise ValueError(f"Filename does not have an extension: {name}")
    try:
        return base, int(ext)
    except ValueError as e:
        raise ValueError(f"Cannot parse binlog filename extension: {name}") from e


class BinlogPositionComparator:
    """Debezium's MySQL/MariaDB history position comparison."""

    def __init__(self, gtid_filter: Callable[[str], bool] | None = None) -> None:
        self.gtid_filter = gtid_filter

    def is_at_or_before(self, recorded: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
        """Whether the ``recorded`` position (a history record's) is at or before ``desired`` (an offset)."""
        recorded_gtids = recorded.get("gtids") or None
        desired_gtids = desired.get("gtids") or None
        if desired_gtids is not None:
            if recorded_gtids is None:
                return True
            rec, des = GtidSet(str(recorded_gtids)), GtidSet(str(desired_gtids))
            if self.gtid_filter is not None:
                rec, des = rec.retain_all(self.gtid_filter), des.retain_all(self.gtid_filter)
            if rec == des:
                if not _is_snapshot(recorded) and _is_snapshot(desired):
                    return False
                return _int(recorded, "event") <= _int(desired, "event")
            return rec.is_contained_within(des)
        if recorded_gtids is not None:
            return False
        if _int(recorded, "server_id") != _int(desired, "server_id"):
            return _int(recorded, "ts_sec") <= _int(desired, "ts_sec")
        rec_base, rec_index = _binlog_file(str(recorded.get("file", "")))
        des_base, des_index = _binlog_file(str(desired.get("file", "")))
        if rec_base != des_base:
            raise ValueError("Cannot compare binlog filenames with different base names")
        if rec_index != des_index:
            return rec_index < des_index
        for key in ("pos", "event"):
            r, d = _int(recorded, key), _int(desired, key)
            if r != d:
                return r < d
        return _int(recorded, "row") <= _int(desired, "row")
