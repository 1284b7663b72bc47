"""MM2's internal records and Connect offsets, with bytes derived from Kafka's Struct encoding rules:
INT16/INT32/INT64 big-endian, STRING = INT16 length + UTF-8, fields in schema order, and the INT16 version
header Checkpoint and Heartbeat values carry (OffsetSync has none)."""

from __future__ import annotations

import json

import pytest

from cdc.api.errors import DataError
from cdc.mirror.protocol import (
    Checkpoint,
    Heartbeat,
    OffsetSync,
    checkpoint_partition,
    heartbeat_partition,
    source_offset,
    source_partition,
)


def test_offset_sync_bytes() -> None:
    sync = OffsetSync("orders", 3, 1000, 998)
    assert sync.record_key() == b"\x00\x06orders" + b"\x00\x00\x00\x03"
    assert sync.record_value() == (1000).to_bytes(8, "big") + (998).to_bytes(8, "big")
    assert OffsetSync.decode(sync.record_key(), sync.record_value()) == sync


def test_checkpoint_bytes() -> None:
    cp = Checkpoint("billing", "a.orders", 2, 500, 480, "meta")
    assert cp.record_key() == b"\x00\x07billing" + b"\x00\x08a.orders" + b"\x00\x00\x00\x02"
    assert cp.record_value() == (
        b"\x00\x00" + (500).to_bytes(8, "big") + (480).to_bytes(8, "big") + b"\x00\x04meta"
    )
    assert Checkpoint.decode(cp.record_key(), cp.record_value()) == cp
    empty = Checkpoint("g", "t", 0, 0, 0, "")
    assert empty.record_value().endswith(b"\x00\x00")  # "" is a zero-length STRING, not a null
    assert len(empty.record_value()) == 2 + 8 + 8 + 2


def test_heartbeat_bytes() -> None:
    hb = Heartbeat("east", "west", 1732755600123)
    assert hb.record_key() == b"\x00\x04east\x00\x04west"
    assert hb.record_value() == b"\x00\x00" + (1732755600123).to_bytes(8, "big")
    assert Heartbeat.decode(hb.record_key(), hb.record_value()) == hb


def test_utf8_lengths_are_bytes_not_characters() -> None:
    assert OffsetSync("é", 0, 0, 0).record_key()[:2] == b"\x00\x02"


def test_unknown_version_and_truncation_refused() -> None:
    hb = Heartbeat("a", "b", 1)
    with pytest.raises(DataError, match="version 1"):
        Heartbeat.decode(hb.record_key(), b"\x00\x01" + hb.record_value()[2:])
    with pytest.raises(DataError, match="Truncated"):
        OffsetSync.decode(b"\x00\x05ab", b"")


def test_negative_offsets_are_twos_complement() -> None:
    assert OffsetSync("t", 0, -1, -1).record_value() == b"\xff" * 16


def test_connect_partitions_in_java_hash_map_order() -> None:
    # Jackson writes a HashMap as it iterates: by bucket (h ^ h>>>16) & 15 of String.hashCode: cluster 1,
    # partition 3, topic 9, sourceClusterAlias 10, group 15, targetClusterAlias 15
    assert json.dumps(source_partition("a", "t", 0), separators=(",", ":")) == (
        '{"cluster":"a","partition":0,"topic":"t"}'
    )
    assert list(checkpoint_partition("g", "t", 1)) == ["partition", "topic", "group"]
    assert list(heartbeat_partition("a", "b")) == ["sourceClusterAlias", "targetClusterAlias"]
    assert source_offset(41) == {"offset": 41}


def test_offsets_altered_over_rest_are_checked_as_kafka() -> None:
    from cdc.api.errors import InvalidOffsetError
    from cdc.mirror.checkpoint import MirrorCheckpointConnector
    from cdc.mirror.heartbeat import MirrorHeartbeatConnector
    from cdc.mirror.source import MirrorSourceConnector

    source = MirrorSourceConnector()
    assert source.validate_offset({}, source_partition("a", "t", 0), {"offset": 5})
    for partition, offset, field in (
        ({"topic": "t", "partition": 0}, {"offset": 1}, "cluster"),
        ({"cluster": "a", "topic": "t", "partition": -1}, {"offset": 1}, "partition"),
        ({"cluster": "a", "topic": 3, "partition": 0}, {"offset": 1}, "topic"),
        (source_partition("a", "t", 0), {"offset": -2}, "offset"),
        (source_partition("a", "t", 0), {"offset": "7"}, "offset"),
    ):
        with pytest.raises(InvalidOffsetError) as caught:
            source.validate_offset({}, partition, offset)
        assert caught.value.field == field
    with pytest.raises(InvalidOffsetError, match="only accepted value is 0"):
        MirrorCheckpointConnector().validate_offset({}, checkpoint_partition("g", "t", 0), {"offset": 3})
    assert MirrorHeartbeatConnector().validate_offset({}, heartbeat_partition("a", "b"), {"offset": 0})
