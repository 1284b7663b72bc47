"""Runs a scenario: set up, prepare each case, run every contender ``runs`` times, summarize, report.

Runs alternate between contenders (ours, peer, ceiling, ours, peer, ...) rather than running one
contender three times in a row, so a burst of load from other work on the machine spreads over all of
them instead of landing on one.
"""

from __future__ import annotations

import datetime as dt
import os
import traceback
from pathlib import Path
from typing import Any

from bench import machine, report
from bench.core import Contender, Context, Unavailable, contenders_for, scenarios
from bench.stack import Stack

__all__ = ["run_scenario"]

BUSY_LOAD = 1.0  # load average per core above which a result is flagged "busy"


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_scenario(
    ctx: Context, scenario_id: str, only: list[str] | None = None, update_docs: bool = True
) -> Path:
    classes = scenarios()
    if scenario_id not in classes:
        raise SystemExit(f"unknown scenario {scenario_id}; known: {', '.join(classes)}")
    stack = Stack(ctx.repo)
    stack.up()
    scenario = classes[scenario_id](ctx)
    header = machine.describe(stack)
    result: dict[str, Any] = {
        "scenario": scenario_id,
        "title": scenario.title,
        "started": _now(),
        "runs": ctx.runs,
        "rows": ctx.rows,
        "options": ctx.options,
        "machine": header,
        "notes": [],
        "cases": [],
    }
    ctx.log(f"[bench] {scenario_id}: {scenario.title}")
    scenario.setup()
    result["notes"] += ctx.info.pop("notes", [])

    contenders: list[Contender] = []
    unavailable: dict[str, str] = {}
    for cls in contenders_for(scenario_id):
        if only and cls.name not in only:
            continue
        c = cls(ctx, scenario)
        try:
            c.check()
            c.setup()
        except Unavailable as exc:
            unavailable[c.name] = str(exc)
            ctx.log(f"[bench]   {c.name}: not run: {exc}")
        except Exception as exc:
            unavailable[c.name] = f"setup failed: {exc}"
            ctx.log(f"[bench]   {c.name}: setup failed: {exc}")
        else:
            contenders.append(c)
            header["versions"].update(c.versions())

    wanted = [c.strip() for c in ctx.options.get("cases", "").split(",") if c.strip()]
    for case in scenario.cases():
        if wanted and case.key not in wanted:
            continue
        ctx.log(f"[bench] case {case.key}: {case.label}")
        entries: dict[str, dict[str, Any]] = {
            c.name: {"name": c.name, "role": c.role, "tunes": c.tunes, "samples": [], "errors": []}
            for c in contenders
        }
        for name, why in unavailable.items():
            cls = next(cls for cls in contenders_for(scenario_id) if cls.name == name)
            entries[name] = {
                "name": name,
                "role": cls.role,
                "tunes": cls.tunes,
                "samples": [],
                "unavailable": why,
            }
        scenario.prepare(case)
        for run in range(ctx.runs):
            for c in contenders:
                ctx.log(f"[bench]   run {run + 1}/{ctx.runs}: {c.name}")
                try:
                    scenario.before_run(case, c, run)
                    sample = c.run(case, run)
                except Unavailable as exc:
                    entries[c.name]["unavailable"] = str(exc)
                    ctx.log(f"[bench]     not run: {exc}")
                    continue
                except Exception as exc:
                    entries[c.name]["errors"].append(f"run {run + 1}: {exc}")
                    ctx.log(f"[bench]     failed: {exc}\n{traceback.format_exc()}")
                    continue
                shown = ", ".join(f"{k}={v:.4g}" for k, v in sample.values.items() if v is not None)
                ctx.log(f"[bench]     {shown}")
                entries[c.name]["samples"].append(
                    {"run": run + 1, "values": sample.values, "notes": sample.notes, "load": machine.load()}
                )
        scenario.teardown(case)
        case_entries = list(entries.values())
        report.summarize(scenario.metrics, case_entries)
        result["cases"].append(
            {
                "key": case.key,
                "label": case.label,
                "params": dict(case.params),
                "info": ctx.info.pop(case.key, {}),
                "contenders": case_entries,
            }
        )

    result["finished"] = _now()
    result["load_at_end"] = machine.load()
    result["notes"] += ctx.info.pop("notes", [])
    cores = header["nproc"] or 1
    result["busy"] = max(header["load_at_start"][0], result["load_at_end"][0]) / cores > BUSY_LOAD
    json_path, md_path, md = report.write(ctx.repo / "bench" / "results", result, scenario.metrics)
    ctx.log(f"[bench] wrote {json_path} and {md_path}\n\n{md}")
    if update_docs and report.publish(ctx.repo, scenario_id, result, md):
        ctx.log(f"[bench] updated the {scenario_id} results in docs/benchmarks.md")
    return json_path


def default_cache() -> Path:
    return Path(os.environ.get("CDC_CACHE", Path.home() / ".cache" / "cdc"))
