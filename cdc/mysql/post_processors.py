"""``post.processors``: Debezium's ``ReselectColumnsPostProcessor``, run on each change event before it is
queued.

A config names its processors and gives each a type and options, as Debezium's do::

    post.processors=reselector
    reselector.type=io.debezium.processors.reselect.ReselectColumnsPostProcessor
    reselector.reselect.columns.include.list=inventory.orders:description
    reselector.reselect.unavailable.values=true
    reselector.reselect.null.values=true
    reselector.reselect.use.event.key=false
    reselector.reselect.error.handling.mode=warn

For a create or update event (never a snapshot read, a delete or an event of the signal table) whose
``after`` holds ``unavailable.value.placeholder`` (a BLOB/TEXT column ``binlog_row_image=NOBLOB`` left
out; with ``reselect.unavailable.values``, default true) or NULL (``reselect.null.values``, default true)
in a column the lists select (``<db>.<table>:<column>`` regexes, whole and case-insensitive; the include
list wins), the processor reads those columns of the row again (``SELECT … WHERE <key> = …``, the key
being the primary key's values in ``after``, or the event key's fields with ``reselect.use.event.key``)
and puts the current values, converted as the snapshot converts them, into ``after``. A row no longer
there, or a failing query, is a WARN (``warn``, the default) or fails the task (``fail``), in Debezium's
words. Any other processor class is refused at validate: a Java class cannot run in cdc.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConnectError
from cdc.api.records import SourceRecord
from cdc.history.model import TableId

__all__ = ["RESELECT", "ProcessedEmit", "ReselectOptions", "Reselector", "post_processor_errors"]

log = logging.getLogger(__name__)

RESELECT = "io.debezium.processors.reselect.ReselectColumnsPostProcessor"
_OPTIONS = (
    "reselect.columns.include.list",
    "reselect.columns.exclude.list",
    "reselect.unavailable.values",
    "reselect.null.values",
    "reselect.use.event.key",
    "reselect.error.handling.mode",
)


def _names(props: Mapping[str, str]) -> list[str]:
    return [n.strip() for n in str(props.get("post.processors") or "").split(",") if n.strip()]


def _bool(value: str | None, default: bool) -> bool:
    return default if value is None or not value.strip() else value.strip().lower() == "true"


def post_processor_errors(props: Mapping[str, str]) -> dict[str, str]:
    """Validate errors (key → message) of the post processors a config names."""
    errors: dict[str, str] = {}
    for name in _names(props):
        kind = props.get(f"{name}.type")
        if not kind:
            errors["post.processors"] = f"The post processor '{name}' has no '{name}.type'"
            continue
        if kind.strip() != RESELECT:
            errors[f"{name}.type"] = (
                f"Invalid value {kind} for configuration {name}.type: cdc runs Debezium's {RESELECT} only; a "
                "post processor class of your own cannot run in cdc (a single message transform can rewrite "
                "records instead)"
            )
            continue
        for key in (f"{name}.reselect.columns.include.list", f"{name}.reselect.columns.exclude.list"):
            for pattern in _split(props.get(key)):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    errors[key] = f"Invalid value {props[key]} for configuration {key}: {pattern!r}: {exc}"
        for option in ("reselect.unavailable.values", "reselect.null.values", "reselect.use.event.key"):
            key = f"{name}.{option}"
            if key in props and str(props[key]).strip().lower() not in ("true", "false", ""):
                errors[key] = (
                    f"Invalid value {props[key]} for configuration {key}: "
                    "Expected value to be either true or false"
                )
        key = f"{name}.reselect.error.handling.mode"
        if str(props.get(key) or "warn").strip().lower() not in ("warn", "fail"):
            errors[key] = f"Invalid value {props[key]} for configuration {key}: must be warn or fail"
    return errors


def _split(value: str | None) -> list[str]:
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


@dataclass(frozen=True)
class ReselectOptions:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    unavailable: bool = True
    null: bool = True
    use_event_key: bool = False
    fail: bool = False

    @classmethod
    def of(cls, props: Mapping[str, str], name: str) -> ReselectOptions:
        def get(option: str) -> str | None:
            return props.get(f"{name}.{option}")

        return cls(
            tuple(_split(get("reselect.columns.include.list"))),
            tuple(_split(get("reselect.columns.exclude.list"))),
            _bool(get("reselect.unavailable.values"), True),
            _bool(get("reselect.null.values"), True),
            _bool(get("reselect.use.event.key"), False),
            str(get("reselect.error.handling.mode") or "warn").strip().lower() == "fail",
        )

    def selects(self, column: str) -> bool:
        """``<db>.<table>:<column>`` against the lists (Debezium: the include list when given)."""
        if self.include:
            return any(re.fullmatch(p, column, re.IGNORECASE) for p in self.include)
        if self.exclude:
            return not any(re.fullmatch(p, column, re.IGNORECASE) for p in self.exclude)
        return True


class Reselector:
    """One ``ReselectColumnsPostProcessor``: ``schema``'s tables, ``events``' conversions, a connection of
    its own (opened on first use, reopened once after an error)."""

    def __init__(
        self,
        options: ReselectOptions,
        placeholder: str,
        schema: Any,
        events: Any,
        connect: Callable[[], Any],
        signal_table: TableId | None = None,
    ) -> None:
        self.options = options
        self.placeholder = placeholder
        self.placeholder_bytes = placeholder.encode()
        self.schema = schema
        self.events = events
        self._connect = connect
        self._conn: Any = None
        self.signal_table = signal_table
        if not (options.null or options.unavailable):
            log.warning(
                "Reselect post-processor disables both null and unavailable columns, "
                "no-reselection will occur."
            )

    def __call__(self, records: list[SourceRecord]) -> list[SourceRecord]:
        for record in records:
            self.apply(record)
        return records

    def _unavailable(self, value: Any) -> bool:
        return value == self.placeholder or value == self.placeholder_bytes

    def apply(self, record: SourceRecord) -> None:
        value = record.value
        if value is None or record.key is None or value.schema.field("after") is None:
            return
        after = value.get("after")
        if after is None or value.get("op") == "r":
            return
        source = value.get("source")
        db, name = source.get("db"), source.get("table")
        if not db or not name:
            return
        table_id = TableId(db, name)
        if table_id == self.signal_table:
            return
        table = self.schema.table(table_id)
        if table is None:
            return
        ts = self.events.schema_for(table)
        # after's fields are the mapped columns, in order (field names may be adjusted: go by position)
        wanted: list[int] = []
        for i, m in enumerate(ts.mappings):
            v = after.values[i]
            unavailable = self.options.unavailable and self._unavailable(v)
            candidate = self.options.null if v is None else unavailable
            if candidate and self.options.selects(f"{db}.{name}:{m.column.name}"):
                wanted.append(i)
        if not wanted:
            return
        if self.options.use_event_key:
            key = record.key
            keys = [(f.name, key.values[j]) for j, f in enumerate(key.schema.fields)]
        else:
            index = {m.column.name: i for i, m in enumerate(ts.mappings)}
            if not table.primary_key or any(k not in index for k in table.primary_key):
                return
            keys = [(k, after.values[index[k]]) for k in table.primary_key]
        columns = [ts.mappings[i].column.name for i in wanted]
        row = self._select(table_id, columns, keys)
        if row is None:
            return
        full: list[Any] = [None] * len(ts.column_names)
        for i, raw in zip(wanted, row, strict=True):
            full[ts.value_index[i]] = raw
        fresh = ts.value(full)  # converted as the snapshot converts a row
        for i in wanted:
            after.values[i] = fresh.values[i]

    def _select(
        self, table_id: TableId, columns: list[str], keys: list[tuple[str, Any]]
    ) -> tuple[Any, ...] | None:
        def q(n: str) -> str:
            return "`" + n.replace("`", "``") + "`"

        sql = f"SELECT {','.join(q(c) for c in columns)} FROM {table_id.sql()} WHERE " + " AND ".join(
            f"{q(k)}=%s" for k, _ in keys
        )
        params = [v for _, v in keys]
        for attempt in (1, 2):
            try:
                if self._conn is None:
                    self._conn = self._connect()
                cur = self._conn.cursor()
                try:
                    cur.execute(sql, params)
                    rows = cur.fetchall()
                finally:
                    cur.close()
                if not rows:
                    self._problem(f"Failed to find row in table {table_id} with key {_key_text(keys)}")
                    return None
                return tuple(rows[0])
            except ConnectError:
                raise
            except Exception as exc:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None
                if attempt == 2:
                    values = [v for _, v in keys]
                    self._problem(f"Failed to re-select columns for table {table_id} and key {values}: {exc}")
        return None

    def _problem(self, message: str) -> None:
        if self.options.fail:
            raise ConnectError(message)
        log.warning("%s.", message.rstrip("."))

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None


def _key_text(keys: list[tuple[str, Any]]) -> str:
    return "Struct{" + ",".join(f"{k}={v}" for k, v in keys) + "}"


class ProcessedEmit:
    """The capture's emit with the config's processors run first, in order. Built before the capture
    context (which takes the emit) and given its processors once the context, whose schema and event
    factory they read, exists (:meth:`install`)."""

    def __init__(self, emit: Callable[[list[SourceRecord]], bool]) -> None:
        self.emit = emit
        self.processors: list[Reselector] = []

    def install(
        self,
        props: Mapping[str, str],
        placeholder: str,
        schema: Any,
        events: Any,
        connect: Callable[[], Any],
        signal_table: TableId | None = None,
    ) -> None:
        self.processors = [
            Reselector(ReselectOptions.of(props, n), placeholder, schema, events, connect, signal_table)
            for n in _names(props)
        ]

    def __call__(self, records: list[SourceRecord]) -> bool:
        for p in self.processors:
            records = p(records)
        return self.emit(records)

    def close(self) -> None:
        for p in self.processors:
            p.close()
