"""``io.confluent.connect.jdbc.JdbcSinkConnector``'s keys, defaults and messages (JdbcSinkConfig 10.x).

Enumerations are checked as Confluent's ``EnumValidator`` does (lower or upper case, "Invalid
enumerator"); ``delete.enabled`` needs ``pk.mode=record_key`` (the connector's validate adds "'none' is
invalid: Deletes are only supported for pk.mode 'record_key'"); upsert and update need a key mode (which
Confluent only finds when the first record arrives: we say so at validate). ``table.types``,
``db.timezone.date``, ``mssql.use.merge.holdlock`` and ``trim.sensitive.log`` are accepted; the first
two are documented in ``docs/jdbc-sink.md``, the last two do not apply to our dialects.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConfigError
from cdc.config import NO_DEFAULT, ConfigDef, Password
from cdc.config import validators as v
from cdc.config.settings import setting, settings_from
from cdc.config.shorthands import INT, LO, LST, B, H, L, M, P, S
from cdc.jdbcsink.plan import DEFAULT_KAFKA_PK_NAMES, InsertMode, PkMode, SinkPlan

__all__ = ["CONFLUENT_SINK_DEF", "ConfluentSinkSettings", "enumerator", "time_zone"]


def enumerator(*values: str) -> v.Validator:
    """Confluent's ``EnumValidator``: the lower- or upper-case spelling of one of ``values``."""
    valid = {x.lower() for x in values} | {x.upper() for x in values}

    def check(name: str, value: Any) -> None:
        if value not in valid:
            raise ConfigError("Invalid enumerator", name, value)

    return check


def time_zone(name: str, value: Any) -> None:
    try:
        zoneinfo.ZoneInfo(str(value))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"Invalid time zone identifier: {value}", name, value) from exc


