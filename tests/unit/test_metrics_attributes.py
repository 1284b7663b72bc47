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


def _text(registry: MetricsRegistry) -> dict[str, list[dict[str, str]]]:
    exposition = CollectorRegistry()
    exposition.register(registry)
    out: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(generate_latest(exposition).decode()):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(dict(sample.labels))
    return out


def test_a_server_named_by_its_connector_labels_every_series_and_forgetting_it_removes_them() -> None:
    ours = MetricsRegistry()
    ours.register("snapshot", "srv", _Snapshot())
    ours.register("streaming", "other", _Snapshot())
    ours.set_connector("srv", "shop")
    samples = _text(ours)
    assert samples["debezium_mysql_snapshot_ChunkId"] == [
        {"server": "srv", "connector": "shop", "value": 'c-1"x'}
    ]
    assert {"server": "other", "table": "db.a"} in samples["debezium_mysql_streaming_RowsScanned"]
    # the JMX exporter's default-rule spelling, for numbers and booleans only
    paused = samples["debezium_mysql_connector_metrics_SnapshotPaused"]
    assert {"server": "srv", "connector": "shop", "context": "snapshot"} in paused
    assert {"server": "other", "context": "streaming"} in paused and len(paused) == 2
    ours.forget_server("srv")
    left = [labels for series in _text(ours).values() for labels in series]
    assert left and all(labels["server"] == "other" for labels in left)


def test_an_incremental_snapshot_leaves_no_chunk_texts_once_done() -> None:
    from cdc.history.model import TableId
    from cdc.mysql.metrics import REGISTRY, SnapshotMetrics

    metrics = SnapshotMetrics("stale-srv")
    try:
        table = TableId.parse("db.items")
        metrics.start_incremental([table])
        metrics.chunk("chunk-1", [1], [50], [1000], table, 50)
        names = {r.name for r in REGISTRY.readings() if r.labels.get("server") == "stale-srv"}
        assert {"debezium_mysql_snapshot_ChunkId", "debezium_mysql_snapshot_TableTo"} <= names
        metrics.complete()
        names = {r.name for r in REGISTRY.readings() if r.labels.get("server") == "stale-srv"}
        assert not {
            n for n in names if n.endswith(("ChunkId", "ChunkFrom", "ChunkTo", "TableFrom", "TableTo"))
        }
    finally:
        REGISTRY.forget_server("stale-srv")
