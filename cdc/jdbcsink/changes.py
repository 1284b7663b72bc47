"""A sink record → a :class:`Change`: the table, what to do (upsert, delete, truncate), the key and the row.

Flat records (Confluent's class; Debezium's too when an unwrap SMT ran before it) take the row from the
value struct; Debezium's class reads the change-event envelope itself (``op`` c/r/u → the ``after``
row, d → a delete, t → a truncate). The key comes from ``pk.mode``/``primary.key.mode``: the Kafka
coordinates, the record key (a primitive or a struct), fields of the value, or (Debezium) headers.

The per-schema work (which fields, which columns, their types) is done once per (table, key schema,
value schema) and cached in a :class:`Layout`; per record only the values are read and converted.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from cdc.api.errors import DataError
from cdc.api.records import SinkRecord
from cdc.api.schema import INT32_SCHEMA, INT64_SCHEMA, STRING_SCHEMA, Schema, Type
from cdc.api.struct import Struct
from cdc.jdbc.tables import TableId
from cdc.jdbcsink.plan import PkMode, SinkPlan
from cdc.jdbcsink.sql import SinkSql
from cdc.jdbcsink.types import ColumnSpec, column_spec, same

#: One value column's recipe: its index in the row struct, its spec, the conversion (None when the value
#: is written as it is) and the default a null takes (None: the null stays).
Step = tuple[int, ColumnSpec, Any, Any]

__all__ = ["Change", "ChangeReader", "Layout", "Op", "where"]


class Op(str, Enum):
    UPSERT = "upsert"
    DELETE = "delete"
    TRUNCATE = "truncate"


@dataclass(frozen=True)
class Layout:
    """The columns a record schema writes into one table: key columns first, then the others."""

    table: TableId
    keys: tuple[ColumnSpec, ...]
    values: tuple[ColumnSpec, ...]
    value_indexes: tuple[int, ...] = ()
    """Where each of ``values`` is in the row struct (the layout is cached per row schema)."""
    steps: tuple[Step, ...] = ()
    """How each of ``values`` is read from the row (see :data:`Step`): decided once per layout."""
    key_indexes: tuple[int, ...] = ()
    """Where each of ``keys`` is in the record key's struct (``record_key`` with a struct key) or the
    row (``record_value``), when the key mode reads one."""

    @property
    def columns(self) -> tuple[ColumnSpec, ...]:
        return self.keys + self.values


@dataclass(slots=True)
class Change:
    record: SinkRecord
    op: Op
    layout: Layout
    key: tuple[Any, ...]
    row: tuple[Any, ...]
    """The non-key values (upserts only)."""


def where(record: SinkRecord) -> str:
    """The record's coordinates as Connect's messages give them."""
    return (
        f"(topic='{record.topic}',partition={record.kafka_partition},offset={record.kafka_offset},"
        f"timestamp={record.timestamp})"
    )


_ENVELOPE_FIELDS = {"before", "after", "op", "source"}


def _is_envelope(schema: Schema | None) -> bool:
    return (
        schema is not None
        and schema.type is Type.STRUCT
        and _ENVELOPE_FIELDS.issubset({f.name for f in schema.fields})
    )


class ChangeReader:
    """Turns records into changes for one task (``plan`` and the target's SQL family)."""

    def __init__(self, plan: SinkPlan, sql: SinkSql, connector: str) -> None:
        self.plan = plan
        self.sql = sql
        self.connector = connector
        self.tz = plan.tz
        self._layouts: dict[tuple[Any, ...], Layout] = {}
        self._tables: dict[tuple[str, str, str, str], TableId] = {}
        self._by_source = "${source." in plan.table_format
        self._by_topic: dict[str, TableId] = {}
        self._envelopes: dict[Schema, tuple[int, int, int, int | None]] = {}

    # -- table names ---------------------------------------------------------------------------------
    def table_for(self, record: SinkRecord, source: Struct | None) -> TableId:
        if not self._by_source:
            # the format names no ``${source.…}``: the topic alone decides, without reading the source
            table = self._by_topic.get(record.topic)
            if table is None:
                table = self._by_topic[record.topic] = self._table_named(record, None)
            return table
        return self._table_named(record, source)

    def _table_named(self, record: SinkRecord, source: Struct | None) -> TableId:
        src = source if isinstance(source, Struct) else None
        parts = ("db", "schema", "table")
        values = {p: _field(src, p) if src is not None else "" for p in parts}
        cache_key = (record.topic, values["db"], values["schema"], values["table"])
        table = self._tables.get(cache_key)
        if table is None:
            topic = record.topic.replace(".", "_") if self.plan.dots_to_underscores else record.topic
            name = self.plan.table_format.replace("${topic}", topic)
            for p in parts:
                name = name.replace("${source." + p + "}", values[p])
            table = self._tables[cache_key] = self.sql.table_id(name)
        return table

    # -- records → changes ---------------------------------------------------------------------------
    def read(self, record: SinkRecord) -> Change | None:
        """The change ``record`` asks for; None when it asks for nothing (a tombstone with deletes off,
        a Debezium heartbeat or schema change)."""
        value, schema = record.value, record.value_schema
        if self.plan.flavour == "debezium" and _is_envelope(schema) and isinstance(value, Struct):
            return self._envelope(record, value)
        if value is None:
            if not self.plan.delete_enabled:
                return None
            table = self.table_for(record, None)
            layout = self._layout(table, record, None)
            return Change(record, Op.DELETE, layout, self._key(layout, record, None), ())
        if schema is None or schema.type is not Type.STRUCT or not isinstance(value, Struct):
            deletes = str(self.plan.delete_enabled).lower()
            shown = "null" if schema is None else schema.type.value
            raise DataError(
                f"Sink connector '{self.connector}' is configured with 'delete.enabled={deletes}' and "
                f"'pk.mode={self.plan.pk_mode.value}' and therefore requires records with a non-null Struct "
                f"value and non-null Struct schema, but found record at {where(record)} with a "
                f"{type(value).__name__} value and {shown} value schema."
            )
        table = self.table_for(record, None)
        return self._upsert(record, table, value)

    def _envelope(self, record: SinkRecord, envelope: Struct) -> Change | None:
        at = self._envelopes.get(envelope.schema)
        if at is None:
            at = self._envelopes[envelope.schema] = _envelope_indexes(envelope.schema)
        i_op, i_before, i_after, i_source = at
        values = envelope.values
        op = values[i_op]
        op = "" if op is None else str(op)
        table = self.table_for(record, values[i_source] if i_source is not None else None)
        if op in ("c", "r", "u"):
            after = values[i_after]
            if not isinstance(after, Struct):
                raise DataError(f"Change event with op={op} has no 'after' row at {where(record)}")
            return self._upsert(record, table, after)
        if op == "d":
            if not self.plan.delete_enabled:
                return None
            before = values[i_before]
            layout = self._layout(table, record, before if isinstance(before, Struct) else None)
            return Change(record, Op.DELETE, layout, self._key(layout, record, before), ())
        if op == "t":
            if not self.plan.truncate_enabled:
                return None
            return Change(record, Op.TRUNCATE, Layout(table, (), ()), (), ())
        return None  # "m" (messages) and anything newer: nothing to write

    def _upsert(self, record: SinkRecord, table: TableId, row: Struct) -> Change:
        layout = self._layout(table, record, row)
        values = row.values
        converted: list[Any] = []
        append = converted.append
        for index, spec, convert, default in layout.steps:
            raw = values[index]
            if raw is None:
                raw = default
                if raw is None:
                    append(None)
                    continue
            if convert is None:
                append(raw)
            else:
                append(self._convert(spec, raw, record))
        return Change(record, Op.UPSERT, layout, self._key(layout, record, row), tuple(converted))

    def _convert(self, spec: ColumnSpec, raw: Any, record: SinkRecord) -> Any:
        if raw is None:
            return None
        try:
            return spec.convert(raw)
        except (ValueError, TypeError, ArithmeticError, DataError) as exc:
            raise DataError(f"Column {spec.name}: cannot write {raw!r} at {where(record)}: {exc}") from exc

    # -- layouts -------------------------------------------------------------------------------------
    def _layout(self, table: TableId, record: SinkRecord, row: Struct | None) -> Layout:
        row_schema = row.schema if row is not None else None
        cache_key = (table, record.key_schema, row_schema, self._header_shape(record))
        layout = self._layouts.get(cache_key)
        if layout is None:
            layout = self._layouts[cache_key] = self._build_layout(table, record, row_schema)
        return layout

    def _header_shape(self, record: SinkRecord) -> tuple[Any, ...]:
        if self.plan.pk_mode is not PkMode.RECORD_HEADER:
            return ()
        return tuple((h.key, h.schema) for h in record.headers)

    def _spec(self, name: str, schema: Schema, key: bool) -> ColumnSpec:
        try:
            return column_spec(name, schema, self.sql.family, key, self.tz, self.sql.geometry_type)
        except DataError as exc:
            raise DataError(f"Column {name}: {exc}") from exc

    def _build_layout(self, table: TableId, record: SinkRecord, row: Schema | None) -> Layout:
        plan = self.plan
        key_specs: list[ColumnSpec] = []
        mode = plan.pk_mode
        if mode is PkMode.KAFKA:
            names = plan.pk_fields
            schemas = (STRING_SCHEMA, INT32_SCHEMA, INT64_SCHEMA)
            key_specs = [self._spec(n, s, True) for n, s in zip(names, schemas, strict=True)]
        elif mode is PkMode.RECORD_KEY:
            ks = record.key_schema
            if ks is None:
                raise DataError(
                    "A record key with a schema is required for pk.mode record_key, found none at "
                    + where(record)
                )
            if ks.type is Type.STRUCT:
                names = plan.pk_fields or tuple(f.name for f in ks.fields)
                for n in names:
                    f = ks.field(n)
                    if f is None:
                        raise DataError(f"PK field {n} not found in the record key at {where(record)}")
                    key_specs.append(self._spec(n, f.schema, True))
            else:
                if len(plan.pk_fields) != 1:
                    raise DataError(
                        "Need exactly one PK column defined since the key schema for records is a primitive "
                        f"type, defined columns are: {list(plan.pk_fields)}"
                    )
                key_specs = [self._spec(plan.pk_fields[0], ks, True)]
        elif mode is PkMode.RECORD_VALUE:
            if row is None:
                raise DataError(f"pk.mode record_value needs the row's values, and {where(record)} has none")
            names = plan.pk_fields or tuple(f.name for f in row.fields)
            for n in names:
                f = row.field(n)
                if f is None:
                    raise DataError(f"PK field {n} not found in the record value at {where(record)}")
                key_specs.append(self._spec(n, f.schema, True))
        elif mode is PkMode.RECORD_HEADER:
            wanted = set(plan.pk_fields)
            for h in record.headers:
                if (not wanted or h.key in wanted) and h.schema is not None:
                    key_specs.append(self._spec(h.key, h.schema, True))
            if not key_specs:
                raise DataError(f"No key headers {sorted(wanted)} at {where(record)}")
        key_names = {k.name for k in key_specs}
        value_specs: list[ColumnSpec] = []
        indexes: list[int] = []
        steps: list[Step] = []
        defaults = plan.replace_null_with_default
        if row is not None:
            for f in row.fields:
                if f.name in key_names or not self._wanted(record.topic, f.name):
                    continue
                spec = self._spec(f.name, f.schema, False)
                value_specs.append(spec)
                indexes.append(f.index)
                default = f.schema.default if defaults else None
                steps.append((f.index, spec, None if spec.convert is same else spec.convert, default))
        key_struct = {PkMode.RECORD_KEY: record.key_schema, PkMode.RECORD_VALUE: row}.get(mode)
        key_indexes: tuple[int, ...] = ()
        if key_struct is not None and key_struct.type is Type.STRUCT:
            found = [key_struct.field(k.name) for k in key_specs]
            key_indexes = tuple(f.index for f in found if f is not None)
            if len(key_indexes) != len(key_specs):
                key_indexes = ()
        return Layout(table, tuple(key_specs), tuple(value_specs), tuple(indexes), tuple(steps), key_indexes)

    def _wanted(self, topic: str, name: str) -> bool:
        include, exclude = self.plan.field_include, self.plan.field_exclude
        qualified = f"{topic}:{name}"
        if include and name not in include and qualified not in include:
            return False
        return not (exclude and (name in exclude or qualified in exclude))

    def _key(self, layout: Layout, record: SinkRecord, row: Any) -> tuple[Any, ...]:
        mode = self.plan.pk_mode
        if mode is PkMode.NONE:
            return ()
        if mode is PkMode.KAFKA:
            return (record.topic, record.kafka_partition, record.kafka_offset)
        raw: list[Any]
        if mode is PkMode.RECORD_KEY:
            key = record.key
            if isinstance(key, Struct):
                if layout.key_indexes and key.schema is record.key_schema:
                    raw = [key.values[i] for i in layout.key_indexes]
                    if None in raw:  # Struct.get gives a field's default for a null
                        raw = [key.get(k.name) for k in layout.keys]
                else:
                    raw = [key.get(k.name) for k in layout.keys]
            else:
                raw = [key]
        elif mode is PkMode.RECORD_VALUE:
            if not isinstance(row, Struct):
                raise DataError(f"pk.mode record_value needs the row's values, and {where(record)} has none")
            raw = [row.get(k.name) for k in layout.keys]
        else:
            found = {h.key: h.value for h in record.headers}
            raw = [found.get(k.name) for k in layout.keys]
        out = []
        for spec, value in zip(layout.keys, raw, strict=True):
            if spec.convert is same and value is not None:
                out.append(value)
                continue
            if value is None:
                raise DataError(
                    f"Key column {spec.name} of table {layout.table.unquoted()} is null at {where(record)} "
                    f"(pk.mode {mode.value} needs it)"
                )
            out.append(self._convert(spec, value, record))
        return tuple(out)


def _envelope_indexes(schema: Schema) -> tuple[int, int, int, int | None]:
    """Where ``op``, ``before``, ``after`` and ``source`` are in an envelope schema (``source`` may be
    absent; the others are there, or the schema is no envelope)."""

    def index(name: str) -> int | None:
        f = schema.field(name)
        return None if f is None else f.index

    i_op, i_before, i_after = index("op"), index("before"), index("after")
    assert i_op is not None and i_before is not None and i_after is not None
    return i_op, i_before, i_after, index("source")


def _field(struct: Struct | None, name: str) -> str:
    if struct is None or struct.schema.field(name) is None:
        return ""
    value = struct.get(name)
    return "" if value is None else str(value)
