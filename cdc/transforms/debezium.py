"""Debezium's ``io.debezium.transforms.ExtractNewRecordState``: flatten a change event to its row state.

A Debezium value is an envelope ``{before, after, source, transaction, op, ts_ms…}`` whose schema name
ends in ``.Envelope``. This transform replaces it with ``after`` (``before`` for rewritten deletes),
optionally adding envelope fields (``add.fields=op,table,source.ts_ms`` → ``__op``, ``__table``,
``__source_ts_ms``) and headers. Anything else — schema-change events, heartbeats, schemaless values —
passes through unchanged; truncate events are dropped.

Deletes and tombstones follow one of two configurations, as in Debezium 2.5+:

* legacy (when ``delete.tombstone.handling.mode`` is unset): ``drop.tombstones`` (default true) and
  ``delete.handling.mode`` = ``drop`` (default) | ``none`` (keep with a null value) | ``rewrite``
  (``before`` plus ``__deleted="true"``; creates/updates get ``__deleted="false"``);
* ``delete.tombstone.handling.mode``:

  ======================== ======================== ===================== =================
  mode                     delete event             tombstone             ``__deleted``
  ======================== ======================== ===================== =================
  ``drop``                 dropped                  dropped               no
  ``tombstone``            null value (schema kept) dropped               no
  ``rewrite``              ``before`` + ``true``    dropped               yes
  ``rewrite-with-tombstone`` ``before`` + ``true``  kept                  yes
  ``delete-to-tombstone``  tombstone (null schema)  dropped               no
  ======================== ======================== ===================== =================

As in Debezium, adding fields rebuilds the row schema with the row's name, version and doc but not
its optionality; the added fields are optional copies of the envelope fields' schemas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from cdc.api.errors import ConfigError
from cdc.api.records import ConnectRecord, Headers
from cdc.api.schema import OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Schema, SchemaBuilder, Type
from cdc.api.struct import Struct
from cdc.config.definition import ConfigDef, ConfigType, Importance
from cdc.transforms._util import BaseTransformation, copy_schema_basics

__all__ = ["ExtractNewRecordState"]

R = TypeVar("R", bound=ConnectRecord)

_LEGACY_MODES = ("drop", "rewrite", "none")
_MODES = ("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")
_TOP_LEVEL = ("op", "ts_ms", "ts_us", "ts_ns")
_TRANSACTION = ("id", "total_order", "data_collection_order")
DELETED_FIELD = "__deleted"


def _enum(*allowed: str) -> Any:
    def check(name: str, value: Any) -> None:
        if value is not None and str(value).strip().lower() not in allowed:
            raise ConfigError("Value must be one of " + ", ".join(allowed), name, value)

    return check


@dataclass(frozen=True)
class _FieldRef:
    """An envelope field to copy: ``op``, ``table`` (in ``source``), ``source.ts_ms``, ``op:OPERATION``."""

    struct: str | None
    field: str
    new_name: str

    @classmethod
    def parse(cls, prefix: str, spec: str) -> _FieldRef:
        parts = spec.split(":")
        if len(parts) > 2:
            raise ConfigError(f"Unexpected field name: {spec}")
        path = parts[0].split(".")
        field = path[0] if len(path) == 1 else path[1]
        if len(path) > 1:
            struct: str | None = path[0]
        elif field in _TOP_LEVEL:
            struct = None
        else:
            struct = "transaction" if field in _TRANSACTION else "source"
        if len(parts) == 2:
            new_name = prefix + parts[1]
        else:
            new_name = prefix + (field if len(path) == 1 else f"{struct}_{field}")
        return cls(struct, field, new_name)

    def schema(self, envelope: Schema) -> Schema | None:
        """The optional schema of the added field, or None when the envelope has no such field."""
        parent: Schema | None = envelope
        if self.struct is not None:
            holder = envelope.field(self.struct)
            parent = holder.schema if holder is not None and holder.schema.type is Type.STRUCT else None
        f = parent.field(self.field) if parent is not None else None
        if f is None:
            f = envelope.field(self.field)
        if f is None:
            return None
        s = f.schema
        return Schema(
            s.type,
            optional=True,
            default=s.default,
            name=s.name,
            version=s.version,
            doc=s.doc,
            parameters=s.parameters,
            fields=s.fields,
            key_schema=s.key_schema,
            value_schema=s.value_schema,
        )

    def value(self, envelope: Struct) -> Any:
        parent: Any = envelope
        if self.struct is not None:
            holder = envelope.schema.field(self.struct)
            parent = envelope.values[holder.index] if holder is not None else None
            if parent is None:
                return None
        if isinstance(parent, Struct) and parent.schema.field(self.field) is not None:
            return parent.get_without_default(self.field)
        return envelope.get_without_default(self.field) if envelope.schema.field(self.field) else None


def _refs(prefix: str, specs: list[str]) -> list[_FieldRef]:
    return [_FieldRef.parse(prefix, s.strip()) for s in specs if s.strip()]


class ExtractNewRecordState(BaseTransformation[R]):
    """``io.debezium.transforms.ExtractNewRecordState`` (see the module docstring)."""

    CONFIG_DEF = (
        ConfigDef()
        .define(
            "drop.tombstones",
            ConfigType.BOOLEAN,
            True,
            None,
            Importance.LOW,
            "Debezium by default generates a tombstone record to enable Kafka compaction after a delete "
            "record was generated. This record is usually filtered out to avoid duplicates as a delete "
            "record is converted to a tombstone record, too. Ignored when delete.tombstone.handling.mode "
            "is set.",
        )
        .define(
            "delete.handling.mode",
            ConfigType.STRING,
            "drop",
            _enum(*_LEGACY_MODES),
            Importance.MEDIUM,
            "How to handle delete records. Options are: none - records are passed, drop - records are "
            "removed (the default), rewrite - __deleted field is added to records. Ignored when "
            "delete.tombstone.handling.mode is set.",
        )
        .define(
            "delete.tombstone.handling.mode",
            ConfigType.STRING,
            None,
            _enum(*_MODES),
            Importance.MEDIUM,
            "How to handle delete and tombstone records: drop, tombstone, rewrite, rewrite-with-tombstone "
            "or delete-to-tombstone.",
        )
        .define(
            "route.by.field",
            ConfigType.STRING,
            "",
            None,
            Importance.LOW,
            "The column which determines how the events will be routed, the value will replace the topic "
            "name.",
        )
        .define(
            "add.fields.prefix",
            ConfigType.STRING,
            "__",
            None,
            Importance.LOW,
            "Adds this prefix to each field listed.",
        )
        .define(
            "add.fields",
            ConfigType.LIST,
            "",
            None,
            Importance.LOW,
            "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified). Example: "
            "'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. "
            "Optionally one can also map new field name like version:VERSION.",
        )
        .define(
            "add.headers.prefix",
            ConfigType.STRING,
            "__",
            None,
            Importance.LOW,
            "Adds this prefix listed to each header.",
        )
        .define(
            "add.headers",
            ConfigType.LIST,
            "",
            None,
            Importance.LOW,
            "Adds each field listed to the header, prefixed with __ (or __<struct>_ if the struct is "
            "specified).",
        )
    )

    def _setup(self, cfg: dict[str, Any]) -> None:
        mode = cfg["delete.tombstone.handling.mode"]
        if mode is None:
            legacy = cfg["delete.handling.mode"].strip().lower()
            self.drop_tombstones = bool(cfg["drop.tombstones"])
            self.delete_mode = {"drop": "drop", "none": "none", "rewrite": "rewrite"}[legacy]
            self.rewrite = legacy == "rewrite"
        else:
            mode = mode.strip().lower()
            self.drop_tombstones = mode != "rewrite-with-tombstone"
            self.delete_mode = {
                "drop": "drop",
                "tombstone": "none",
                "rewrite": "rewrite",
                "rewrite-with-tombstone": "rewrite",
                "delete-to-tombstone": "tombstone",
            }[mode]
            self.rewrite = mode in ("rewrite", "rewrite-with-tombstone")
        self.route_by = cfg["route.by.field"] or None
        self.add_fields = _refs(cfg["add.fields.prefix"], cfg["add.fields"])
        self.add_headers = _refs(cfg["add.headers.prefix"], cfg["add.headers"])
        self._plans: dict[tuple[Schema, Schema, bool], tuple[Schema, list[_FieldRef]]] = {}
        self._header_plans: dict[Schema, list[tuple[_FieldRef, Schema]]] = {}

    # -- pieces -------------------------------------------------------------------------------------------
    def _headers(self, record: ConnectRecord, envelope: Struct | None) -> Headers | None:
        if not self.add_headers:
            return None
        headers = record.headers.copy()
        if envelope is None:  # a tombstone carries only the delete operation
            for ref in self.add_headers:
                if ref.struct is None and ref.field == "op":
                    headers.add(ref.new_name, "d", STRING_SCHEMA)
            return headers
        plan = self._header_plans.get(envelope.schema)
        if plan is None:
            plan = [(ref, s) for ref in self.add_headers if (s := ref.schema(envelope.schema)) is not None]
            self._header_plans[envelope.schema] = plan
        for ref, schema in plan:
            headers.add(ref.new_name, ref.value(envelope), schema)
        return headers

    def _row(self, row: Struct, envelope: Struct, deleted: str | None) -> tuple[Schema, Struct]:
        """The row plus the added fields and ``__deleted``; the schema is built once per input schema."""
        if not self.add_fields and deleted is None:
            return row.schema, row
        key = (row.schema, envelope.schema, deleted is not None)
        plan = self._plans.get(key)
        if plan is None:
            b = copy_schema_basics(row.schema, SchemaBuilder.struct())
            for f in row.schema.fields:
                b.field(f.name, f.schema)
            present = []
            for ref in self.add_fields:
                s = ref.schema(envelope.schema)
                if s is not None:
                    b.field(ref.new_name, s)
                    present.append(ref)
            if deleted is not None:
                b.field(DELETED_FIELD, OPTIONAL_STRING_SCHEMA)
            if len(self._plans) > 256:
                self._plans.clear()
            plan = self._plans[key] = (b.build(), present)
        schema, refs = plan
        values = list(row.values)
        values.extend(ref.value(envelope) for ref in refs)
        if deleted is not None:
            values.append(deleted)
        return schema, Struct(schema, values)

    def _routed(self, row: Struct | None) -> str | None:
        if self.route_by is None or row is None:
            return None
        topic = row.get(self.route_by)
        return None if topic is None else str(topic)

    # -- the transform ----------------------------------------------------------------------------------
    def apply(self, record: R) -> R | None:
        value = record.value
        if value is None:
            if self.drop_tombstones:
                return None
            headers = self._headers(record, None)
            return record if headers is None else record.new_record(headers=headers)
        schema = record.value_schema
        if (
            schema is None
            or schema.name is None
            or not schema.name.endswith(".Envelope")
            or not isinstance(value, Struct)
        ):
            return record
        after_field = schema.field("after")
        before_field = schema.field("before")
        after = value.values[after_field.index] if after_field is not None else None
        before = value.values[before_field.index] if before_field is not None else None
        changes: dict[str, Any] = {}
        headers = self._headers(record, value)
        if headers is not None:
            changes["headers"] = headers

        if after is None:
            if before is None:
                return None  # truncate (or an empty envelope): nothing to flatten
            topic = self._routed(before)
            if topic is not None:
                changes["topic"] = topic
            if self.delete_mode == "drop":
                return None
            if self.delete_mode == "none":
                row_schema = after_field.schema if after_field is not None else None
                return record.new_record(value_schema=row_schema, value=None, **changes)
            if self.delete_mode == "tombstone":
                return record.new_record(value_schema=None, value=None, **changes)
            out_schema, out = self._row(before, value, "true")
            return record.new_record(value_schema=out_schema, value=out, **changes)

        topic = self._routed(after)
        if topic is not None:
            changes["topic"] = topic
        if isinstance(after, Struct):
            out_schema, out = self._row(after, value, "false" if self.rewrite else None)
        else:
            return record.new_record(
                value_schema=after_field.schema if after_field else None, value=after, **changes
            )
        return record.new_record(value_schema=out_schema, value=out, **changes)
