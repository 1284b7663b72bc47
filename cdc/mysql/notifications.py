"""Debezium's notifications (``notification.enabled.channels``): the progress of initial and incremental
snapshots, told to the channels a user enables.

As Debezium 3.6 (``io.debezium.pipeline.notification``):

* a notification is ``{id, aggregate_type, type, additional_data, timestamp}``: aggregate type
  ``Initial Snapshot`` (types ``STARTED``, ``IN_PROGRESS`` per table, ``TABLE_SCAN_COMPLETED`` per table,
  ``COMPLETED``, ``ABORTED``, ``SKIPPED``; a random UUID each) or ``Incremental Snapshot`` (``STARTED``,
  ``PAUSED``, ``RESUMED``, ``IN_PROGRESS`` per chunk, ``TABLE_SCAN_COMPLETED``, ``COMPLETED``, ``ABORTED``;
  the signal's id). ``additional_data`` always holds ``connector_name`` (the ``topic.prefix``), in the
  iteration order of Debezium's ``HashMap``;
* ``sink``: a record to ``notification.sink.topic.name``, key ``io.debezium.connector.common.NotificationKey
  {id}``, value ``io.debezium.connector.common.Notification {id, type, aggregate_type, additional_data (a
  string map), timestamp}``, partition and offset those of the moment (so it is committed in order with the
  events); ``log``: ``[Notification Service]  {id='…', aggregateType='…', …}`` at INFO;
* ``jmx``: Debezium's MBean keeps the notifications for JMX clients; cdc has no JMX and publishes them as
  metrics instead (``debezium_mysql_notifications_*{server}``: the number sent, and the last one's type).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc.api.offsets import java_hash_map_order
from cdc.api.records import SourceRecord
from cdc.api.schema import INT64_SCHEMA, STRING_SCHEMA, SchemaBuilder
from cdc.api.struct import Struct
from cdc.metrics import REGISTRY
from cdc.mysql.config import MySqlSettings

__all__ = [
    "CHANNELS",
    "INCREMENTAL",
    "INITIAL",
    "Notification",
    "Notifier",
    "additional_data_order",
    "hash_set_order",
]

log = logging.getLogger(__name__)

CHANNELS = ("sink", "log", "jmx")
INITIAL = "Initial Snapshot"
INCREMENTAL = "Incremental Snapshot"

KEY_SCHEMA = (
    SchemaBuilder.struct().name("io.debezium.connector.common.NotificationKey").version(1)
    .field("id", STRING_SCHEMA)
    .build()
)  # fmt: skip
VALUE_SCHEMA = (
    SchemaBuilder.struct().name("io.debezium.connector.common.Notification").version(1)
    .field("id", STRING_SCHEMA)
    .field("type", STRING_SCHEMA)
    .field("aggregate_type", STRING_SCHEMA)
    .field("additional_data", SchemaBuilder.map(STRING_SCHEMA, STRING_SCHEMA).optional().build())
    .field("timestamp", INT64_SCHEMA)
    .build()
)  # fmt: skip


def hash_set_order(names: list[str]) -> list[str]:
    """``new HashSet<>(names)`` (of ``TableId``s, hashed as their identifiers) in its iteration order."""
    return java_hash_map_order(names, max(int(len(names) / 0.75) + 1, 16))


def additional_data_order(data: Mapping[str, str]) -> dict[str, str]:
    """``new HashMap<>(data)`` plus ``connector_name`` put last (as the notification services build it),
    in that map's iteration order: the copy's table is sized for ``data`` (16 when it is empty)."""
    given = [k for k in data if k != "connector_name"]
    capacity = 16
    if given:
        capacity = 1
        while capacity < int(len(given) / 0.75 + 1.0):
            capacity *= 2
    order = java_hash_map_order([*given, "connector_name"], capacity)
    return {k: str(data[k]) for k in order}


@dataclass(frozen=True)
class Notification:
    id: str
    aggregate_type: str
    type: str
    additional_data: dict[str, str] = field(default_factory=dict)
    timestamp: int = 0

    def __str__(self) -> str:
        """``Notification.toString()``: what the log channel writes."""
        data = ", ".join(f"{k}={v}" for k, v in self.additional_data.items())
        return (
            f"{{id='{self.id}', aggregateType='{self.aggregate_type}', type='{self.type}', "
            f"additionalData={{{data}}}, timestamp={self.timestamp}}}"
        )


class _JmxMetrics:
    """The ``jmx`` channel as metrics: how many notifications were sent, and the last one."""

    def __init__(self) -> None:
        self.sent = 0
        self.last: Notification | None = None

    def attributes(self) -> dict[str, Any]:
        last = self.last
        return {
            "NumberOfNotifications": self.sent,
            "LastNotificationAggregateType": last.aggregate_type if last else "",
            "LastNotificationType": last.type if last else "",
            "LastNotificationTimestamp": last.timestamp if last else 0,
        }


class Notifier:
    """Sends notifications to the enabled channels; does nothing when none is enabled."""

    def __init__(
        self,
        settings: MySqlSettings,
        partition: Mapping[str, Any],
        emit: Callable[[list[SourceRecord]], bool],
    ) -> None:
        self.channels = {c.strip().lower() for c in settings.notification_enabled_channels if c.strip()}
        self.topic = settings.notification_sink_topic_name
        self.connector = settings.prefix
        self.partition = dict(partition)
        self.emit = emit
        self.position: Callable[[], dict[str, Any]] = dict
        """The stream's offset now (set by the task): what a notification sent while streaming carries."""
        self.jmx: _JmxMetrics | None = None
        if "jmx" in self.channels:
            self.jmx = _JmxMetrics()
            REGISTRY.register("notifications", settings.prefix, self.jmx)

    @property
    def enabled(self) -> bool:
        return bool(self.channels)

    def initial(
        self, kind: str, data: Mapping[str, str] | None = None, offset: dict[str, Any] | None = None
    ) -> None:
        """An initial snapshot's notification; ``offset``: the snapshot's (``{}`` before it has one)."""
        if self.channels:
            self._send(self._build(INITIAL, kind, str(uuid.uuid4()), data or {}), offset or {})

    def incremental(
        self, kind: str, correlation_id: str | None, data: Mapping[str, str] | None = None
    ) -> None:
        """An incremental snapshot's notification, with the stream's offset."""
        if self.channels:
            notification = self._build(INCREMENTAL, kind, correlation_id or str(uuid.uuid4()), data or {})
            self._send(notification, self.position())

    def _build(self, aggregate: str, kind: str, id_: str, data: Mapping[str, str]) -> Notification:
        full = additional_data_order({**data, "connector_name": self.connector})
        return Notification(id_, aggregate, kind, full, int(time.time() * 1000))

    def _send(self, notification: Notification, offset: dict[str, Any]) -> None:
        if "log" in self.channels:
            log.info("[Notification Service]  %s", notification)
        if self.jmx is not None:
            self.jmx.sent += 1
            self.jmx.last = notification
        if "sink" in self.channels and self.topic:
            n = notification
            value = Struct(
                VALUE_SCHEMA, [n.id, n.type, n.aggregate_type, dict(n.additional_data), n.timestamp]
            )
            record = SourceRecord(
                topic=self.topic,
                kafka_partition=None,
                key_schema=KEY_SCHEMA,
                key=Struct(KEY_SCHEMA, [n.id]),
                value_schema=VALUE_SCHEMA,
                value=value,
                source_partition=self.partition,
                source_offset=offset,
            )
            self.emit([record])  # False once the task stops: the capture thread sees that itself
