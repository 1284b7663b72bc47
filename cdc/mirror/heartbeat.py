"""MirrorHeartbeatConnector and MirrorHeartbeatTask: a heartbeat record to the target every interval.

The connector creates the ``heartbeats`` topic on the target (one partition, compacted,
``heartbeats.topic.replication.factor``); its one task writes ``Heartbeat(source, target, now)`` there every
``emit.heartbeats.interval.seconds`` (no task when disabled or the interval is 0), keyed and encoded as
Kafka's (:mod:`cdc.mirror.protocol`), with the Connect partition
``{"sourceClusterAlias","targetClusterAlias"}`` and offset ``{"offset": 0}``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka.admin import AdminClient

from cdc.api.connector import SourceConnector, SourceTask, Task
from cdc.api.records import SourceRecord
from cdc.api.schema import BYTES_SCHEMA
from cdc.config import ConfigDef, ConfigValue
from cdc.mirror import admin as adm
from cdc.mirror.config import HEARTBEAT, MirrorSettings, connector_def
from cdc.mirror.protocol import Heartbeat, check_connect_offset, heartbeat_partition, source_offset
from cdc.mirror.validation import validate_mirror

__all__ = ["MirrorHeartbeatConnector", "MirrorHeartbeatTask"]


class MirrorHeartbeatConnector(SourceConnector):
    def __init__(self) -> None:
        self.props: dict[str, str] = {}
        self.settings: MirrorSettings | None = None

    def config(self) -> ConfigDef:
        return connector_def(HEARTBEAT)

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        return validate_mirror(props, HEARTBEAT)

    def task_class(self) -> type[Task]:
        return MirrorHeartbeatTask

    def validate_offset(
        self, props: Mapping[str, str], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> bool:
        keys = ("sourceClusterAlias", "targetClusterAlias")
        check_connect_offset(partition, offset, keys, with_partition=False, only_zero=True)
        return True

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)
        # no ``enabled`` check: as Kafka's, heartbeats flow even for a pair whose replication is disabled
        s = self.settings = MirrorSettings.parse(props)
        admin = AdminClient(s.client("target", "admin", f"{s.connector_name}-heartbeats-target-admin"))
        adm.create_compacted_topic(
            admin, s.policy.heartbeats_topic(), s.heartbeats_rf, s.target_alias, s.admin_timeout_ms / 1000
        )

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        s = self.settings
        if s is None or not s.emit_heartbeats or s.emit_heartbeats_s <= 0:
            return []
        return [dict(self.props)]

    def stop(self) -> None:
        return None


class MirrorHeartbeatTask(SourceTask):
    def __init__(self) -> None:
        self._stopped = threading.Event()

    def start(self, props: dict[str, str]) -> None:
        s = MirrorSettings.parse(props)
        self.source, self.target = s.source_alias, s.target_alias
        self.topic = s.policy.heartbeats_topic()
        self.interval = float(s.emit_heartbeats_s)
        self._partition = heartbeat_partition(self.source, self.target)

    def poll(self) -> list[SourceRecord] | None:
        if self._stopped.wait(self.interval):
            return None
        now = int(time.time() * 1000)
        beat = Heartbeat(self.source, self.target, now)
        record = SourceRecord(
            self.topic,
            0,
            BYTES_SCHEMA,
            beat.record_key(),
            BYTES_SCHEMA,
            beat.record_value(),
            now,
            source_partition=self._partition,
            source_offset=source_offset(0),
        )
        return [record]

    def stop(self) -> None:
        self._stopped.set()
