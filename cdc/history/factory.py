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
    LEGACY_PREFIX,
    MEMORY_HISTORY_CLASSES,
    PREFIX,
    HistorySettings,
)
from cdc.history.errors import SchemaHistoryError
from cdc.history.store import FileSchemaHistory, MemorySchemaHistory, SchemaHistory

__all__ = ["history_class_error", "history_file", "history_from_config"]


def history_from_config(props: Mapping[str, Any]) -> SchemaHistory:
    """The store a connector config asks for (``schema.history.internal`` or 1.x ``database.history``)."""
    settings = HistorySettings.from_props(props)
    cls = settings.history_class
    if cls in KAFKA_HISTORY_CLASSES or cls.endswith("KafkaSchemaHistory"):
        from cdc.history.kafka_store import KafkaSchemaHistory

        return KafkaSchemaHistory(settings)
    if _is_file_history(cls):
        if not settings.file_filename:
            raise SchemaHistoryError("schema.history.internal.file.filename is required for the file history")
        return FileSchemaHistory(settings.file_filename, settings)
    if cls in MEMORY_HISTORY_CLASSES or cls.endswith("MemorySchemaHistory"):
        return MemorySchemaHistory(settings)
    raise SchemaHistoryError(f"Unsupported schema history implementation: {cls}")


def history_class_error(props: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the key, the validate error) when the config names a schema history cdc does not implement (one of
    Debezium's other stores: S3, Redis, JDBC, RocketMQ, Azure blob … or a class of the user's), else None;
    the task would fail at start with :class:`SchemaHistoryError` otherwise."""
    key = PREFIX if props.get(PREFIX) else LEGACY_PREFIX
    cls = str(props.get(key) or KAFKA_HISTORY_CLASSES[0]).strip()
    known = (*KAFKA_HISTORY_CLASSES, *FILE_HISTORY_CLASSES, *MEMORY_HISTORY_CLASSES)
    if cls in known or cls.endswith(("KafkaSchemaHistory", "FileSchemaHistory", "MemorySchemaHistory")):
        return None
    return key, (
        f"The '{key}' value '{cls}' is not supported by cdc: only Debezium's Kafka, file and memory schema "
        f"histories are implemented ({KAFKA_HISTORY_CLASSES[0]}, {FILE_HISTORY_CLASSES[0]}, "
        f"{MEMORY_HISTORY_CLASSES[0]})"
    )


def _is_file_history(cls: str) -> bool:
    return cls in FILE_HISTORY_CLASSES or cls.endswith("FileSchemaHistory")


def history_file(props: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the key naming it, the path) of the file a config's file-based history writes, else None; read
    from the raw config (``schema.history.internal.*`` winning over 1.x ``database.history.*``), so that
    it never raises (:meth:`cdc.api.connector.Connector.files`)."""
    cls = str(props.get(PREFIX) or props.get(LEGACY_PREFIX) or KAFKA_HISTORY_CLASSES[0]).strip()
    if not _is_file_history(cls):
        return None
    for key in (f"{PREFIX}.file.filename", f"{LEGACY_PREFIX}.file.filename"):
        path = str(props.get(key) or "")
        if path.strip():
            return key, path  # as the store opens it (STRING values keep their spaces)
    return None
