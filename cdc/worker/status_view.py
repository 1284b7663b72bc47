"""What the status page (``GET /ui``) shows, as JSON (``GET /ui/status``), from the herder and the metrics.

Per connector: its state and worker, its tasks' states, workers and failure traces (from the status
store, as ``GET /connectors/{name}/status``), events per second (Connect's ``source-record-write-rate``,
or ``sink-record-send-rate``), the lag (Debezium's ``MilliSecondsBehindSource`` for a binlog source, the
oldest table's poll age for a JDBC source), the snapshot's progress with an ETA (rows scanned against
InnoDB's row estimates), and a short history of events/s and lag. The metrics are this worker's: in a
cluster each worker's page shows the rates of the tasks it runs, and every connector's state.

The history is sampled when the page asks (at most every :data:`SAMPLE_EVERY_S`), :data:`HISTORY` points
per connector: the plots cover the last minutes during which a page was open.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from cdc.metrics import Reading
from cdc.worker.herder import Herder

__all__ = ["HISTORY", "SAMPLE_EVERY_S", "StatusView"]

HISTORY = 180
SAMPLE_EVERY_S = 2.0

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
                history = self._history.setdefault(c["name"], deque(maxlen=HISTORY))
                if sample:
                    history.append((now, c["events_per_s"], c["lag_ms"]))
                c["history"] = [list(point) for point in history]
            for gone in set(self._history) - {c["name"] for c in connectors}:
                del self._history[gone]
        return {"time_ms": int(now * 1000), "worker": self.herder.server_info(), "connectors": connectors}

    def _connector(self, name: str, index: _Index) -> JSON:
        status = self.herder.connector_status(name)
        config = self.herder.connector_config(name)
        kind = str(status.get("type", ""))
        rate_name = (
            "kafka_connect_sink_task_metrics_sink_record_send_rate"
            if kind == "sink"
            else "kafka_connect_source_task_metrics_source_record_write_rate"
        )
        rates = index.values(rate_name, connector=name)
        lag_ms, lag_kind = _lag(name, config, index)
        return {
            "name": name,
            "type": kind,
            "class": config.get("connector.class", ""),
            "state": status["connector"]["state"],
            "worker_id": status["connector"].get("worker_id"),
            "trace": status["connector"].get("trace"),
            "tasks": status.get("tasks", []),
            "events_per_s": sum(rates) if rates else None,
            "lag_ms": lag_ms,
            "lag_kind": lag_kind,
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


def _snapshot(server: str, index: _Index) -> JSON | None:
    if not server or index.one("debezium_mysql_snapshot_TotalTableCount", server=server) is None:
        return None
    running = bool(index.one("debezium_mysql_snapshot_SnapshotRunning", server=server))
    completed = bool(index.one("debezium_mysql_snapshot_SnapshotCompleted", server=server))
    rows = sum(index.values("debezium_mysql_snapshot_RowsScanned", server=server))
    estimate = sum(index.values("cdc_mysql_snapshot_estimated_rows", server=server))
    seconds = index.one("debezium_mysql_snapshot_SnapshotDurationInSeconds", server=server) or 0.0
    tables = index.one("debezium_mysql_snapshot_TotalTableCount", server=server) or 0.0
    remaining = index.one("debezium_mysql_snapshot_RemainingTableCount", server=server) or 0.0
    total = max(estimate, rows)
    rate = rows / seconds if seconds > 0 else None
    eta = (total - rows) / rate if running and rate and total else None
    return {
        "running": running,
        "completed": completed,
        "rows": int(rows),
        "total": int(total),
        "fraction": (1.0 if completed else (rows / total if total else 0.0)),
        "rows_per_s": rate,
        "eta_s": eta,
        "tables": int(tables),
        "tables_done": int(tables - remaining),
    }
