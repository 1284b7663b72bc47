"""Declarative configuration: each plugin and the worker declare their keys once.

A :class:`ConfigDef` holds :class:`ConfigKey` declarations (name, type, default, validator, importance,
documentation, group, order, recommender). The same declaration

* parses string properties into typed values (:meth:`ConfigDef.parse`),
* validates them key by key for ``PUT /connector-plugins/{p}/config/validate``
  (:meth:`ConfigDef.validate`, giving :class:`ConfigValue` objects),
* describes itself for ``GET /connector-plugins/{p}/config`` (:meth:`ConfigKey.to_info`),
* renders documentation (:meth:`ConfigDef.to_markdown`), and
* masks secrets: PASSWORD values parse into :class:`Password`, whose ``str``/``repr`` is ``[hidden]``,
  and :meth:`ConfigDef.masked` gives a loggable copy of a property map.

Types, importance and width are spelt as Kafka's ``ConfigDef`` spells them, because the REST API shows
them to users.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from cdc.errors import ConfigError

__all__ = [
    "NO_DEFAULT",
    "ConfigDef",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "Importance",
    "Password",
    "Recommender",
    "Validator",
    "Width",
    "convert_to_string",
]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""Marks a required key: parsing fails if it is absent."""


class ConfigType(str, Enum):
    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class Importance(str, Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(str, Enum):
    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class Password:
    """A secret value. Its text shows only through :meth:`value`."""

    HIDDEN = "[hidden]"
    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def value(self) -> str:
        return self._value

    def __str__(self) -> str:
        return self.HIDDEN

    def __repr__(self) -> str:
        return self.HIDDEN

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


Validator = Callable[[str, Any], None]
"""Raises :class:`ConfigError` when a parsed value is not acceptable."""


class Recommender:
    """Suggests values for a key and says whether it is visible, given the other parsed values."""

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return []

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return True


_INT_LIMITS = {
    ConfigType.SHORT: (-(2**15), 2**15 - 1),
    ConfigType.INT: (-(2**31), 2**31 - 1),
    ConfigType.LONG: (-(2**63), 2**63 - 1),
}


def parse_type(name: str, value: Any, type: ConfigType) -> Any:
    """Parse ``value`` (usually a string) as Kafka's ``ConfigDef.parseType`` does."""
    if value is None:
        return None
    try:
        if type is ConfigType.BOOLEAN:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("true", "false"):
                return text == "true"
            raise ConfigError("Expected value to be either true or false", name, value)
        if type is ConfigType.PASSWORD:
            if isinstance(value, Password):
                return value
            if isinstance(value, str):
                return Password(value)
            raise ConfigError("Expected value to be a string, but it was a " + _java_type(value), name, value)
        if type in (ConfigType.STRING, ConfigType.CLASS):
            if isinstance(value, str):
                return value.strip() if type is ConfigType.CLASS else value
            if isinstance(value, (bool, dict, list)):
                raise ConfigError(
                    "Expected value to be a string, but it was a " + _java_type(value), name, value
                )
            return str(value)
        if type in _INT_LIMITS:
            if isinstance(value, bool):
                raise ConfigError("Expected value to be a 32-bit integer, but it was a Boolean", name, value)
            if isinstance(value, float):
                raise ConfigError("Expected value to be a 32-bit integer, but it was a Double", name, value)
            number = int(str(value).strip()) if not isinstance(value, int) else value
            lo, hi = _INT_LIMITS[type]
            if not lo <= number <= hi:
                kind = {ConfigType.SHORT: "16-bit", ConfigType.INT: "32-bit", ConfigType.LONG: "64-bit"}[type]
                raise ConfigError(
                    f"Expected value to be a {kind} integer, but it was out of range", name, value
                )
            return number
        if type is ConfigType.DOUBLE:
            if isinstance(value, bool):
                raise ConfigError("Expected value to be a double, but it was a Boolean", name, value)
            return float(str(value).strip()) if not isinstance(value, (int, float)) else float(value)
        if type is ConfigType.LIST:
            if isinstance(value, (list, tuple)):
                return [str(v) for v in value]
            text = str(value).strip()
            if not text:
                return []
            return [item.strip() for item in re.split(r"\s*,\s*", text)]
    except ValueError as exc:
        raise ConfigError(f"Not a number of type {type.value}", name, value) from exc
    raise ConfigError("Unknown type", name, value)


def _java_type(value: Any) -> str:
    return {bool: "Boolean", int: "Integer", float: "Double", dict: "Map", list: "List"}.get(
        type(value), "Object"
    )


def convert_to_string(value: Any, type: ConfigType | None) -> str | None:
    """Render a parsed value as Kafka's ``ConfigDef.convertToString`` does (passwords hidden)."""
    if value is None:
        return None
    if isinstance(value, Password) or type is ConfigType.PASSWORD:
        return Password.HIDDEN
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, float) and type is ConfigType.DOUBLE:
        return repr(value)
    return str(value)


