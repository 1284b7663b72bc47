"""The source offset after every record, compared record by record between Debezium and cdc.

Committed offsets (:func:`bench.compat.compare._committed_in_records`) show only the offsets a worker
happened to flush. Both workers also log every record they polled with its source offset: Kafka Connect's
``TransformationChain`` at TRACE (Debezium's side, :func:`connect_traced`) and cdc's
``cdc.worker.record_trace``, turned on through the same Java name over ``/admin/loggers``
(:func:`cdc_traced`).
Per topic, the k-th record's offset of one side is compared with the k-th of the other:

* data records of the initial snapshot (the last one's carrying the completed offset) as a multiset of
  their field sets with the ``snapshot`` value (each
  side reads the binlog position when its own snapshot starts; with ``--engine spark`` a table's chunks come
  in parallel, so not in order either);
* every other data record in order, by value, ``ts_sec`` aside; offsets carrying the incremental snapshot's
  keys and the records of each side's own signal table (``<signal>``) without their binlog coordinates
  (``file``, ``pos``, ``gtids``: each side writes its own watermarks at its own binlog place);
* not compared: the schema change topic (other clients' DDL reaches each side over its own binlog range),
  heartbeats (one per interval when due: timing), the transaction topic (a BEGIN/END of every server
  transaction over each side's own binlog range) and notifications (the offset when the snapshot sent one);
  their committed offsets are checked as before.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.compat.compare import (
    SIGNAL_TOPIC,
    Captured,
    Difference,
    _flagged,
    _java_map,
    _shape,
    _streaming_value,
    _text,
    _unplaced,
)

__all__ = ["cdc_traced", "compare_traced", "connect_traced"]

Traced = list[tuple[str, dict[str, str]]]
"""(topic, source offset with its values as text) per polled record, in order."""

_CONNECT = re.compile(
    r"Applying transformation \S+ to SourceRecord\{sourcePartition=\{([^{}]*)\}, "
    r"sourceOffset=\{(.*?)\}\} ConnectRecord\{topic='([^']*)'"
)
_CDC = re.compile(r"record topic=(\S*) partition=(\{[^{}]*\}) offset=")
_JSON = json.JSONDecoder()


def connect_traced(log: str, prefix: str) -> Traced:
    """Every record's topic and source offset from a Connect worker's log (``TransformationChain`` at TRACE
    logs each record before each transform: the connector needs one, and a record is logged once per
    transform, so only the first transform's lines are read)."""
    out: Traced = []
    first: str | None = None
    for m in re.finditer(r"Applying transformation (\S+) to SourceRecord", log):
        first = m.group(1)
        break
    if first is None:
        return out
    for m in _CONNECT.finditer(log):
        if not log.startswith(first, m.start() + len("Applying transformation ")):
            continue
        if _java_map(m.group(1)).get("server") == prefix:
            out.append((m.group(3), _java_map(m.group(2))))
    return out


def cdc_traced(log: str, prefix: str) -> Traced:
    """Every record's topic and source offset from a cdc worker's log (``cdc.worker.record_trace`` at
    TRACE)."""
    out: Traced = []
    for m in _CDC.finditer(log):
        partition = json.loads(m.group(2))
        offset, _end = _JSON.raw_decode(log, m.end())  # the line goes on with the logger's name
        if isinstance(partition, dict) and partition.get("server") == prefix and isinstance(offset, dict):
            out.append((m.group(1), {k: _text(v) for k, v in offset.items()}))
    return out


def _initial(offset: dict[str, str]) -> bool:
    """An offset of the initial snapshot, its last record's (the completed offset: no ``snapshot`` key,
    and no ``event`` as streaming offsets have) included; an incremental snapshot's reads are compared in
    order."""
    if "snapshot" not in offset:
        return "event" not in offset
    return _flagged(offset) and offset.get("snapshot") != "INCREMENTAL"


def _per_topic(side: Captured, traced: Traced) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {}
    for topic, offset in traced:
        # data topics only: not the schema change topic (<prefix>), heartbeats, the transaction topic (a
        # BEGIN/END of every server transaction over each side's own binlog range) or notifications
        # (<prefix>-notifications: the offset of the moment the snapshot sent one)
        if not topic.startswith(side.prefix + ".") or topic == side.prefix + ".transaction":
            continue
        out.setdefault(side.normalise_text(topic.removeprefix(side.prefix + ".")), []).append(offset)
    return out


def _in_order(topic: str, offset: dict[str, Any]) -> str:
    if topic == SIGNAL_TOPIC:
        return _unplaced(offset)
    return _streaming_value(offset)


def compare_traced(dbz: Captured, ours: Captured, a: Traced, b: Traced) -> list[Difference]:
    """The differences between the offsets each side's records carried, topic by topic."""
    by_a, by_b = _per_topic(dbz, a), _per_topic(ours, b)
    diffs: list[Difference] = []
    for topic in sorted(set(by_a) | set(by_b)):
        xs, ys = by_a.get(topic, []), by_b.get(topic, [])
        where = f"<record offsets> {topic}"
        snap_x = sorted(_shape(o) for o in xs if _initial(o))
        snap_y = sorted(_shape(o) for o in ys if _initial(o))
        if snap_x != snap_y:
            diffs.append(
                Difference(
                    "offsets", where, "snapshot", "<snapshot offsets>", _summary(snap_x), _summary(snap_y)
                )
            )
        rest_x = [_in_order(topic, o) for o in xs if not _initial(o)]
        rest_y = [_in_order(topic, o) for o in ys if not _initial(o)]
        for i in range(max(len(rest_x), len(rest_y))):
            x = rest_x[i] if i < len(rest_x) else "<none>"
            y = rest_y[i] if i < len(rest_y) else "<none>"
            if x != y:
                diffs.append(Difference("offsets", where, f"#{i}", "<offset>", x, y))
    return diffs


def _summary(shapes: list[str]) -> str:
    counts: dict[str, int] = {}
    for s in shapes:
        counts[s] = counts.get(s, 0) + 1
    return "; ".join(f"{n} x {s}" for s, n in sorted(counts.items()))
