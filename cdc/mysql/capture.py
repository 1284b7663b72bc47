"""What the snapshot and the binlog stream share: one :class:`CaptureContext`, built by the task.

The task's ``start`` is the composition root; it builds the collaborators once (filters, schema state,
event factory, schema change events) and hands the same context to the
:class:`~cdc.mysql.snapshot.Snapshotter` and the :class:`~cdc.mysql.streaming.Streamer`, so the two
describe changes with one schema and one factory, and a test can hand either a context of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cdc.api.records import SourceRecord
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import EventFactory
from cdc.mysql.filters import Filters
from cdc.mysql.notifications import Notifier
from cdc.mysql.schema import SchemaState
from cdc.mysql.schema_events import SchemaChangeEvents

__all__ = ["CaptureContext", "Emit"]

Emit = Callable[[list[SourceRecord]], bool]
"""Hands records to the task's queue; False once the task is stopping."""


@dataclass(frozen=True)
class CaptureContext:
    settings: MySqlSettings
    schema: SchemaState
    events: EventFactory
    filters: Filters
    schema_events: SchemaChangeEvents
    emit: Emit
    stopping: threading.Event
    mariadb: bool
    notifier: Notifier | None = None
    """notification.enabled.channels: snapshot progress (cdc.mysql.notifications); None: no channel."""

    @classmethod
    def build(
        cls,
        settings: MySqlSettings,
        history: Any,
        emit: Emit,
        stopping: threading.Event,
        mariadb: bool,
        connector: str = "mysql",
    ) -> CaptureContext:
        """The collaborators for ``settings``, the schema recorded in ``history``."""
        filters = Filters(settings)
        events = EventFactory(settings, connector)
        return cls(
            settings,
            SchemaState(settings, filters, history),
            events,
            filters,
            SchemaChangeEvents(settings, events),
            emit,
            stopping,
            mariadb,
            Notifier(settings, events.partition, emit) if settings.notification_enabled_channels else None,
        )
