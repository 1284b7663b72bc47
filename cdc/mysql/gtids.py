"""MySQL and MariaDB GTID sets, and the ``gtid.source.includes``/``.excludes`` filter.

A MySQL set is ``uuid:1-5:7,uuid2:1-3`` (intervals of transaction numbers per source UUID); a MariaDB one
is ``domain-server-seq,…`` (the last sequence number per replication domain). Offsets carry the set of
completed transactions as text (``gtids``); :class:`CompletedGtids` keeps it parsed between transactions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["CompletedGtids", "GtidSet", "gtid_source_filter"]

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


class CompletedGtids:
    """The GTID set of completed transactions, kept parsed between transactions.

    Parsing the set's text and printing it again for every transaction cost more than decoding a
    one-row transaction; the parsed set is kept and re-parsed only when the text it came from is no
    longer the streamer's (a new start, a DDL path that set it). A MariaDB set is one ``domain-server-seq``
    per domain: a transaction whose domain is the set's only one with the same server just changes
    the sequence number, without a regex or a sort.
    """

    __slots__ = ("mariadb", "parsed", "seq", "simple", "text")

    def __init__(self, mariadb: bool) -> None:
        self.mariadb = mariadb
        self.text: str | None = None
        self.parsed: GtidSet | None = None
        self.simple: str | None = None  # "domain-server-" when the set is that domain's only entry
        self.seq = 0  # its sequence number

    def add(self, current: str | None, gtid: str) -> str:
        if (
            self.simple is not None
            and current is self.text
            and gtid.startswith(self.simple)
            and (seq := int(gtid[len(self.simple) :])) >= self.seq
        ):
            text = gtid  # the only domain moved on: the set is this GTID
            self.seq = seq
        else:
            if current is not self.text or self.parsed is None:
                self.parsed = GtidSet(current or "", self.mariadb)
            self.parsed.add(gtid)
            text = str(self.parsed)
            self.simple = None
            if self.mariadb and "," not in text and text == gtid.strip():
                self.simple = gtid[: gtid.rindex("-") + 1]
                self.seq = int(gtid[len(self.simple) :])
                self.parsed = None  # re-parsed from the text when the fast case ends
        self.text = text
        return text
