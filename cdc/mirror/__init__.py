"""MirrorMaker 2 as Connect connectors, compatible with Kafka's ``org.apache.kafka.connect.mirror``.

Modules: ``protocol`` (the offset-sync, checkpoint and heartbeat records and Connect offsets, byte for
byte), ``policy`` (replication policies and filters), ``config`` (the keys, settings, client settings),
``validation`` (the cross-key and cluster checks), ``mm2_properties`` (an ``mm2.properties`` file → flows,
connector and worker configs), ``admin`` (topics, partitions, configs, ACLs), ``source``
(MirrorSourceConnector/Task and the offset-sync writer), ``offset_syncs`` (the index checkpoints translate
with), ``checkpoint`` and ``heartbeat``. ``docs/mirror-maker.md`` describes the keys, formats and the
bound of offset translation.
"""

from __future__ import annotations

_SOURCE = "cdc.mirror.source:MirrorSourceConnector"
_CHECKPOINT = "cdc.mirror.checkpoint:MirrorCheckpointConnector"
_HEARTBEAT = "cdc.mirror.heartbeat:MirrorHeartbeatConnector"

__all__ = ["PLUGINS"]

PLUGINS: dict[str, str] = {
    "org.apache.kafka.connect.mirror.MirrorSourceConnector": _SOURCE,
    "MirrorSourceConnector": _SOURCE,
    "MirrorSource": _SOURCE,
    "org.apache.kafka.connect.mirror.MirrorCheckpointConnector": _CHECKPOINT,
    "MirrorCheckpointConnector": _CHECKPOINT,
    "MirrorCheckpoint": _CHECKPOINT,
    "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector": _HEARTBEAT,
    "MirrorHeartbeatConnector": _HEARTBEAT,
    "MirrorHeartbeat": _HEARTBEAT,
}
