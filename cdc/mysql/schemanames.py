"""``schema.name.adjustment.mode``: Debezium's ``SchemaNameAdjuster`` (now :mod:`cdc.mysql.naming`)."""

from __future__ import annotations

from cdc.mysql.naming import adjust_name

__all__ = ["adjust_schema_name"]


def adjust_schema_name(name: str, mode: str) -> str:
    """``name`` as Debezium's adjuster for ``mode`` (none, avro, avro_unicode) gives it."""
    return adjust_name(name, mode)
