"""Debezium's change events: per-table precompiled schemas and the records built from rows.

A :class:`TableSchema` is made once per table version (after each DDL): the key and value schemas
(``<prefix>.<db>.<table>.Key``/``.Value``), the envelope (``….Envelope``: ``before, after, source,
transaction, op, ts_ms, ts_us, ts_ns``) and one converter per column. Turning a row into a Struct is
then a single list comprehension. :class:`EventFactory` adds the ``source`` block and emits the records
of each operation, including delete tombstones and the delete + tombstone + create of a key change.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cdc import __version__
from cdc.api.records import Headers, SourceRecord
from cdc.api.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from cdc.history.model import Table, TableId
from cdc.mysql.columns import ColumnRules
from cdc.mysql.config import MySqlSettings
from cdc.mysql.converters import CustomConverters
from cdc.mysql.converting import ConvertingFailures
from cdc.mysql.filters import Filters
from cdc.mysql.types import ColumnMapping, TypeMapper

__all__ = ["SOURCE_SCHEMA", "EventFactory", "SourcePosition", "TableSchema", "topic_name"]

SNAPSHOT_ENUM = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"


def _source_schema(connector: str) -> Schema:
    snapshot = (
        SchemaBuilder.string()
        .name("io.debezium.data.Enum")
        .version(1)
        .parameter("allowed", SNAPSHOT_ENUM)
        .default_value("false")
        .optional()
        .build()
    )
    return (
        SchemaBuilder.struct()
        .name(f"io.debezium.connector.{connector}.Source")
        .version(1)
        .field("version", STRING_SCHEMA)
        .field("connector", STRING_SCHEMA)
        .field("name", STRING_SCHEMA)
        .field("ts_ms", INT64_SCHEMA)
        .field("snapshot", snapshot)
        .field("db", STRING_SCHEMA)
        .field("sequence", OPTIONAL_STRING_SCHEMA)
        .field("ts_us", OPTIONAL_INT64_SCHEMA)
        .field("ts_ns", OPTIONAL_INT64_SCHEMA)
        .field("table", OPTIONAL_STRING_SCHEMA)
        .field("server_id", INT64_SCHEMA)
        .field("gtid", OPTIONAL_STRING_SCHEMA)
        .field("file", STRING_SCHEMA)
        .field("pos", INT64_SCHEMA)
        .field("row", INT32_SCHEMA)
        .field("thread", OPTIONAL_INT64_SCHEMA)
        .field("query", OPTIONAL_STRING_SCHEMA)
        .build()
    )


SOURCE_SCHEMA = _source_schema("mysql")

TRANSACTION_SCHEMA = (
    SchemaBuilder.struct()
    .name("event.block")
    .version(1)
    .optional()
    .field("id", STRING_SCHEMA)
    .field("total_order", INT64_SCHEMA)
    .field("data_collection_order", INT64_SCHEMA)
    .build()
)


def topic_name(settings: MySqlSettings, table_id: TableId) -> str:
    """The table's topic under ``topic.naming.strategy`` (:mod:`cdc.mysql.naming`)."""
    return settings.naming.data_change_topic(table_id)


def _documented(m: ColumnMapping) -> ColumnMapping:
    """``m`` with the column's comment as its field schema's doc (include.schema.comments)."""
    if not m.column.comment:
        return m
    out = ColumnMapping(
        m.column, SchemaBuilder.from_schema(m.schema).doc(m.column.comment).build(), m.convert, m.null
    )
    out.custom = m.custom
    return out


@dataclass(frozen=True)
class SourcePosition:
    """Where a change came from, for the ``source`` block (and offsets)."""

    file: str
    pos: int
    server_id: int = 0
    ts_sec: int = 0
    gtid: str | None = None
    row: int = 0
    thread: int | None = None
    query: str | None = None


