"""Frozen, typed settings objects built from a config definition.

A connector declares its keys once (a :class:`~cdc.config.definition.ConfigDef`) and reads them as the
attributes of a frozen dataclass, each field bound to its key with :func:`setting`. :func:`settings_from`
fills the fields from the values the definition parsed, so a value is converted and validated in one
place and the code that uses it reads ``settings.poll_interval_ms`` (an ``int``) rather than
``int(settings["poll.interval.ms"])``. :func:`unbound_keys` lets a test check that every declared key has
its field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from cdc.config.definition import ConfigDef

__all__ = ["setting", "setting_keys", "settings_from", "unbound_keys"]

_KEY = "config_key"
T = TypeVar("T")


def setting(key: str, default: Any = dataclasses.MISSING) -> Any:
    """A dataclass field holding the parsed value of config ``key``; ``default`` (the key's own) lets a
    test build the settings by hand with only the fields it cares about."""
    return dataclasses.field(default=default, metadata={_KEY: key})


def setting_keys(cls: type) -> dict[str, str]:
    """Field name → config key, for the fields of ``cls`` bound with :func:`setting`."""
    return {f.name: f.metadata[_KEY] for f in dataclasses.fields(cls) if _KEY in f.metadata}


def settings_from(cls: type[T], values: Mapping[str, Any], **others: Any) -> T:
    """An instance of ``cls`` whose bound fields take ``values`` (a ``ConfigDef.parse`` result); LIST
    values become tuples, so that the object is immutable through and through. ``others`` fill the
    fields bound to no key."""
    kwargs = {
        name: tuple(values[key]) if isinstance(values[key], list) else values[key]
        for name, key in setting_keys(cls).items()
    }
    return cls(**kwargs, **others)


def unbound_keys(cls: type, definition: ConfigDef) -> list[str]:
    """The keys of ``definition`` no field of ``cls`` is bound to."""
    bound = set(setting_keys(cls).values())
    return sorted(k for k in definition.names() if k not in bound)
