"""``make compat``'s matrix: the base run under Debezium's defaults, and rows that each change one family of
keys from it (the same keys on both sides), every row a whole run of :func:`bench.compat.run.run_compat`.

A row's keys may name the run's database as ``{db}`` and the side's topic prefix as ``{prefix}`` (a topic
of each side's own, e.g. ``notification.sink.topic.name``). ``python -m bench.compat --row NAME`` runs one row
(``base`` by default), ``--matrix`` all of them; each row writes ``<workdir>/<row>/report.md`` and the matrix
a summary, ``<workdir>/matrix.md``: per row its differences, the unexplained ones, and the exit status.
``--publish`` writes that summary (and the base row's report) into docs/debezium-compatibility.md.
"""

from __future__ import annotations

import argparse
import copy
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ROWS", "Row", "row", "run_matrix"]

_SLOTS_LOCK = threading.Lock()


@dataclass(frozen=True)
class Row:
    name: str
    family: str
    keys: dict[str, str] = field(default_factory=dict)
    converter: str = "json"
    """The workers' key and value converter: ``json`` (JsonConverter, schemas on) or ``avro`` (Avro in
    Confluent's wire format with the registry, :mod:`bench.compat.avro`)."""
    per_key: bool = False
    """A run of its own (:mod:`bench.compat.snapshot_writes`): rows written during the snapshots, compared per
    key (:mod:`bench.compat.perkey`) instead of record by record."""

    def config(self, db: str, prefix: str = "<prefix>") -> dict[str, str]:
        return {k.format(db=db, prefix=prefix): v.format(db=db, prefix=prefix) for k, v in self.keys.items()}


ROWS: tuple[Row, ...] = (
    Row("base", "Debezium's defaults (what a user must set only)"),
    Row("avro", "Avro with the schema registry (key and value converters)", converter="avro"),
    Row("decimal-string", "decimal.handling.mode", {"decimal.handling.mode": "string"}),
    Row("decimal-double", "decimal.handling.mode", {"decimal.handling.mode": "double"}),
    Row("time-connect", "time.precision.mode", {"time.precision.mode": "connect"}),
    Row("binary-base64", "binary.handling.mode", {"binary.handling.mode": "base64"}),
    Row("binary-hex", "binary.handling.mode", {"binary.handling.mode": "hex"}),
    Row("bigint-precise", "bigint.unsigned.handling.mode", {"bigint.unsigned.handling.mode": "precise"}),
    Row("heartbeats", "heartbeat.interval.ms", {"heartbeat.interval.ms": "1000"}),
    Row("include-query", "include.query", {"include.query": "true"}),
    Row(
        "column-rules",
        "column mask, hash, truncate, propagate source type",
        {
            "column.mask.with.8.chars": "{db}.t_types.c_varchar,{db}.t_types.c_char",
            "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": "{db}.t_keys.v,{db}.t_single.v",
            "column.truncate.to.4.chars": "{db}.t_types.c_text,{db}.t_types.c_tinytext",
            "column.propagate.source.type": "{db}.t_types.c_.*,{db}.t_defaults.d_.*",
            "datatype.propagate.source.type": ".+\\.BIGINT,.+\\.TIME",
        },
    ),
    Row(
        "message-key-columns",
        "message.key.columns",
        {"message.key.columns": "{db}.t_nokey:a;{db}.t_keys:v"},
    ),
    Row("locking-extended", "snapshot.locking.mode", {"snapshot.locking.mode": "extended"}),
    Row("locking-none", "snapshot.locking.mode", {"snapshot.locking.mode": "none"}),
    Row(
        "connection-time-zone",
        "database.connectionTimeZone (a zone other than the server's)",
        {"database.connectionTimeZone": "America/New_York"},
    ),
    Row(
        "snapshot-writes",
        "rows written during the initial and an incremental snapshot (compared per key)",
        per_key=True,
    ),
    # issue #27: the transaction topic and the sink notifications, compared record by record
    Row(
        "transaction-metadata",
        "provide.transaction.metadata (the <prefix>.transaction topic, the transaction block)",
        {"provide.transaction.metadata": "true"},
    ),
    Row(
        "notifications",
        "notification.enabled.channels=sink (initial and incremental snapshot progress)",
        {"notification.enabled.channels": "sink", "notification.sink.topic.name": "{prefix}-notifications"},
    ),
)


