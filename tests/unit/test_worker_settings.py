"""The runtime's typed settings (cdc.worker.settings) read the worker's config definitions as the
dict reads they replace did: same defaults, same values, in both modes."""

from __future__ import annotations

import pytest

from cdc.api.errors import ConfigError
from cdc.config.settings import setting_keys
from cdc.worker.config import DISTRIBUTED_DEF, STANDALONE_DEF, connector_def
from cdc.worker.distributed.membership import GroupSettings
from cdc.worker.distributed.protocol import ConnectProtocol
from cdc.worker.settings import (
    ConnectorSettings,
    SinkConnectorSettings,
    SourceConnectorSettings,
    WorkerSettings,
)

BASE = {"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": " x.Y "}
DISTRIBUTED = {
    **BASE,
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
}


def test_every_field_is_bound_to_a_declared_key() -> None:
    worker_keys = set(STANDALONE_DEF.names()) | set(DISTRIBUTED_DEF.names())
    assert set(setting_keys(WorkerSettings).values()) <= worker_keys
    assert set(setting_keys(GroupSettings).values()) <= set(DISTRIBUTED_DEF.names())
    for cls, kind in ((ConnectorSettings, "unknown"), (SourceConnectorSettings, "source")):
        assert set(setting_keys(cls).values()) <= set(connector_def(kind).names())
    assert set(setting_keys(SinkConnectorSettings).values()) <= set(connector_def("sink").names())


def test_a_standalone_worker_reads_the_group_keys_at_their_defaults() -> None:
    s = WorkerSettings.parse(STANDALONE_DEF, {**BASE, "offset.storage.file.filename": "/tmp/o"}, "h:1")
    assert (s.worker_id, s.group_id, s.distributed) == ("h:1", None, False)
    assert s.rebalance_timeout_ms == 60000
    assert s.inter_worker_verification_algorithms == ("HmacSHA256",)
    assert s.offset_storage_file_filename == "/tmp/o"
    assert s.connector_file_allowed_paths is None  # standalone: any path
    assert s.file_policy().allowed is None
    assert s.bootstrap_servers == ("localhost:9092",)
    assert s.value_converter == "x.Y"  # a CLASS value is trimmed, as the parsed dict held it
    assert s.converter_class("header.converter") == "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    assert (s.connectors_max, s.connector_config_max_bytes) == (1000, 524288)
    assert (s.topic_tracking_enable, s.topic_tracking_allow_reset, s.topic_creation_enable) == (True,) * 3
    assert s.eos_mode == "disabled"
    assert s.internal_topics().names == frozenset()
    assert s.client_props()["bootstrap.servers"] == ["localhost:9092"]  # parsed values over the raw ones


def test_a_distributed_worker() -> None:
    s = WorkerSettings.parse(
        DISTRIBUTED_DEF,
        {**DISTRIBUTED, "rebalance.timeout.ms": "5000", "exactly.once.source.support": "Enabled"},
    )
    assert (s.group_id, s.distributed, s.rebalance_timeout_ms, s.eos_mode) == ("g", True, 5000, "enabled")
    assert s.connector_file_allowed_paths == ()  # distributed: none unless listed
    assert s.offset_storage_file_filename is None
    assert s.internal_topics().names == {"c", "o", "s"}
    group = GroupSettings.from_worker(DISTRIBUTED_DEF.parse({**DISTRIBUTED, "connect.protocol": "EAGER"}))
    assert group.protocol is ConnectProtocol.EAGER
    assert (group.group_id, group.rebalance_timeout_ms, group.key_ttl_ms) == ("g", 60000, 3600000)
    assert (group.request_timeout_ms, group.retry_backoff_ms) == (40000, 100)  # not worker keys
    assert GroupSettings("g") == GroupSettings.from_worker(DISTRIBUTED_DEF.parse(DISTRIBUTED))


def test_connector_settings() -> None:
    common = {"name": "c", "connector.class": "X"}
    c = ConnectorSettings.parse({**common, "tasks.max": "3", "errors.tolerance": "ALL"})
    assert (c.tasks_max, c.tasks_max_enforce, c.transforms, c.errors_tolerance) == (3, True, (), "ALL")
    assert (c.errors_retry_timeout, c.errors_retry_delay_max_ms, c.errors_log_enable) == (0, 60000, False)
    src = SourceConnectorSettings.parse({**common, "topic.creation.default.partitions": "2"})
    assert (src.topic_creation_default_partitions, src.topic_creation_default_replication_factor) == (2, None)
    assert (src.transaction_boundary, src.transaction_boundary_interval_ms) == ("poll", None)
    sink = SinkConnectorSettings.parse({**common, "topics": "a,b", "errors.deadletterqueue.topic.name": "d"})
    assert (sink.topics, sink.topics_regex, sink.errors_deadletterqueue_topic_name) == (("a", "b"), "", "d")
    assert sink.errors_deadletterqueue_topic_replication_factor == 3
    with pytest.raises(ConfigError):
        ConnectorSettings.parse({**common, "tasks.max": "0"})
