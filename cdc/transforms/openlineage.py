"""Debezium's ``io.debezium.transforms.openlineage.OpenLineage``: the output datasets of the lineage.

A pass-through transform (records leave unchanged) that, for a source connector with
``openlineage.integration.enabled``, sends a RUNNING event with the record's topic as an output dataset the
first time it sees the topic with a value schema not seen before: namespace ``kafka://<bootstrap>``
(``openlineage.integration.dataset.kafka.bootstrap.servers``), the value schema's fields (nested for
structs, Connect's type names), ``datasetType`` STREAM. It finds its task's emitter through the record's
``__debezium.context.*`` headers (``extended.headers.enabled``, on by default), as Debezium's does; a record
without them, or of a task whose integration is off, passes untouched (Debezium fails the record then).
Tombstones, schemaless records and Debezium's own (schema changes, heartbeats, notifications: Debezium's
``SmtManager.isValidRecordForLineage``) pass untouched too.
"""

from __future__ import annotations

from typing import Any

from cdc.transforms._util import BaseTransformation, R

__all__ = ["OpenLineage"]

_PREFIX = "__debezium.context."


def _header(record: Any, name: str) -> str | None:
    header = record.headers.last_with_name(_PREFIX + name) if record.headers is not None else None
    return None if header is None or header.value is None else str(header.value)


def _not_for_lineage(name: str | None) -> bool:
    """Debezium's ``SmtManager.isValidRecordForLineage``: schema changes, heartbeats and notifications are
    not datasets (their topics are the connector's own)."""
    if name is None:
        return False
    return name.endswith((".SchemaChangeValue", ".SchemaChangeKey")) or name.endswith(
        ("io.debezium.connector.common.Heartbeat", "io.debezium.connector.common.Notification")
    )


class OpenLineage(BaseTransformation[R]):
    """``io.debezium.transforms.openlineage.OpenLineage`` (see the module docstring); no keys."""

    def apply(self, record: R) -> R:
        schema = record.value_schema
        if record.value is None or schema is None or not schema.fields or _not_for_lineage(schema.name):
            return record
        from cdc.openlineage.emitter import emitter_for

        emitter = emitter_for(_header(record, "connectorLogicalName"), _header(record, "taskId"))
        if emitter is not None:
            emitter.topic(record.topic, schema)
        return record

    def __repr__(self) -> str:
        return "OpenLineage{}"
