"""Debezium's schema history records, and the table changes they (and the schema change topic) carry.

A record in the history topic is one JSON document (reference §8.2)::

    {"source":{…},"position":{…},"ts_ms":…,"databaseName":…,"schemaName":…,"ddl":…,"tableChanges":[…]}

``databaseName``/``schemaName``/``ddl`` are left out when unset; ``tableChanges`` is always written. A
change is ``{type, id, previousId?, table, comment}`` where ``table`` is
``{defaultCharsetName, primaryKeyColumnNames, columns, attributes}`` and each column
``{name, jdbcType, nativeType?, typeName, typeExpression, charsetName, length?, scale?, position, optional,
autoIncremented, generated, comment, hasDefaultValue, defaultValueExpression?, enumValues}`` — the field
order of Debezium's ``JsonTableChangeSerializer``. Debezium keeps ENUM/SET labels as their SQL literals
(``'a'``), so labels are quoted here on the way out and unquoted on the way in; the model holds the
plain labels. Debezium always writes ``enumValues`` (an empty list for other types).

The schema change topic (§5.5) carries the same changes as Connect structs
(``io.debezium.connector.schema.Change``): :data:`CHANGE_SCHEMA` and :func:`table_change_struct`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cdc.api.schema import (
    INT32_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from cdc.history.model import Column, Table, TableId, Tables

__all__ = [
    "CHANGE_SCHEMA",
    "HistoryRecord",
    "TableChange",
    "TableChangeType",
    "apply_table_changes",
    "column_from_json",
    "column_to_json",
    "quote_enum_label",
    "table_change_struct",
    "table_changes_from_model",
    "unquote_enum_label",
]


class TableChangeType(StrEnum):
    CREATE = "CREATE"
    ALTER = "ALTER"
    DROP = "DROP"


@dataclass(frozen=True)
class TableChange:
    """One table created, altered (``previous_id`` set on a rename) or dropped."""

    type: TableChangeType
    id: TableId
    table: Table
    previous_id: TableId | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"type": self.type.value, "id": self.id.quoted()}
        if self.type is TableChangeType.DROP:
            return doc  # Debezium's DROP change names the table only
        if self.previous_id is not None:
            doc["previousId"] = self.previous_id.quoted()
        doc["table"] = _table_to_json(self.table)
        doc["comment"] = self.table.comment
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TableChange:
        type_ = TableChangeType(doc["type"])
        table_id = TableId.parse(doc["id"])
        previous = TableId.parse(doc["previousId"]) if doc.get("previousId") else None
        tdoc = doc.get("table") or {}
        if type_ is TableChangeType.DROP and not tdoc.get("columns"):
            table = Table(table_id, ())
        else:
            # Debezium writes the table comment beside "table" but reads it from inside; accept both
            comment = tdoc.get("comment", doc.get("comment"))
            table = _table_from_json(table_id, tdoc, comment)
        return cls(type_, table_id, table, previous)


# -- ENUM/SET labels --------------------------------------------------------------------------------
def quote_enum_label(label: str) -> str:
    """The SQL literal Debezium keeps for a label: ``it's`` → ``'it''s'``."""
    return "'" + label.replace("'", "''") + "'"


