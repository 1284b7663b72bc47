"""custom.metric.tags: Debezium's validation, and the pairs as labels on the server's series."""

from __future__ import annotations

import pytest

from cdc.metrics import MetricsRegistry
from cdc.mysql.config import MySqlSettings
from cdc.mysql.metrics import SnapshotMetrics
from cdc.mysql.validation import validate_mysql

BASE = {
    "database.hostname": "localhost",
    "database.user": "u",
    "database.password": "p",
    "topic.prefix": "srv",
    "schema.history.internal.kafka.topic": "h",
}


def _errors(value: str) -> list[str]:
    values = validate_mysql({**BASE, "custom.metric.tags": value})
    return [e for v in values if v.name == "custom.metric.tags" for e in v.errors]


@pytest.mark.honours("custom.metric.tags")
def test_values_are_validated_as_debezium_validates_them() -> None:
    assert _errors("k1=v1, k2 = v2") == []
    assert "A equivalent-separated map of valid key/value pairs is expected" in _errors("k1=v1,k2")[0]
    assert "'a:b' is not a valid JMX ObjectName property key" in _errors("a:b=v")[0]
    assert "one of the metric names' own keys" in _errors("server=x")[0]


@pytest.mark.honours("custom.metric.tags")
def test_the_pairs_are_labels_of_every_series_of_the_server() -> None:
    settings = MySqlSettings.parse({**BASE, "custom.metric.tags": "env=prod,1st-tag=x"})
    assert settings.metric_tags == {"env": "prod", "_1st_tag": "x"}
    registry = MetricsRegistry()
    registry.register("snapshot", "srv", SnapshotMetrics("srv"))
    registry.register("snapshot", "other", SnapshotMetrics("other"))
    registry.set_tags("srv", settings.metric_tags)
    readings = list(registry.readings())
    ours = [r for r in readings if r.labels.get("server") == "srv"]
    assert ours and all(r.labels["env"] == "prod" and r.labels["_1st_tag"] == "x" for r in ours)
    assert {r.name for r in ours} >= {
        "debezium_mysql_snapshot_SnapshotCompleted",
        "debezium_mysql_connector_metrics_SnapshotCompleted",
    }
    assert all("env" not in r.labels for r in readings if r.labels.get("server") == "other")
    registry.forget_server("srv")
    assert not [r for r in registry.readings() if r.labels.get("server") == "srv"]