def _def() -> ConfigDef:
    d = ConfigDef()
    g = {"group": "Connection"}
    d.define(
        "connection.url",
        S,
        NO_DEFAULT,
        None,
        H,
        "JDBC connection URL: jdbc:postgresql://host:port/db, jdbc:mysql://…, jdbc:mariadb://… or "
        "jdbc:sqlite:path.",
        display_name="JDBC URL",
        **g,
    )
    d.define("connection.user", S, None, None, H, "JDBC connection user.", display_name="JDBC User", **g)
    d.define(
        "connection.password",
        P,
        None,
        None,
        H,
        "JDBC connection password.",
        display_name="JDBC Password",
        **g,
    )
    d.define(
        "dialect.name",
        S,
        "",
        None,
        LO,
        "The database dialect; empty means chosen from the JDBC URL (PostgreSqlDatabaseDialect, "
        "MySqlDatabaseDialect, SqliteDatabaseDialect).",
        **g,
    )
    d.define(
        "connection.attempts",
        INT,
        3,
        v.at_least(1),
        LO,
        "Maximum number of attempts to retrieve a valid JDBC connection. Must be a positive integer.",
        **g,
    )
    d.define(
        "connection.backoff.ms",
        L,
        10000,
        None,
        LO,
        "Backoff time in milliseconds between connection attempts.",
        **g,
    )
    g = {"group": "Writes"}
    d.define(
        "insert.mode",
        S,
        "insert",
        enumerator("insert", "upsert", "update"),
        H,
        "insert: plain INSERT; upsert: the database's upsert (ON CONFLICT … DO UPDATE, ON DUPLICATE KEY "
        "UPDATE); update: UPDATE of existing rows only.",
        **g,
    )
    d.define(
        "batch.size",
        INT,
        3000,
        v.at_least(0),
        M,
        "Records written together in one database transaction (batches are built across polls).",
        **g,
    )
    d.define(
        "delete.enabled",
        B,
        False,
        None,
        M,
        "Whether to treat null record values (tombstones) as deletes. Requires pk.mode to be record_key.",
        **g,
    )
    d.define(
        "table.types",
        LST,
        "TABLE",
        v.list_of(enumerator("TABLE", "VIEW", "PARTITIONED_TABLE")),
        LO,
        "Types of tables the sink may write to: TABLE, PARTITIONED_TABLE, VIEW.",
        **g,
    )
    g = {"group": "Data Mapping"}
    d.define(
        "table.name.format",
        S,
        "${topic}",
        v.non_empty_string,
        M,
        "The destination table name; ${topic} is replaced by the record's topic. Dots separate "
        "schema (PostgreSQL) or database (MySQL) and table.",
        **g,
    )
    d.define(
        "pk.mode",
        S,
        "none",
        enumerator("none", "kafka", "record_key", "record_value"),
        H,
        "none: no key; kafka: the topic, partition and offset; record_key: field(s) of the record key "
        "(a primitive or a struct); record_value: field(s) of the record value.",
        **g,
    )
    d.define(
        "pk.fields",
        LST,
        "",
        None,
        M,
        "The key fields. kafka: three column names (default __connect_topic,__connect_partition,"
        "__connect_offset); record_key: empty means every field of the key struct, one name for a "
        "primitive key; record_value: empty means every field of the value.",
        **g,
    )
    d.define(
        "fields.whitelist",
        LST,
        "",
        None,
        M,
        "Value fields to write; empty means all. Key columns are chosen by pk.fields alone.",
        **g,
    )
    d.define(
        "db.timezone",
        S,
        "UTC",
        time_zone,
        M,
        "Time zone of the database's zone-less date/time columns: Connect Timestamps are written as "
        "wall time in this zone.",
        **g,
    )
    d.define(
        "db.timezone.date",
        S,
        "NONE",
        enumerator("NONE", "UTC"),
        LO,
        "Accepted for compatibility; Connect Dates are written as dates, whatever the zone.",
        **g,
    )
    g = {"group": "DDL Support"}
    d.define(
        "auto.create",
        B,
        False,
        None,
        M,
        "Create the destination table from the record schema when it is missing (CREATE TABLE).",
        **g,
    )
    d.define(
        "auto.evolve",
        B,
        False,
        None,
        M,
        "Add the columns the record schema has and the table lacks (ALTER TABLE … ADD, nullable).",
        **g,
    )
    d.define(
        "quote.sql.identifiers",
        S,
        "ALWAYS",
        v.case_insensitive_one_of("ALWAYS", "NEVER"),
        M,
        "Whether table and column names are quoted in the SQL.",
        **g,
    )
    d.define(
        "mssql.use.merge.holdlock",
        B,
        True,
        None,
        LO,
        "SQL Server only; accepted and ignored.",
        group="DML Support",
    )
    g = {"group": "Retries"}
    d.define(
        "max.retries",
        INT,
        10,
        v.at_least(0),
        M,
        "The maximum number of times to retry on errors before failing the task.",
        **g,
    )
    d.define(
        "retry.backoff.ms",
        INT,
        3000,
        v.at_least(0),
        M,
        "The time in milliseconds to wait following an error before a retry attempt is made.",
        **g,
    )
    d.define(
        "replace.null.with.default",
        B,
        True,
        None,
        M,
        "Whether to replace fields that have a default value and that are null to the default value. When set"
        " to true, the default value is used, otherwise null is used.",
        group="Writes",
    )
    d.define("trim.sensitive.log", B, False, None, LO, "Accepted; values are never logged.", internal=True)
    return d


CONFLUENT_SINK_DEF = _def()


