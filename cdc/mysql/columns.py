"""Debezium's column rules: truncate, mask, hash, and propagating the source type to the schema.

A rule applies to the columns whose fully-qualified name (``db.table.column``) — or, for
``datatype.propagate.source.type``, ``db.table.TYPE`` — matches one of its regexes (whole,
case-insensitively). As in Debezium's ``ColumnMappers`` the rules are tried in the order truncate, mask,
propagate (by column), propagate (by type), hash, and the *first* that matches a column is its only one.
A rule changes the field schema (a parameter) and wraps the column's converter; it runs after the type
converter (and after a custom converter, :mod:`cdc.mysql.converters`), on the converted value.

* ``column.truncate.to.N.chars``: strings and bytes longer than N are cut; the schema gets
  ``truncateLength=N``. Applies to a column whose declared length is unknown or above N.
* ``column.mask.with.N.chars``: every value (NULL included, as Debezium does) becomes N ``*``; the
  schema gets ``masked=true``. Only character columns (CHAR, VARCHAR, TEXT …, ENUM, SET).
* ``column.mask.hash[.v2].ALGORITHM.with.salt.SALT``: the value's hex digest of SALT's bytes followed by
  the value's bytes: v1 (the default) hashes Java's serialization of the string
  (``ObjectOutputStream.writeObject``: ``AC ED 00 05 74``, a 2-byte length, modified UTF-8), v2 its
  UTF-8 bytes. The digest is cut to the column's length when it has one; ``masked=true``.
* ``column.propagate.source.type`` / ``datatype.propagate.source.type``: the schema gets
  ``__debezium.source.column.type`` (upper case), ``.length`` and ``.scale`` when known, ``.comment`` when
  there is one, and ``.name``.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cdc.api.schema import SchemaBuilder, Type
from cdc.api.struct import Struct
from cdc.history.model import Column, TableId
from cdc.mysql.types import ColumnMapping

__all__ = ["ColumnRules", "column_rule_error", "debezium_hash"]

Converter = Callable[[Any], Any]

# java.sql.Types of the columns masking and hashing apply to (MaskStrings.create).
_CHARACTER_JDBC_TYPES = frozenset({-16, -15, -9, -1, 1, 12, 70, 2005, 2011})

_TRUNCATE = re.compile(r"column\.truncate\.to\.(\d+)\.chars")
_MASK = re.compile(r"column\.mask\.with\.(\d+)\.chars")
_HASH = re.compile(r"column\.mask\.hash\.(?:(v[12])\.)?([^.]+)\.with\.salt\.(.+)")


def _java_digest(algorithm: str) -> Any:
    """hashlib's constructor for a Java ``MessageDigest`` name (SHA-256, SHA3-512, MD5 …)."""
    name = algorithm.strip().lower()
    name = name.replace("sha3-", "sha3_").replace("sha-512/", "sha512_").replace("-", "")
    return hashlib.new(name)


def _modified_utf8(text: str) -> bytes:
    """Java's modified UTF-8: UTF-16 code units, NUL as two bytes, surrogates encoded one by one."""
    units = struct.unpack(
        f">{len(text.encode('utf-16-be', 'surrogatepass')) // 2}H", text.encode("utf-16-be", "surrogatepass")
    )
    out = bytearray()
    for u in units:
        if 0 < u < 0x80:
            out.append(u)
        elif u < 0x800:
            out += bytes((0xC0 | (u >> 6), 0x80 | (u & 0x3F)))
        else:
            out += bytes((0xE0 | (u >> 12), 0x80 | ((u >> 6) & 0x3F), 0x80 | (u & 0x3F)))
    return bytes(out)


def _java_serialized(text: str) -> bytes:
    """``ObjectOutputStream.writeObject(text)``: stream header, then TC_STRING or TC_LONGSTRING."""
    data = _modified_utf8(text)
    if len(data) <= 0xFFFF:
        return b"\xac\xed\x00\x05\x74" + struct.pack(">H", len(data)) + data
    return b"\xac\xed\x00\x05\x7c" + struct.pack(">Q", len(data)) + data


def debezium_hash(value: Any, algorithm: str, salt: str, version: str = "v1") -> str | None:
    """Debezium's ``MaskStrings`` hash of one value (hex, lower case), before any truncation."""
    if value is None:
        return None
    digest = _java_digest(algorithm)
    digest.update(salt.encode("utf-8"))
    text = value if isinstance(value, str) else str(value)
    digest.update(_java_serialized(text) if version == "v1" else text.encode("utf-8"))
    return str(digest.hexdigest())


def column_rule_error(key: str, value: str) -> str | None:
    """A validate error for a column rule key (bad number, unknown algorithm, bad regex), or None."""
    for pattern in (_TRUNCATE, _MASK):
        m = pattern.fullmatch(key)
        if m and int(m.group(1)) < 0:
            return f"The '{key}' value is invalid: the length must not be negative"
    m = _HASH.fullmatch(key)
    if m:
        try:
            _java_digest(m.group(2))
        except ValueError:
            return f"The '{key}' value is invalid: unknown hash algorithm {m.group(2)!r}"
    if _TRUNCATE.fullmatch(key) or _MASK.fullmatch(key) or m:
        for regex in _regexes(value):
            try:
                re.compile(regex)
            except re.error as exc:
                return f"The '{key}' value is invalid: {regex!r} is not a regular expression ({exc})"
    return None


