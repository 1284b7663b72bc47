"""mm2.properties → flows, connector configs and worker configs, as Kafka's MirrorMakerConfig builds them."""

from __future__ import annotations

import pytest

from cdc.api.errors import ConfigError
from cdc.mirror.mm2_properties import cluster_pairs, clusters, connector_configs, worker_config
from cdc.mirror.validation import validate_mirror

PROPS = {
    "clusters": "east, west",
    "east.bootstrap.servers": "east:9092",
    "west.bootstrap.servers": "west:9092",
    "west.producer.compression.type": "lz4",
    "east->west.enabled": "true",
    "east->west.topics": "orders.*",
    "replication.factor": "1",
    "tasks.max": "4",
    "sasl.mechanism": "PLAIN",
    "unrelated.worker.key": "x",
}


def test_pairs_and_duplicate_aliases() -> None:
    assert clusters(PROPS) == ["east", "west"]
    # west->east runs for its heartbeats only (emit.heartbeats.enabled defaults to true)
    assert cluster_pairs(PROPS) == [("east", "west"), ("west", "east")]
    assert cluster_pairs({**PROPS, "emit.heartbeats.enabled": "false"}) == [("east", "west")]
    with pytest.raises(ConfigError, match="'east' appears twice"):
        clusters({**PROPS, "clusters": "east, west, east"})


def test_connector_configs_of_a_flow() -> None:
    configs = connector_configs(PROPS, "east", "west")
    assert list(configs) == ["MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"]
    source = configs["MirrorSourceConnector"]
    assert source["connector.class"] == "org.apache.kafka.connect.mirror.MirrorSourceConnector"
    assert (source["source.cluster.alias"], source["target.cluster.alias"]) == ("east", "west")
    assert source["source.cluster.bootstrap.servers"] == "east:9092"
    assert source["target.cluster.bootstrap.servers"] == "west:9092"
    assert source["target.producer.compression.type"] == "lz4"
    assert source["source.consumer.bootstrap.servers"] == "east:9092"
    assert source["source.cluster.sasl.mechanism"] == "PLAIN"  # top-level client keys reach every cluster
    assert source["topics"] == "orders.*" and source["enabled"] == "true"
    assert source["tasks.max"] == "4" and source["replication.factor"] == "1"
    assert "unrelated.worker.key" not in source
    reverse = connector_configs(PROPS, "west", "east")["MirrorSourceConnector"]
    assert reverse["enabled"] == "false" and "topics" not in reverse
    errors = {r.name: r.errors for r in validate_mirror(source, "source", check_clusters=False) if r.errors}
    assert errors == {}


def test_worker_config_of_a_flow() -> None:
    worker = worker_config(PROPS, "east", "west")
    assert worker["bootstrap.servers"] == "west:9092"
    assert worker["group.id"] == "east-mm2"
    assert worker["offset.storage.topic"] == "mm2-offsets.east.internal"
    assert worker["config.storage.topic"] == "mm2-configs.east.internal"
    assert worker["status.storage.topic"] == "mm2-status.east.internal"
    assert (
        worker["key.converter"]
        == worker["header.converter"]
        == ("org.apache.kafka.connect.converters.ByteArrayConverter")
    )
