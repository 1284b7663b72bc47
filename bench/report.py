"""Medians, spreads and ratios of the samples; the JSON, the markdown table and docs/benchmarks.md.

Each scenario's section of ``docs/benchmarks.md`` holds its latest results between the markers
``<!-- results:B10 -->`` and ``<!-- /results:B10 -->``; a run rewrites only what is between them. The
result a block shows is kept beside the page in ``bench/published/<block>.json`` (:func:`publish`), and
the aims table (``<!-- results:aims -->``, :mod:`bench.aims`) is generated from those files.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

from bench.core import Metric

_RUN = r"(bench[-_][a-z0-9_-]+?)[-_]\d{10}[-_][0-9a-f]{4}"
_RUN_PATH = re.compile(r"(?<=[\s=])/[^\s=]*/" + _RUN)
_RUN_NAME = re.compile(_RUN)
_SERVER_ID = re.compile(r'("database\.server\.id": )"\d+"')
DASH = "\u2013"
PUBLISHED = Path("bench") / "published"  # under the repository: the results the page shows
TIMES = "\u00d7"

__all__ = [
    "PUBLISHED",
    "best_of",
    "families",
    "fmt",
    "markdown",
    "publish",
    "summarize",
    "update_docs",
    "write",
]


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def families(contenders: list[dict[str, Any]], role: str = "peer") -> dict[str, list[dict[str, Any]]]:
    """The contenders of ``role`` that ran, by family: a contender and those that tune it (``tunes``),
    under the default contender's name (``debezium``: ``debezium`` and ``debezium-best``)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in contenders:
        if c["role"] == role and c.get("samples"):
            out.setdefault(c.get("tunes") or c["name"], []).append(c)
    return out


def best_of(metric: Metric, members: list[dict[str, Any]]) -> tuple[float, str] | None:
    """The best median of ``metric`` among a family's members (by ``metric.better``), and whose it is."""
    known = [(c["stats"][metric.key]["median"], c["name"]) for c in members if c["stats"].get(metric.key)]
    if not known:
        return None
    pick = max if metric.better == "higher" else min
    return pick(known, key=lambda item: item[0])


def summarize(metrics: tuple[Metric, ...], contenders: list[dict[str, Any]]) -> None:
    """Add ``stats`` per metric to each contender; to ours, ``ratios`` (ours / each peer) and ``best``
    (ours / the best median of each peer family per metric: the peer at its best, issue #30)."""
    for entry in contenders:
        entry["stats"] = {}
        for metric in metrics:
            values = [
                s["values"][metric.key]
                for s in entry["samples"]
                if s.get("values", {}).get(metric.key) is not None
            ]
            entry["stats"][metric.key] = _stats(values)
    ours = [c for c in contenders if c["role"] == "ours" and c.get("samples")]
    peers = [c for c in contenders if c["role"] == "peer" and c.get("samples")]
    for own in ours:
        own["ratios"] = {}
        for peer in peers:
            ratios: dict[str, float | None] = {}
            for metric in metrics:
                a, b = own["stats"].get(metric.key), peer["stats"].get(metric.key)
                ratios[metric.key] = (
                    a["median"] / b["median"] if metric.ratio and a and b and b["median"] else None
                )
            own["ratios"][peer["name"]] = ratios
        own["best"] = {}
        for root, members in families(contenders).items():
            best: dict[str, dict[str, Any] | None] = {}
            for metric in metrics:
                a, found = own["stats"].get(metric.key), best_of(metric, members)
                if metric.ratio and a and found is not None and found[0]:
                    best[metric.key] = {"ratio": a["median"] / found[0], "against": found[1]}
                else:
                    best[metric.key] = None
            own["best"][root] = best


def fmt(value: float, digits: int) -> str:
    """A figure as the tables show it: thousands separated, ``digits`` decimals below 10 000."""
    if abs(value) >= 10000:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def _cell(stats: dict[str, float] | None, metric: Metric) -> str:
    if not stats:
        return DASH
    med = fmt(stats["median"], metric.digits)
    if stats["n"] == 1:
        return med
    return f"{med} ({fmt(stats['min'], metric.digits)}{DASH}{fmt(stats['max'], metric.digits)})"