def row(name: str) -> Row:
    for r in ROWS:
        if r.name == name:
            return r
    raise SystemExit(f"no matrix row {name!r}; rows: {', '.join(r.name for r in ROWS)}")


def run_matrix(args: argparse.Namespace, names: list[str]) -> int:
    """Each named row (a failure of one does not stop the others); the summary table.

    ``--jobs N`` runs N rows at a time, each in its own ``python -m bench.compat --row NAME`` process with its
    output in ``<workdir>/<row>/log.txt``: a row spends most of its time waiting on round trips (the
    incremental snapshot's two-row chunks, offset flushes, worker start-up), so rows side by side finish the
    matrix in about half the time on two cores. Rows never share a database, topic, worker or port
    (each run makes its own); each job gets its own binlog client ids (``--slot``), so two rows running
    together never evict each other's replication connection.
    """
    from bench.stack import unique

    base = Path(args.workdir) if args.workdir else Path(args.cache).expanduser() / "compat" / unique("matrix")
    started = time.monotonic()
    jobs = max(1, getattr(args, "jobs", 1) or 1)
    if jobs == 1:
        results = [_run_row(args, base, name) for name in names]
    else:
        from concurrent.futures import ThreadPoolExecutor

        slots = list(range(jobs))
        with ThreadPoolExecutor(jobs) as pool:
            results = list(pool.map(lambda name: _row_process(args, base, name, slots), names))
    lines = ["| row | family | differences | status |", "|---|---|---|---|"]
    reports: dict[str, str] = {}
    worst = 0
    for name, rc, summary, report in results:
        if report is not None:
            reports[name] = report
        worst = max(worst, rc)
        status = {0: "ok", 1: "UNEXPLAINED", 2: "SELF-TEST FAILED"}.get(rc, "FAILED")
        lines.append(f"| {name} | {row(name).family} | {summary} | {status} |")
    print("\n".join(lines), flush=True)
    (base / "matrix.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.publish:
        from bench.compat.publish import publish
        from bench.compat.run import DOC

        publish(DOC, lines, reports, (time.monotonic() - started) / 60)
    return worst


def _result(name: str, rc: int, workdir: Path) -> tuple[str, int, str, str | None]:
    report = workdir / "report.md"
    if not report.exists():
        return name, max(rc, 3), f"did not run (exit {rc}; see {workdir / 'log.txt'})", None
    text = report.read_text(encoding="utf-8")
    return name, rc, text.strip().splitlines()[-1], text


def _run_row(args: argparse.Namespace, base: Path, name: str) -> tuple[str, int, str, str | None]:
    from bench.compat.run import run_compat

    row_args = copy.copy(args)
    row_args.workdir = str(base / name)
    try:
        rc = run_compat(row_args, row(name))
    except Exception as exc:  # a row that could not run is a failed row
        return name, 3, f"did not run: {type(exc).__name__}: {exc}"[:300], None
    return _result(name, rc, Path(row_args.workdir))


def _row_process(
    args: argparse.Namespace, base: Path, name: str, slots: list[int]
) -> tuple[str, int, str, str | None]:
    import subprocess
    import sys

    with _SLOTS_LOCK:
        slot = slots.pop(0)
    try:
        workdir = base / name
        workdir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "bench.compat", "--row", name, "--workdir", str(workdir)]
        cmd += ["--cache", args.cache, "--python", args.python, "--engine", args.engine, "--slot", str(slot)]
        cmd += ["--dump"] * bool(args.dump) + ["--keep"] * bool(args.keep)
        print(f"[matrix] {name}: started (job {slot}; log {workdir / 'log.txt'})", flush=True)
        t0 = time.monotonic()
        with open(workdir / "log.txt", "w", encoding="utf-8") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
        result = _result(name, rc, workdir)
        print(f"[matrix] {name}: exit {rc} in {time.monotonic() - t0:.0f} s: {result[2]}", flush=True)
        return result
    finally:
        with _SLOTS_LOCK:
            slots.append(slot)