@dataclass(frozen=True)
class ConfigKey:
    """One declared configuration key."""

    name: str
    type: ConfigType
    default: Any = NO_DEFAULT
    validator: Validator | None = None
    importance: Importance = Importance.MEDIUM
    documentation: str = ""
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str | None = None
    dependents: tuple[str, ...] = ()
    recommender: Recommender | None = None
    internal: bool = False
    aliases: tuple[str, ...] = ()
    """Older names that mean the same key (e.g. Debezium 1.x names); the first one present is used."""

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def parsed_default(self) -> Any:
        if not self.has_default:
            return None
        return parse_type(self.name, self.default, self.type)

    def to_info(self) -> dict[str, Any]:
        """The ``ConfigKeyInfo`` shape of the REST API."""
        return {
            "name": self.name,
            "type": self.type.value,
            "required": not self.has_default,
            "default_value": convert_to_string(self.parsed_default(), self.type)
            if self.has_default
            else None,
            "importance": self.importance.value,
            "documentation": self.documentation,
            "group": self.group,
            "width": self.width.value,
            "display_name": self.display_name or self.name,
            "dependents": list(self.dependents),
            "order": self.order_in_group,
        }


@dataclass
class ConfigValue:
    """The validation result for one key, the ``ConfigValueInfo`` of the REST API."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error(self, message: str) -> None:
        self.errors.append(message)

    def to_info(self, type: ConfigType | None) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": convert_to_string(self.value, type),
            "recommended_values": [convert_to_string(v, type) for v in self.recommended_values],
            "errors": list(self.errors),
            "visible": self.visible,
        }


class ConfigDef:
    """An ordered set of :class:`ConfigKey` declarations."""

    def __init__(self, keys: Iterable[ConfigKey] = ()) -> None:
        self._keys: dict[str, ConfigKey] = {}
        self._groups: list[str] = []
        self._prefixes: tuple[str, ...] = ()
        self._patterns: tuple[re.Pattern[str], ...] = ()
        for key in keys:
            self.add(key)

    # -- declaring ----------------------------------------------------------------------------
    def add(self, key: ConfigKey) -> ConfigDef:
        if key.name in self._keys:
            raise ConfigError(f"Configuration {key.name} is defined twice.")
        if key.has_default and key.default is not None and key.validator is not None:
            key.validator(key.name, key.parsed_default())
        self._keys[key.name] = key
        if key.group and key.group not in self._groups:
            self._groups.append(key.group)
        return self

    def define(
        self,
        name: str,
        type: ConfigType,
        default: Any = NO_DEFAULT,
        validator: Validator | None = None,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        **extra: Any,
    ) -> ConfigDef:
        """Declare a key; ``extra`` takes the other :class:`ConfigKey` fields by name."""
        if "group" in extra and "order_in_group" not in extra:
            extra["order_in_group"] = sum(1 for k in self._keys.values() if k.group == extra["group"]) + 1
        return self.add(ConfigKey(name, type, default, validator, importance, documentation, **extra))

    def accept(self, prefixes: Iterable[str] = (), patterns: Iterable[str] = ()) -> ConfigDef:
        """Declare keys read as a group rather than one by one: every key under one of ``prefixes``
        (client settings handed on) and every key matching one of ``patterns`` whole (names carrying a
        parameter, ``column.mask.with.12.chars``). :meth:`knows` counts them as known."""
        self._prefixes += tuple(prefixes)
        self._patterns += tuple(re.compile(p) for p in patterns)
        return self

    def knows(self, name: str) -> bool:
        """Whether ``name`` is declared, an alias of a declared key, or accepted by :meth:`accept`."""
        if name in self._keys or name.startswith(self._prefixes):
            return True
        if any(p.fullmatch(name) for p in self._patterns):
            return True
        return any(name in key.aliases for key in self._keys.values())

    def closest(self, name: str, cutoff: float = 0.8) -> str | None:
        """The declared key (or alias) ``name`` most likely misspells, if one is close enough."""
        names = list(self._keys) + [a for key in self._keys.values() for a in key.aliases]
        matches = difflib.get_close_matches(name, names, n=1, cutoff=cutoff)
        return matches[0] if matches else None

    def merge(self, other: ConfigDef) -> ConfigDef:
        """A new definition with this one's keys and then ``other``'s (later ones must be new)."""
        merged = ConfigDef(self._keys.values())
        merged._prefixes = self._prefixes + other._prefixes
        merged._patterns = self._patterns + other._patterns
        for key in other.keys():  # noqa: SIM118 - ConfigDef.keys() gives ConfigKeys, it is not a dict
            if key.name not in merged._keys:
                merged.add(key)
        return merged

    def keys(self) -> list[ConfigKey]:
        return list(self._keys.values())

    def names(self) -> list[str]:
        return list(self._keys)

    def groups(self) -> list[str]:
        return list(self._groups)

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __getitem__(self, name: str) -> ConfigKey:
        return self._keys[name]

    # -- parsing and validating ----------------------------------------------------------------
    @staticmethod
    def _raw(key: ConfigKey, props: Mapping[str, Any]) -> tuple[bool, Any]:
        if key.name in props:
            return True, props[key.name]
        for alias in key.aliases:
            if alias in props:
                return True, props[alias]
        return False, None

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values for every declared key; raises :class:`ConfigError` on the first bad one."""
        values: dict[str, Any] = {}
        for key in self._keys.values():
            present, raw = self._raw(key, props)
            if present:
                value = parse_type(key.name, raw, key.type)
            elif key.has_default:
                value = key.parsed_default()
            else:
                raise ConfigError(f'Missing required configuration "{key.name}" which has no default value.')
            if key.validator is not None and (value is not None or not key.has_default or present):
                key.validator(key.name, value)
            values[key.name] = value
        return values

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        """A :class:`ConfigValue` per declared key, with every error found (never raises)."""
        parsed: dict[str, Any] = {}
        results: dict[str, ConfigValue] = {}
        for key in self._keys.values():
            result = ConfigValue(key.name)
            results[key.name] = result
            present, raw = self._raw(key, props)
            try:
                if present:
                    value = parse_type(key.name, raw, key.type)
                elif key.has_default:
                    value = key.parsed_default()
                else:
                    result.add_error(
                        f'Missing required configuration "{key.name}" which has no default value.'
                    )
                    continue
                result.value = value
                parsed[key.name] = value
                if key.validator is not None and (value is not None or present or not key.has_default):
                    key.validator(key.name, value)
            except ConfigError as exc:
                result.add_error(str(exc))
        for key in self._keys.values():
            if key.recommender is None:
                continue
            result = results[key.name]
            try:
                result.recommended_values = key.recommender.valid_values(key.name, parsed)
                result.visible = key.recommender.visible(key.name, parsed)
            except ConfigError as exc:
                result.add_error(str(exc))
        return list(results.values())

    # -- secrets and docs ------------------------------------------------------------------------
    def masked(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``props`` safe to log: PASSWORD keys (and anything secret-looking) hidden."""
        return mask_secrets(props, self)

    def to_markdown(self) -> str:
        lines = ["| key | type | default | importance | description |", "|---|---|---|---|---|"]
        for key in sorted(self._keys.values(), key=lambda k: (k.group or "", k.order_in_group, k.name)):
            if key.internal:
                continue
            default = convert_to_string(key.parsed_default(), key.type) if key.has_default else "(required)"
            doc = key.documentation.replace("|", "\\|").replace("\n", " ")
            lines.append(
                f"| `{key.name}` | {key.type.value} | `{default}` | {key.importance.value} | {doc} |"
            )
        return "\n".join(lines) + "\n"


_SECRET_NAME = re.compile(
    r"(password|secret|credential|sasl\.jaas\.config|(^|\.)key(store|\.password)?$)", re.I
)


def mask_secrets(props: Mapping[str, Any], definition: ConfigDef | None = None) -> dict[str, Any]:
    """Hide the values of PASSWORD keys and of keys whose names look secret (``*.password`` …).

    Undeclared keys count too: connectors receive prefixed client settings (``producer.override.
    sasl.jaas.config``) that no definition of theirs declares.
    """
    out: dict[str, Any] = {}
    for name, value in props.items():
        declared = (
            definition is not None and name in definition and definition[name].type is ConfigType.PASSWORD
        )
        if declared or isinstance(value, Password) or _SECRET_NAME.search(name):
            out[name] = Password.HIDDEN
        else:
            out[name] = value
    return out


def describe(keys: Sequence[ConfigKey]) -> list[dict[str, Any]]:
    """``GET /connector-plugins/{p}/config``: the ConfigKeyInfo list."""
    return [k.to_info() for k in keys if not k.internal]