def _case_table(metrics: tuple[Metric, ...], contenders: list[dict[str, Any]]) -> list[str]:
    ran = [c for c in contenders if c.get("samples")]
    ours = [c for c in ran if c["role"] == "ours"]
    peers = [c for c in ran if c["role"] == "peer"]
    head = ["metric", *[f"{c['name']} ({c['role']})" for c in ran]]
    pairs = [(o, p) for o in ours for p in peers]
    head += [f"ratio {o['name']}/{p['name']}" for o, p in pairs]
    tuned = [root for root, members in families(contenders).items() if len(members) > 1]
    best_pairs = [(o, root) for o in ours for root in tuned]
    head += [f"ratio {o['name']}/{root} at its best" for o, root in best_pairs]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for metric in metrics:
        if all(not c["stats"].get(metric.key) for c in ran):
            continue
        label = f"{metric.label} ({metric.unit}, {metric.better} is better)" if metric.unit else metric.label
        row = [label, *[_cell(c["stats"].get(metric.key), metric) for c in ran]]
        for own, peer in pairs:
            ratio = own.get("ratios", {}).get(peer["name"], {}).get(metric.key)
            row.append(DASH if ratio is None else f"{ratio:.2f}{TIMES}")
        for own, root in best_pairs:
            best = (own.get("best", {}).get(root) or {}).get(metric.key)
            row.append(DASH if not best else f"{best['ratio']:.2f}{TIMES} ({best['against']})")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _general(note: str) -> str:
    """A note with each run's unique names (group ids, topic prefixes) and scratch paths made generic."""
    note = _RUN_PATH.sub(r"<workdir>/\1-<run>", note)
    note = _RUN_NAME.sub(r"\1-<run>", note)
    note = _SERVER_ID.sub(r'\1"<random per run>"', note)
    return note.replace(str(Path.home()), "~")


def markdown(result: dict[str, Any], metrics: tuple[Metric, ...]) -> str:
    machine = result["machine"]
    v = machine["versions"]
    out = [
        f"**{result['scenario']}: {result['title']}**, {result['finished'][:16].replace('T', ' ')} UTC, "
        f"{result['runs']} runs per contender, median (min{DASH}max).",
        "",
        f"- Machine: {machine['cpu_model']}, nproc {machine['nproc']}, {machine['memory_gib']} GiB; "
        "load average "
        f"{machine['load_at_start']} at start, {result.get('load_at_end')} at end"
        + (" (**busy: other work shared the cores**)" if result.get("busy") else "")
        + ".",
        "- Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        f"- JVM: {machine['jvm']['heap']} {machine['jvm']['opts']}.",
        "- MariaDB binlog: " + ", ".join(f"{k}={val}" for k, val in machine["binlog"].items()) + ".",
    ]
    for note in result.get("notes", []):
        out.append(f"- {note}")
    for case in result["cases"]:
        out += ["", f"*{case['label']}*", ""]
        out += _case_table(metrics, case["contenders"])
        missing = [c for c in case["contenders"] if not c.get("samples")]
        for c in missing:
            out.append(f"\n{c['name']} ({c['role']}): not run: {c.get('unavailable', 'no sample')}")
        for c in case["contenders"]:
            errors = [s["error"] for s in c.get("samples", []) if s.get("error")] + c.get("errors", [])
            for err in errors:
                out.append(f"\n{c['name']}: a run failed: {err}")
        notes = sorted(
            {
                _general(n)
                for c in case["contenders"]
                for s in c.get("samples", [])
                for n in s.get("notes", [])
            }
        )
        if notes:
            out.append("")
            out += [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def write(results_dir: Path, result: dict[str, Any], metrics: tuple[Metric, ...]) -> tuple[Path, Path, str]:
    results_dir.mkdir(parents=True, exist_ok=True)
    stamp = result["finished"].replace(":", "").replace("-", "")[:15]
    base = results_dir / f"{result['scenario']}-{stamp}"
    json_path = base.with_suffix(".json")
    json_path.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    md = markdown(result, metrics)
    md_path = base.with_suffix(".md")
    md_path.write_text(md, encoding="utf-8")
    return json_path, md_path, md


def update_docs(doc: Path, scenario_id: str, md: str) -> bool:
    """Replace the scenario's results block in ``doc``; False when the doc has no markers for it."""
    if not doc.exists():
        return False
    text = doc.read_text(encoding="utf-8")
    start, end = f"<!-- results:{scenario_id} -->", f"<!-- /results:{scenario_id} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return False
    doc.write_text(pattern.sub(lambda _m: f"{start}\n{md.rstrip()}\n{end}", text), encoding="utf-8")
    return True


def publish(repo: Path, block: str, result: dict[str, Any], md: str) -> bool:
    """Put ``md`` into the page's ``block``, keep ``result`` as ``bench/published/<block>.json`` and
    regenerate the aims table from the published results; False when the page has no such block."""
    from bench import aims  # aims imports this module

    doc = repo / "docs" / "benchmarks.md"
    if not update_docs(doc, block, md):
        return False
    folder = repo / PUBLISHED
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=2, default=str).replace(str(Path.home()), "~")
    (folder / f"{block}.json").write_text(text + "\n", encoding="utf-8")
    update_docs(doc, "aims", aims.markdown(aims.evaluate(aims.load_published(folder))))
    return True