def _regexes(value: str) -> list[str]:
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


def _compile(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    return [re.compile(p, re.IGNORECASE) for p in patterns]


class _Rule:
    def __init__(self, patterns: Sequence[str], by_type: bool = False) -> None:
        self.patterns = _compile(patterns)
        self.by_type = by_type

    def matches(self, table_id: TableId, column: Column) -> bool:
        name = column.type_name if self.by_type else column.name
        text = f"{table_id.database}.{table_id.table}.{name}"
        return any(p.fullmatch(text) for p in self.patterns)

    def apply(self, column: Column, mapping: ColumnMapping) -> ColumnMapping | None:
        raise NotImplementedError


def _with(
    mapping: ColumnMapping, params: Mapping[str, str], wrap: Converter | None, null: Any
) -> ColumnMapping:
    builder = SchemaBuilder.from_schema(mapping.schema).parameters(params)
    schema = builder.build()
    inner = mapping.convert
    convert: Converter | None = wrap or inner
    if wrap is not None and inner is not None:

        def convert(v: Any, f: Converter = inner, g: Converter = wrap) -> Any:
            return g(f(v))

    if schema.type is Type.STRUCT and convert is not None:
        # a struct value (geometry) is built with the column's schema before the rule: it must carry the
        # new one (with the parameters), or the converters refuse it ("Mismatching schema")
        built = convert

        def convert(v: Any, f: Converter = built) -> Any:
            out = f(v)
            return Struct(schema, list(out.values)) if isinstance(out, Struct) else out

    result = ColumnMapping(mapping.column, schema, convert, null)
    result.custom = True
    return result


class _Truncate(_Rule):
    def __init__(self, patterns: Sequence[str], length: int) -> None:
        super().__init__(patterns)
        self.length = length

    def apply(self, column: Column, mapping: ColumnMapping) -> ColumnMapping | None:
        if column.length is not None and column.length >= 0 and column.length <= self.length:
            return None
        n = self.length

        def cut(v: Any) -> Any:
            return v[:n] if isinstance(v, (str, bytes)) and len(v) > n else v

        return _with(mapping, {"truncateLength": str(n)}, cut, cut(mapping.null))


class _Mask(_Rule):
    def __init__(self, patterns: Sequence[str], length: int) -> None:
        super().__init__(patterns)
        self.mask = "*" * length

    def apply(self, column: Column, mapping: ColumnMapping) -> ColumnMapping | None:
        if column.jdbc_type not in _CHARACTER_JDBC_TYPES:
            return None
        mask = self.mask
        return _with(mapping, {"masked": "true"}, lambda v: mask, mask)


class _Hash(_Rule):
    def __init__(self, patterns: Sequence[str], algorithm: str, salt: str, version: str) -> None:
        super().__init__(patterns)
        self.algorithm, self.salt, self.version = algorithm, salt, version

    def apply(self, column: Column, mapping: ColumnMapping) -> ColumnMapping | None:
        if column.jdbc_type not in _CHARACTER_JDBC_TYPES:
            return None
        algorithm, salt, version = self.algorithm, self.salt, self.version
        limit = column.length if column.length and column.length > 0 else None

        def hashed(v: Any) -> Any:
            digest = debezium_hash(v, algorithm, salt, version)
            return digest[:limit] if digest is not None and limit is not None else digest

        return _with(mapping, {"masked": "true"}, hashed, hashed(mapping.null))


class _Propagate(_Rule):
    def apply(self, column: Column, mapping: ColumnMapping) -> ColumnMapping | None:
        params = {"__debezium.source.column.type": column.type_name.upper()}
        if column.length is not None and column.length != -1:
            params["__debezium.source.column.length"] = str(column.length)
        if column.scale is not None:
            params["__debezium.source.column.scale"] = str(column.scale)
        if column.comment:
            params["__debezium.source.column.comment"] = column.comment
        params["__debezium.source.column.name"] = column.name
        return _with(mapping, params, None, mapping.null)


class ColumnRules:
    """The rules of one connector config, in Debezium's order; :meth:`apply` per column."""

    def __init__(self, props: Mapping[str, Any], by_column: Sequence[str], by_type: Sequence[str]) -> None:
        truncates: list[_Rule] = []
        masks: list[_Rule] = []
        hashes: list[_Rule] = []
        for key, value in props.items():
            patterns = _regexes(str(value))
            if not patterns:
                continue
            if m := _TRUNCATE.fullmatch(key):
                truncates.append(_Truncate(patterns, int(m.group(1))))
            elif m := _MASK.fullmatch(key):
                masks.append(_Mask(patterns, int(m.group(1))))
            elif m := _HASH.fullmatch(key):
                hashes.append(_Hash(patterns, m.group(2), m.group(3), m.group(1) or "v1"))
        self.rules: list[_Rule] = [*truncates, *masks]
        if by_column:
            self.rules.append(_Propagate(by_column))
        if by_type:
            self.rules.append(_Propagate(by_type, by_type=True))
        self.rules.extend(hashes)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def apply(self, table_id: TableId, mapping: ColumnMapping) -> ColumnMapping:
        for rule in self.rules:
            if rule.matches(table_id, mapping.column):
                return rule.apply(mapping.column, mapping) or mapping
        return mapping
