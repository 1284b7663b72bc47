"""The plugin API's errors: the hierarchy of :mod:`cdc.errors`, under the API's name."""

from cdc.errors import (
    AlreadyExistsError,
    ConfigError,
    ConnectError,
    DataError,
    FatalError,
    InvalidOffsetError,
    NotFoundError,
    RetriableError,
    SchemaProjectorError,
)

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
