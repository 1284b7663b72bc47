"""Record-by-record comparison of what Debezium and cdc wrote, and the table of their differences.

Each side's records are read into :class:`Captured` (topic suffix → records, the connector's prefix, its
database names). :func:`compare` normalises what must differ and nothing else, aligns each topic's records
(``difflib`` on a signature: key, operation, DDL, so one extra record does not shift every later one into a
difference) and compares keys byte for byte, value schemas (``default`` and ``parameters`` included),
payloads, headers, the schema-change topic, the schema history topic and the connect-offsets records.

Offsets are compared independently of when each worker happens to flush (every second, so which of the
offsets its records carry a worker commits is timing): Debezium's worker logs every record's source offset
(Connect's ``TransformationChain`` at TRACE, :func:`record_offsets_from_log`), and every offset either
worker commits must be one of those (its field set, with the ``snapshot`` value, while the snapshot runs,
as each side reads its own binlog position then; its exact value, ``ts_sec`` aside, while streaming). Two
commits are deterministic and compared in full: the snapshot's completed offset (the harness starts the
streaming workload only once both workers committed it; its coordinates are each side's own) and the last
offset (both workers commit on stop).

What is ignored, and why (:data:`IGNORED` is printed with every run):

* the topic prefix and the run's database names, written as ``<prefix>``, ``<db>``, ``<other>``;
* wall-clock times: the envelope's ``ts_ms``/``ts_us``/``ts_ns``, ``source.ts_*`` of snapshot records,
  the history record's ``ts_ms`` and the offsets' and history positions' ``ts_sec``;
* the DDL of databases the run did not make (other clients of the shared server: each side reads their
  schema at its own moment and streams their DDL over its own binlog range), counted per side; the run's
  own databases, the captured ones and one outside ``database.include.list`` (``<bystander>``), are
  compared in full;
* the binlog coordinates read when a snapshot starts (``source.file``/``pos``/``gtid`` of snapshot
  records, the history position and the offsets written during a snapshot): each connector reads
  ``SHOW MASTER STATUS`` when its own snapshot begins and the shared server's other clients move it in
  between. Streaming records name the same binlog events on both sides and are compared in full.

A difference's *kind* is ``<area> <topic> <path>`` with list indices and the run's names generalised
(``data <db>.t_types value.payload.after.c_time6``); :func:`load_intentional` reads the kinds
``docs/debezium-compatibility.md`` declares intentional (glob patterns with their reason).
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "HEARTBEAT_TOPIC",
    "IGNORED",
    "NOTIFICATION_TOPIC",
    "TRANSACTION_TOPIC",
    "Captured",
    "Difference",
    "Record",
    "checkable",
    "common_transactions",
    "compare",
    "heartbeat_offsets_from_log",
    "load_intentional",
    "own_ddl",
    "record_offsets_from_log",
    "render",
    "touched_transactions",
    "transactions_left_out",
    "unexplained",
]

IGNORED = (
    "topic prefix and database names (written <prefix>, <db>, <other>)",
    "envelope ts_ms/ts_us/ts_ns; source.ts_* of snapshot records; history ts_ms; ts_sec of offsets/positions",
    "the DDL of databases the run did not make (other clients of the shared server): counted, not compared",
    "the value of the __debezium.context.runId header (a UUID made when each task starts; the number of"
    " distinct ones over all data records is compared)",
    "the order inside a run of one database's CREATE TABLE records in the snapshot (Debezium's is a hash "
    "map's with snapshot.locking.mode=none) and of its DROP TABLE IF EXISTS records (sorted by table name, "
    "where each side's own signal table has its own name): each such run is compared sorted; every other "
    "DDL record in its order",
    "where each side's streaming begins and ends (another client's DDL between the two snapshots' binlog "
    "positions, or after the workload's end, reaches one side only): cdc's offsets before or past every "
    "streaming offset Debezium's records carry are not checked, and the last offsets are compared in full "
    "only when both are at the same binlog place",
    "a snapshot-completed offset a worker did not commit because another client's DDL streamed before its "
    "flush (then not compared)",
    "which of its records' offsets each worker commits (a flush every second: timing): every committed "
    "offset must be one Debezium's records carry (by field set and snapshot value before streaming, by "
    "value while streaming); the snapshot's completed offsets and the last offsets are compared in full",
    "a streaming offset without the incremental snapshot's keys where Debezium's record at the same place "
    "carries them (the two incremental snapshots end at their own pace; another client's DDL between the two "
    "ends makes such a record): compared without those keys",
    "in each side's own signal table's topic (<signal>): the binlog coordinates and, in watermark rows, the "
    "UUID of the id and the window's timestamp; in offsets written during the incremental snapshot: the "
    "binlog coordinates (each side writes its own watermarks); an offset among the side's own signal table "
    "transactions (the last watermarks carry no incremental keys): without its binlog coordinates, as one "
    "Debezium's signal records carried",
    "with --engine spark: the order of a table's initial-snapshot records (cdc's Spark engine reads a "
    "table's chunks in parallel): they are compared in key order",
    "binlog file/pos/gtid of snapshot records, of history records and offsets written during the snapshot "
    "and of the snapshot's completed offset (each connector reads the binlog position when its own snapshot "
    "starts)",
    "the offset after every record (each worker's log of its polled records), topic by topic: the "
    "initial snapshot's as a multiset of field sets with the snapshot value (each side's own binlog position;"
    " parallel chunks with --engine spark), the others in order by value, ts_sec aside, and without binlog "
    "coordinates in <signal> and during the incremental snapshot (each side's own watermarks); not the "
    "schema change topic's (other clients' DDL reaches each side over its own range) nor heartbeats' "
    "(timing)",
    "with transaction metadata, a committed offset at a transaction of the other side's signal table (empty "
    "on one side, a watermark during its incremental snapshot on the other): compared by its place only, "
    "without the incremental snapshot's keys and the transaction's per-table counts",
    "the empty offset ({}) Debezium's sink notification records carry and its worker then commits (cdc's "
    "notifications carry the task's offset): not compared, and never taken for the snapshot's completed "
    "offset; the offsets of the transaction and notification topics' records, record by record (BEGIN/END "
    "of every server transaction over each side's own binlog range; notifications at the snapshot's pace)",
    "how many heartbeats each worker writes (one per heartbeat.interval.ms when due: timing): each side's "
    "distinct heartbeat records (key, value with ts_ms aside, headers) are compared, each once; the binlog "
    "position a committed heartbeat offset names (the position when the heartbeat was due): its field set "
    "must be one Debezium's heartbeats carried",
    # rows transaction-metadata and notifications (issue #27)
    "in the transaction topic (provide.transaction.metadata): the BEGIN/END of transactions without a change "
    "of a captured table on either side (a BEGIN/END is written for every transaction of the server: the "
    "shared server's other clients write hundreds of thousands in a run) and the records before the first "
    "and after the last transaction id both sides wrote (each side streams from its own snapshot's binlog "
    "position to its own stop): counted, not compared; the "
    "transactions of the other side's signal table (each side captures only its own: empty on one side, "
    "the watermark row on the other): left out; those of the side's own signal table: compared in their own "
    "order with their id (each side's own GTID) and ts_ms (when each side wrote its own watermark) blanked",
    "the transaction block's id in each side's own signal table's records, and transaction_id and "
    "transaction_data_collection_order_* in offsets written during the incremental snapshot or at a record "
    "of the side's own signal table (the GTIDs and table of each side's own watermark transactions)",
    "in notifications (notification.sink.topic.name): the id of an Initial Snapshot notification (a "
    "random UUID per notification, in key and value) and every notification's timestamp (wall clock); the "
    "order of additional_data's entries (a HashMap whose bucket-sharing keys Java orders per JVM) is not "
    "compared, its entries are",
)
HEARTBEAT_TOPIC = "__debezium-heartbeat"
"""Where :func:`bench.compat.run.capture` files a side's ``__debezium-heartbeat.<prefix>`` records."""
NOTIFICATION_TOPIC = "__notifications"
"""Where :func:`bench.compat.run.capture` files a side's notifications (``notification.sink.topic.name``)."""
TRANSACTION_TOPIC = "transaction"
"""The transaction topic ``<prefix>.transaction`` (``provide.transaction.metadata``), without the prefix."""
_TRANSACTION_FIELDS = {"status", "id", "event_count", "data_collections", "ts_ms"}