class TableSchema:
    """Everything needed to turn rows of one table version into Structs, precompiled."""

    def __init__(
        self,
        table: Table,
        settings: MySqlSettings,
        mapper: TypeMapper,
        filters: Filters,
        key_columns: Sequence[str] | None,
        source_schema: Schema,
        adjust: Callable[[TableId, ColumnMapping], ColumnMapping] | None = None,
    ) -> None:
        self.table = table
        self.id = table.id
        self.topic = topic_name(settings, table.id)
        base = self.topic  # Debezium's recordSchemaPrefix: the schemas are named after the topic
        schema_name, field_name = settings.schema_name, settings.field_name

        included = [c for c in table.columns if filters.column(table.id, c.name)]
        self.mappings: list[ColumnMapping] = [mapper.map(c) for c in included]
        if adjust is not None:  # custom converters and column rules
            self.mappings = [adjust(table.id, m) for m in self.mappings]
        names = self.column_names = [c.name for c in table.columns]
        self.value_index = [names.index(m.column.name) for m in self.mappings]
        if settings.include_schema_comments:  # Debezium's addField: the column's COMMENT is the field's doc
            self.mappings = [_documented(m) for m in self.mappings]
        value_builder = SchemaBuilder.struct().name(schema_name(base + ".Value"))
        for m in self.mappings:
            value_builder.field(field_name(m.column.name), m.schema)
        self.value_schema = value_builder.optional().build()
        keys = list(key_columns) if key_columns else list(table.primary_key)
        key_mappings = [m for m in self.mappings if m.column.name in keys]
        key_mappings.sort(key=lambda m: keys.index(m.column.name))
        if key_mappings:
            kb = SchemaBuilder.struct().name(schema_name(base + ".Key"))
            for m in key_mappings:
                schema = m.schema
                # a primary key column is NOT NULL (whatever its DDL said); a message.key.columns column
                # keeps its own optionality, as Debezium's key schema does (a NULL there is a null field)
                if schema.optional and m.column.name in table.primary_key:
                    schema = SchemaBuilder.from_schema(schema).required().build()
                kb.field(field_name(m.column.name), schema)
            self.key_schema: Schema | None = kb.build()
            self.key_index = [names.index(m.column.name) for m in key_mappings]
            self.key_converters = [m.convert for m in key_mappings]
            self._key_nulls = [m.null for m in key_mappings]
        else:
            self.key_schema = None
            self.key_index = []
            self.key_converters = []
            self._key_nulls = []
        self.envelope = (
            SchemaBuilder.struct()
            .name(schema_name(base + ".Envelope"))
            .version(2)
            .field("before", self.value_schema)
            .field("after", self.value_schema)
            .field("source", source_schema)
            .field("transaction", TRANSACTION_SCHEMA)
            .field("op", STRING_SCHEMA)
            .field("ts_ms", OPTIONAL_INT64_SCHEMA)
            .field("ts_us", OPTIONAL_INT64_SCHEMA)
            .field("ts_ns", OPTIONAL_INT64_SCHEMA)
            .build()
        )
        # (row index, converter or None, the value of a NULL: None, or the fallback of a NOT NULL column)
        self._converters = [
            (i, m.convert, m.null) for i, m in zip(self.value_index, self.mappings, strict=True)
        ]
        self._key_converters = list(zip(self.key_index, self.key_converters, self._key_nulls, strict=True))
        self._value_values = _row_function(self._converters)
        mode = settings.event_converting_failure_handling_mode
        self._failures = ConvertingFailures(mode, table.id, self.mappings)  # when a converter raises
        # before/after → whether the key columns differ (generated: one comparison per key column)
        changed = " or ".join(f"b[{i}] != a[{i}]" for i in self.key_index) or "False"
        namespace: dict[str, Any] = {}
        exec(compile(f"def key_changed(b, a):\n    return {changed}\n", "<key-changed>", "exec"), namespace)
        self.key_changed: Callable[[Sequence[Any], Sequence[Any]], bool] = namespace["key_changed"]
        self._key_values = _row_function(self._key_converters)

    def value(self, row: Sequence[Any]) -> Struct:
        """A Value struct from a row given in table column order."""
        try:
            return Struct(self.value_schema, self._value_values(row))
        except Exception:  # event.converting.failure.handling.mode decides, column by column
            return Struct(self.value_schema, self._failures.values(row, self._converters))

    def key(self, row: Sequence[Any]) -> Struct | None:
        if self.key_schema is None:
            return None
        return Struct(self.key_schema, self._key_values(row))


def _row_function(converters: Sequence[tuple[int, Any, Any]]) -> Callable[[Sequence[Any]], list[Any]]:
    """``row → [converted values]`` as one generated list display: per column its row index, converter
    and NULL value written inline (this runs for every image of every change event)."""
    namespace: dict[str, Any] = {}
    items: list[str] = []
    for k, (i, conv, null) in enumerate(converters):
        null_expr = "None"
        if null is not None:
            namespace[f"n{k}"] = null
            null_expr = f"n{k}"
        if conv is None:
            items.append(f"r[{i}]" if null is None else f"(r[{i}] if r[{i}] is not None else {null_expr})")
        else:
            namespace[f"c{k}"] = conv
            items.append(f"(c{k}(r[{i}]) if r[{i}] is not None else {null_expr})")
    source = "def values(r):\n    return [" + ", ".join(items) + "]\n"
    exec(compile(source, "<table-schema-row>", "exec"), namespace)  # generated from column positions only
    function: Callable[[Sequence[Any]], list[Any]] = namespace["values"]
    return function


