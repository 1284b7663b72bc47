"""Replication policies, filters, the offset-sync rule and index, and config checks of the MM2 connectors."""

from __future__ import annotations

from cdc.mirror.config import MirrorSettings, client_settings
from cdc.mirror.offset_syncs import OffsetSyncIndex
from cdc.mirror.policy import ReplicationPolicy, policy_for
from cdc.mirror.protocol import OffsetSync
from cdc.mirror.source import OffsetSyncWriter, decode_topic_partition
from cdc.mirror.validation import validate_mirror

DEFAULT = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"


def test_default_policy_names_and_cycles() -> None:
    p = ReplicationPolicy()
    assert p.format_remote_topic("a", "orders") == "a.orders"
    assert p.topic_source("a.orders") == "a" and p.upstream_topic("a.orders") == "orders"
    assert p.topic_source("orders") is None and p.topic_source("orders.") is None  # Java's split
    assert p.original_topic("b.a.orders") == "orders"
    assert p.is_cycle("b.orders", "b") and p.is_cycle("a.b.orders", "b") and not p.is_cycle("a.orders", "b")
    assert p.offset_syncs_topic("b") == "mm2-offset-syncs.b.internal"
    assert p.checkpoints_topic("a") == "a.checkpoints.internal"
    assert p.is_internal_topic("__consumer_offsets") and p.is_internal_topic("connect-offsets-internal")
    assert p.is_heartbeats_topic("a.heartbeats") and not p.is_heartbeats_topic("orders")
    custom = ReplicationPolicy(separator="_")
    assert custom.format_remote_topic("a", "t") == "a_t"
    assert custom.offset_syncs_topic("b") == "mm2-offset-syncs_b_internal"
    assert ReplicationPolicy("_", False).offset_syncs_topic("b") == "mm2-offset-syncs.b.internal"


def test_identity_policy_keeps_names_but_not_heartbeats() -> None:
    p = policy_for(IDENTITY, ".", True, "a")
    assert p.format_remote_topic("a", "orders") == "orders"
    assert p.format_remote_topic("a", "heartbeats") == "a.heartbeats"
    assert p.topic_source("orders") == "a" and not p.is_cycle("orders", "b")
    assert policy_for("DefaultReplicationPolicy", ".", True, "a") == ReplicationPolicy()


def test_filters_match_whole_names() -> None:
    s = MirrorSettings.parse(
        {"source.cluster.alias": "a", "topics": "orders.*, pay", "groups.exclude": "tmp-.*"}
    )
    assert s.topic_filter("orders-eu") and s.topic_filter("pay") and not s.topic_filter("payment")
    assert not MirrorSettings.parse({"source.cluster.alias": "a", "topics": ".*"}).topic_filter("x.internal")
    assert s.group_filter("billing") and not s.group_filter("tmp-1")
    assert not s.config_filter.replicate("min.insync.replicas") and s.config_filter.replicate("retention.ms")
    assert not MirrorSettings.parse({"source.cluster.alias": "a", "topics": ""}).topic_filter("t")


def test_client_settings_order() -> None:
    props = {
        "source.cluster.bootstrap.servers": "s:1",
        "source.cluster.unrelated": "x",
        "consumer.fetch.min.bytes": "1",
        "source.consumer.fetch.min.bytes": "2",
        "target.cluster.bootstrap.servers": "t:1",
        "consumer.poll.timeout.ms": "500",
    }
    consumer = client_settings(props, "source", "consumer", "id")
    assert consumer == {
        "bootstrap.servers": "s:1",
        "fetch.min.bytes": "2",
        "enable.auto.commit": "false",
        "auto.offset.reset": "earliest",
        "client.id": "id",
    }
    assert client_settings(props, "target", "admin")["bootstrap.servers"] == "t:1"


