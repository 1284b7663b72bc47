"""What both sink classes configure, in one typed, frozen shape the write path reads.

Confluent's and Debezium's keys differ in names and defaults (``pk.mode`` / ``primary.key.mode``,
``auto.create`` + ``auto.evolve`` / ``schema.evolution``, ``table.name.format`` /
``collection.name.format`` …) but mean the same few things; each config module maps its keys onto a
:class:`SinkPlan`, so the buffer, the SQL and the writer never look at a key name.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from enum import Enum

__all__ = ["DEFAULT_KAFKA_PK_NAMES", "InsertMode", "PkMode", "SinkPlan"]

DEFAULT_KAFKA_PK_NAMES = ("__connect_topic", "__connect_partition", "__connect_offset")


class InsertMode(str, Enum):
    INSERT = "insert"
    UPSERT = "upsert"
    UPDATE = "update"


class PkMode(str, Enum):
    NONE = "none"
    KAFKA = "kafka"
    RECORD_KEY = "record_key"
    RECORD_VALUE = "record_value"
    RECORD_HEADER = "record_header"


@dataclass(frozen=True)
class SinkPlan:
    """How records become rows. ``flavour`` is ``confluent`` or ``debezium`` (envelope or flat)."""

    flavour: str
    connection_url: str
    user: str | None
    password: str | None = field(repr=False)
    dialect_name: str
    connection_attempts: int
    connection_backoff_ms: int
    insert_mode: InsertMode
    pk_mode: PkMode
    pk_fields: tuple[str, ...]
    delete_enabled: bool
    truncate_enabled: bool
    auto_create: bool
    auto_evolve: bool
    table_format: str
    field_include: tuple[str, ...]
    """Value fields to write (empty: all). Key columns are written whatever this says."""
    field_exclude: tuple[str, ...]
    batch_size: int
    max_retries: int
    retry_backoff_ms: int
    time_zone: str
    quote: bool
    reduce: bool
    """Collapse the changes to one key inside a batch to its last state."""
    dots_to_underscores: bool = False
    """Debezium's default naming: ``server.db.table`` → ``server_db_table``."""
    postgis_schema: str | None = None
    """Where PostGIS's ``geometry`` type is (Debezium's ``dialect.postgres.postgis.schema``); None: found
    through the search path."""
    replace_null_with_default: bool = False
    """A null field whose schema has a default is written as that default (Confluent's
    ``replace.null.with.default``, its binder's ``Struct.get``); Debezium's sink writes NULL (its record
    writers read ``Struct.getWithoutDefault``)."""

    @property
    def tz(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.time_zone)

    @property
    def keyed(self) -> bool:
        return self.pk_mode is not PkMode.NONE