_WALL_CLOCK = ("ts_ms", "ts_us", "ts_ns")
_INDEX = re.compile(r"\[\d+\]")
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class Record:
    """One Kafka record as read back: raw key and value, headers in order."""

    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)

    def key_json(self) -> Any:
        return _loads(self.key)

    def value_json(self) -> Any:
        return _loads(self.value)


@dataclass
class Captured:
    """What one side wrote: records per topic (named without the side's prefix), and its names."""

    side: str
    prefix: str
    names: dict[str, str]  # real name -> placeholder (database names)
    data: dict[str, list[Record]] = field(default_factory=dict)  # "<db>.table" -> records
    schema_changes: list[Record] = field(default_factory=list)
    history: list[Record] = field(default_factory=list)
    offsets: list[Record] = field(default_factory=list)
    snapshot_commits: int = 0
    """How many of ``offsets`` were committed before streaming began, the snapshot's completed offset last."""
    completed_superseded: bool = False
    """The worker's first commit after the snapshot was a later offset (another client's DDL streamed
    before its flush): no completed offset of its to compare."""
    record_offsets: list[dict[str, str]] | None = None
    heartbeat_offsets: list[dict[str, str]] = field(default_factory=list)
    """The offsets Debezium's heartbeat records carried (from the same log)."""
    """Every record's source offset in order, values as text (Debezium's, read from its worker's log)."""
    traced: list[tuple[str, dict[str, str]]] | None = None
    """Every polled record's topic and source offset, in order, from the worker's log
    (:mod:`bench.compat.record_offsets`); ``None``: not logged."""
    foreign_signals: list[str] = field(default_factory=list)
    """The GTIDs of the other side's signal table's transactions (its watermarks and signal): set by
    :func:`compare` from the other side's signal topic."""
    parallel_snapshot: bool = False
    """The initial snapshot read a table's chunks in parallel (cdc's Spark engine): its records of a table
    are compared in key order."""

    @property
    def completed(self) -> Record | None:
        """The snapshot's completed offset as this side committed it (``None``: not committed)."""
        if not self.snapshot_commits or self.completed_superseded:
            return None
        return self.offsets[self.snapshot_commits - 1]

    def normalise_text(self, text: str) -> str:
        # the longest names first: a database name may be a prefix of another
        for real, placeholder in sorted(self.names.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(real, placeholder)
        return text.replace(self.prefix, "<prefix>")

    def normalise_bytes(self, raw: bytes | None) -> bytes | None:
        if raw is None:
            return None
        try:
            return self.normalise_text(raw.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            return raw


@dataclass(frozen=True)
class Difference:
    area: str  # data | schema-changes | history | offsets
    topic: str
    index: str  # record position(s): "dbz#3/cdc#4"
    path: str
    debezium: str
    cdc: str

    @property
    def kind(self) -> str:
        path = _INDEX.sub("[]", self.path)
        return f"{self.area} {self.topic} {path}"


def _loads(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"<not json>": raw.decode("utf-8", "replace")}


def _number(kind: str) -> Callable[[str], tuple[str, str]]:
    return lambda text: (kind, text)


def _exact_loads(raw: bytes | None) -> Any:
    """JSON with its numbers kept as their text (``("#int", "1")``, ``("#float", "1.0")``): two values are
    equal exactly when they are spelled alike, so a plain ``==`` settles most subtrees at once."""
    if raw is None:
        return None
    try:
        return json.loads(raw, parse_int=_number("#int"), parse_float=_number("#float"))
    except ValueError:
        return {"<not json>": raw.decode("utf-8", "replace")}


def _plain(value: Any) -> Any:
    """A value of :func:`_exact_loads` with its numbers as they were spelled (for display)."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("#int", "#float"):
        return json.loads(value[1])
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _short(value: Any, limit: int = 90) -> str:
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("#int", "#float"):
        value = value[1]  # a number as it was spelled (1.17549435E-38)
    value = _plain(value)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _diff_values(a: Any, b: Any, path: str, out: list[tuple[str, Any, Any]]) -> None:
    """Structural differences of two JSON values: (path, a, b) for each leaf or shape that differs."""
    if a == b and type(a) is type(b):  # exact with _exact_loads' numbers: most subtrees end here
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in a:
                out.append((sub, "<absent>", b[k]))
            elif k not in b:
                out.append((sub, a[k], "<absent>"))
            else:
                _diff_values(a[k], b[k], sub, out)
        return
    if isinstance(a, list) and isinstance(b, list):
        if _fields_list(a) and _fields_list(b):
            _diff_fields(a, b, path, out)
            return
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(a):
                out.append((sub, "<absent>", b[i]))
            elif i >= len(b):
                out.append((sub, a[i], "<absent>"))
            else:
                _diff_values(a[i], b[i], sub, out)
        return
    if a != b or type(a) is not type(b):
        out.append((path, a, b))


def _fields_list(items: list[Any]) -> bool:
    """A Connect schema's ``fields`` (or a table change's ``columns``): matched by name, not position."""
    return bool(items) and all(isinstance(i, dict) and ("field" in i or "name" in i) for i in items)


def _diff_fields(a: list[Any], b: list[Any], path: str, out: list[tuple[str, Any, Any]]) -> None:
    def name(item: dict[str, Any]) -> str:
        return str(item.get("field", item.get("name")))

    names_a, names_b = [name(i) for i in a], [name(i) for i in b]
    if names_a != names_b:
        out.append((f"{path}.<order>", names_a, names_b))
    by_b = {name(i): i for i in b}
    for item in a:
        sub = f"{path}[{name(item)}]"
        if name(item) in by_b:
            _diff_values(item, by_b[name(item)], sub, out)


def _blank_snapshot(doc: dict[str, Any], keys: tuple[str, ...]) -> None:
    """In a block written during a snapshot, the coordinates (each side's own) become placeholders."""
    if doc.get("snapshot") in (None, False, "false"):
        return
    for key in keys:
        if key in doc:
            doc[key] = f"<snapshot {key}>"


class _Normaliser:
    """Drops or blanks what :data:`IGNORED` lists, in place (on values each comparison parses anew)."""

    @staticmethod
    def envelope(value: Any) -> Any:
        payload = value.get("payload") if isinstance(value, dict) and "schema" in value else value
        if not isinstance(payload, dict) or set(payload) == _TRANSACTION_FIELDS:
            return value  # a BEGIN/END's ts_ms is its binlog event's time, the same on both sides
        for key in _WALL_CLOCK:
            if key in payload:
                payload[key] = "<time>"
        source = payload.get("source")
        if isinstance(source, dict):
            _blank_snapshot(source, (*_WALL_CLOCK, "file", "pos", "gtid", "row", "thread", "server_id"))
        return value

    @staticmethod
    def history(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if "ts_ms" in value:
            value["ts_ms"] = "<time>"
        position = value.get("position")
        if isinstance(position, dict):
            position.pop("ts_sec", None)
            _blank_snapshot(position, ("file", "pos", "gtids"))
        return value

    @staticmethod
    def offset(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        value.pop("ts_sec", None)
        if value.get("snapshot_completed") is not True:
            _blank_snapshot(value, ("file", "pos", "gtids"))
        return value

    @staticmethod
    def completed_offset(value: Any) -> Any:
        """The snapshot's completed offset: its coordinates are each side's own (read at its start)."""
        value = _Normaliser.offset(value)
        if isinstance(value, dict):
            for key in ("file", "pos", "gtids"):
                if key in value:
                    value[key] = f"<snapshot {key}>"
        return value


def _signature(rec: Record, side: Captured) -> str:
    """What aligns two sides' records: the key, the operation and the DDL (not the whole value)."""
    key = side.normalise_bytes(rec.key) or b""
    value = rec.value_json()
    payload = value.get("payload", value) if isinstance(value, dict) else value
    op = ddl = ""
    if isinstance(payload, dict):
        # a change's op; a BEGIN/END's status; a notification's aggregate type and type
        op = str(payload.get("op") or payload.get("status") or "")
        if "aggregate_type" in payload:
            op = f"{payload.get('aggregate_type')}/{payload.get('type')}"
        ddl = side.normalise_text(str(payload.get("ddl", "")))
    return f"{key.decode('utf-8', 'replace')}|{op}|{ddl}"


def _header_value(key: str, value: bytes | None) -> bytes | None:
    if key == "__debezium.context.runId" and value is not None and _UUID.fullmatch(value):
        return b"<run id>"
    return value


def _compare_pair(
    area: str,
    topic: str,
    index: str,
    a: Record,
    b: Record,
    dbz: Captured,
    ours: Captured,
    norm: Callable[[Any], Any] | None = None,
) -> list[Difference]:
    diffs: list[Difference] = []
    norm = (
        norm
        or {
            "data": _Normaliser.envelope,
            "schema-changes": _Normaliser.envelope,
            "history": _Normaliser.history,
            "offsets": _Normaliser.offset,
        }[area]
    )
    ka, kb = dbz.normalise_bytes(a.key), ours.normalise_bytes(b.key)
    if area == "offsets":
        found: list[tuple[str, Any, Any]] = []
        _diff_values(_exact_loads(ka), _exact_loads(kb), "key", found)
    elif ka != kb:
        found = [
            ("key<bytes>", (ka or b"").decode("utf-8", "replace"), (kb or b"").decode("utf-8", "replace"))
        ]
    else:
        found = []
    va = norm(_exact_loads(dbz.normalise_bytes(a.value)))
    vb = norm(_exact_loads(ours.normalise_bytes(b.value)))
    _diff_values(va, vb, "value", found)
    ha = [(k, _header_value(k, dbz.normalise_bytes(v))) for k, v in a.headers]
    hb = [(k, _header_value(k, ours.normalise_bytes(v))) for k, v in b.headers]
    if ha != hb:
        da, db_ = dict(ha), dict(hb)
        for k in sorted(set(da) | set(db_)):
            if da.get(k, b"<absent>") != db_.get(k, b"<absent>"):
                found.append(
                    (
                        f"header.{k}",
                        (da.get(k) or b"<absent>").decode("utf-8", "replace"),
                        (db_.get(k) or b"<absent>").decode("utf-8", "replace"),
                    )
                )
    for path, x, y in found:
        diffs.append(Difference(area, topic, index, path, _short(x), _short(y)))
    return diffs


def _in_snapshot(rec: Record) -> bool:
    value = rec.value_json()
    if not isinstance(value, dict):
        return False
    payload = value.get("payload", value)
    marker = (payload.get("position") or {}).get("snapshot") or (payload.get("source") or {}).get("snapshot")
    return marker not in (None, False, "false")


def _sortable_run(rec: Record) -> str | None:
    """For a snapshot's ``CREATE TABLE`` or ``DROP TABLE IF EXISTS`` record: its statement and database
    (records with the same one make a run compared sorted), else None."""
    value = rec.value_json()
    payload = value.get("payload", value) if isinstance(value, dict) else None
    if not _in_snapshot(rec) or not isinstance(payload, dict):
        return None
    ddl = str(payload.get("ddl", "")).upper()
    kind = next((k for k in ("CREATE TABLE", "DROP TABLE IF EXISTS") if ddl.startswith(k)), None)
    return f"{kind} {payload.get('databaseName') or ''}" if kind else None


def _snapshot_sorted(records: list[Record], side: Captured) -> list[Record]:
    """The records in their order, but each run of one database's snapshot ``CREATE TABLE`` records sorted
    (Debezium's order with ``snapshot.locking.mode=none``: it reads the tables' DDL in parallel and writes
    them in a hash map's order), and each run of one database's ``DROP TABLE IF EXISTS`` (sorted by table
    name, in which each side's own signal table, ``<signal>``, is ``sig_dbz`` on one and ``sig_cdc`` on the
    other)."""
    out: list[Record] = []
    run: list[Record] = []
    for rec in [*records, None]:
        database = _sortable_run(rec) if rec is not None else None
        if run and (database is None or database != _sortable_run(run[0])):
            out.extend(sorted(run, key=lambda r: _signature(r, side)))
            run = []
        if rec is not None and database is not None:
            run.append(rec)
        elif rec is not None:
            out.append(rec)
    return out


def _compare_lists(
    area: str, topic: str, a: list[Record], b: list[Record], dbz: Captured, ours: Captured
) -> list[Difference]:
    if area in ("history", "schema-changes"):
        a, b = _snapshot_sorted(a, dbz), _snapshot_sorted(b, ours)
    sig_a = [_signature(r, dbz) for r in a]
    sig_b = [_signature(r, ours) for r in b]
    diffs: list[Difference] = []
    matcher = difflib.SequenceMatcher(a=sig_a, b=sig_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        pairs = list(zip(range(i1, i2), range(j1, j2), strict=False))
        for i, j in pairs:
            diffs.extend(_compare_pair(area, topic, f"dbz#{i}/cdc#{j}", a[i], b[j], dbz, ours))
        if tag == "equal":
            continue
        for i in range(i1 + len(pairs), i2):
            diffs.append(Difference(area, topic, f"dbz#{i}", "<record>", _describe(a[i], dbz), "<absent>"))
        for j in range(j1 + len(pairs), j2):
            diffs.append(Difference(area, topic, f"cdc#{j}", "<record>", "<absent>", _describe(b[j], ours)))
    return diffs


def _describe(rec: Record, side: Captured) -> str:
    return _short(_signature(rec, side) or "<tombstone>", 120)


# An incremental snapshot's offsets hold JSON (``incremental_snapshot_collections=[{…}]``): the offset map
# ends at the ``}}`` before ``ConnectRecord``.
_TRACE = re.compile(
    r"Applying transformation \S+ to SourceRecord\{sourcePartition=\{([^{}]*)\}, "
    r"sourceOffset=\{(.*?)\}\} ConnectRecord(?:\{topic='([^']*)')?"
)
_MAP_ENTRY = re.compile(r", (?=[A-Za-z_][A-Za-z0-9_.$-]*=)")  # keys may name a table (db.t)


def _java_map(text: str) -> dict[str, str]:
    """A flat ``java.util.Map``'s ``toString`` (``{a=1, b=x}`` without the braces) as text values."""
    return dict(part.split("=", 1) for part in _MAP_ENTRY.split(text) if "=" in part)


def record_offsets_from_log(log: str, prefix: str) -> list[dict[str, str]]:
    """Every record's source offset, in order, from a Connect worker's log with
    ``org.apache.kafka.connect.runtime.TransformationChain`` at TRACE (it logs each record, its
    ``sourceOffset`` included, before each transform; the connector needs one transform), partition
    ``{server=<prefix>}`` only; not the empty offsets of Debezium's sink notification records."""
    return [
        offset
        for m in _TRACE.finditer(log)
        if _java_map(m.group(1)).get("server") == prefix and (offset := _java_map(m.group(2)))
    ]


def heartbeat_offsets_from_log(log: str, prefix: str) -> list[dict[str, str]]:
    """The source offsets of the heartbeat records among those :func:`record_offsets_from_log` reads."""
    return [
        _java_map(m.group(2))
        for m in _TRACE.finditer(log)
        if _java_map(m.group(1)).get("server") == prefix and (m.group(3) or "").startswith(HEARTBEAT_TOPIC)
    ]


def _text(value: Any) -> str:
    """An offset value as Java's ``toString`` writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    return "null" if value is None else str(value)


def _flagged(offset: Mapping[str, Any]) -> bool:
    return offset.get("snapshot") not in (None, False, "false")


def _shape(offset: Mapping[str, Any]) -> str:
    """The field set, with the ``snapshot`` value when there is one."""
    shape = ",".join(sorted(offset))
    return shape + f" snapshot={_text(offset['snapshot'])}" if "snapshot" in offset else shape


_POSITION = ("file", "pos", "gtids", "event", "row")
_TRANSACTION_KEYS = ("transaction_id", "transaction_data_collection_order_")


def _streaming_value(offset: Mapping[str, Any]) -> str:
    """The offset as compared while streaming: ``ts_sec`` aside, and during an incremental snapshot its
    binlog coordinates too (those of the watermark each side wrote to its own signal table)."""
    incremental = any(k.startswith("incremental_snapshot") for k in offset)
    if not incremental:
        return json.dumps({k: _text(v) for k, v in offset.items() if k != "ts_sec"}, sort_keys=True)
    drop = ("ts_sec", *_POSITION)
    kept = {k: _text(v) for k, v in offset.items() if k not in drop and not k.startswith(_TRANSACTION_KEYS)}
    return json.dumps(kept, sort_keys=True)


def _bare(offset: Mapping[str, Any]) -> str:
    """An offset without ``ts_sec`` and the incremental snapshot's keys."""
    kept = {
        k: _text(v) for k, v in offset.items() if k != "ts_sec" and not k.startswith("incremental_snapshot")
    }
    return json.dumps(kept, sort_keys=True)


def _signal_gtids(side: Captured) -> dict[str, int]:
    """The GTID of each record of the side's own signal table (each side writes its own) → its index."""
    records = next((rs for t, rs in side.data.items() if side.normalise_text(t) == SIGNAL_TOPIC), [])
    out: dict[str, int] = {}
    for k, rec in enumerate(records):
        value = rec.value_json()
        payload = value.get("payload", value) if isinstance(value, dict) else None
        source = payload.get("source") if isinstance(payload, dict) else None
        if isinstance(source, dict) and source.get("gtid"):
            out.setdefault(str(source["gtid"]), k)
    return out


def _unplaced(offset: Mapping[str, Any]) -> str:
    """An offset without its binlog coordinates (``event``/``row`` kept) and its transaction's id and
    per-table counts (those of each side's own watermark transaction)."""
    drop = ("ts_sec", "file", "pos", "gtids")
    kept = {k: _text(v) for k, v in offset.items() if k not in drop and not k.startswith(_TRANSACTION_KEYS)}
    return json.dumps(kept, sort_keys=True)


def _stripped(offset: Mapping[str, Any]) -> str:
    """An offset without ``ts_sec``, the incremental snapshot's keys and the per-table counts of its
    transaction: at a transaction of the other side's signal table (an empty transaction here, its
    watermark there, during its own incremental snapshot), only its place is the same on both sides."""
    kept = {
        k: _text(v)
        for k, v in offset.items()
        if k != "ts_sec"
        and not k.startswith("incremental_snapshot")
        and not k.startswith("transaction_data_collection_order_")
    }
    return json.dumps(kept, sort_keys=True)


def _committed_in_records(dbz: Captured, ours: Captured) -> list[Difference]:
    """Every offset each worker committed must be one Debezium's records carried: before streaming by its
    field set (and ``snapshot`` value), while streaming by its value (``ts_sec`` aside). An offset of a
    record of the side's own signal table (its GTID) must be the offset Debezium's record of the same place
    in its signal table carried, binlog coordinates aside (each side writes its own table)."""
    carried = dbz.record_offsets or []
    if not carried:
        return [Difference("offsets", "<offsets>", "log", "<record offsets>", "none in the worker's log", "")]
    completed = next((i for i, o in enumerate(carried) if not _flagged(o)), len(carried) - 1)
    snapshot_shapes = {_shape(o) for o in carried[: completed + 1]}
    streaming = {_streaming_value(o) for o in carried[completed + 1 :]}
    # each side's incremental snapshot runs at its own pace: a record another client's DDL made after one
    # side's ended and before the other's did carries the incremental keys on one side only
    bare = {_bare(o) for o in carried[completed + 1 :]}
    # a heartbeat names the binlog position when it is due, another client's transaction before it or not
    beat_shapes = {_shape(o) for o in dbz.heartbeat_offsets}
    dbz_signals = _signal_gtids(dbz)
    at_signal: dict[int, set[str]] = {}
    for o in carried[completed + 1 :]:
        if o.get("gtids") in dbz_signals:
            at_signal.setdefault(dbz_signals[o["gtids"]], set()).add(_unplaced(o))
    at_any_signal = set().union(*at_signal.values()) if at_signal else set()
    # with transaction metadata: the offsets at Debezium's signal transactions (cdc's BEGIN/END of them)
    at_dbz_signal = {_stripped(o) for o in carried[completed + 1 :] if o.get("transaction_id") in dbz_signals}
    diffs: list[Difference] = []
    for side, tag in ((dbz, "dbz"), (ours, "cdc")):
        done = side.completed.value_json() if side.completed is not None else None
        signals = _signal_gtids(side)
        # the side's own watermark transactions: from its first signal record to one past its last
        seqs = [s for s in (_gtid_seq({"gtids": g}) for g in signals) if s is not None]
        watermarks = (min(seqs), max(seqs) + 1) if seqs else None
        for i, rec in enumerate(side.offsets):
            value = rec.value_json()
            if not isinstance(value, dict) or not value:  # Debezium's at a sink notification: {}
                continue
            if i < side.snapshot_commits:
                found, shown = _shape(value) in snapshot_shapes, _shape(value)
            elif value.get("gtids") in signals:
                k = signals[value["gtids"]]
                # a signal record none of Debezium's logged offsets names by its GTID (on a busy server a
                # quarter of them in some runs) cannot be checked
                # An offset's gtids are the set before its transaction, so this names the record of the
                # transaction before it, which is the side's own only when the other side wrote none in
                # between (each side's watermarks interleave at their own pace): an incremental snapshot's
                # offset that is not there is checked as every other one of the incremental snapshot is.
                found, shown = (
                    k not in at_signal
                    or _unplaced(value) in at_signal[k]
                    or (
                        any(key.startswith("incremental_snapshot") for key in value)
                        and _streaming_value(value) in streaming
                    ),
                    f"signal record #{k}: {_unplaced(value)}",
                )
            else:
                # a commit of the completed offset again (no new record since) is no streaming offset
                again = isinstance(done, dict) and _streaming_value(value) == _streaming_value(done)
                incremental = any(k.startswith("incremental_snapshot") for k in value)
                found = (
                    again
                    or _streaming_value(value) in streaming
                    or (not incremental and _bare(value) in bare)
                    or (tag == "cdc" and not incremental and _outside(value, carried[completed + 1 :]))
                    or (tag == "cdc" and "event" not in value and _shape(value) in beat_shapes)
                    or (
                        tag == "cdc"
                        and value.get("transaction_id") in dbz_signals
                        and _stripped(value) in at_dbz_signal
                    )
                    or (
                        tag == "cdc"
                        and _own_watermark(value, watermarks)
                        and _unplaced(value) in at_any_signal
                    )
                )
                shown = _short(value, 400)
            if not found:
                expected = (
                    sorted(snapshot_shapes)
                    if i < side.snapshot_commits
                    else f"one of {len(streaming)} values carried while streaming"
                )
                path = "<not among debezium's offsets>" if tag == "cdc" else "<not in its own log>"
                diffs.append(Difference("offsets", "<offsets>", f"{tag}#{i}", path, _short(expected), shown))
    return diffs


def _compare_offsets(dbz: Captured, ours: Captured) -> list[Difference]:
    diffs = _committed_in_records(dbz, ours)
    if dbz.completed_superseded or ours.completed_superseded:
        pass  # timing: one worker flushed only after another client's DDL had streamed
    elif dbz.completed is None or ours.completed is None:
        diffs.append(
            Difference(
                "offsets",
                "<offsets>",
                "completed",
                "<record>",
                str(dbz.completed is not None),
                str(ours.completed is not None),
            )
        )
    else:
        diffs.extend(
            _compare_pair(
                "offsets",
                "<offsets>",
                "completed",
                dbz.completed,
                ours.completed,
                dbz,
                ours,
                _Normaliser.completed_offset,
            )
        )
    last_a = dbz.offsets[-1] if dbz.offsets else None
    last_b = ours.offsets[-1] if ours.offsets else None
    if last_a is None or last_b is None:
        if last_a is not last_b:
            present = str(last_a is not None), str(last_b is not None)
            diffs.append(Difference("offsets", "<offsets>", "last", "<record>", *present))
    elif _place(last_a.value_json()) == _place(last_b.value_json()):
        diffs.extend(_compare_pair("offsets", "<offsets>", "last", last_a, last_b, dbz, ours))
    # else: the workers stopped at different places (another client's DDL after the workload's end
    # reached one of them before its stop): each last offset was checked against the records' offsets
    return diffs


def _place(offset: Any) -> tuple[str, ...]:
    """Where in the binlog an offset is (file, position, GTID set)."""
    if not isinstance(offset, dict):
        return ()
    return tuple(_text(offset.get(k)) for k in ("file", "pos", "gtids"))


def _gtid_seq(offset: Mapping[str, Any]) -> int | None:
    """A single-domain MariaDB GTID set's sequence number (``0-1-42`` → 42), else None."""
    parts = str(offset.get("gtids") or "").split("-")
    return int(parts[2]) if len(parts) == 3 and parts[2].isdigit() else None


def _own_watermark(offset: Mapping[str, Any], watermarks: tuple[int, int] | None) -> bool:
    """Whether ``offset`` lies among the side's own signal table transactions (its GTID range): the last
    watermarks, written after the incremental snapshot's end, carry no incremental keys on either side, and
    their binlog places are each side's own."""
    seq = _gtid_seq(offset)
    return seq is not None and watermarks is not None and watermarks[0] <= seq <= watermarks[1]


def _outside(offset: Mapping[str, Any], carried: list[dict[str, str]]) -> bool:
    """Whether ``offset`` lies past every streaming offset Debezium's records carried (it stopped before
    there) or before them all (cdc's snapshot read an earlier binlog position than Debezium's)."""
    seq = _gtid_seq(offset)
    seqs = [s for s in (_gtid_seq(o) for o in carried) if s is not None]
    return seq is not None and bool(seqs) and not min(seqs) <= seq <= max(seqs)


def checkable(offset: Mapping[str, Any], dbz: Captured) -> bool:
    """Whether a streaming offset is one Debezium's records carried (``ts_sec`` aside): the self-test alters
    such an offset, which the comparison must then report."""
    carried = dbz.record_offsets or []
    return any(_streaming_value(o) == _streaming_value(offset) for o in carried if not _flagged(o))


SIGNAL_TOPIC = "<db>.<signal>"
"""Each side's own signal table's topic, once names are normalised."""
_SOURCE_POSITION = ("file", "pos", "gtid", "row", "thread", "server_id", *_WALL_CLOCK)


def _signal_record(rec: Record) -> Record:
    """A record of a side's own signal table with what differs by side blanked: the binlog coordinates
    (each side writes its own table), and in a watermark row (``snapshot-window-open``/``-close``) the
    UUID of its id and the window's timestamp."""
    key = _UUID.sub(b"<uuid>", rec.key) if rec.key is not None else None
    value = rec.value_json()
    payload = value.get("payload", value) if isinstance(value, dict) and "schema" in value else value
    if isinstance(payload, dict):
        for image in (payload.get("before"), payload.get("after")):
            if isinstance(image, dict) and str(image.get("type", "")).startswith("snapshot-window-"):
                image["id"] = _UUID.sub(b"<uuid>", str(image.get("id", "")).encode()).decode()
                image["data"] = "<window timestamp>"
        source = payload.get("source")
        if isinstance(source, dict):
            for k in _SOURCE_POSITION:
                if k in source:
                    source[k] = f"<{k}>"
        block = payload.get("transaction")
        if isinstance(block, dict) and "id" in block:
            block["id"] = "<own watermark transaction>"
    raw = json.dumps(value).encode() if rec.value is not None else None
    return Record(key, raw, rec.headers)


def _notification_record(rec: Record) -> Record:
    """A sink notification with its timing and identity blanked: the id of an initial snapshot's
    notification (a random UUID; an incremental snapshot's is the signal's id, compared) and the
    timestamp."""
    key = _UUID.sub(b"<uuid>", rec.key) if rec.key is not None else None
    value = rec.value_json()
    payload = value.get("payload", value) if isinstance(value, dict) and "schema" in value else value
    if isinstance(payload, dict):
        payload["id"] = _UUID.sub(b"<uuid>", str(payload.get("id", "")).encode()).decode()
        if "timestamp" in payload:
            payload["timestamp"] = "<time>"
    raw = json.dumps(value).encode() if rec.value is not None else None
    return Record(key, raw, rec.headers)


def _transaction_id(rec: Record) -> str | None:
    value = rec.value_json()
    payload = value.get("payload", value) if isinstance(value, dict) else None
    return str(payload.get("id")) if isinstance(payload, dict) and "status" in payload else None


def _touched(side: Captured) -> set[str]:
    """The ids of the transactions a change record of ``side`` names (its ``transaction`` block)."""
    out = set()
    for topic, records in side.data.items():
        if topic in (TRANSACTION_TOPIC, NOTIFICATION_TOPIC, HEARTBEAT_TOPIC):
            continue
        for rec in records:
            value = rec.value_json()
            payload = value.get("payload", value) if isinstance(value, dict) else None
            block = payload.get("transaction") if isinstance(payload, dict) else None
            if isinstance(block, dict) and block.get("id") is not None:
                out.add(str(block["id"]))
    return out


def touched_transactions(records: list[Record], dbz: Captured, ours: Captured) -> list[Record]:
    """The BEGIN/END records of the transactions with a change of a captured table on either side: a
    BEGIN/END is written for every transaction of the server, and on the shared server its other clients
    write hundreds of thousands in a run, each side over its own binlog range and at its own pace."""
    touched = _touched(dbz) | _touched(ours)
    return [r for r in records if _transaction_id(r) in touched]


def transactions_left_out(side: Captured, dbz: Captured, ours: Captured) -> int:
    """How many of ``side``'s transaction records are not compared (no captured change, or outside the
    range both sides wrote)."""
    other = ours if side is dbz else dbz
    mine = touched_transactions(side.data.get(TRANSACTION_TOPIC, []), dbz, ours)
    theirs = touched_transactions(other.data.get(TRANSACTION_TOPIC, []), dbz, ours)
    return len(side.data.get(TRANSACTION_TOPIC, [])) - len(common_transactions(mine, theirs)[0])


def common_transactions(mine: list[Record], theirs: list[Record]) -> tuple[list[Record], int]:
    """``mine`` from the first to the last record whose transaction id ``theirs`` has too (each side
    streams from its own snapshot's position to its own stop, and the server's other clients' transactions
    before or after the other side's range reach one side only), and how many were left out."""
    ids = {_transaction_id(r) for r in theirs}
    inside = [i for i, r in enumerate(mine) if _transaction_id(r) in ids]
    if not inside:
        return [], len(mine)
    kept = mine[inside[0] : inside[-1] + 1]
    return kept, len(mine) - len(kept)


def _transaction_parts(records: list[Record], side: Captured) -> tuple[list[Record], list[Record]]:
    """The transaction topic without the other side's signal table's transactions, split into the side's
    own signal table's (their ids blanked) and the rest."""
    own = set(_signal_gtids(side))
    foreign = set(side.foreign_signals) - own
    signal, rest = [], []
    for rec in records:
        tx = _transaction_id(rec)
        if tx in foreign:
            continue
        if tx in own:
            value = rec.value_json()
            value["payload"]["id"] = "<own watermark transaction>"
            value["payload"]["ts_ms"] = "<own watermark time>"  # each side writes its own at its own pace
            key = rec.key_json()
            if isinstance(key, dict) and isinstance(key.get("payload"), dict):
                key["payload"]["id"] = "<own watermark transaction>"
            signal.append(Record(json.dumps(key).encode(), json.dumps(value).encode(), rec.headers))
        else:
            rest.append(rec)
    return signal, rest


_INITIAL = ("true", "first", "last", "first_in_data_collection", "last_in_data_collection")


def _snapshot_in_key_order(records: list[Record]) -> list[Record]:
    """The topic's initial-snapshot records (its first ones) sorted by key bytes, the rest as they came."""
    n = 0
    for rec in records:
        value = rec.value_json()
        payload = value.get("payload", value) if isinstance(value, dict) else None
        source = payload.get("source") if isinstance(payload, dict) else None
        if not (isinstance(source, dict) and source.get("snapshot") in _INITIAL):
            break
        n += 1
    return sorted(records[:n], key=lambda r: r.key or b"") + records[n:]


def _database(rec: Record) -> str:
    value = rec.value_json()
    payload = value.get("payload", value) if isinstance(value, dict) else None
    return str(payload.get("databaseName") or "") if isinstance(payload, dict) else ""


def own_ddl(records: list[Record], side: Captured) -> tuple[list[Record], int]:
    """A DDL topic's records without those of databases the run did not make, and how many those were."""
    kept = [r for r in records if not _database(r) or _database(r) in side.names]
    return kept, len(records) - len(kept)


AREAS = ("data", "schema-changes", "history", "offsets")


def compare(
    dbz: Captured, ours: Captured, areas: tuple[str, ...] = AREAS, topics: set[str] | None = None
) -> list[Difference]:
    """Every difference between Debezium's records (``dbz``) and ours, in topic order (``areas`` and, for
    data, ``topics`` narrow it: the self-test compares again only what it altered)."""
    diffs: list[Difference] = []
    if "data" in areas:
        by_a = {dbz.normalise_text(t): records for t, records in dbz.data.items()}
        by_b = {ours.normalise_text(t): records for t, records in ours.data.items()}
        for by, side in ((by_a, dbz), (by_b, ours)):
            if HEARTBEAT_TOPIC in by:
                by[HEARTBEAT_TOPIC] = _distinct_heartbeats(by[HEARTBEAT_TOPIC], side)
            if NOTIFICATION_TOPIC in by:
                by[NOTIFICATION_TOPIC] = [_notification_record(r) for r in by[NOTIFICATION_TOPIC]]
            if TRANSACTION_TOPIC in by:
                other = ours if side is dbz else dbz
                by[TRANSACTION_TOPIC] = touched_transactions(by[TRANSACTION_TOPIC], dbz, ours)
                side.foreign_signals = list(_signal_gtids(other))
                signal, rest = _transaction_parts(by[TRANSACTION_TOPIC], side)
                by[TRANSACTION_TOPIC + " <own signal>"] = signal
                by[TRANSACTION_TOPIC] = rest
            if SIGNAL_TOPIC in by:
                by[SIGNAL_TOPIC] = [_signal_record(r) for r in by[SIGNAL_TOPIC]]
            if dbz.parallel_snapshot or ours.parallel_snapshot:
                for topic in by:
                    by[topic] = _snapshot_in_key_order(by[topic])
        if TRANSACTION_TOPIC in by_a or TRANSACTION_TOPIC in by_b:
            a, b = by_a.get(TRANSACTION_TOPIC, []), by_b.get(TRANSACTION_TOPIC, [])
            by_a[TRANSACTION_TOPIC] = common_transactions(a, b)[0]
            by_b[TRANSACTION_TOPIC] = common_transactions(b, a)[0]
        for topic in sorted(set(by_a) | set(by_b)):
            if topics is None or topic in topics:
                a, b = by_a.get(topic, []), by_b.get(topic, [])
                diffs.extend(_compare_lists("data", topic, a, b, dbz, ours))
        diffs.extend(_compare_run_ids(dbz, ours))
    if "schema-changes" in areas:
        changes_a, changes_b = own_ddl(dbz.schema_changes, dbz)[0], own_ddl(ours.schema_changes, ours)[0]
        diffs.extend(_compare_lists("schema-changes", "<prefix>", changes_a, changes_b, dbz, ours))
    if "history" in areas:
        history_a, history_b = own_ddl(dbz.history, dbz)[0], own_ddl(ours.history, ours)[0]
        diffs.extend(_compare_lists("history", "<history>", history_a, history_b, dbz, ours))
    if "offsets" in areas:
        diffs.extend(_compare_offsets(dbz, ours))
        if dbz.traced is not None and ours.traced is not None:
            from bench.compat.record_offsets import compare_traced

            diffs.extend(compare_traced(dbz, ours, dbz.traced, ours.traced))
    return diffs


def _distinct_heartbeats(records: list[Record], side: Captured) -> list[Record]:
    """Each distinct heartbeat once (ts_ms aside), in the order first written."""
    seen: dict[str, Record] = {}
    for rec in records:
        value = _Normaliser.envelope(_exact_loads(side.normalise_bytes(rec.value)))
        key = (side.normalise_bytes(rec.key) or b"").decode("utf-8", "replace")
        headers = [(k, side.normalise_bytes(v)) for k, v in rec.headers]
        seen.setdefault(f"{key}|{json.dumps(value, sort_keys=True, default=str)}|{headers}", rec)
    return list(seen.values())


def _run_ids(side: Captured) -> set[bytes | None]:
    return {
        value
        for records in side.data.values()
        for rec in records
        for key, value in rec.headers
        if key == "__debezium.context.runId"
    }


def _compare_run_ids(dbz: Captured, ours: Captured) -> list[Difference]:
    """The run id's value is ignored record by record, but one task run (snapshot and streaming alike,
    whichever engine read the snapshot) has one run id: the count of distinct ones must match."""
    a, b = len(_run_ids(dbz)), len(_run_ids(ours))
    if a == b:
        return []
    path = "header.__debezium.context.runId distinct"
    return [Difference("data", "<all topics>", "-", path, str(a), str(b))]


@dataclass(frozen=True)
class Intentional:
    pattern: str
    reason: str


def load_intentional(doc: Path) -> list[Intentional]:
    """The rows of the table under ``## Intentional differences`` in ``doc``: ``| `pattern` | reason |``."""
    if not doc.exists():
        return []
    rows: list[Intentional] = []
    inside = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            inside = line.strip().lower() == "## intentional differences"
            continue
        if inside and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and cells[0].startswith("`") and cells[0].endswith("`"):
                rows.append(Intentional(cells[0].strip("`"), cells[1]))
    return rows


def _reason(diff: Difference, intentional: Iterable[Intentional]) -> str | None:
    for item in intentional:
        if fnmatch.fnmatchcase(diff.kind, item.pattern):
            return item.reason
    return None


def unexplained(diffs: Iterable[Difference], intentional: list[Intentional]) -> list[Difference]:
    return [d for d in diffs if _reason(d, intentional) is None]


def render(diffs: list[Difference], intentional: list[Intentional], examples: int = 1) -> str:
    """A markdown table, one row per kind of difference: count, first example, intentional or not."""
    kinds: dict[str, list[Difference]] = {}
    for d in diffs:
        kinds.setdefault(d.kind, []).append(d)
    lines = [
        "| kind of difference | n | example (record) | Debezium | cdc | status |",
        "|---|---|---|---|---|---|",
    ]
    for kind, items in kinds.items():
        reason = _reason(items[0], intentional)
        status = f"intentional: {reason}" if reason else "**UNEXPLAINED**"
        for d in items[:examples]:
            example = f"`{_cell(d.debezium)}` | `{_cell(d.cdc)}`"
            lines.append(f"| `{kind}` | {len(items)} | {d.index} | {example} | {status} |")
    if not kinds:
        lines.append("| (none) | 0 | | | | |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")