def test_offset_sync_rule_as_kafka() -> None:
    w = OffsetSyncWriter(None, "t", max_lag=3)
    w.maybe_queue("x", 0, 10, 0)  # first: synced
    assert [s.upstream_offset for s in w.pending()] == [10]
    w.fire_pending()
    for up, down in ((11, 1), (12, 2), (13, 3)):
        w.maybe_queue("x", 0, up, down)
    assert not w.pending() and w.delayed() == [OffsetSync("x", 0, 13, 3)]  # 3 - (0 + 1) < 3
    w.maybe_queue("x", 0, 14, 4)  # 4 - 1 >= 3
    assert w.pending() == [OffsetSync("x", 0, 14, 4)] and not w.delayed()
    w.fire_pending()
    w.maybe_queue("x", 0, 20, 5)  # upstream skipped (compaction): synced
    assert w.pending() == [OffsetSync("x", 0, 20, 5)]
    w.fire_pending()
    w.maybe_queue("x", 0, 21, 6)
    w.promote_delayed()
    assert w.pending() == [OffsetSync("x", 0, 21, 6)]


def test_index_never_ahead_and_dense() -> None:
    index = OffsetSyncIndex(max_syncs=8)
    for i in range(20):
        index.add(OffsetSync("t", 0, 100 + i * 10, i * 10))
    assert index.size("t", 0) <= 8
    assert index.translate("t", 0, 290) == 190  # exact sync
    assert index.translate("t", 0, 295) == 191  # one past the sync, never further
    assert index.translate("t", 0, 50) == -1  # older than every sync
    assert index.translate("u", 0, 5) is None
    for upstream in range(100, 300):
        exact = upstream - 100
        got = index.translate("t", 0, upstream)
        assert got is not None and (got <= exact or got == -1)
    index.add(OffsetSync("t", 0, 150, 50))  # replication restarted earlier: later syncs dropped
    assert index.translate("t", 0, 290) == 51


def test_decode_topic_partition() -> None:
    assert decode_topic_partition("my-topic-12") == ("my-topic", 12)


def _errors(props: dict[str, str], kind: str = "source") -> dict[str, list[str]]:
    return {r.name: r.errors for r in validate_mirror(props, kind, check_clusters=False) if r.errors}


def test_validation_messages() -> None:
    base = {
        "source.cluster.alias": "a",
        "target.cluster.alias": "b",
        "source.cluster.bootstrap.servers": "127.0.0.1:1",
        "target.cluster.bootstrap.servers": "127.0.0.1:1",
    }
    assert _errors(base) == {}
    assert "target.cluster.alias" in _errors({**base, "target.cluster.alias": "a"})
    assert "Invalid regular expression" in _errors({**base, "topics": "ok, (broken"})["topics"][0]
    assert "groups.exclude" in _errors({**base, "groups.exclude": "[x"}, "checkpoint")
    missing = _errors({k: v for k, v in base.items() if k != "source.cluster.bootstrap.servers"})
    assert missing["source.cluster.bootstrap.servers"][0].startswith("Missing required configuration")
    assert "source.cluster.alias" in _errors({"target.cluster.bootstrap.servers": "x:1"}, "heartbeat")
    assert "replication.policy.class" in _errors({**base, "replication.policy.class": "com.acme.Policy"})
    assert "topic.filter.class" in _errors({**base, "topic.filter.class": "com.acme.Filter"})
    off = _errors(
        {**base, "emit.offset-syncs.enabled": "false", "offset-syncs.topic.replication.factor": "1"}
    )
    assert "offset-syncs feature" in off["emit.offset-syncs.enabled"][0]


def test_docs_list_every_key() -> None:
    from pathlib import Path

    from cdc.mirror.config import MIRROR_DEF

    docs = Path(__file__).resolve().parents[2] / "docs" / "mirror-maker.md"
    assert MIRROR_DEF.to_markdown() in docs.read_text()


def test_plugin_names() -> None:
    from cdc.mirror.checkpoint import MirrorCheckpointConnector
    from cdc.mirror.heartbeat import MirrorHeartbeatConnector
    from cdc.mirror.source import MirrorSourceConnector
    from cdc.plugins import registry

    for cls in (MirrorSourceConnector, MirrorCheckpointConnector, MirrorHeartbeatConnector):
        assert registry.load(f"org.apache.kafka.connect.mirror.{cls.__name__}") is cls
        assert registry.load(cls.__name__) is cls
