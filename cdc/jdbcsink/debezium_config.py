"""``io.debezium.connector.jdbc.JdbcSinkConnector``'s keys and defaults (Debezium 3.x JdbcSinkConnectorConfig
and the shared SinkConnectorConfig).

Debezium parses its enumerations leniently (an unknown ``insert.mode`` is ``insert``); we refuse unknown
values loudly instead, with the allowed ones in the message. The connection pool (``connection.pool.*``,
``connection.provider``) and Hibernate (``hibernate.*``) keys are accepted and have no effect: cdc holds
one connection per task and writes its own SQL. ``database.time_zone`` is the old name of
``use.time.zone``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cdc.api.errors import ConfigError
from cdc.config import NO_DEFAULT, ConfigDef, Password
from cdc.config import validators as v
from cdc.config.settings import setting, settings_from
from cdc.config.shorthands import INT, LO, B, H, L, M, P, S
from cdc.jdbcsink.confluent_config import time_zone
from cdc.jdbcsink.plan import InsertMode, PkMode, SinkPlan

__all__ = ["DEBEZIUM_SINK_DEF", "DebeziumSinkSettings"]

NA = "Not applicable to cdc (no connection pool, no Hibernate): accepted and ignored."


def _lower_one_of(*values: str) -> v.Validator:
    return v.case_insensitive_one_of(*values)


def _def() -> ConfigDef:
    d = ConfigDef()
    g = {"group": "Connection"}
    d.define("connection.url", S, NO_DEFAULT, v.non_empty_string, H, "Valid JDBC URL", **g)
    d.define(
        "connection.username",
        S,
        NO_DEFAULT,
        None,
        H,
        "Name of the database user to be used when connecting to the connection.",
        **g,
    )
    d.define(
        "connection.password",
        P,
        None,
        None,
        H,
        "Password of the database user to be used when connecting to the connection.",
        **g,
    )
    d.define(
        "connection.provider", S, "org.hibernate.c3p0.internal.C3P0ConnectionProvider", None, LO, NA, **g
    )
    d.define("connection.pool.min_size", INT, 5, None, LO, NA, **g)
    d.define("connection.pool.max_size", INT, 32, None, LO, NA, **g)
    d.define("connection.pool.acquire_increment", INT, 32, None, LO, NA, **g)
    d.define("connection.pool.timeout", L, 1800, None, LO, NA, **g)
    d.define(
        "connection.restart.on.errors",
        B,
        False,
        None,
        LO,
        "Accepted; cdc always reconnects after a connection error (within flush.max.retries).",
        **g,
    )
    g = {"group": "Connector"}
    d.define(
        "insert.mode",
        S,
        "insert",
        _lower_one_of("insert", "upsert", "update"),
        LO,
        "insert: plain INSERT; upsert: the database's upsert (needs primary.key.mode); update: UPDATE.",
        **g,
    )
    d.define(
        "delete.enabled",
        B,
        False,
        None,
        LO,
        "Whether to delete rows for op=d events and tombstones (needs primary.key.mode=record_key).",
        **g,
    )
    d.define("truncate.enabled", B, False, None, LO, "Whether to truncate the table for op=t events.", **g)
    d.define(
        "collection.name.format",
        S,
        "${topic}",
        None,
        M,
        "The destination table: ${topic} (dots become underscores, as Debezium's default naming "
        "strategy does), ${source.db}, ${source.schema}, ${source.table}.",
        **g,
    )
    d.define(
        "primary.key.mode",
        S,
        "none",
        _lower_one_of("none", "kafka", "record_key", "record_value", "record_header"),
        M,
        "none, kafka (__connect_topic/partition/offset), record_key, record_value or record_header.",
        **g,
    )
    d.define(
        "primary.key.fields",
        S,
        None,
        None,
        LO,
        "Comma-separated key field names; empty means all fields of the key (or value/header struct).",
        **g,
    )
    d.define(
        "schema.evolution",
        S,
        "none",
        _lower_one_of("none", "basic"),
        LO,
        "none: the table must exist and match; basic: created when missing, new fields added as "
        "nullable columns.",
        **g,
    )
    d.define(
        "quote.identifiers",
        B,
        False,
        None,
        LO,
        "Whether table and column names are quoted in the SQL.",
        **g,
    )
    d.define(
        "use.time.zone",
        S,
        "UTC",
        time_zone,
        M,
        "The time zone used when inserting temporal values. Defaults to UTC.",
        aliases=("database.time_zone",),
        **g,
    )
    d.define(
        "batch.size",
        INT,
        500,
        v.at_least(1),
        M,
        "Records written together in one database transaction (batches are built across polls).",
        **g,
    )
    d.define(
        "use.reduction.buffer",
        B,
        False,
        None,
        M,
        "Collapse changes to one key inside a batch to the last one. cdc always does so in upsert "
        "and update modes (the result is the same); true also does it in insert mode.",
        **g,
    )
    d.define(
        "field.include.list", S, "", None, LO, "Fields to write (fully qualified topic:field or field).", **g
    )
    d.define("field.exclude.list", S, "", None, LO, "Fields not to write (topic:field or field).", **g)
    d.define(
        "collection.naming.strategy",
        S,
        "io.debezium.sink.naming.DefaultCollectionNamingStrategy",
        v.one_of("io.debezium.sink.naming.DefaultCollectionNamingStrategy"),
        LO,
        "Only Debezium's default strategy is supported.",
        **g,
    )
    d.define(
        "column.naming.strategy",
        S,
        "io.debezium.connector.jdbc.naming.DefaultColumnNamingStrategy",
        v.one_of("io.debezium.connector.jdbc.naming.DefaultColumnNamingStrategy"),
        LO,
        "Only Debezium's default strategy (field name = column name) is supported.",
        **g,
    )
    d.define("collection.table.format", S, "${table}", None, LO, "Accepted; see collection.name.format.", **g)
    g = {"group": "Advanced"}
    d.define(
        "dialect.postgres.unnest.insert.enabled",
        B,
        False,
        None,
        M,
        "Accepted: cdc always writes a batch with multi-row statements.",
        **g,
    )
    d.define(
        "dialect.postgres.postgis.schema",
        S,
        "public",
        None,
        LO,
        "Name of the schema where the PostGIS extension is installed. Geometry fields land as PostGIS "
        "geometry when the database has that type there, as WKB bytes (bytea) otherwise.",
        **g,
    )
    d.define("dialect.sqlserver.identity.insert", B, False, None, LO, "SQL Server only; ignored.", **g)
    d.define(
        "flush.max.retries",
        INT,
        5,
        v.at_least(0),
        LO,
        "Retries of a batch that failed for a connection or a transient database error.",
        **g,
    )
    d.define("flush.retry.delay.ms", L, 1000, v.at_least(0), LO, "Delay between those retries.", **g)
    d.define("cloudevents.schema.name.pattern", S, None, None, LO, "Not supported; accepted.", **g)
    d.accept(prefixes=("hibernate.",))
    return d


DEBEZIUM_SINK_DEF = _def()


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


@dataclass(frozen=True)
class DebeziumSinkSettings:
    """The parsed configuration, one field per key of :data:`DEBEZIUM_SINK_DEF`."""

    raw: Mapping[str, str]
    connection_url: str = setting("connection.url")
    connection_username: str = setting("connection.username")
    _connection_password: Password | None = setting("connection.password")
    connection_provider: str = setting("connection.provider")
    connection_pool_min_size: int = setting("connection.pool.min_size")
    connection_pool_max_size: int = setting("connection.pool.max_size")
    connection_pool_acquire_increment: int = setting("connection.pool.acquire_increment")
    connection_pool_timeout: int = setting("connection.pool.timeout")
    connection_restart_on_errors: bool = setting("connection.restart.on.errors")
    insert_mode: str = setting("insert.mode")
    delete_enabled: bool = setting("delete.enabled")
    truncate_enabled: bool = setting("truncate.enabled")
    collection_name_format: str = setting("collection.name.format")
    primary_key_mode: str = setting("primary.key.mode")
    primary_key_fields: str | None = setting("primary.key.fields")
    schema_evolution: str = setting("schema.evolution")
    quote_identifiers: bool = setting("quote.identifiers")
    use_time_zone: str = setting("use.time.zone")
    batch_size: int = setting("batch.size")
    use_reduction_buffer: bool = setting("use.reduction.buffer")
    field_include_list: str = setting("field.include.list")
    field_exclude_list: str = setting("field.exclude.list")
    collection_naming_strategy: str = setting("collection.naming.strategy")
    column_naming_strategy: str = setting("column.naming.strategy")
    collection_table_format: str = setting("collection.table.format")
    dialect_postgres_unnest_insert_enabled: bool = setting("dialect.postgres.unnest.insert.enabled")
    dialect_postgres_postgis_schema: str = setting("dialect.postgres.postgis.schema")
    dialect_sqlserver_identity_insert: bool = setting("dialect.sqlserver.identity.insert")
    flush_max_retries: int = setting("flush.max.retries")
    flush_retry_delay_ms: int = setting("flush.retry.delay.ms")
    cloudevents_schema_name_pattern: str | None = setting("cloudevents.schema.name.pattern")

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> DebeziumSinkSettings:
        return settings_from(cls, DEBEZIUM_SINK_DEF.parse(props), raw=dict(props))

    @property
    def password(self) -> str | None:
        p = self._connection_password
        return p.value() if isinstance(p, Password) else p

    def problems(self) -> dict[str, str]:
        """Debezium's cross-key rules (its validateInsertMode / validateDeleteEnabled), by key."""
        out: dict[str, str] = {}
        mode = self.primary_key_mode.lower()
        if self.insert_mode.lower() == "upsert" and "primary.key.mode" not in self.raw:
            if "primary.key.fields" not in self.raw:
                out["insert.mode"] = (
                    "When using UPSERT, please define 'primary.key.mode' and 'primary.key.fields'."
                )
            else:
                out["insert.mode"] = "When using UPSERT, please define 'primary.key.mode'."
        elif self.insert_mode.lower() != "insert" and mode == "none":
            out["insert.mode"] = (
                f"insert.mode {self.insert_mode.lower()} needs a primary.key.mode other than none."
            )
        if self.delete_enabled and mode != "record_key":
            out["delete.enabled"] = (
                "When 'delete.enabled' is set to 'true', the 'primary.key.mode' option must be set to "
                "'record_key'."
            )
        if self.field_include_list.strip() and self.field_exclude_list.strip():
            out["field.exclude.list"] = (
                "Cannot define both column.exclude.list and column.include.list. Please specify only one."
            )
        return out

    def check(self) -> None:
        for message in self.problems().values():
            raise ConfigError(message)

    def plan(self) -> SinkPlan:
        insert_mode = InsertMode(self.insert_mode.lower())
        pk_mode = PkMode(self.primary_key_mode.lower())
        evolve = self.schema_evolution.lower() == "basic"
        return SinkPlan(
            flavour="debezium",
            connection_url=self.connection_url,
            user=self.connection_username,
            password=self.password,
            dialect_name="",
            connection_attempts=1,
            connection_backoff_ms=0,
            insert_mode=insert_mode,
            pk_mode=pk_mode,
            pk_fields=_names(self.primary_key_fields),
            delete_enabled=self.delete_enabled,
            truncate_enabled=self.truncate_enabled,
            auto_create=evolve,
            auto_evolve=evolve,
            table_format=self.collection_name_format.strip() or "${topic}",
            field_include=_names(self.field_include_list),
            field_exclude=_names(self.field_exclude_list),
            batch_size=self.batch_size,
            max_retries=self.flush_max_retries,
            retry_backoff_ms=self.flush_retry_delay_ms,
            time_zone=self.use_time_zone,
            quote=self.quote_identifiers,
            reduce=pk_mode is not PkMode.NONE
            and (insert_mode is not InsertMode.INSERT or self.use_reduction_buffer),
            dots_to_underscores=True,
            postgis_schema=self.dialect_postgres_postgis_schema.strip() or None,
        )
