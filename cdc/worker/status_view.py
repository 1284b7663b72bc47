"""What the status page (``GET /ui``) shows, as JSON (``GET /ui/status``), from the herder and the metrics.

Per connector: its state and worker, its tasks' states, workers and failure traces (from the status
store, as ``GET /connectors/{name}/status``), events per second, the lag (Debezium's
``MilliSecondsBehindSource`` for a binlog source, the oldest table's poll age for a JDBC source), a binlog
source's position (Debezium's ``BinlogFilename``, ``BinlogPosition``, ``GtidSet``), the snapshot's progress
with an ETA, and a short history of events/s and lag. The metrics are this worker's: in a cluster each
worker's page shows the rates of the tasks it runs, and every connector's state.

Events/s is the change of Connect's ``source-record-write-total`` (``sink-record-send-total``) over the
last :data:`RATE_WINDOW_S` seconds of page requests, so that it reads 0 once the connector idles; Connect's
own ``*-rate`` is over a minute and keeps the last burst's value that long, and is only shown until the
page has two readings to compare. The snapshot's total is the sum, over the tables the snapshot reads
(``CapturedTables``: the initial snapshot's, or the incremental snapshot's), of InnoDB's row estimate or
the rows already read, whichever is larger; its fraction stays below 1 until the snapshot says it is done.

The history is sampled when the page asks (at most every :data:`SAMPLE_EVERY_S`), :data:`HISTORY` points
per connector: the plots cover the last minutes during which a page was open.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cdc import __version__
from cdc.metrics import Reading
from cdc.worker.config import CONNECTOR_CLASS_CONFIG
from cdc.worker.herder import Herder

__all__ = ["HISTORY", "RATE_WINDOW_S", "SAMPLE_EVERY_S", "StatusView"]

HISTORY = 180
SAMPLE_EVERY_S = 2.0
RATE_WINDOW_S = 10.0
"""Events/s is measured over (at most) this many seconds of page requests."""
RUNNING_AT_MOST = 0.99
"""A running snapshot's fraction: the estimate can be low, and "100 %" must mean done."""

JSON = dict[str, Any]


class _Index:
    """Readings by name, for lookups by label."""

    def __init__(self, readings: Iterable[Reading]) -> None:
        self.by_name: dict[str, list[Reading]] = {}
        for r in readings:
            self.by_name.setdefault(r.name, []).append(r)

    def values(self, name: str, **labels: str) -> list[float]:
        return [
            r.value
            for r in self.by_name.get(name, ())
            if all(r.labels.get(k) == v for k, v in labels.items())
        ]

    def one(self, name: str, **labels: str) -> float | None:
        found = self.values(name, **labels)
        return found[0] if found else None

    def label(self, name: str, label: str, **labels: str) -> list[str]:
        """The ``label`` values of ``name``'s samples (a text attribute's ``value``, a list's ``table``)."""
        return [
            r.labels[label]
            for r in self.by_name.get(name, ())
            if label in r.labels and all(r.labels.get(k) == v for k, v in labels.items())
        ]


