"""The ``snapshot-writes`` row's comparison: per key, not record by record.

Rows are written while both connectors run their initial and an incremental snapshot. Each connector
snapshots at its own moment, so a row a writer changed meanwhile is a snapshot read (``r``) on one side and
a streamed ``c``/``u``/``d`` on the other, and the two incremental snapshots read each chunk at their own
time: the two topics cannot be aligned record by record. What must hold on each side, and between them:

1. **final state**: replaying a side's events per key (``r``, ``c``, ``u``, ``d``, incremental reads, in
   topic order) gives exactly the table read from the database once the writer stopped and both caught up:
   no key lost, none extra, every column equal;
2. **consistency**: an update's or a delete's ``before`` equals the state the key's previous event left when
   that event was streamed (``c``/``u``); a key is not created while it exists from a streamed event; no
   update or delete of a key no earlier event has; no binlog place (``file``, ``pos``, ``row``) streamed twice
   for a key; no key read twice by one snapshot (initial or incremental);
3. **the same events**: events both sides streamed from the same binlog place are compared field by field
   as the rest of the comparison does (:func:`bench.compat.compare._compare_pair`, its normalisation);
   a streamed event at a place past both sides' snapshot positions must be on both sides.

Pure logic over parsed payloads (``tests/unit/test_compat_perkey.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bench.compat import compare as cmp

__all__ = ["COMPARED", "Event", "consistency", "events", "final_state", "replay", "same_places"]

COMPARED = (
    "per key, each side: replaying its events (snapshot r, c, u, d, incremental-snapshot r) in topic order "
    "gives the table read from the database after the writer stopped (no key lost, none extra, each column "
    "equal as text)",
    "per key, each side: an update's or delete's before equals the state the previous event left when that "
    "event was streamed; no create of a key a streamed event left existing; no update/delete of a key no "
    "earlier event has; no (file, pos, row) streamed twice; no key read twice by one snapshot",
    "both sides: streamed events at the same binlog place (file, pos, row, key) compared field by field as "
    "the base comparison does; a streamed event past both snapshot positions must be on both sides",
)
IGNORED = (
    "record-by-record alignment: each side snapshots at its own moment, so a row written meanwhile is a "
    "snapshot read on one side and a streamed change on the other, and the incremental snapshots read each "
    "chunk at their own time",
    "which side carries a streamed event before the other side's snapshot position (it streams from its own)",
    "the schema change, history and offset topics (the other rows compare them; here they only differ by "
    "each side's snapshot position)",
)

_STREAMED = ("c", "u", "d")


@dataclass(frozen=True)
class Event:
    """One change event of a table, as replaying needs it."""

    index: int  # position in the side's topic
    key: tuple[Any, ...]
    op: str  # r | c | u | d
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    snapshot: str  # source.snapshot: "false" when streamed, "incremental", or an initial-snapshot marker
    place: tuple[str, int, int] | None  # (file, pos, row) of a streamed event
    record: cmp.Record | None = None

    @property
    def streamed(self) -> bool:
        return self.op in _STREAMED


def _key(row: Mapping[str, Any], columns: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(row.get(c) for c in columns)


def events(records: Iterable[cmp.Record], key_columns: tuple[str, ...]) -> list[Event]:
    """The table topic's change events (tombstones skipped), keyed by ``key_columns``."""
    out = []
    for i, rec in enumerate(records):
        value = rec.value_json()
        payload = value.get("payload", value) if isinstance(value, dict) else None
        if not isinstance(payload, dict) or "op" not in payload:
            continue
        before, after, op = payload.get("before"), payload.get("after"), str(payload["op"])
        source = payload.get("source") or {}
        snapshot = str(source.get("snapshot", "false")).lower()
        place = None
        if op in _STREAMED:
            place = (str(source.get("file")), int(source.get("pos") or 0), int(source.get("row") or 0))
        row = after if op != "d" else before
        out.append(Event(i, _key(row or {}, key_columns), op, before, after, snapshot, place, rec))
    return out


def replay(evs: Iterable[Event]) -> dict[tuple[Any, ...], Mapping[str, Any]]:
    """The state the events leave: key -> row."""
    state: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for ev in evs:
        if ev.op == "d":
            state.pop(ev.key, None)
        elif ev.after is not None:
            state[ev.key] = ev.after
    return state