def unquote_enum_label(text: str) -> str:
    """Inverse of :func:`quote_enum_label`; also reads ``\\'`` escapes and ``"double"`` quotes."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        q = text[0]
        body = text[1:-1]
        out: list[str] = []
        i = 0
        while i < len(body):
            c = body[i]
            if c == "\\" and i + 1 < len(body):
                out.append(body[i + 1])
                i += 2
            elif c == q and i + 1 < len(body) and body[i + 1] == q:
                out.append(q)
                i += 2
            else:
                out.append(c)
                i += 1
        return "".join(out)
    return text


# -- columns and tables -----------------------------------------------------------------------------
def column_to_json(c: Column) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": c.name, "jdbcType": c.jdbc_type}
    if c.native_type is not None:
        doc["nativeType"] = c.native_type
    doc["typeName"] = c.type_name
    doc["typeExpression"] = c.type_expression
    doc["charsetName"] = c.charset_name
    if c.length is not None:
        doc["length"] = c.length
    if c.scale is not None:
        doc["scale"] = c.scale
    doc["position"] = c.position
    doc["optional"] = c.optional
    doc["autoIncremented"] = c.auto_incremented
    doc["generated"] = c.generated
    doc["comment"] = c.comment
    doc["hasDefaultValue"] = c.has_default
    if c.default_expression is not None:
        doc["defaultValueExpression"] = c.default_expression
    doc["enumValues"] = [quote_enum_label(v) for v in c.enum_values]
    return doc


def column_from_json(doc: Mapping[str, Any]) -> Column:
    expression = doc.get("defaultValueExpression")
    return Column(
        name=doc["name"],
        position=int(doc["position"]),
        type_name=doc["typeName"],
        type_expression=doc.get("typeExpression") or doc["typeName"],
        jdbc_type=int(doc["jdbcType"]),
        length=doc.get("length"),
        scale=doc.get("scale"),
        optional=bool(doc.get("optional", True)),
        auto_incremented=bool(doc.get("autoIncremented", False)),
        generated=bool(doc.get("generated", False)),
        charset_name=doc.get("charsetName"),
        has_default=bool(doc.get("hasDefaultValue", False)) or expression is not None,
        default_expression=expression,
        enum_values=tuple(unquote_enum_label(v) for v in doc.get("enumValues") or ()),
        comment=doc.get("comment"),
        native_type=doc.get("nativeType"),
    )


def _table_to_json(t: Table) -> dict[str, Any]:
    return {
        "defaultCharsetName": t.default_charset,
        "primaryKeyColumnNames": list(t.primary_key),
        "columns": [column_to_json(c) for c in t.columns],
        "attributes": [{"name": n, "value": v} for n, v in t.attributes],
    }


def _table_from_json(table_id: TableId, doc: Mapping[str, Any], comment: str | None) -> Table:
    columns = sorted((column_from_json(c) for c in doc.get("columns") or ()), key=lambda c: c.position)
    return Table(
        id=table_id,
        columns=tuple(columns),
        primary_key=tuple(doc.get("primaryKeyColumnNames") or ()),
        default_charset=doc.get("defaultCharsetName"),
        comment=comment,
        attributes=tuple((a["name"], a.get("value")) for a in doc.get("attributes") or ()),
    )


# -- records ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HistoryRecord:
    """One entry of the schema history."""

    source: dict[str, Any]
    position: dict[str, Any]
    ts_ms: int | None = None
    database_name: str | None = None
    schema_name: str | None = None
    ddl: str | None = None
    table_changes: list[TableChange] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"source": dict(self.source), "position": dict(self.position)}
        if self.ts_ms is not None:
            doc["ts_ms"] = self.ts_ms
        if self.database_name is not None:
            doc["databaseName"] = self.database_name
        if self.schema_name is not None:
            doc["schemaName"] = self.schema_name
        if self.ddl is not None:
            doc["ddl"] = self.ddl
        doc["tableChanges"] = [c.to_json() for c in self.table_changes]
        return doc

    def to_text(self) -> str:
        """The record as the history topic/file holds it (compact JSON, key order kept)."""
        return json.dumps(self.to_json(), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> HistoryRecord:
        return cls(
            source=dict(doc.get("source") or {}),
            position=dict(doc.get("position") or {}),
            ts_ms=doc.get("ts_ms"),
            database_name=doc.get("databaseName"),
            schema_name=doc.get("schemaName"),
            ddl=doc.get("ddl"),
            table_changes=[TableChange.from_json(c) for c in doc.get("tableChanges") or ()],
        )

    @classmethod
    def from_text(cls, text: str | bytes) -> HistoryRecord:
        return cls.from_json(json.loads(text))

    def is_valid(self) -> bool:
        """Debezium's check: ``source`` and ``position`` are present."""
        return bool(self.source) and bool(self.position)


