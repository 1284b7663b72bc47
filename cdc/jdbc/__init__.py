"""The JDBC polling source, compatible with Confluent's ``io.confluent.connect.jdbc.JdbcSourceConnector``.

Modules: ``config`` (keys and defaults), ``url`` (JDBC URLs), ``dialects`` (MySQL/MariaDB, PostgreSQL,
SQLite), ``tables`` (ids, filters, task grouping), ``types`` (column → Connect schema and values),
``criteria`` (the SQL per mode), ``offsets`` (Confluent's partitions and offsets), ``querier`` (one table
polled in one mode), ``task`` and ``connector``. ``docs/jdbc.md`` describes the keys and modes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdc.jdbc.config import JDBC_SOURCE_DEF, JdbcSourceSettings
    from cdc.jdbc.connector import JdbcSourceConnector
    from cdc.jdbc.offsets import TimestampIncrementingOffset
    from cdc.jdbc.task import JdbcSourceTask

__all__ = [
    "JDBC_SOURCE_DEF",
    "PLUGINS",
    "JdbcSourceConnector",
    "JdbcSourceSettings",
    "JdbcSourceTask",
    "TimestampIncrementingOffset",
]

_SOURCE = "cdc.jdbc.connector:JdbcSourceConnector"

PLUGINS: dict[str, str] = {
    "io.confluent.connect.jdbc.JdbcSourceConnector": _SOURCE,
    "JdbcSourceConnector": _SOURCE,
    "JdbcSource": _SOURCE,
}

_LAZY = {
    "JDBC_SOURCE_DEF": "cdc.jdbc.config",
    "JdbcSourceSettings": "cdc.jdbc.config",
    "JdbcSourceConnector": "cdc.jdbc.connector",
    "JdbcSourceTask": "cdc.jdbc.task",
    "TimestampIncrementingOffset": "cdc.jdbc.offsets",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
