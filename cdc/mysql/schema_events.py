"""Records that are not row changes: the schema change topic (``<prefix>``) and heartbeats.

Schema change events carry ``SchemaChangeKey {databaseName}`` and ``SchemaChangeValue {source, ts_ms,
databaseName, schemaName, ddl, tableChanges}`` with Debezium's ``Change``/``Table``/``Column`` structs;
heartbeats carry ``ServerNameKey {serverName}`` and ``Heartbeat {ts_ms}`` and exist to move the committed
offset forward while captured tables are quiet.
"""

from __future__ import annotations

import time
from typing import Any

from cdc.api.records import SourceRecord
from cdc.api.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from cdc.history.model import Column, Table
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import EventFactory, SourcePosition

__all__ = ["SchemaChangeEvents"]

_STRINGS = SchemaBuilder.array(STRING_SCHEMA).optional().build()

COLUMN_SCHEMA = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Column")
    .version(1)
    .field("name", STRING_SCHEMA)
    .field("jdbcType", INT32_SCHEMA)
    .field("nativeType", OPTIONAL_INT32_SCHEMA)
    .field("typeName", STRING_SCHEMA)
    .field("typeExpression", OPTIONAL_STRING_SCHEMA)
    .field("charsetName", OPTIONAL_STRING_SCHEMA)
    .field("length", OPTIONAL_INT32_SCHEMA)
    .field("scale", OPTIONAL_INT32_SCHEMA)
    .field("position", INT32_SCHEMA)
    .field("optional", OPTIONAL_BOOLEAN_SCHEMA)
    .field("autoIncremented", OPTIONAL_BOOLEAN_SCHEMA)
    .field("generated", OPTIONAL_BOOLEAN_SCHEMA)
    .field("comment", OPTIONAL_STRING_SCHEMA)
    .field("defaultValueExpression", OPTIONAL_STRING_SCHEMA)
    .field("enumValues", _STRINGS)
    .build()
)

TABLE_SCHEMA = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Table")
    .version(1)
    .optional()
    .field("defaultCharsetName", OPTIONAL_STRING_SCHEMA)
    .field("primaryKeyColumnNames", _STRINGS)
    .field("columns", SchemaBuilder.array(COLUMN_SCHEMA).build())
    .field("comment", OPTIONAL_STRING_SCHEMA)
    .build()
)

CHANGE_SCHEMA = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Change")
    .version(1)
    .field("type", STRING_SCHEMA)
    .field("id", STRING_SCHEMA)
    .field("table", TABLE_SCHEMA)
    .build()
)


def _column(c: Column) -> Struct:
    return Struct(
        COLUMN_SCHEMA,
        [
            c.name,
            c.jdbc_type,
            c.native_type,
            c.type_name,
            c.type_expression,
            c.charset_name,
            c.length,
            c.scale,
            c.position,
            c.optional,
            c.auto_incremented,
            c.generated,
            c.comment,
            c.default_expression,
            list(c.enum_values) if c.enum_values else None,
        ],
    )


def _table(t: Table | None) -> Struct | None:
    if t is None:
        return None
    return Struct(
        TABLE_SCHEMA, [t.default_charset, list(t.primary_key), [_column(c) for c in t.columns], t.comment]
    )


class SchemaChangeEvents:
    def __init__(self, settings: MySqlSettings, events: EventFactory) -> None:
        self.settings = settings
        self.events = events
        self.enabled = bool(settings["include.schema.changes"])
        prefix = settings.prefix
        self.topic = prefix
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
        self.heartbeat_topic = f"{settings['topic.heartbeat.prefix']}{settings['topic.delimiter']}{prefix}"
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
        if database and not self.events.filters.database(database):
            return []
        captured = [c for c in changes if self.events.filters.table(_id(c))]
        if changes and not captured:
            return []
        ts_ms = pos.ts_sec * 1000 if pos.ts_sec else int(time.time() * 1000)
        source = self.events.source(pos, _id(captured[0]) if captured else None, ts_ms, snapshot)
        db = database or (_id(captured[0]).database if captured else "")
        change_structs = [
            Struct(CHANGE_SCHEMA, [str(c.type), _id(c).quoted(), _table(getattr(c, "table", None))])
            for c in captured
        ]
        value = Struct(
            self.value_schema, [source, int(time.time() * 1000), db or None, None, ddl, change_structs]
        )
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


def _id(change: Any) -> Any:
    from cdc.history.model import TableId

    cid = change.id
    return cid if isinstance(cid, TableId) else TableId.parse(str(cid))
