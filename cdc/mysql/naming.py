"""Debezium's names: topic naming strategies and the Avro adjusters of schema and field names.

Debezium names every topic through a ``TopicNamingStrategy`` (``topic.naming.strategy``) and every
schema and field through a ``SchemaNameAdjuster`` (``schema.name.adjustment.mode``,
``field.name.adjustment.mode``). This module is those classes' rules, ported from Debezium 3.6's
``io.debezium.schema`` package and checked against its jars (``python -m bench.debezium_naming`` records
their answers in ``tests/fixtures/mysql/debezium-naming.tsv``):

* ``DefaultTopicNamingStrategy`` (the binlog connectors' default): ``<prefix>.<db>.<table>``, characters
  other than ``[A-Za-z0-9._-]`` replaced by ``_``, cut to 249; the record schemas are named after it.
* ``DefaultUnicodeTopicNamingStrategy``: the same names, but an invalid character (``_`` included, so that
  the mapping can be reversed) becomes ``_uXXXX`` (Java's ``Integer.toHexString``, padded only to 4 when it
  has at most 2 digits: ``_u0024``, ``_u101``).
* ``SchemaTopicNamingStrategy``: ``<prefix>.<schema>.<table>``; a MySQL table has no schema, so its topic is
  ``<prefix>.<table>`` (databases share it), as the real one does.
* every strategy: the schema change topic is ``<prefix>``, the heartbeat topic
  ``<topic.heartbeat.prefix><delimiter><prefix>``, the transaction topic
  ``<prefix><delimiter><topic.transaction>`` (neither sanitized); ``topic.cache.size`` only sizes
  Debezium's name cache (cdc keeps every name).

The adjusters: ``avro`` replaces what Avro does not allow in a name by ``_`` (a leading digit keeps itself
behind the ``_``), ``avro_unicode`` by ``_uXXXX``; schema names keep ``.``, field names do not. Two names
adjusted to the same one fail the task, as Debezium's ``ConnectException`` does.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from cdc.api.errors import ConnectError
from cdc.history.model import TableId


class NamingSettings(Protocol):
    """What the names depend on: :class:`cdc.mysql.config.MySqlSettings` has it (config.py imports this
    module for ``STRATEGIES``, so it is not imported here)."""

    @property
    def topic_naming_strategy(self) -> str: ...
    @property
    def topic_prefix(self) -> str: ...
    @property
    def topic_delimiter(self) -> str: ...
    @property
    def topic_heartbeat_prefix(self) -> str: ...
    @property
    def topic_transaction(self) -> str: ...


__all__ = [
    "STRATEGIES",
    "NameAdjuster",
    "NamingSettings",
    "TopicNaming",
    "adjust_name",
    "field_adjuster",
    "schema_adjuster",
    "transaction_topic",
]

log = logging.getLogger(__name__)

MAX_NAME_LENGTH = 249
DEFAULT = "io.debezium.schema.DefaultTopicNamingStrategy"
UNICODE = "io.debezium.schema.DefaultUnicodeTopicNamingStrategy"
SCHEMA = "io.debezium.schema.SchemaTopicNamingStrategy"
STRATEGIES = (DEFAULT, UNICODE, SCHEMA)
"""The ``topic.naming.strategy`` classes cdc implements; any other class name is refused at validate."""


def _java_hex(c: str) -> str:
    """Debezium's ``UnicodeReplacementFunction``: ``_u`` + ``Integer.toHexString(c)``, ``00`` in front only
    when that has at most two digits (so U+0009 is ``_u009`` and U+0101 ``_u101``, as Java writes them)."""
    h = f"{ord(c):x}"
    return "_u" + ("00" + h if len(h) <= 2 else h)


def _utf16(name: str) -> list[str]:
    """``name`` as Java's ``char``s: a character beyond the BMP is two surrogates, each judged alone."""
    out: list[str] = []
    for c in name:
        if ord(c) > 0xFFFF:
            units = c.encode("utf-16-be", "surrogatepass")
            out += [chr(int.from_bytes(units[k : k + 2], "big")) for k in (0, 2)]
        else:
            out.append(c)
    return out


def _ascii_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _java_digit(c: str) -> bool:
    """``Character.isDigit``: Unicode's decimal digits (ARABIC-INDIC DIGIT ONE too, not ``²``)."""
    return unicodedata.category(c) == "Nd"


