"""Schema history: the relational model, Debezium's history records and stores, and recovery.

The DDL parser that applies statements to the model is the database's (MySQL's is
:class:`cdc.mysql.ddl.DdlParser`); recovery takes any object with its ``apply`` (:class:`DdlApplier`).

The Kafka store (``cdc.history.kafka_store.KafkaSchemaHistory``) is not re-exported here, so importing
the package needs no Kafka client; :func:`history_from_config` loads it on demand.
"""

from cdc.history.config import HistorySettings, history_config_def
from cdc.history.errors import (
    HISTORY_MISSING_MESSAGE,
    SchemaHistoryError,
    SchemaHistoryMissingError,
    UnparseableDdlError,
)
from cdc.history.factory import history_from_config
from cdc.history.model import Column, Table, TableId, Tables
from cdc.history.records import (
    CHANGE_SCHEMA,
    HistoryRecord,
    TableChange,
    TableChangeType,
    apply_table_changes,
    table_change_struct,
    table_changes_from_model,
)
from cdc.history.store import (
    DdlApplier,
    FileSchemaHistory,
    MemorySchemaHistory,
    SchemaHistory,
    recover_tables,
)

__all__ = [
    "CHANGE_SCHEMA",
    "HISTORY_MISSING_MESSAGE",
    "Column",
    "DdlApplier",
    "FileSchemaHistory",
    "HistoryRecord",
    "HistorySettings",
    "MemorySchemaHistory",
    "SchemaHistory",
    "SchemaHistoryError",
    "SchemaHistoryMissingError",
    "Table",
    "TableChange",
    "TableChangeType",
    "TableId",
    "Tables",
    "UnparseableDdlError",
    "apply_table_changes",
    "history_config_def",
    "history_from_config",
    "recover_tables",
    "table_change_struct",
    "table_changes_from_model",
]
