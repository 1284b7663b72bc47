"""Records flowing through the runtime: source records, sink records and their headers.

Records are immutable by convention: a transform returns ``record.new_record(...)`` (or
``dataclasses.replace``) and never mutates its input.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc.api.schema import Schema

__all__ = [
    "OFFSET_ONLY_TOPIC",
    "ConnectRecord",
    "Header",
    "Headers",
    "SchemaAndValue",
    "SinkRecord",
    "SourceRecord",
]

# A source record whose topic is empty (no Kafka topic can be) carries only its source offset: the
# runtime skips transforms and converters, produces nothing and commits the offset, as Connect commits
# the offset of a record a transform dropped. Sources use it to make a position durable without writing
# a record users would see (e.g. the MySQL source after a schema-only snapshot without heartbeats).
OFFSET_ONLY_TOPIC = ""


@dataclass(frozen=True, slots=True)
class SchemaAndValue:
    schema: Schema | None
    value: Any


NULL = SchemaAndValue(None, None)

_FIELD_NAMES: dict[type, tuple[tuple[str, ...], frozenset[str]]] = {}


@dataclass(frozen=True, slots=True)
class Header:
    key: str
    schema: Schema | None
    value: Any


class Headers:
    """An ordered multi-map of headers, as Connect's ``ConnectHeaders``."""

    __slots__ = ("_items",)

    def __init__(self, items: list[Header] | None = None) -> None:
        self._items: list[Header] = list(items) if items else []

    def add(self, key: str, value: Any, schema: Schema | None = None) -> Headers:
        self._items.append(Header(key, schema, value))
        return self

    def add_header(self, header: Header) -> Headers:
        self._items.append(header)
        return self

    def extend(self, headers: list[Header]) -> Headers:
        """Add ``headers`` (immutable ``Header`` objects) at the end, in their order."""
        self._items.extend(headers)
        return self

    def last_with_name(self, key: str) -> Header | None:
        for h in reversed(self._items):
            if h.key == key:
                return h
        return None

    def all_with_name(self, key: str) -> list[Header]:
        return [h for h in self._items if h.key == key]

    def remove(self, key: str) -> Headers:
        self._items = [h for h in self._items if h.key != key]
        return self

    def copy(self) -> Headers:
        return Headers(self._items)

    def __iter__(self) -> Iterator[Header]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and self._items == other._items

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


@dataclass(frozen=True, slots=True)
class ConnectRecord:
    """What every record has: a topic, a key and a value with their schemas, a timestamp, headers."""

    topic: str
    kafka_partition: int | None
    key_schema: Schema | None
    key: Any
    value_schema: Schema | None
    value: Any
    timestamp: int | None = None
    headers: Headers = field(default_factory=Headers)

    def new_record(self, **changes: Any) -> Any:
        """A copy with ``changes`` applied (topic, key, value, schemas, timestamp, headers …).

        Hand-written rather than ``dataclasses.replace``: transforms call it per record, and this is
        several times faster for frozen, slotted dataclasses.
        """
        cls = type(self)
        known = _FIELD_NAMES.get(cls)
        if known is None:
            names = tuple(f.name for f in dataclasses.fields(cls))
            known = _FIELD_NAMES[cls] = (names, frozenset(names))
        names, name_set = known
        if not name_set.issuperset(changes):
            raise TypeError(f"Unknown record fields: {sorted(changes.keys() - name_set)}")
        if "headers" not in changes:
            changes["headers"] = self.headers.copy()
        obj = object.__new__(cls)
        for name in names:
            object.__setattr__(obj, name, changes[name] if name in changes else getattr(self, name))
        return obj


@dataclass(frozen=True, slots=True)
class SourceRecord(ConnectRecord):
    """A record produced by a source task, with the source position it came from."""

    source_partition: Mapping[str, Any] | None = None
    source_offset: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class SinkRecord(ConnectRecord):
    """A record consumed from Kafka for a sink task."""

    kafka_offset: int = -1
    timestamp_type: str = "CreateTime"
    original_topic: str | None = None
    original_kafka_partition: int | None = None
    original_kafka_offset: int | None = None