def adjust_name(name: str, mode: str, *, field_name: bool = False) -> str:
    """``name`` as Debezium's adjuster for ``mode`` (none, avro, avro_unicode) writes it: a schema name
    (``SchemaNameAdjuster.AVRO``/``AVRO_UNICODE``) or, with ``field_name``, a field name
    (``AVRO_FIELD_NAMER``/``AVRO_UNICODE_FIELD_NAMER``: ``.`` is not allowed either)."""
    mode = mode.lower()
    if mode == "none" or not name:
        return name
    unicode = mode == "avro_unicode"

    def first_ok(c: str) -> bool:
        return _ascii_letter(c) or (c == "_" and not unicode)

    def rest_ok(c: str) -> bool:
        return first_ok(c) or ("0" <= c <= "9") or (c == "." and not field_name)

    chars = _utf16(name)
    out: list[str] = []
    c = chars[0]
    if first_ok(c):
        out.append(c)
    elif unicode:
        out.append(_java_hex(c))
    else:
        # Debezium keeps a leading digit behind the "_" so that "1a" and "2a" stay apart
        out.append("_" + c if _java_digit(c) else "_")
    for c in chars[1:]:
        out.append(c if rest_ok(c) else (_java_hex(c) if unicode else "_"))
    return "".join(out)


@dataclass
class NameAdjuster:
    """One adjuster of a task, remembering what it replaced: two different names adjusted to the same one
    would make two schemas (or two fields) one, so that fails the task, in Debezium's words."""

    mode: str
    field_names: bool = False
    _seen: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, name: str) -> str:
        adjusted = adjust_name(name, self.mode, field_name=self.field_names)
        if adjusted == name:
            return name
        with self._lock:
            original = self._seen.setdefault(adjusted, name)
        if original != name:
            kind = "field" if self.field_names else "schema"
            raise ConnectError(
                f"The Kafka Connect {kind} name '{name}' is not a valid Avro {kind} name and its replacement "
                f"'{adjusted}' conflicts with another different {kind} '{original}'"
            )
        return adjusted


def schema_adjuster(mode: str) -> Callable[[str], str]:
    """``schema.name.adjustment.mode``'s adjuster (the identity for none)."""
    return (lambda n: n) if mode.lower() == "none" else NameAdjuster(mode)


def field_adjuster(mode: str) -> Callable[[str], str]:
    """``field.name.adjustment.mode``'s adjuster (the identity for none)."""
    return (lambda n: n) if mode.lower() == "none" else NameAdjuster(mode, field_names=True)


@dataclass(frozen=True)
class TopicNaming:
    """A ``topic.naming.strategy``: the topic of each table, the schema change, heartbeat and transaction
    topics."""

    strategy: str
    prefix: str
    delimiter: str = "."
    heartbeat_prefix: str = "__debezium-heartbeat"
    transaction: str = "transaction"

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown topic naming strategy {self.strategy}")

    @classmethod
    def of(cls, settings: NamingSettings) -> TopicNaming:
        return cls(
            strategy=settings.topic_naming_strategy,
            prefix=settings.topic_prefix,
            delimiter=settings.topic_delimiter,
            heartbeat_prefix=settings.topic_heartbeat_prefix,
            transaction=settings.topic_transaction,
        )

    def _valid(self, c: str) -> bool:
        ok = c in ".-" or _ascii_letter(c) or ("0" <= c <= "9")
        return ok or (c == "_" and self.strategy != UNICODE)

    def _replace(self, c: str) -> str:
        return _java_hex(c) if self.strategy == UNICODE else "_"

    def sanitized(self, name: str) -> str:
        """Debezium's ``sanitizedTopicName``: invalid characters replaced, cut to 249, ``.``/``..``
        replaced."""
        out = "".join(c if self._valid(c) else self._replace(c) for c in _utf16(name))
        if len(out) > MAX_NAME_LENGTH:
            out = out[:MAX_NAME_LENGTH]
        elif out in (".", ".."):
            out = self._replace(".") * len(out)
        if out != name:
            log.warning("Topic '%s' name isn't a valid topic name, replacing it with '%s'.", name, out)
        return out

    def data_change_topic(self, table: TableId) -> str:
        parts = (table.database, table.table) if self.strategy != SCHEMA else (None, table.table)
        # Debezium's mkString leaves out blank parts (a MySQL table's schema is null)
        name = self.delimiter.join(p for p in (self.prefix, *parts) if p and p.strip())
        return self.sanitized(name)

    def schema_change_topic(self) -> str:
        return self.prefix

    def heartbeat_topic(self) -> str:
        return self.delimiter.join((self.heartbeat_prefix, self.prefix))

    def transaction_topic(self) -> str:
        return self.delimiter.join((self.prefix, self.transaction))


def transaction_topic(settings: NamingSettings) -> str:
    """The transaction metadata topic (``provide.transaction.metadata``) under the connector's strategy."""
    return TopicNaming.of(settings).transaction_topic()
