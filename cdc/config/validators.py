"""Validators for :class:`cdc.config.definition.ConfigKey`, named after Kafka's ``ConfigDef`` ones.

Each is a callable ``(name, value) -> None`` that raises :class:`ConfigError` with Kafka's wording, so
the messages users see from validate are the ones they know.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from cdc.config.definition import Validator
from cdc.errors import ConfigError

__all__ = [
    "Validator",  # re-exported: a validator's type, for the plugins that declare their own
    "at_least",
    "between",
    "case_insensitive_one_of",
    "composite",
    "list_of",
    "non_empty_string",
    "non_null",
    "one_of",
    "predicate",
    "regex",
]


def at_least(minimum: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value is None:
            raise ConfigError("Value must be non-null", name, value)
        if value < minimum:
            raise ConfigError(f"Value must be at least {minimum}", name, value)

    return check


def between(minimum: float, maximum: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value is None:
            raise ConfigError("Value must be non-null", name, value)
        if not minimum <= value <= maximum:
            raise ConfigError(
                f"Value must be no more than {maximum}"
                if value > maximum
                else f"Value must be at least {minimum}",
                name,
                value,
            )

    return check


def one_of(*allowed: str | None) -> Validator:
    def check(name: str, value: Any) -> None:
        if value not in allowed:
            shown = ", ".join(str(a) for a in allowed)
            raise ConfigError(f"String must be one of: {shown}", name, value)

    return check


def case_insensitive_one_of(*allowed: str) -> Validator:
    lowered = {a.lower() for a in allowed}

    def check(name: str, value: Any) -> None:
        if value is None or str(value).lower() not in lowered:
            raise ConfigError("String must be one of (case insensitive): " + ", ".join(allowed), name, value)

    return check


def non_empty_string(name: str, value: Any) -> None:
    if value is not None and not str(value).strip():
        raise ConfigError("String may not be empty", name, value)


def non_null(name: str, value: Any) -> None:
    if value is None:
        raise ConfigError("Value must be non-null", name, value)


def regex(name: str, value: Any) -> None:
    """Each value (or each list item) must compile as a regular expression."""
    items: Iterable[Any] = value if isinstance(value, list) else ([] if value is None else [value])
    for item in items:
        try:
            re.compile(str(item))
        except re.error as exc:
            raise ConfigError(f"Invalid regular expression: {exc}", name, value) from exc


def list_of(item: Validator, allow_empty: bool = True) -> Validator:
    def check(name: str, value: Any) -> None:
        if value is None:
            return
        if not allow_empty and not value:
            raise ConfigError("Empty list not allowed", name, value)
        for v in value:
            item(name, v)

    return check


def composite(*validators: Validator) -> Validator:
    def check(name: str, value: Any) -> None:
        for v in validators:
            v(name, value)

    return check


def predicate(test: Callable[[Any], bool], message: str) -> Validator:
    """A validator from a boolean test and the message to give when it fails."""

    def check(name: str, value: Any) -> None:
        if not test(value):
            raise ConfigError(message, name, value)

    return check
