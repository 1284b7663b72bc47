"""Errors of the schema history.

::

    ConnectError
    └── SchemaHistoryError               the history cannot be stored, read or applied
        └── UnparseableDdlError          a DDL statement we cannot understand (``skip.unparseable.ddl``)
    FatalError
    └── SchemaHistoryMissingError        offsets exist but the history is gone (Debezium's message)
"""

from __future__ import annotations

from cdc.api.errors import ConnectError, FatalError

__all__ = [
    "HISTORY_MISSING_MESSAGE",
    "SchemaHistoryError",
    "SchemaHistoryMissingError",
    "UnparseableDdlError",
]

HISTORY_MISSING_MESSAGE = (
    "The db history topic or its content is fully or partially missing. "
    "Please check database schema history topic configuration and re-execute the snapshot."
)
"""Debezium's text for a missing or empty history while the connector has offsets."""


class SchemaHistoryError(ConnectError):
    """The schema history cannot be stored, read or applied."""


class UnparseableDdlError(SchemaHistoryError):
    """A DDL statement the parser cannot understand; the caller may skip it (``skip.unparseable.ddl``)."""

    def __init__(self, message: str, ddl: str | None = None) -> None:
        if ddl is not None:
            shown = ddl if len(ddl) <= 500 else ddl[:500] + "…"
            message = f"{message}; DDL: {shown}"
        super().__init__(message)
        self.ddl = ddl


class SchemaHistoryMissingError(FatalError):
    """The connector has offsets but its schema history is missing or empty."""

    def __init__(self, message: str = HISTORY_MISSING_MESSAGE) -> None:
        super().__init__(message)