def _text(value: Any) -> str:
    return "NULL" if value is None else str(value)


def final_state(side: str, evs: list[Event], table: Mapping[tuple[Any, ...], Mapping[str, str]]) -> list[str]:
    """Differences between the replayed state and ``table`` (key -> column -> the database's text)."""
    state = replay(evs)
    found = []
    for key in sorted(set(table) - set(state), key=repr):
        found.append(f"{side}: key {key} lost (in the table, not in the replayed events)")
    for key in sorted(set(state) - set(table), key=repr):
        found.append(f"{side}: key {key} extra (replayed, not in the table): {dict(state[key])}")
    for key in sorted(set(state) & set(table), key=repr):
        got, want = state[key], table[key]
        for column in sorted(set(got) | set(want)):
            if _text(got.get(column)) != want.get(column, "<absent>"):
                found.append(
                    f"{side}: key {key} column {column}: replayed {_text(got.get(column))!r}, "
                    f"table {want.get(column, '<absent>')!r}"
                )
    return found


def consistency(side: str, evs: list[Event]) -> list[str]:
    """Each event against the state the key's previous event left (see the module's 2.)."""
    found = []
    last: dict[tuple[Any, ...], Event] = {}
    places: set[tuple[tuple[str, int, int], tuple[Any, ...]]] = set()
    read: set[tuple[str, tuple[Any, ...]]] = set()
    for ev in evs:
        where = f"{side}#{ev.index} {ev.op} key {ev.key}"
        prev = last.get(ev.key)
        if ev.place is not None:
            if (ev.place, ev.key) in places:
                found.append(f"{where}: binlog place {ev.place} streamed twice")
            places.add((ev.place, ev.key))
        if ev.op == "r":
            run = "incremental" if ev.snapshot == "incremental" else "initial"
            if (run, ev.key) in read:
                found.append(f"{where}: read twice by the {run} snapshot")
            read.add((run, ev.key))
        elif ev.op == "c":
            if prev is not None and prev.streamed and prev.op != "d":
                found.append(f"{where}: created while event #{prev.index} ({prev.op}) left it existing")
        else:  # u, d
            if prev is None or prev.op == "d":
                found.append(f"{where}: no earlier event leaves the key existing")
            elif prev.streamed and dict(ev.before or {}) != dict(prev.after or {}):
                found.append(
                    f"{where}: before {dict(ev.before or {})} is not the state #{prev.index} ({prev.op}) "
                    f"left: {dict(prev.after or {})}"
                )
        last[ev.key] = ev
    return found


def same_places(
    topic: str,
    dbz_events: list[Event],
    cdc_events: list[Event],
    dbz: cmp.Captured,
    ours: cmp.Captured,
    start: Mapping[str, tuple[str, int]],
) -> tuple[list[cmp.Difference], list[str], int]:
    """Streamed events of the same place compared field by field; ``start`` is each side's snapshot binlog
    position (``"debezium"``/``"cdc"``): an event at or past both must be on both sides. Returns the
    differences, the events one side lacks, and how many pairs were compared."""

    def by_place(evs: list[Event]) -> dict[tuple[tuple[str, int, int], tuple[Any, ...]], Event]:
        return {(e.place, e.key): e for e in evs if e.place is not None}

    a, b = by_place(dbz_events), by_place(cdc_events)
    both_started = max(start.get("debezium", ("", 0)), start.get("cdc", ("", 0)))
    diffs: list[cmp.Difference] = []
    missing = []
    pairs = 0
    for where in sorted(set(a) | set(b), key=repr):
        ea, eb = a.get(where), b.get(where)
        if ea is not None and eb is not None and ea.record is not None and eb.record is not None:
            pairs += 1
            index = f"dbz#{ea.index}/cdc#{eb.index}"
            diffs.extend(cmp._compare_pair("data", topic, index, ea.record, eb.record, dbz, ours))
            continue
        place = where[0]
        if (place[0], place[1]) >= both_started:
            lacking = "cdc" if eb is None else "debezium"
            have = ea or eb
            assert have is not None
            missing.append(f"{lacking} lacks the {have.op} of key {where[1]} at {place} (past both starts)")
    return diffs, missing, pairs
