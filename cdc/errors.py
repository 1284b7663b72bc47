"""The error hierarchy of cdc, raised by plugins and the runtime alike (re-exported by :mod:`cdc.api.errors`).

::

    ConnectError                       anything raised by a plugin or the runtime
    ├── RetriableError                 transient: back off and try the same call again
    ├── DataError                      a value does not fit its schema or cannot be (de)serialized
    │   └── SchemaProjectorError
    ├── ConfigError                    a configuration is invalid (validate explains it per key)
    ├── InvalidOffsetError             an offset given over REST has the wrong shape (names the field)
    ├── NotFoundError                  a named connector, task or plugin does not exist
    ├── AlreadyExistsError             a connector with that name exists already
    └── FatalError                     terminal: the task must stop (FAILED with a trace)

A task loop decides in one place: ``RetriableError`` is retried, everything else fails the task. The
module sits below every package (the config declarations raise ``ConfigError`` too, and the plugin API
builds on them), so that none of them imports another in a circle.
"""

from __future__ import annotations

__all__ = [
    "AlreadyExistsError",
    "ConfigError",
    "ConnectError",
    "DataError",
    "FatalError",
    "InvalidOffsetError",
    "NotFoundError",
    "RetriableError",
    "SchemaProjectorError",
]


class ConnectError(Exception):
    """Base of every error raised by plugins and the runtime."""


class RetriableError(ConnectError):
    """A transient failure: the same operation may succeed when tried again."""


class DataError(ConnectError):
    """A value does not match its schema, or cannot be converted."""


class SchemaProjectorError(DataError):
    """A value cannot be projected from one schema version onto another."""


class ConfigError(ConnectError):
    """A configuration value is missing or invalid."""

    def __init__(self, message: str, name: str | None = None, value: object = None) -> None:
        if name is not None:
            message = f"Invalid value {value} for configuration {name}: {message}"
        super().__init__(message)
        self.name = name
        self.value = value


class NotFoundError(ConnectError):
    """A connector, task, plugin or logger with that name does not exist."""


class AlreadyExistsError(ConnectError):
    """A connector with that name exists already."""


class FatalError(ConnectError):
    """A terminal failure: retrying cannot help."""


class InvalidOffsetError(ConnectError):
    """An offset a connector could not resume from; ``field`` names the offending key."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"Invalid offset: '{field}' {problem}")
        self.field = field
