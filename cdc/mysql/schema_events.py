"""Records that are not row changes: the schema change topic (``<prefix>``) and heartbeats.

Schema change events carry ``SchemaChangeKey {databaseName}`` and ``SchemaChangeValue {source, ts_ms,
databaseName, schemaName, ddl, tableChanges}`` with Debezium's ``Change``/``Table``/``Column`` structs;
heartbeats carry ``ServerNameKey {serverName}`` and ``Heartbeat {ts_ms}`` and exist to move the committed
offset forward while captured tables are quiet.
"""

from __future__ import annotations

import re
import time
from typing import Any

from cdc.api.records import OFFSET_ONLY_TOPIC, SourceRecord
from cdc.api.schema import (
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from cdc.history.records import CHANGE_SCHEMA, table_change_struct
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import EventFactory, SourcePosition

__all__ = ["SchemaChangeEvents"]


class SchemaChangeEvents:
    def __init__(self, settings: MySqlSettings, events: EventFactory) -> None:
        self.settings = settings
        self.events = events
        self.enabled = settings.include_schema_changes
        self.topic = settings.naming.schema_change_topic()
        self.key_schema = (
            SchemaBuilder.struct()
            .name(f"io.debezium.connector.{events.connector}.SchemaChangeKey")
            .version(1)
            .field("databaseName", STRING_SCHEMA)
            .build()
        )
        self.value_schema = (
            SchemaBuilder.struct()
            .name(f"io.debezium.connector.{events.connector}.SchemaChangeValue")
            .version(1)
            .field("source", events.source_schema)
            .field("ts_ms", INT64_SCHEMA)
            .field("databaseName", OPTIONAL_STRING_SCHEMA)
            .field("schemaName", OPTIONAL_STRING_SCHEMA)
            .field("ddl", OPTIONAL_STRING_SCHEMA)
            .field("tableChanges", SchemaBuilder.array(CHANGE_SCHEMA).build())
            .build()
        )
        self.heartbeat_topic = settings.naming.heartbeat_topic()
        self.heartbeat_key_schema = (
            SchemaBuilder.struct()
            .name("io.debezium.connector.common.ServerNameKey")
            .version(1)
            .field("serverName", STRING_SCHEMA)
            .build()
        )
        self.heartbeat_value_schema = (
            SchemaBuilder.struct()
            .name("io.debezium.connector.common.Heartbeat")
            .version(1)
            .field("ts_ms", INT64_SCHEMA)
            .build()
        )

    def records(
        self,
        ddl: str,
        database: str | None,
        changes: list[Any],
        pos: SourcePosition,
        offset: dict[str, Any],
        snapshot: str | None = None,
    ) -> list[SourceRecord]:
        if not self.enabled:
            return []
        if database is None and not changes:
            database = ddl_database(ddl)  # e.g. DROP TABLE IF EXISTS other.t run without a default database
        # Debezium's EventDispatcher drops the schema change event of a table the filters exclude only when
        # schema.history.internal.store.only.captured.tables.ddl is on: otherwise the event (snapshot and
        # streaming alike) is written as the history records it (seen side by side, `make compat`).
        if self.settings.history_store_only_captured_tables_ddl:
            captured = [c for c in changes if self.events.filters.table(_id(c))]
        else:
            captured = list(changes)
        if changes and not captured:
            return []
        ts_ms = pos.ts_sec * 1000 if pos.ts_sec else int(time.time() * 1000)
        # the table's database when the statement names one (CREATE TABLE other.t run in db), as Debezium
        db = _id(captured[0]).database if captured else (database or "")
        # Debezium skips the event of a database the filters exclude only under
        # schema.history.internal.store.only.captured.databases.ddl (its skipSchemaChangeEvent): by default
        # the DDL of every database is written, as the history records it
        only_captured = self.settings.history_store_only_captured_databases_ddl
        if db and only_captured and not self.events.filters.database(db):
            return []
        source = self.events.source(pos, _id(captured[0]) if captured else None, ts_ms, snapshot, db)
        change_structs = [table_change_struct(c) for c in captured]
        value = Struct(self.value_schema, [source, int(time.time() * 1000), db, None, ddl, change_structs])
        key = Struct(self.key_schema, [db or ""])
        return [
            SourceRecord(
                topic=self.topic,
                kafka_partition=0,
                key_schema=self.key_schema,
                key=key,
                value_schema=self.value_schema,
                value=value,
                source_partition=self.events.partition,
                source_offset=offset,
            )
        ]

    def offset_only(self, offset: dict[str, Any]) -> SourceRecord:
        """A record that only makes ``offset`` durable (no topic is written; see ``OFFSET_ONLY_TOPIC``)."""
        return SourceRecord(
            topic=OFFSET_ONLY_TOPIC,
            kafka_partition=None,
            key_schema=None,
            key=None,
            value_schema=None,
            value=None,
            source_partition=self.events.partition,
            source_offset=offset,
        )

    def heartbeat(self, offset: dict[str, Any]) -> SourceRecord:
        key = Struct(self.heartbeat_key_schema, [self.settings.prefix])
        value = Struct(self.heartbeat_value_schema, [int(time.time() * 1000)])
        return SourceRecord(
            topic=self.heartbeat_topic,
            kafka_partition=None,
            key_schema=self.heartbeat_key_schema,
            key=key,
            value_schema=self.heartbeat_value_schema,
            value=value,
            source_partition=self.events.partition,
            source_offset=offset,
        )


_DDL_DATABASE = re.compile(
    r"\b(?:(DATABASE|SCHEMA)|TABLE|VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?"
    r"(`(?:[^`]|``)+`|[\w$]+)\s*(\.)?",
    re.IGNORECASE,
)


def ddl_database(ddl: str) -> str | None:
    """The database a DDL statement names (``db.t`` or ``CREATE DATABASE db``), or None."""
    m = _DDL_DATABASE.search(ddl)
    if m is None or not (m.group(1) or m.group(3)):
        return None
    name = m.group(2)
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def _id(change: Any) -> Any:
    from cdc.history.model import TableId

    cid = change.id
    return cid if isinstance(cid, TableId) else TableId.parse(str(cid))