def parse_key_columns(spec: str) -> dict[str, list[str]]:
    """``message.key.columns``: ``db.t:c1,c2;db.t2:c`` → {regex of table: columns}."""
    out: dict[str, list[str]] = {}
    for part in spec.split(";"):
        if ":" not in part:
            continue
        table, cols = part.split(":", 1)
        out[table.strip()] = [c.strip() for c in cols.split(",") if c.strip()]
    return out


class EventFactory:
    """Builds Debezium's records for a connector: one place for ``source`` and the envelope."""

    def __init__(self, settings: MySqlSettings, connector: str = "mysql") -> None:
        self.settings = settings
        self.connector = connector
        self.source_schema = _source_schema(connector)
        row = self.source_schema.field("row")
        assert row is not None
        self._row_field = row.index
        self.mapper = TypeMapper(settings)
        self.converters = CustomConverters(settings.raw, settings.converters)
        self.column_rules = ColumnRules(
            settings.raw, settings.column_propagate_source_type, settings.datatype_propagate_source_type
        )
        self.filters = Filters(settings)
        self.partition = {"server": settings.prefix}
        self.tombstones = settings.tombstones_on_delete
        self._key_columns = parse_key_columns(settings.message_key_columns)
        self._schemas: dict[TableId, TableSchema] = {}
        self._skipped = settings.skipped_op_codes

    # -- table schemas ---------------------------------------------------------------------------------
    def schema_for(self, table: Table) -> TableSchema:
        cached = self._schemas.get(table.id)
        if cached is not None and cached.table is table:
            return cached
        key_cols = None
        for pattern, cols in self._key_columns.items():
            if re.fullmatch(pattern, str(table.id)):
                key_cols = cols
                break
        adjust = self._adjust if self.converters or self.column_rules else None
        ts = TableSchema(
            table, self.settings, self.mapper, self.filters, key_cols, self.source_schema, adjust
        )
        self._schemas[table.id] = ts
        return ts

    def _adjust(self, table_id: TableId, mapping: ColumnMapping) -> ColumnMapping:
        column = mapping.column
        if self.converters:
            default = None
            if column.has_default and column.default_expression not in (None, "NULL", "null"):
                default = str(column.default_expression).strip("'\"")
            mapping = self.converters.apply(table_id, mapping, default)
        return self.column_rules.apply(table_id, mapping)

    def forget(self, table_id: TableId) -> None:
        self._schemas.pop(table_id, None)

    # -- records ---------------------------------------------------------------------------------------
    def source(
        self,
        pos: SourcePosition,
        table_id: TableId | None,
        ts_ms: int,
        snapshot: str | None,
        database: str = "",
    ) -> Struct:
        """The ``source`` block; ``database`` names the database of an event without a table (DDL)."""
        return Struct(self.source_schema, self._source_values(pos, table_id, ts_ms, snapshot, database))

    def _source_values(
        self, pos: SourcePosition, table_id: TableId | None, ts_ms: int, snapshot: str | None, database: str
    ) -> list[Any]:
        return [
            __version__,
            self.connector,
            self.settings.prefix,
            ts_ms,
            snapshot,
            table_id.database if table_id else database,
            None,
            ts_ms * 1000,
            ts_ms * 1_000_000,
            table_id.table if table_id else None,
            pos.server_id,
            pos.gtid,
            pos.file,
            pos.pos,
            pos.row,
            pos.thread,
            pos.query,
        ]

    def snapshot_sources(self, pos: SourcePosition, table_id: TableId) -> Callable[[int, str], Struct]:
        """``source(ts_ms, marker)`` for a snapshot's reads of one table: one block per fetch and marker.

        Records never mutate a source block (a marker change copies it), and building it per row costs as
        much as the row's own value struct; the few latest blocks are kept.
        """
        blocks: dict[tuple[int, str], Struct] = {}

        def source(ts_ms: int, marker: str) -> Struct:
            block = blocks.get((ts_ms, marker))
            if block is None:
                if len(blocks) > 8:
                    blocks.clear()
                block = blocks[(ts_ms, marker)] = self.source(pos, table_id, ts_ms, marker)
            return block

        return source

    def row_sources(self, pos: SourcePosition, table_id: TableId, ts_ms: int) -> Callable[[int], Struct]:
        """``source(row)`` for the rows of one binlog rows event: the block's values are built once per event,
        a row copies them with its own ``row`` (the row's index in the event)."""
        schema = self.source_schema
        template = self._source_values(pos, table_id, ts_ms, None, "")  # the values only: no struct per event
        row_field = self._row_field

        def source(row: int) -> Struct:
            values = template.copy()
            values[row_field] = row
            return Struct(schema, values)

        return source

    def _envelope(
        self,
        ts: TableSchema,
        before: Struct | None,
        after: Struct | None,
        source: Struct,
        op: str,
        transaction: Struct | None = None,
    ) -> Struct:
        now_ns = time.time_ns()
        return Struct(
            ts.envelope, [before, after, source, transaction, op, now_ns // 1_000_000, now_ns // 1000, now_ns]
        )

    def _record(
        self,
        ts: TableSchema,
        key: Struct | None,
        value: Struct | None,
        offset: dict[str, Any],
        headers: Headers | None = None,
    ) -> SourceRecord:
        return SourceRecord(
            topic=ts.topic,
            kafka_partition=None,
            key_schema=ts.key_schema,
            key=key,
            value_schema=ts.envelope if value is not None else None,
            value=value,
            headers=headers if headers is not None else Headers(),
            source_partition=self.partition,
            source_offset=offset,
        )

    def read(
        self, ts: TableSchema, row: Sequence[Any], source: Struct, offset: dict[str, Any]
    ) -> SourceRecord:
        after = ts.value(row)
        return self._record(ts, ts.key(row), self._envelope(ts, None, after, source, "r"), offset)

    def read_keyed(
        self, ts: TableSchema, row: Sequence[Any], key: Struct | None, source: Struct, offset: dict[str, Any]
    ) -> SourceRecord:
        """:meth:`read` of a row whose key struct is already built (``ts.key(row)``)."""
        return self._record(ts, key, self._envelope(ts, None, ts.value(row), source, "r"), offset)

    def create(
        self,
        ts: TableSchema,
        row: Sequence[Any],
        source: Struct,
        offset: dict[str, Any],
        transaction: Struct | None = None,
    ) -> list[SourceRecord]:
        if "c" in self._skipped:
            return []
        after = ts.value(row)
        return [
            self._record(ts, ts.key(row), self._envelope(ts, None, after, source, "c", transaction), offset)
        ]

    def update(
        self,
        ts: TableSchema,
        before_row: Sequence[Any],
        after_row: Sequence[Any],
        source: Struct,
        offset: dict[str, Any],
        transaction: Struct | None = None,
    ) -> list[SourceRecord]:
        if "u" in self._skipped:
            return []
        if not ts.key_changed(before_row, after_row):
            old_key = new_key = ts.key(after_row)  # the usual case: one key struct
        else:
            old_key, new_key = ts.key(before_row), ts.key(after_row)
        before, after = ts.value(before_row), ts.value(after_row)
        if old_key is new_key or old_key == new_key:  # `is` first: Struct.__eq__ walks schema and values
            return [
                self._record(ts, new_key, self._envelope(ts, before, after, source, "u", transaction), offset)
            ]
        # A key change: delete (old key) + tombstone + create (new key), with the other key in a header.
        out = [
            self._record(
                ts,
                old_key,
                self._envelope(ts, before, None, source, "d", transaction),
                offset,
                Headers().add("__debezium.newkey", new_key, ts.key_schema),
            )
        ]
        if self.tombstones:
            newkey = Headers().add("__debezium.newkey", new_key, ts.key_schema)
            out.append(self._record(ts, old_key, None, offset, newkey))
        out.append(
            self._record(
                ts,
                new_key,
                self._envelope(ts, None, after, source, "c", transaction),
                offset,
                Headers().add("__debezium.oldkey", old_key, ts.key_schema),
            )
        )
        return out

    def delete(
        self,
        ts: TableSchema,
        row: Sequence[Any],
        source: Struct,
        offset: dict[str, Any],
        transaction: Struct | None = None,
    ) -> list[SourceRecord]:
        if "d" in self._skipped:
            return []
        key = ts.key(row)
        out = [
            self._record(ts, key, self._envelope(ts, ts.value(row), None, source, "d", transaction), offset)
        ]
        if self.tombstones:
            out.append(self._record(ts, key, None, offset))
        return out

    def truncate(self, ts: TableSchema, source: Struct, offset: dict[str, Any]) -> list[SourceRecord]:
        if "t" in self._skipped:
            return []
        value = self._envelope(ts, None, None, source, "t")
        return [
            SourceRecord(
                topic=ts.topic,
                kafka_partition=None,
                key_schema=None,
                key=None,
                value_schema=ts.envelope,
                value=value,
                source_partition=self.partition,
                source_offset=offset,
            )
        ]
