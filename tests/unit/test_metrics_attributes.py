"""Debezium-style ``attributes()`` objects rendered as Prometheus samples: numbers, per-table maps, texts
(the incremental snapshot's ChunkId, TableFrom…) and lists (CapturedTables)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from cdc.metrics import MetricsRegistry


class _Snapshot:
    def attributes(self) -> dict[str, Any]:
        return {
            "RowsScanned": {"db.a": 7},
            "SnapshotPaused": False,
            "ChunkId": 'c-1"x',
            "TableFrom": "",
            "CapturedTables": ["db.a", "db.b"],
        }


def _samples() -> dict[str, list[tuple[dict[str, str], float]]]:
    ours = MetricsRegistry()
    ours.register("snapshot", "srv", _Snapshot())
    registry = CollectorRegistry()
    registry.register(ours)
    text = generate_latest(registry).decode()
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return out


def test_texts_become_a_value_label_and_lists_one_sample_per_item() -> None:
    samples = _samples()
    assert samples["debezium_mysql_snapshot_ChunkId"] == [({"server": "srv", "value": 'c-1"x'}, 1.0)]
    assert "debezium_mysql_snapshot_TableFrom" not in samples  # empty: no chunk read yet
    assert sorted(labels["table"] for labels, _ in samples["debezium_mysql_snapshot_CapturedTables"]) == [
        "db.a",
        "db.b",
    ]
    assert samples["debezium_mysql_snapshot_RowsScanned"] == [({"server": "srv", "table": "db.a"}, 7.0)]
    assert samples["debezium_mysql_snapshot_SnapshotPaused"] == [({"server": "srv"}, 0.0)]
