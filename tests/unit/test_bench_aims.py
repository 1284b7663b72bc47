"""The benchmarks page's aims table is generated from the published result files, against the peer at its
best (issue #30): ``bench.aims`` and the ``best`` ratios of ``bench.report``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import aims, report
from bench.core import Metric
from bench.scenarios.b3_binlog import B3Binlog


def _entry(name: str, role: str, values: list[dict[str, float]], tunes: str | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "role": role,
        "tunes": tunes,
        "samples": [{"run": i + 1, "values": v, "notes": []} for i, v in enumerate(values)],
        "errors": [],
    }


def _b3_case(key: str, cdc_eps: float, cdc_cpu: float) -> dict[str, Any]:
    def sample(eps: float, cpu: float, missing: float = 0.0) -> dict[str, float]:
        return {"events_per_s": eps, "cpu_s_per_m": cpu, "missing": missing, "duplicates": 0.0}

    contenders = [
        _entry("cdc", "ours", [sample(cdc_eps, cdc_cpu), sample(cdc_eps * 1.1, cdc_cpu)]),
        # Debezium at its defaults: slower, but lighter per event than its tuned run
        _entry("debezium", "peer", [sample(8_000, 150), sample(9_000, 170)]),
        _entry("debezium-best", "peer", [sample(12_000, 200), sample(12_000, 220)], tunes="debezium"),
        _entry("mariadb-binlog", "ceiling", [sample(90_000, 10), sample(90_000, 10)]),
    ]
    report.summarize(B3Binlog.metrics, contenders)
    return {"key": key, "label": f"the {key} case", "params": {"workload": key}, "contenders": contenders}


def _b3_result(rows: int | None = None) -> dict[str, Any]:
    return {
        "scenario": "B3",
        "title": "replay",
        "finished": "2026-11-28T09:00:00Z",
        "runs": 2,
        "rows": rows,
        "busy": False,
        "cases": [_b3_case("updates", 30_000, 20.0), _b3_case("inserts", 40_000, 30.0)],
    }


def _verdicts(block: str, published: dict[str, Any]) -> list[aims.Verdict]:
    return [v for v in aims.evaluate(published) if v.aim.block == block]


def test_summarize_takes_each_metric_against_the_family_at_its_best() -> None:
    case = _b3_case("updates", 30_000, 20.0)
    cdc = next(c for c in case["contenders"] if c["name"] == "cdc")
    best = cdc["best"]["debezium"]
    # events/s: debezium-best's 12 000 beats the defaults' median 8 500
    assert best["events_per_s"] == {"ratio": 31_500 / 12_000, "against": "debezium-best"}
    # CPU per event: the defaults' 160 is lower than the tuned 210, so that is the peer at its best
    assert best["cpu_s_per_m"] == {"ratio": 20.0 / 160, "against": "debezium"}
    # peers only (a ceiling is no peer), and only for metrics that ask for ratios
    assert set(cdc["best"]) == {"debezium"}
    assert best["missing"] is None


def test_the_table_shows_default_and_best_and_the_ratio_against_the_best() -> None:
    case = _b3_case("updates", 30_000, 20.0)
    lines = report._case_table(B3Binlog.metrics, case["contenders"])
    head = lines[0]
    assert "debezium (peer)" in head and "debezium-best (peer)" in head
    assert "ratio cdc/debezium at its best" in head
    eps = next(line for line in lines if line.startswith("| events/s, first to last"))
    assert eps.rstrip(" |").endswith(f"{31_500 / 12_000:.2f}\u00d7 (debezium-best)")


def test_aims_are_judged_against_the_best_peer_per_case() -> None:
    verdicts = _verdicts("B3", {"B3": _b3_result()})
    by_text = {(v.aim.text, v.case): v for v in verdicts}
    three = by_text[("single-row transactions: ≥ 3\u00d7 Debezium's events/s", "the updates case")]
    # 31 500 / 12 000 = 2.63: under 3x against the tuned peer (it would be 3.7x against the defaults)
    assert three.met is False
    assert three.measured.startswith("2.62\u00d7 (cdc 31,500 / debezium-best 12,000")
    cpu = by_text[("single-row transactions: ≤ 25 CPU-seconds per million events", "the updates case")]
    assert cpu.met is True and cpu.measured.startswith("20.0 s")
    ceiling = by_text[
        ("single-row transactions: ≥ 0.4\u00d7 the `mariadb-binlog` ceiling", "the updates case")
    ]
    assert ceiling.met is False and "mariadb-binlog 90,000" in ceiling.measured
    inserts = by_text[("multi-row statements: ≥ 4\u00d7 Debezium's events/s", "the inserts case")]
    assert inserts.met is False  # 42 000 / 12 000 = 3.5
    # an aim limited to one case is not judged on the other
    assert ("multi-row statements: ≥ 4\u00d7 Debezium's events/s", "the updates case") not in by_text
    assert all(v.source.startswith("`B3`, 2026-11-28 09:00 UTC, 2 run(s)") for v in verdicts)


def test_a_block_without_a_published_result_says_so() -> None:
    verdicts = _verdicts("B4", {"B3": _b3_result()})
    assert verdicts and all(v.met is None and v.source == aims.NOT_RUN for v in verdicts)
    table = aims.markdown(verdicts)
    assert table.count(aims.NOT_RUN) == len(verdicts)


def test_a_run_smaller_than_the_aim_is_shown_but_not_judged() -> None:
    b8 = _b3_result(rows=20_000)
    b8["scenario"] = "B8"
    for case in b8["cases"]:
        for c in case["contenders"]:
            for s in c["samples"]:
                s["values"]["peak_rss_mb"] = 100.0
        report.summarize(
            (*B3Binlog.metrics, Metric("peak_rss_mb", "peak RSS", "MB", "lower", 0)), case["contenders"]
        )
    rss = next(v for v in _verdicts("B8", {"B8": b8}) if v.aim.metric == "peak_rss_mb")
    assert rss.met is None
    assert "run at 20,000 rows; the aim is at 1,000,000" in rss.measured


def test_a_bound_on_a_value_is_held_by_the_worst_of_ours() -> None:
    result = _b3_result()
    cdc = next(c for c in result["cases"][0]["contenders"] if c["name"] == "cdc")
    cdc["stats"]["missing"] = {"median": 3.0, "min": 3.0, "max": 3.0, "n": 2}
    lost = next(v for v in _verdicts("B3", {"B3": result}) if v.aim.metric == "missing")
    assert lost.met is False and lost.measured.startswith("3")


def test_publish_keeps_the_result_and_regenerates_the_aims_table(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "benchmarks.md"
    page.write_text(
        "# page\n<!-- results:aims -->\nold\n<!-- /results:aims -->\n"
        "## B3\n<!-- results:B3 -->\nold\n<!-- /results:B3 -->\n",
        encoding="utf-8",
    )
    result = _b3_result()
    assert report.publish(tmp_path, "B3", result, "the B3 block\n")
    assert report.publish(tmp_path, "B9", result, "no such block\n") is False
    stored = json.loads((tmp_path / report.PUBLISHED / "B3.json").read_text(encoding="utf-8"))
    assert stored["cases"][0]["key"] == "updates"
    text = page.read_text(encoding="utf-8")
    assert "<!-- results:B3 -->\nthe B3 block\n<!-- /results:B3 -->" in text
    aims_block = text.split("<!-- results:aims -->\n")[1].split("<!-- /results:aims -->")[0]
    assert "2.62\u00d7 (cdc 31,500 / debezium-best 12,000" in aims_block
    assert aims.NOT_RUN in aims_block  # B4, B5, ... have no published result here
