"""Issue #30's aims, declared once, and whether the published results meet them.

``docs/benchmarks.md`` shows one table of aims (the block ``<!-- results:aims -->``) that this module
generates from the result files behind the page's blocks, ``bench/published/<block>.json`` (written by
``python -m bench publish`` and by ``python -m bench run`` when it updates the page), so no figure in it
is typed by hand. An aim compares a metric's median with a bound, either the value itself
(CPU-seconds per million events at most 25) or a ratio: ours over a reference contender's median, where
a reference that has tuned siblings (``debezium`` and ``debezium-best``, see ``Contender.tunes``) counts
at its best per metric, the better median of the family. Where several of ours ran (B1's engines), a
ratio takes the best of them (a user picks the engine) and a bound on a value the worst of them (each
must meet it); either is named. A block without a published result says so.

``python -m bench aims`` rewrites the block from ``bench/published/``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bench.core import Metric, scenarios
from bench.report import best_of
from bench.report import fmt as _fmt

__all__ = ["AIMS", "Aim", "Verdict", "evaluate", "load_published", "markdown"]

NOT_RUN = "not yet run on the current harness"


@dataclass(frozen=True)
class Aim:
    """One aim of issue #30 on one published block."""

    block: str  # the results block (and bench/published/<block>.json): "B3", "B1-10M"
    text: str  # the aim as a reader reads it
    metric: str
    op: Literal["<=", ">="]
    bound: float
    cases: tuple[str, ...] = ()  # case keys; () for every case of the result
    against: str | None = None  # None: the median itself; else ours / this contender (its family at best)
    ours: tuple[str, ...] = ()  # which of ours; () for every one (the best is shown)
    min_rows: int = 0  # the aim holds at this size: a smaller run is shown, not judged
    min_params: tuple[tuple[str, float], ...] = ()  # likewise for a case's parameters (B5's window)


@dataclass(frozen=True)
class Verdict:
    """An aim on one case of its block: what was measured and whether it meets the bound."""

    aim: Aim
    case: str  # the case's label, or "" when there is no result
    measured: str  # e.g. "1.11x (cdc 9,800 / debezium-best 8,800 ev/s)", or why there is no figure
    met: bool | None  # None: nothing to judge
    source: str  # "B3.json, 2026-11-28 05:58 UTC, 3 runs" or NOT_RUN


_DEBEZIUM = "debezium"
_ENGINES = ("cdc-single", "cdc-spark-1", "cdc-spark-2", "cdc-spark-4")
_M = 1_000_000
_WINDOW = (("duration_s", 600.0),)  # issue #30: 600 s windows
AIMS: tuple[Aim, ...] = (
    Aim("B3", "single-row transactions: ≥ 3\u00d7 Debezium's events/s", "events_per_s", ">=", 3.0,
        ("updates",), _DEBEZIUM),
    Aim("B3", "single-row transactions: ≤ 25 CPU-seconds per million events", "cpu_s_per_m", "<=", 25.0,
        ("updates",)),
    Aim("B3", "single-row transactions: ≥ 0.4\u00d7 the `mariadb-binlog` ceiling", "events_per_s", ">=", 0.4,
        ("updates",), "mariadb-binlog"),
    Aim("B3", "multi-row statements: ≥ 4\u00d7 Debezium's events/s", "events_per_s", ">=", 4.0,
        ("inserts",), _DEBEZIUM),
    Aim("B3", "no missing key", "missing", "<=", 0.0),
    Aim("B3", "no duplicated key", "duplicates", "<=", 0.0),
    Aim("B4", "≥ 2\u00d7 Debezium's events/s", "events_per_s", ">=", 2.0, (), _DEBEZIUM),
    Aim("B4", "≤ 0.5\u00d7 Debezium's CPU per event", "cpu_s_per_m", "<=", 0.5, (), _DEBEZIUM),
    Aim("B4", "the same values as Debezium (fields that differ)", "value_mismatches", "<=", 0.0),
    Aim("B5", "CPU per change ≤ 0.5\u00d7 Debezium's", "cpu_s_per_m", "<=", 0.5, ("r1000", "r3000"),
        _DEBEZIUM, ("cdc",), min_params=_WINDOW),
    Aim("B5", "p99 commit→Kafka ≤ 50 ms", "latency_p99_ms", "<=", 50.0, ("r1000", "r3000"), None, ("cdc",),
        min_params=_WINDOW),
    Aim("B5", "no change missed", "missing", "<=", 0.0, (), None, ("cdc",)),
    Aim("B8", "one UPDATE of 1 M rows: peak RSS ≤ 256 MB", "peak_rss_mb", "<=", 256.0, (), None, (), _M),
    Aim("B8", "no record lost", "missing", "<=", 0.0),
    Aim("B1", "1 M rows: start to last record ≤ 0.3\u00d7 Debezium's", "wall_s", "<=", 0.3, (), _DEBEZIUM,
        _ENGINES, _M),
    Aim("B1", "the Spark path's mysqld CPU per row ≤ 1.5\u00d7 the single reader's", "mysqld_cpu_s_per_m",
        "<=", 1.5, (), "cdc-single", ("cdc-spark-2",), _M),
    Aim("B1", "no missing row", "missing", "<=", 0.0),
    Aim("B1-10M", "10 M rows: ≥ 6\u00d7 Debezium's rows/s", "rows_per_s", ">=", 6.0, (), _DEBEZIUM,
        _ENGINES, 10 * _M),
    Aim("B1-10M", "10 M rows: ≥ 0.3\u00d7 `mariadb-dump`", "rows_per_s", ">=", 0.3, (), "mariadb-dump",
        _ENGINES, 10 * _M),
    Aim("B10", "`POST /connectors` → task RUNNING ≤ 0.5\u00d7 Connect's", "running_s", "<=", 0.5, (),
        "kafka-connect"),
    Aim("B10", "start-up ≤ 0.1\u00d7 Connect's", "ready_s", "<=", 0.1, (), "kafka-connect"),
    Aim("B10", "idle RSS ≤ 0.15\u00d7 Connect's", "idle_rss_mb", "<=", 0.15, (), "kafka-connect"),
)  # fmt: skip


