"""Custom converters (``converters=…``): Debezium's ``CustomConverter`` SPI as a small Python interface.

A config names converters and gives each a type and options, as for Debezium::

    converters=boolean
    boolean.type=io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter
    boolean.selector=inventory.products.is_active

For every captured column, each converter in turn is asked :meth:`CustomConverter.converter_for`; the
first that answers a :class:`Registration` (a schema builder and a value function) replaces the type
mapping of that column. As in Debezium's ``CustomConverterRegistry`` the registry makes the field
optional when the column is and gives it the converted column default, and the function receives the
value as the source gives it (None for NULL; the function decides what NULL becomes).

``<name>.type`` is one of Debezium's class names below, or the name under which a package installed on the
worker registers a subclass of :class:`CustomConverter` in the plugin registry (the ``cdc.plugins`` entry
point group, :mod:`cdc.plugins`). Nothing else is imported: a module import runs code, and the name comes
from a REST user.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdc.api.schema import SchemaBuilder
from cdc.history.model import Column, TableId
from cdc.mysql.types import ColumnMapping

__all__ = [
    "BUILTIN",
    "ConvertedColumn",
    "CustomConverter",
    "CustomConverters",
    "Registration",
    "TinyIntOneToBooleanConverter",
    "converter_errors",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConvertedColumn:
    """What a converter sees of a column (Debezium's ``RelationalColumn``)."""

    table_id: TableId
    column: Column

    @property
    def data_collection(self) -> str:
        return f"{self.table_id.database}.{self.table_id.table}"

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def type_name(self) -> str:
        return self.column.type_name

    @property
    def length(self) -> int | None:
        return self.column.length

    @property
    def scale(self) -> int | None:
        return self.column.scale

    @property
    def optional(self) -> bool:
        return self.column.optional


@dataclass(frozen=True)
class Registration:
    """A converter's answer for one column: the field's schema and the function of a value."""

    schema: SchemaBuilder
    convert: Callable[[Any], Any]


class CustomConverter(ABC):
    """Debezium's ``CustomConverter``: configured once with its options, then asked per column."""

    def configure(self, props: Mapping[str, str]) -> None:
        """The converter's options (``<name>.<option>`` without the prefix)."""

    @abstractmethod
    def converter_for(self, column: ConvertedColumn) -> Registration | None:
        """A registration for ``column``, or None to leave it to the next converter / the type mapping."""


def _selector(text: str | None) -> Callable[[ConvertedColumn], bool]:
    patterns = [re.compile(p.strip(), re.IGNORECASE) for p in (text or "").split(",") if p.strip()]
    if not patterns:
        return lambda column: True
    return lambda column: any(p.fullmatch(f"{column.data_collection}.{column.name}") for p in patterns)


class TinyIntOneToBooleanConverter(CustomConverter):
    """``TINYINT(1)`` (signed or not) → BOOLEAN, as Debezium's converter of the same name: a number is true
    when above 0; options ``selector`` (db.table.column regexes) and ``length.checker`` (default true:
    only columns declared with length 1)."""

    def configure(self, props: Mapping[str, str]) -> None:
        self.selector = _selector(props.get("selector"))
        self.length_checker = str(props.get("length.checker", "true")).strip().lower() != "false"

    def converter_for(self, column: ConvertedColumn) -> Registration | None:
        if column.type_name.upper() not in ("TINYINT", "TINYINT UNSIGNED"):
            return None
        if self.length_checker and column.length != 1:
            return None
        if not self.selector(column):
            return None

        optional = column.optional

        def convert(value: Any) -> Any:
            if value is None:
                return None if optional else False  # the registry puts a column default first
            if isinstance(value, bool):
                return value
            if isinstance(value, (int, float)):
                return int(value) > 0
            if isinstance(value, (str, bytes)):
                text = value.decode() if isinstance(value, bytes) else value
                try:
                    return int(text) > 0
                except ValueError:
                    return text.strip().lower() == "true"
            log.warning("Cannot convert '%s' to boolean", type(value).__name__)
            return False

        return Registration(SchemaBuilder.bool(), convert)


class JdbcSinkDataTypesConverter(CustomConverter):
    """Debezium's ``JdbcSinkDataTypesConverter``: BOOLEAN → INT16, REAL → FLOAT32/64, string columns →
    STRING with ``__debezium.source.column.character_set``; options ``selector.boolean``,
    ``selector.real``, ``selector.string`` and ``treat.real.as.double`` (default true)."""

    def configure(self, props: Mapping[str, str]) -> None:
        self.booleans = _selector(props.get("selector.boolean"))
        self.reals = _selector(props.get("selector.real"))
        self.strings = _selector(props.get("selector.string"))
        self.real_as_double = str(props.get("treat.real.as.double", "true")).strip().lower() != "false"
        self._given = {k for k in ("selector.boolean", "selector.real", "selector.string") if props.get(k)}

    def converter_for(self, column: ConvertedColumn) -> Registration | None:
        base = column.column.base_type.upper()
        if "selector.boolean" in self._given and self.booleans(column) and base in ("BOOLEAN", "BOOL"):
            return Registration(SchemaBuilder.int16(), lambda v: None if v is None else int(bool(v)))
        if "selector.real" in self._given and self.reals(column) and base == "REAL":
            if self.real_as_double:
                return Registration(SchemaBuilder.float64(), lambda v: None if v is None else float(v))
            return Registration(SchemaBuilder.float32(), lambda v: None if v is None else float(v))
        if "selector.string" in self._given and self.strings(column) and column.column.charset_name:
            builder = SchemaBuilder.string().parameter(
                "__debezium.source.column.character_set", column.column.charset_name
            )
            return Registration(builder, lambda v: None if v is None else str(v))
        return None


BUILTIN: dict[str, type[CustomConverter]] = {
    "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter": TinyIntOneToBooleanConverter,
    "io.debezium.connector.mysql.converters.TinyIntOneToBooleanConverter": TinyIntOneToBooleanConverter,
    "io.debezium.connector.binlog.converters.JdbcSinkDataTypesConverter": JdbcSinkDataTypesConverter,
    "io.debezium.connector.mysql.converters.JdbcSinkDataTypesConverter": JdbcSinkDataTypesConverter,
}
"""Debezium's converters by the class names users write (the 2.x ``mysql`` package and 3.x ``binlog``)."""


def _load(type_name: str, key: str = "type") -> type[CustomConverter]:
    """The converter class a config names: one of :data:`BUILTIN`, or a :class:`CustomConverter` registered
    in the plugin registry (:mod:`cdc.plugins`: the ``cdc.plugins`` entry points of packages installed on
    the worker). A name is never imported as it is written: a config cannot make the worker import a module
    of its choosing (any module import runs code). Raises :class:`ValueError` in Connect's words."""
    name = type_name.strip()
    builtin = BUILTIN.get(name)
    if builtin is not None:
        return builtin
    from cdc.api.errors import ConnectError
    from cdc.plugins import registry

    missing = f"Invalid value {name} for configuration {key}: Class {name} could not be found."
    if name.startswith("io.debezium."):
        raise ValueError(f"{missing} It is not one of cdc's converters ({', '.join(sorted(BUILTIN))})")
    if name not in registry.names():  # checked before load(): nothing is imported for an unknown name
        raise ValueError(
            f"{missing} A custom converter is a subclass of cdc.mysql.converters.CustomConverter "
            "registered in the cdc.plugins entry point group by a package installed on the worker"
        )
    try:
        cls = registry.load(name)
    except ConnectError as exc:
        raise ValueError(f"{missing} {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, CustomConverter)):
        raise ValueError(
            f"Invalid value {name} for configuration {key}: Class {name} is not a subclass of "
            "cdc.mysql.converters.CustomConverter"
        )
    return cls


def _options(props: Mapping[str, Any], name: str) -> dict[str, str]:
    prefix = f"{name}."
    return {
        k[len(prefix) :]: str(v) for k, v in props.items() if k.startswith(prefix) and k != prefix + "type"
    }


def converter_errors(names: Sequence[str], props: Mapping[str, Any]) -> dict[str, str]:
    """Validate errors by key for the converters a config names."""
    errors: dict[str, str] = {}
    for name in names:
        key = f"{name}.type"
        type_name = props.get(key)
        if not type_name:
            errors["converters"] = f"The converter '{name}' has no '{key}'"
            continue
        try:
            _load(str(type_name), key)
        except ValueError as exc:
            errors[key] = str(exc)
    return errors


class CustomConverters:
    """The configured converters of a connector, applied per column (see the module docstring)."""

    def __init__(self, props: Mapping[str, Any], names: Sequence[str]) -> None:
        self.converters: list[CustomConverter] = []
        for name in names:
            converter = _load(str(props[f"{name}.type"]), f"{name}.type")()
            converter.configure(_options(props, name))
            self.converters.append(converter)

    def __bool__(self) -> bool:
        return bool(self.converters)

    def apply(self, table_id: TableId, mapping: ColumnMapping, default: Any) -> ColumnMapping:
        """``mapping`` replaced by the first converter's registration; ``default`` is the column's default
        as a source value (None when it has none)."""
        column = ConvertedColumn(table_id, mapping.column)
        for converter in self.converters:
            registration = converter.converter_for(column)
            if registration is None:
                continue
            builder, convert = registration.schema, registration.convert
            if column.optional:
                builder.optional()
            if default is not None:
                builder.default_value(convert(default))
            null = None if column.optional else (convert(default) if default is not None else convert(None))
            result = ColumnMapping(mapping.column, builder.build(), convert, null)
            result.custom = True
            return result
        return mapping
