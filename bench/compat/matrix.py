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
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ROWS", "Row", "row", "run_matrix"]


@dataclass(frozen=True)
class Row:
    name: str
    family: str
    keys: dict[str, str] = field(default_factory=dict)
    converter: str = "json"
    """The workers' key and value converter: ``json`` (JsonConverter, schemas on) or ``avro`` (Avro in
    Confluent's wire format with the registry, :mod:`bench.compat.avro`)."""

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
    """Each named row in turn (a failure of one does not stop the others); the summary table."""
    from bench.compat.run import run_compat
    from bench.stack import unique

    base = Path(args.workdir) if args.workdir else Path(args.cache).expanduser() / "compat" / unique("matrix")
    lines = ["| row | family | differences | status |", "|---|---|---|---|"]
    reports: dict[str, str] = {}
    started = time.monotonic()
    worst = 0
    for name in names:
        r = row(name)
        row_args = copy.copy(args)
        row_args.workdir = str(base / r.name)
        try:
            rc = run_compat(row_args, r)
        except Exception as exc:  # a row that could not run is a failed row
            rc, summary = 3, f"did not run: {type(exc).__name__}: {exc}"[:300]
        else:
            report = Path(row_args.workdir) / "report.md"
            reports[r.name] = report.read_text(encoding="utf-8") if report.exists() else "?"
            summary = reports[r.name].strip().splitlines()[-1]
        worst = max(worst, rc)
        status = {0: "ok", 1: "UNEXPLAINED", 2: "SELF-TEST FAILED"}.get(rc, "FAILED")
        lines.append(f"| {r.name} | {r.family} | {summary} | {status} |")
        print("\n".join(lines), flush=True)
    (base / "matrix.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.publish:
        from bench.compat.publish import publish
        from bench.compat.run import DOC

        publish(DOC, lines, reports, (time.monotonic() - started) / 60)
    return worst