def apply_table_changes(tables: Tables, changes: Iterable[TableChange]) -> None:
    """Apply recorded changes: CREATE/ALTER overwrite (dropping ``previousId``), DROP removes."""
    for change in changes:
        if change.type is TableChangeType.DROP:
            tables.remove(change.id)
            continue
        if change.previous_id is not None and change.previous_id != change.id:
            tables.remove(change.previous_id)
        tables.put(change.table)


# -- schema change topic ----------------------------------------------------------------------------
_COLUMN_SCHEMA = (
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
    .field("enumValues", SchemaBuilder.array(STRING_SCHEMA).optional().build())
    .build()
)
_TABLE_SCHEMA = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Table")
    .version(1)
    .field("defaultCharsetName", OPTIONAL_STRING_SCHEMA)
    .field("primaryKeyColumnNames", SchemaBuilder.array(STRING_SCHEMA).optional().build())
    .field("columns", SchemaBuilder.array(_COLUMN_SCHEMA).build())
    .field("comment", OPTIONAL_STRING_SCHEMA)
    .optional()  # Debezium's is optional: its DROP changes carry no table
    .build()
)
CHANGE_SCHEMA: Schema = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.schema.Change")
    .version(1)
    .field("type", STRING_SCHEMA)
    .field("id", STRING_SCHEMA)
    .field("table", _TABLE_SCHEMA)
    .build()
)
"""Schema of one element of ``tableChanges`` in the schema change topic's value."""


def table_changes_from_model(changes: Iterable[TableChange]) -> list[dict[str, Any]]:
    """``tableChanges`` of a SchemaChangeValue as plain dicts, in the Change struct's field order."""
    out: list[dict[str, Any]] = []
    for ch in changes:
        if ch.type is TableChangeType.DROP:
            out.append({"type": ch.type.value, "id": ch.id.quoted(), "table": None})
            continue
        t = ch.table
        columns = []
        for c in t.columns:
            columns.append(
                {
                    "name": c.name,
                    "jdbcType": c.jdbc_type,
                    "nativeType": c.native_type,
                    "typeName": c.type_name,
                    "typeExpression": c.type_expression,
                    "charsetName": c.charset_name,
                    "length": c.length,
                    "scale": c.scale,
                    "position": c.position,
                    "optional": c.optional,
                    "autoIncremented": c.auto_incremented,
                    "generated": c.generated,
                    "comment": c.comment,
                    "defaultValueExpression": c.default_expression,
                    "enumValues": [quote_enum_label(v) for v in c.enum_values] or None,
                }
            )
        out.append(
            {
                "type": ch.type.value,
                "id": ch.id.quoted(),
                "table": {
                    "defaultCharsetName": t.default_charset,
                    "primaryKeyColumnNames": list(t.primary_key),
                    "columns": columns,
                    "comment": t.comment,
                },
            }
        )
    return out


def table_change_struct(change: TableChange) -> Struct:
    """One change as a :data:`CHANGE_SCHEMA` struct."""
    (doc,) = table_changes_from_model([change])
    if doc["table"] is None:
        return Struct(CHANGE_SCHEMA).put("type", doc["type"]).put("id", doc["id"]).put("table", None)
    table = Struct(_TABLE_SCHEMA)
    for k in ("defaultCharsetName", "primaryKeyColumnNames", "comment"):
        table.put(k, doc["table"][k])
    cols = []
    for cdoc in doc["table"]["columns"]:
        s = Struct(_COLUMN_SCHEMA)
        for k, v in cdoc.items():
            s.put(k, v)
        cols.append(s)
    table.put("columns", cols)
    return Struct(CHANGE_SCHEMA).put("type", doc["type"]).put("id", doc["id"]).put("table", table)
