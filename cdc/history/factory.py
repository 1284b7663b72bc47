"""The schema history store a connector config asks for.

Apart from :mod:`cdc.history.store` so that the stores' interface does not import its Kafka backend
(which imports the interface): the Kafka store is loaded only when a config names it, so the package
needs no Kafka client otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.history.config import (
    FILE_HISTORY_CLASSES,
    KAFKA_HISTORY_CLASSES,
    MEMORY_HISTORY_CLASSES,
    HistorySettings,
)
from cdc.history.errors import SchemaHistoryError
from cdc.history.store import FileSchemaHistory, MemorySchemaHistory, SchemaHistory

__all__ = ["history_from_config"]


def history_from_config(props: Mapping[str, Any]) -> SchemaHistory:
    """The store a connector config asks for (``schema.history.internal`` or 1.x ``database.history``)."""
    settings = HistorySettings.from_props(props)
    cls = settings.history_class
    if cls in KAFKA_HISTORY_CLASSES or cls.endswith("KafkaSchemaHistory"):
        from cdc.history.kafka_store import KafkaSchemaHistory

        return KafkaSchemaHistory(settings)
    if cls in FILE_HISTORY_CLASSES or cls.endswith("FileSchemaHistory"):
        if not settings.file_filename:
            raise SchemaHistoryError("schema.history.internal.file.filename is required for the file history")
        return FileSchemaHistory(settings.file_filename, settings)
    if cls in MEMORY_HISTORY_CLASSES or cls.endswith("MemorySchemaHistory"):
        return MemorySchemaHistory(settings)
    raise SchemaHistoryError(f"Unsupported schema history implementation: {cls}")
