"""Resumability and the progress display.

:class:`ProgressState` is a small JSON file per connector and server (``<state dir>/<name>__<prefix>.json``):
the run's start position ``S``, its plan, and the chunks Kafka acknowledged. It is rewritten atomically
(write + rename) after every chunk, so a killed ``cdc snapshot`` run again with the same arguments reads
only the chunks not yet done, and reconciles from the same ``S`` (which covers the chunks read by the
earlier run). ``--restart`` discards it; a completed run marks it ``completed`` and the next run starts
afresh. Key values in the plan are written with a type tag so DATETIME, DECIMAL and binary keys survive.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from cdc.history.model import TableId
from cdc.logs import in_context
from cdc.snapshot.chunks import Chunk, TablePlan

__all__ = ["Progress", "ProgressState", "default_state_dir"]


def default_state_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cdc" / "snapshots"


def _enc(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, decimal.Decimal):
        return {"$dec": str(v)}
    if isinstance(v, dt.datetime):
        return {"$dt": v.isoformat()}
    if isinstance(v, dt.date):
        return {"$d": v.isoformat()}
    if isinstance(v, dt.timedelta):
        return {"$td": v.total_seconds()}
    if isinstance(v, (bytes, bytearray)):
        return {"$b": base64.b64encode(bytes(v)).decode()}
    raise TypeError(f"cannot store a key value of type {type(v).__name__}")


def _dec(v: Any) -> Any:
    if isinstance(v, dict):
        tag, value = next(iter(v.items()))
        decoders: dict[str, Callable[[Any], Any]] = {
            "$dec": decimal.Decimal,
            "$dt": dt.datetime.fromisoformat,
            "$d": dt.date.fromisoformat,
            "$td": lambda s: dt.timedelta(seconds=s),
            "$b": base64.b64decode,
        }
        return decoders[tag](value)
    return v


def _bound(b: tuple[Any, ...] | None) -> Any:
    return None if b is None else [_enc(x) for x in b]


def _unbound(b: Any) -> tuple[Any, ...] | None:
    return None if b is None else tuple(_dec(x) for x in b)


@dataclass
class ProgressState:
    path: Path
    connector: str
    prefix: str
    start: dict[str, Any] = field(default_factory=dict)
    plans: list[TablePlan] = field(default_factory=list)
    done: dict[str, dict[str, Any]] = field(default_factory=dict)
    completed: bool = False
    run_id: str = ""
    """Names the run's chunk transactions (see :mod:`cdc.snapshot.delivery`); a resumed run keeps it."""
    submitted: dict[str, int] = field(default_factory=dict)
    """How often each chunk was handed to the runner, over every run of this plan (more than once: the
    chunk was re-read after a failure or a stop)."""
    topics_at_start: list[str] = field(default_factory=list)
    offsets_at_start: dict[str, int] = field(default_factory=dict)
    """The topics of the cluster when the run began, and the end offsets (summed over partitions) of
    those named like the connector's: what the run wrote is the growth from there."""

    @staticmethod
    def path_for(state_dir: Path, connector: str, prefix: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", f"{connector}__{prefix}")
        return state_dir / f"{safe}.json"

    @classmethod
    def load(cls, state_dir: Path, connector: str, prefix: str) -> ProgressState | None:
        path = cls.path_for(state_dir, connector, prefix)
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        plans = []
        for p in data.get("plans", []):
            table = TableId(p["table"][0], p["table"][1])
            key = tuple(p["key"])
            chunks = tuple(
                Chunk(
                    table,
                    c["index"],
                    c["count"],
                    key,
                    _unbound(c["lower"]),
                    _unbound(c["upper"]),
                    c.get("rows", 0),
                )
                for c in p["chunks"]
            )
            plans.append(TablePlan(table, key, p["rows"], chunks, p.get("warning")))
        return cls(
            path,
            data["connector"],
            data["prefix"],
            data.get("start", {}),
            plans,
            data.get("done", {}),
            bool(data.get("completed")),
            str(data.get("run_id", "")),
            {str(k): int(v) for k, v in data.get("submitted", {}).items()},
            [str(t) for t in data.get("topics_at_start", [])],
            {str(k): int(v) for k, v in data.get("offsets_at_start", {}).items()},
        )

    def save(self) -> None:
        data = {
            "connector": self.connector,
            "prefix": self.prefix,
            "start": self.start,
            "completed": self.completed,
            "plans": [
                {
                    "table": [p.table.database, p.table.table],
                    "key": list(p.key),
                    "rows": p.rows,
                    "warning": p.warning,
                    "chunks": [
                        {
                            "index": c.index,
                            "count": c.count,
                            "lower": _bound(c.lower),
                            "upper": _bound(c.upper),
                            "rows": c.estimated_rows,
                        }
                        for c in p.chunks
                    ],
                }
                for p in self.plans
            ],
            "done": self.done,
            "run_id": self.run_id,
            "submitted": self.submitted,
            "topics_at_start": self.topics_at_start,
            "offsets_at_start": self.offsets_at_start,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)


class Progress:
    """Rows, rows/s, tables done and ETA, printed every ``interval`` seconds while chunks run.

    ``written()``: the records in the run's topics now (their end offsets summed). With it the line moves
    while chunks are being written, not only when a chunk completes (a chunk is 50 000 rows by default:
    several lines apart on a slow source): the rows shown are those of the finished chunks plus the
    growth of the topics beyond them, never more than the plan's total. Until the first record is written
    the line says Spark is starting rather than showing 0 rows/s, and the rate counts from that record.
    """

    def __init__(
        self,
        plans: Sequence[TablePlan],
        done: dict[str, dict[str, Any]],
        out: TextIO | None = None,
        interval: float = 2.0,
        emit: Callable[[str], None] | None = None,
        written: Callable[[], int] | None = None,
    ) -> None:
        self.total_rows = sum(p.rows for p in plans)
        self.chunks_per_table = {str(p.table): len(p.chunks) for p in plans}
        self.tables = len(plans)
        self.total_chunks = sum(len(p.chunks) for p in plans)
        self.done_before = sum(int(d.get("rows", 0)) for d in done.values())
        self.chunks_done: dict[str, int] = {}
        for cid in done:
            t = cid.rsplit("#", 1)[0]
            self.chunks_done[t] = self.chunks_done.get(t, 0) + 1
        self.rows = 0
        self.out = out if out is not None else sys.stderr
        self.emit: Callable[[str], None] = emit or self._print
        """Where progress lines go: ``out`` (the ``cdc snapshot`` terminal), or the log in a worker."""
        self.interval = interval
        self.started = time.monotonic()
        self._written = written
        self._written_at_start: int | None = None
        self._first_record: float | None = None
        """When the first record of this run was seen (the rate counts from there)."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if written is not None:
            self._written_at_start = self._probe()

    def _probe(self) -> int | None:
        if self._written is None:
            return None
        try:
            return int(self._written())
        except Exception:  # Kafka busy or unreachable: this line goes by the finished chunks
            return None

    def chunk_done(self, chunk_id: str, rows: int) -> None:
        with self._lock:
            self.rows += rows
            if rows and self._first_record is None:
                self._first_record = time.monotonic()
            t = chunk_id.rsplit("#", 1)[0]
            self.chunks_done[t] = self.chunks_done.get(t, 0) + 1

    def tables_done(self) -> int:
        return sum(1 for t, n in self.chunks_per_table.items() if self.chunks_done.get(t, 0) >= n)

    def _in_flight(self) -> int:
        """Records of the chunks not finished yet, from the topics' growth (0 without a probe)."""
        now = self._probe()
        if now is None or self._written_at_start is None:
            return 0
        with self._lock:
            grown = max(now - self._written_at_start - self.rows, 0)
            if grown and self._first_record is None:
                self._first_record = time.monotonic()
        return grown

    def line(self) -> str:
        in_flight = self._in_flight()
        with self._lock:
            now = time.monotonic()
            chunks = sum(self.chunks_done.values())
            if self._first_record is None:
                return (
                    f"[snapshot] starting Spark ({now - self.started:,.0f} s): no record written yet  "
                    f"chunks {chunks}/{self.total_chunks}  tables {self.tables_done()}/{self.tables}"
                )
            this_run = self.rows + in_flight
            done = min(self.done_before + this_run, max(self.total_rows, self.done_before + self.rows))
            elapsed = max(now - self._first_record, 1e-6)
            rate = this_run / elapsed
            left = max(self.total_rows - done, 0)
            eta = f"{left / rate:,.0f}s" if rate > 0 else "?"
            return (
                f"[snapshot] {done:,}/{self.total_rows:,} rows  {rate:,.0f} rows/s  "
                f"chunks {chunks}/{self.total_chunks}  tables {self.tables_done()}/{self.tables}  ETA {eta}"
            )

    def _print(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(self.interval):
                self.emit(self.line())

        self._thread = threading.Thread(target=in_context(loop), name="snapshot-progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