@dataclass(frozen=True)
class ConfluentSinkSettings:
    """The parsed configuration, one field per key of :data:`CONFLUENT_SINK_DEF`."""

    raw: Mapping[str, str]
    connection_url: str = setting("connection.url")
    connection_user: str | None = setting("connection.user")
    _connection_password: Password | None = setting("connection.password")
    dialect_name: str = setting("dialect.name")
    connection_attempts: int = setting("connection.attempts")
    connection_backoff_ms: int = setting("connection.backoff.ms")
    insert_mode: str = setting("insert.mode")
    batch_size: int = setting("batch.size")
    delete_enabled: bool = setting("delete.enabled")
    table_types: tuple[str, ...] = setting("table.types")
    table_name_format: str = setting("table.name.format")
    pk_mode: str = setting("pk.mode")
    pk_fields: tuple[str, ...] = setting("pk.fields")
    fields_whitelist: tuple[str, ...] = setting("fields.whitelist")
    db_timezone: str = setting("db.timezone")
    db_timezone_date: str = setting("db.timezone.date")
    auto_create: bool = setting("auto.create")
    auto_evolve: bool = setting("auto.evolve")
    quote_sql_identifiers: str = setting("quote.sql.identifiers")
    mssql_use_merge_holdlock: bool = setting("mssql.use.merge.holdlock")
    max_retries: int = setting("max.retries")
    retry_backoff_ms: int = setting("retry.backoff.ms")
    replace_null_with_default: bool = setting("replace.null.with.default")
    trim_sensitive_log: bool = setting("trim.sensitive.log")

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> ConfluentSinkSettings:
        return settings_from(cls, CONFLUENT_SINK_DEF.parse(props), raw=dict(props))

    @property
    def password(self) -> str | None:
        p = self._connection_password
        return p.value() if isinstance(p, Password) else p

    def problems(self) -> dict[str, str]:
        """Cross-key rules, by the key they are reported on."""
        out: dict[str, str] = {}
        pk_mode = self.pk_mode.lower()
        if self.delete_enabled and pk_mode != PkMode.RECORD_KEY.value:
            out["pk.mode"] = (
                f"'{self.pk_mode}' is invalid: Deletes are only supported for pk.mode 'record_key'"
            )
        elif self.insert_mode.lower() != InsertMode.INSERT.value and pk_mode == PkMode.NONE.value:
            out["pk.mode"] = (
                f"'{self.pk_mode}' is invalid: insert.mode {self.insert_mode.lower()} requires key field "
                "names to be known, check the primary key configuration (pk.mode)"
            )
        if pk_mode == PkMode.KAFKA.value and self.pk_fields and len(self.pk_fields) != 3:
            out["pk.fields"] = (
                "PK mode for table is KAFKA so there should either be no field names defined for "
                "defaults " + ",".join(DEFAULT_KAFKA_PK_NAMES) + " to be applicable, or exactly 3"
            )
        return out

    def check(self) -> None:
        problems = self.problems()
        if "pk.mode" in problems and self.delete_enabled and self.pk_mode.lower() != "record_key":
            raise ConfigError("Primary key mode must be 'record_key' when delete support is enabled")
        for message in problems.values():
            raise ConfigError(message)

    def plan(self) -> SinkPlan:
        pk_mode = PkMode(self.pk_mode.lower())
        insert_mode = InsertMode(self.insert_mode.lower())
        pk_fields = self.pk_fields
        if pk_mode is PkMode.KAFKA and not pk_fields:
            pk_fields = DEFAULT_KAFKA_PK_NAMES
        return SinkPlan(
            flavour="confluent",
            connection_url=self.connection_url,
            user=self.connection_user,
            password=self.password,
            dialect_name=self.dialect_name,
            connection_attempts=self.connection_attempts,
            connection_backoff_ms=self.connection_backoff_ms,
            insert_mode=insert_mode,
            pk_mode=pk_mode,
            pk_fields=tuple(f for f in pk_fields if f),
            delete_enabled=self.delete_enabled,
            truncate_enabled=False,
            auto_create=self.auto_create,
            auto_evolve=self.auto_evolve,
            table_format=self.table_name_format.strip(),
            field_include=tuple(f for f in self.fields_whitelist if f),
            field_exclude=(),
            batch_size=self.batch_size,
            max_retries=self.max_retries,
            retry_backoff_ms=self.retry_backoff_ms,
            time_zone=self.db_timezone,
            quote=self.quote_sql_identifiers.upper() != "NEVER",
            reduce=pk_mode is not PkMode.NONE and insert_mode is not InsertMode.INSERT,
            replace_null_with_default=self.replace_null_with_default,
        )