class StatusView:
    def __init__(
        self,
        herder: Herder,
        metrics: Callable[[], Iterable[Reading]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.herder = herder
        self.metrics = metrics
        self.clock = clock
        self._history: dict[str, deque[tuple[float, float | None, float | None]]] = {}
        self._totals: dict[str, deque[tuple[float, float]]] = {}
        self._last_sample = 0.0
        self._lock = threading.Lock()

    def status(self) -> JSON:
        index = _Index(self.metrics())
        now = self.clock()
        connectors = []
        for name in sorted(self.herder.connectors()):
            try:
                connectors.append(self._connector(name, index))
            except Exception:  # deleted meanwhile
                continue
        with self._lock:
            sample = now - self._last_sample >= SAMPLE_EVERY_S
            if sample:
                self._last_sample = now
            for c in connectors:
                total = c.pop("events_total")
                if total is not None:
                    c["events_per_s"] = self._rate(c["name"], now, total, c["events_per_s"])
                history = self._history.setdefault(c["name"], deque(maxlen=HISTORY))
                if sample:
                    history.append((now, c["events_per_s"], c["lag_ms"]))
                c["history"] = [list(point) for point in history]
            names = {c["name"] for c in connectors}
            for gone in set(self._history) - names:
                del self._history[gone]
            for gone in set(self._totals) - names:
                del self._totals[gone]
        worker = {**self.herder.server_info(), "cdc_version": __version__}
        return {"time_ms": int(now * 1000), "worker": worker, "connectors": connectors}

    def _rate(self, name: str, now: float, total: float, connect_rate: float | None) -> float | None:
        """Events/s over the last :data:`RATE_WINDOW_S` s of requests; Connect's rate until there are two
        readings at least a second apart (a task restarted from 0 starts over)."""
        points = self._totals.setdefault(name, deque(maxlen=1024))  # bounded however often asked
        if points and total < points[-1][1]:
            points.clear()
        points.append((now, total))
        while len(points) > 1 and points[1][0] <= now - RATE_WINDOW_S:
            points.popleft()
        since, before = points[0]
        if now - since < 1.0:
            return connect_rate
        return (total - before) / (now - since)

    def _connector(self, name: str, index: _Index) -> JSON:
        status = self.herder.connector_status(name)
        config = self.herder.connector_config(name)
        kind = str(status.get("type", ""))
        meter = (
            "kafka_connect_sink_task_metrics_sink_record_send"
            if kind == "sink"
            else "kafka_connect_source_task_metrics_source_record_write"
        )
        rates = index.values(meter + "_rate", connector=name)
        totals = index.values(meter, connector=name)
        lag_ms, lag_kind = _lag(name, config, index)
        return {
            "name": name,
            "type": kind,
            "class": config.get(CONNECTOR_CLASS_CONFIG, ""),
            "state": status["connector"]["state"],
            "worker_id": status["connector"].get("worker_id"),
            "trace": status["connector"].get("trace"),
            "tasks": status.get("tasks", []),
            "events_per_s": sum(rates) if rates else None,
            "events_total": sum(totals) if totals else None,
            "lag_ms": lag_ms,
            "lag_kind": lag_kind,
            "binlog": _binlog(_server(config), index),
            "snapshot": _snapshot(_server(config), index),
        }


def _server(config: Mapping[str, str]) -> str:
    return config.get("topic.prefix") or config.get("database.server.name") or ""


def _lag(name: str, config: Mapping[str, str], index: _Index) -> tuple[float | None, str]:
    behind = index.one("debezium_mysql_streaming_MilliSecondsBehindSource", server=_server(config))
    if behind is not None:
        return (behind if behind >= 0 else None), "MilliSecondsBehindSource"
    ages = [a for a in index.values("cdc_jdbc_source_poll_age_seconds", connector=name) if a >= 0]
    if ages:
        return max(ages) * 1000, "poll age"
    return None, ""


def _binlog(server: str, index: _Index) -> JSON | None:
    """Where the binlog reader is (Debezium's ``BinlogFilename``, ``BinlogPosition``, ``GtidSet``)."""
    if not server:
        return None
    files = index.label("debezium_mysql_streaming_BinlogFilename", "value", server=server)
    if not files:
        return None
    gtids = index.label("debezium_mysql_streaming_GtidSet", "value", server=server)
    position = index.one("debezium_mysql_streaming_BinlogPosition", server=server)
    return {"file": files[0], "position": int(position or 0), "gtid_set": gtids[0] if gtids else ""}


def _snapshot(server: str, index: _Index) -> JSON | None:
    if not server or index.one("debezium_mysql_snapshot_TotalTableCount", server=server) is None:
        return None
    running = bool(index.one("debezium_mysql_snapshot_SnapshotRunning", server=server))
    completed = bool(index.one("debezium_mysql_snapshot_SnapshotCompleted", server=server))
    scanned = _by_table(index, "debezium_mysql_snapshot_RowsScanned", server)
    estimates = _by_table(index, "cdc_mysql_snapshot_estimated_rows", server)
    # The tables this snapshot reads: an incremental snapshot's are not the initial snapshot's, whose
    # estimates may still be there (or none at all, with snapshot.mode=no_data).
    tables = index.label("debezium_mysql_snapshot_CapturedTables", "table", server=server)
    reading = set(tables) | set(scanned) if tables else set(estimates) | set(scanned)
    rows = sum(scanned.values())
    total = sum(max(estimates.get(t, 0.0), scanned.get(t, 0.0)) for t in reading)
    seconds = index.one("debezium_mysql_snapshot_SnapshotDurationInSeconds", server=server) or 0.0
    table_count = index.one("debezium_mysql_snapshot_TotalTableCount", server=server) or 0.0
    remaining = index.one("debezium_mysql_snapshot_RemainingTableCount", server=server) or 0.0
    rate = rows / seconds if seconds > 0 else None
    eta = (total - rows) / rate if running and rate and total else None
    if completed:
        fraction = 1.0
    else:
        fraction = rows / total if total else 0.0
        if running:
            fraction = min(fraction, RUNNING_AT_MOST)
    return {
        "running": running,
        "completed": completed,
        "rows": int(rows),
        "total": int(total),
        "fraction": fraction,
        "rows_per_s": rate,
        "eta_s": eta,
        "tables": int(table_count),
        "tables_done": int(table_count - remaining),
    }


def _by_table(index: _Index, name: str, server: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in index.by_name.get(name, ()):
        if r.labels.get("server") == server and "table" in r.labels:
            out[r.labels["table"]] = out.get(r.labels["table"], 0.0) + r.value
    return out