def load_published(directory: Path) -> dict[str, dict[str, Any]]:
    """The published result of each block: ``bench/published/<block>.json``."""
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(directory.glob("*.json"))
    }


def _metric(scenario_id: str, key: str) -> Metric:
    for metric in scenarios()[scenario_id].metrics:
        if metric.key == key:
            return metric
    raise KeyError(f"{scenario_id} has no metric {key}")


def _median(entry: Mapping[str, Any], key: str) -> float | None:
    stats = (entry.get("stats") or {}).get(key)
    return None if not stats else float(stats["median"])


def _reference(aim: Aim, metric: Metric, entries: list[dict[str, Any]]) -> tuple[float, str] | None:
    """The reference's median: the best of its family (itself and the contenders tuning it)."""
    assert aim.against is not None
    family = [
        e for e in entries if e.get("samples") and (e["name"] == aim.against or e.get("tunes") == aim.against)
    ]
    return best_of(metric, [e for e in family if e.get("stats")])


def _judge(aim: Aim, value: float) -> bool:
    return value <= aim.bound if aim.op == "<=" else value >= aim.bound


def _short(aim: Aim, case: Mapping[str, Any], rows: int | None) -> str | None:
    """Why this run is too small to judge the aim, or None."""
    if aim.min_rows and (rows is None or rows < aim.min_rows):
        return f"run at {rows or 0:,} rows; the aim is at {aim.min_rows:,}"
    params = case.get("params") or {}
    for key, least in aim.min_params:
        if float(params.get(key) or 0) < least:
            return f"{key} {params.get(key)}; the aim is at {least:g}"
    return None


def _case(aim: Aim, metric: Metric, case: Mapping[str, Any]) -> tuple[str, bool | None]:
    entries: list[dict[str, Any]] = list(case["contenders"])
    ours = [
        e
        for e in entries
        if e["role"] == "ours"
        and e.get("samples")
        and (not aim.ours or e["name"] in aim.ours)
        and _median(e, aim.metric) is not None
    ]
    if not ours:
        return f"no sample of {', '.join(aim.ours) or 'ours'}", None
    unit = f" {metric.unit}" if metric.unit else ""
    if aim.against is None:
        # every one of ours must meet a bound on its own value: the worst decides
        worse = min if metric.better == "higher" else max
        value, name = worse(((_median(e, aim.metric) or 0.0, e["name"]) for e in ours), key=lambda t: t[0])
        who = f" ({name})" if len(ours) > 1 or aim.ours else ""
        return f"{_fmt(value, metric.digits)}{unit}{who}", _judge(aim, value)
    ref = _reference(aim, metric, entries)
    if ref is None:
        return f"no sample of {aim.against}", None
    # the best of ours against the reference at its best
    own = best_of(metric, ours)
    assert own is not None
    ratio = own[0] / ref[0] if ref[0] else float("inf")
    mine, theirs = _fmt(own[0], metric.digits), _fmt(ref[0], metric.digits)
    measured = f"{ratio:.2f}\u00d7 ({own[1]} {mine} / {ref[1]} {theirs}{unit})"
    return measured, _judge(aim, ratio)


def evaluate(published: Mapping[str, Mapping[str, Any]], aims: tuple[Aim, ...] = AIMS) -> list[Verdict]:
    """Each aim against its block's published result, one verdict per case it covers."""
    out: list[Verdict] = []
    for aim in aims:
        result = published.get(aim.block)
        if result is None:
            out.append(Verdict(aim, "", "", None, NOT_RUN))
            continue
        metric = _metric(str(result["scenario"]), aim.metric)
        stamp = str(result.get("finished", ""))[:16].replace("T", " ")
        busy = ", busy" if result.get("busy") else ""
        source = f"`{aim.block}`, {stamp} UTC, {result.get('runs')} run(s){busy}"
        cases = [c for c in result["cases"] if not aim.cases or c["key"] in aim.cases]
        if not cases:
            out.append(Verdict(aim, "", f"case {', '.join(aim.cases)} not in the result", None, source))
        rows = result.get("rows") or scenarios()[str(result["scenario"])].default_rows
        for case in cases:
            measured, met = _case(aim, metric, case)
            short = _short(aim, case, rows)
            if short is not None:
                measured, met = f"{measured} ({short}: not judged)", None
            label = str(case["label"]) if len(result["cases"]) > 1 else ""
            out.append(Verdict(aim, label, measured, met, source))
    return out


def markdown(verdicts: list[Verdict]) -> str:
    """The aims table: one row per aim and case."""
    lines = [
        "| scenario | aim | case | measured (median) | met? | from |",
        "|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        met = "—" if v.met is None else ("**yes**" if v.met else "no")
        lines.append(
            f"| {v.aim.block} | {v.aim.text} | {v.case or '—'} | {v.measured or '—'} | {met} | {v.source} |"
        )
    return "\n".join(lines) + "\n"
