"""docs/grafana-dashboard.json: a worker and a connector picked at the top filter every panel."""

from __future__ import annotations

import json
import re
from pathlib import Path

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"
METRIC = re.compile(r"\b((?:kafka_connect|debezium_mysql|cdc)_[A-Za-z0-9_]+)(\{[^}]*\})?")


def test_instance_and_connector_variables_filter_every_query() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert {"instance", "connector"} <= set(variables)
    for v in variables.values():
        assert v["type"] == "query" and v["includeAll"] and v["multi"] and "label_values(" in v["definition"]
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    for expr in exprs:
        for name, selector in METRIC.findall(expr):
            assert 'instance=~"$instance"' in selector, expr
            if "rebalance_metrics" not in name:  # the worker's rebalances are nobody's connector's
                assert 'connector=~"$connector"' in selector, expr
