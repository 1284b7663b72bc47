"""The JDBC source's configuration: Confluent's keys and defaults, plus our opt-in extras.

``JDBC_SOURCE_DEF`` declares every key once (REST validate, ``docs/jdbc.md``, password masking).
:class:`JdbcSourceSettings` is the parsed, typed view the connector, task and queriers receive.
Unknown keys are ignored, as Connect does (a seed config misspells ``connecftion.password``).

Defaults follow kafka-connect-jdbc as the users of our seed configs ran it (10.3 to 10.7): notably
``batch.max.rows`` is 100 (10.8.5 raised it to 1000; set it explicitly for more throughput).
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConfigError
from cdc.config import NO_DEFAULT, ConfigDef, ConfigValue, Password
from cdc.config import validators as v
from cdc.config.settings import setting, settings_from
from cdc.config.shorthands import INT, LO, LST, B, H, L, M, P, S

__all__ = [
    "BULK",
    "INCREMENTING",
    "JDBC_SOURCE_DEF",
    "MODES",
    "TABLES_CONFIG",
    "TIMESTAMP",
    "TIMESTAMP_INCREMENTING",
    "JdbcSourceSettings",
    "validate_jdbc",
]

BULK, TIMESTAMP, INCREMENTING, TIMESTAMP_INCREMENTING = (
    "bulk",
    "timestamp",
    "incrementing",
    "timestamp+incrementing",
)
MODES = (BULK, TIMESTAMP, INCREMENTING, TIMESTAMP_INCREMENTING)
TABLES_CONFIG = "tables"
"""Task-only key: the quoted, comma-separated tables of one task (as Confluent writes it)."""
TABLES_FETCHED_CONFIG = "tables.fetched"

NUMERIC_MAPPINGS = ("none", "precision_only", "best_fit", "best_fit_eager_double")
ISOLATION_MODES = (
    "DEFAULT",
    "READ_UNCOMMITTED",
    "READ_COMMITTED",
    "REPEATABLE_READ",
    "SERIALIZABLE",
    "SQL_SERVER_SNAPSHOT",
)
GRANULARITIES = (
    "connect_logical",
    "nanos_long",
    "nanos_string",
    "nanos_iso_datetime_string",
    "micros_long",
    "micros_string",
    "micros_iso_datetime_string",
)

DB, MODE, CONN, EXTRA = "Database", "Mode", "Connector", "Beyond Confluent (opt-in)"


def _timezone(name: str, value: Any) -> None:
    try:
        zoneinfo.ZoneInfo(str(value))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"Invalid time zone identifier: {value}", name, value) from exc


def _def() -> ConfigDef:
    d = ConfigDef()
    g = {"group": DB}
    d.define(
        "connection.url",
        S,
        NO_DEFAULT,
        v.non_empty_string,
        H,
        "JDBC URL: jdbc:mysql://host:port/db, jdbc:mariadb://…, jdbc:postgresql://host:port/db or "
        "jdbc:sqlite:path; user and password may be given as ?user=…&password=…. Other URL properties "
        "(TLS: sslMode, sslmode, trust and key stores …) are read with the Java driver's meaning; an "
        "unknown one is refused (docs/jdbc.md lists them).",
        **g,
    )
    d.define("connection.user", S, None, None, H, "Database user (overrides the URL's user).", **g)
    d.define("connection.password", P, None, None, H, "Database password (overrides the URL's).", **g)
    d.define("connection.attempts", INT, 3, v.at_least(1), LO, "Attempts to open a connection.", **g)
    d.define("connection.backoff.ms", L, 10000, v.at_least(0), LO, "Wait between connection attempts.", **g)
    d.define("dialect.name", S, "", None, LO, "Dialect; empty means chosen from the URL.", **g)
    d.define(
        "table.whitelist",
        LST,
        "",
        None,
        M,
        "Tables to copy, by exact fully qualified (quoted or not) or bare name.",
        **g,
    )
    d.define("table.blacklist", LST, "", None, M, "Tables not to copy (same matching as the whitelist).", **g)
    d.define(
        "table.include.list",
        LST,
        "",
        v.regex,
        M,
        "Regexes on the unquoted fully qualified name of tables to copy (10.8.5+ style).",
        **g,
    )
    d.define("table.exclude.list", LST, "", v.regex, M, "Regexes of tables not to copy.", **g)
    d.define(
        "catalog.pattern",
        S,
        None,
        None,
        M,
        "Catalog (MySQL database) pattern for table discovery; null means the URL's database.",
        **g,
    )
    d.define(
        "schema.pattern",
        S,
        None,
        None,
        M,
        "Schema pattern for table discovery (PostgreSQL); null means every non-system schema.",
        **g,
    )
    d.define(
        "table.types",
        LST,
        "TABLE",
        v.list_of(v.one_of("TABLE", "VIEW")),
        LO,
        "Table types to copy: TABLE, VIEW.",
        **g,
    )
    d.define(
        "numeric.precision.mapping",
        B,
        False,
        None,
        LO,
        "Deprecated: true means numeric.mapping=precision_only.",
        **g,
    )
    d.define(
        "numeric.mapping",
        S,
        None,
        v.one_of(None, *NUMERIC_MAPPINGS),
        LO,
        "How NUMERIC columns map: none (Decimal), precision_only, best_fit, best_fit_eager_double.",
        **g,
    )
    d.define(
        "db.timezone",
        S,
        "UTC",
        _timezone,
        M,
        "Time zone in which the database's zone-less date/time values are read and bound.",
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
        "transaction.isolation.mode",
        S,
        "DEFAULT",
        v.one_of(*ISOLATION_MODES),
        LO,
        "Isolation level of the polling transactions.",
        **g,
    )
    g = {"group": MODE}
    d.define(
        "mode",
        S,
        "",
        v.one_of("", *MODES),
        H,
        "bulk, timestamp, incrementing or timestamp+incrementing (required).",
        **g,
    )
    d.define(
        "incrementing.column.name",
        S,
        "",
        None,
        M,
        "Strictly increasing integer column; empty means the table's auto-increment column.",
        **g,
    )
    d.define(
        "timestamp.column.name",
        LST,
        "",
        None,
        M,
        "Timestamp column(s); several mean COALESCE(c1, c2, …).",
        **g,
    )
    d.define(
        "timestamp.initial",
        L,
        None,
        None,
        LO,
        "Epoch ms to start from when no offset is stored; -1 means the database's current time.",
        **g,
    )
    d.define(
        "timestamp.delay.interval.ms",
        L,
        0,
        v.at_least(0),
        H,
        "Rows are read only once the database clock is this far past their timestamp.",
        **g,
    )
    d.define(
        "timestamp.granularity",
        S,
        "connect_logical",
        v.one_of(*GRANULARITIES),
        LO,
        "Representation of timestamps; only connect_logical is supported.",
        **g,
    )
    d.define(
        "validate.non.null",
        B,
        True,
        None,
        LO,
        "Refuse nullable incrementing columns, and timestamp columns that are all nullable.",
        **g,
    )
    d.define(
        "query", S, "", None, M, "Custom query instead of tables; the mode's WHERE clause is appended.", **g
    )
    d.define("query.suffix", S, "", None, LO, "Text appended to every query (e.g. a hint or LIMIT).", **g)
    d.define("query.retry.attempts", INT, -1, None, LO, "Retries of a failed query; -1 means forever.", **g)
    g = {"group": CONN}
    d.define(
        "topic.prefix",
        S,
        NO_DEFAULT,
        None,
        H,
        "Prefix of the topic names (topic = prefix + table); the whole topic in query mode.",
        **g,
    )
    d.define("poll.interval.ms", INT, 5000, v.at_least(0), H, "How often each table is polled.", **g)
    d.define("batch.max.rows", INT, 100, v.at_least(1), LO, "Rows per poll (and per fetch round trip).", **g)
    d.define(
        "table.poll.interval.ms",
        L,
        60000,
        v.at_least(0),
        LO,
        "How often new or dropped tables are looked for.",
        **g,
    )
    d.define(
        TABLES_CONFIG, LST, "", None, LO, "Tables of one task (set by the connector).", internal=True, **g
    )
    d.define(
        TABLES_FETCHED_CONFIG,
        B,
        True,
        None,
        LO,
        "Whether the connector listed the tables.",
        internal=True,
        **g,
    )
    g = {"group": EXTRA}
    d.define(
        "incrementing.lookback.ms",
        L,
        0,
        v.at_least(0),
        LO,
        "Incrementing modes: how long an id skipped below the offset (a transaction committing late) "
        "is looked for again. 0 (Confluent's behaviour) loses such rows. Costs one extra IN (…) "
        "predicate per poll and the open gaps in the offset.",
        **g,
    )
    d.define(
        "incrementing.lookback.max.gaps",
        INT,
        1000,
        v.at_least(1),
        LO,
        "Most skipped ids tracked at once; the oldest are given up first.",
        **g,
    )
    d.define(
        "bulk.detect.deletes",
        B,
        False,
        None,
        LO,
        "Bulk mode: compare each pass's keys with the previous pass's and send a tombstone (key = "
        "the key columns, value null) for each key gone. Holds two passes' keys in memory.",
        **g,
    )
    d.define(
        "bulk.key.columns",
        LST,
        "",
        None,
        LO,
        "Key columns for bulk.detect.deletes; empty means the primary key.",
        **g,
    )
    return d


JDBC_SOURCE_DEF = _def()


@dataclass(frozen=True)
class JdbcSourceSettings:
    """The parsed configuration, typed: one field per key of :data:`JDBC_SOURCE_DEF` (``a.b.c`` is
    ``a_b_c``; a leading ``_`` where a property gives the normalized value); ``raw`` keeps the strings."""

    raw: Mapping[str, str]
    connection_url: str = setting("connection.url")
    connection_user: str | None = setting("connection.user")
    _connection_password: Password | None = setting("connection.password")
    connection_attempts: int = setting("connection.attempts")
    connection_backoff_ms: int = setting("connection.backoff.ms")
    dialect_name: str = setting("dialect.name")
    table_whitelist: tuple[str, ...] = setting("table.whitelist")
    table_blacklist: tuple[str, ...] = setting("table.blacklist")
    table_include_list: tuple[str, ...] = setting("table.include.list")
    table_exclude_list: tuple[str, ...] = setting("table.exclude.list")
    catalog_pattern: str | None = setting("catalog.pattern")
    schema_pattern: str | None = setting("schema.pattern")
    table_types: tuple[str, ...] = setting("table.types")
    numeric_precision_mapping: bool = setting("numeric.precision.mapping")
    _numeric_mapping: str | None = setting("numeric.mapping")
    db_timezone: str = setting("db.timezone")
    quote_sql_identifiers: str = setting("quote.sql.identifiers")
    transaction_isolation_mode: str = setting("transaction.isolation.mode")
    _mode: str = setting("mode")
    incrementing_column_name: str = setting("incrementing.column.name")
    timestamp_column_name: tuple[str, ...] = setting("timestamp.column.name")
    timestamp_initial: int | None = setting("timestamp.initial")
    timestamp_delay_interval_ms: int = setting("timestamp.delay.interval.ms")
    timestamp_granularity: str = setting("timestamp.granularity")
    validate_non_null: bool = setting("validate.non.null")
    _query: str = setting("query")
    query_suffix: str = setting("query.suffix")
    query_retry_attempts: int = setting("query.retry.attempts")
    topic_prefix: str = setting("topic.prefix")
    poll_interval_ms: int = setting("poll.interval.ms")
    batch_max_rows: int = setting("batch.max.rows")
    table_poll_interval_ms: int = setting("table.poll.interval.ms")
    tables: tuple[str, ...] = setting("tables")
    tables_fetched: bool = setting("tables.fetched")
    incrementing_lookback_ms: int = setting("incrementing.lookback.ms")
    incrementing_lookback_max_gaps: int = setting("incrementing.lookback.max.gaps")
    bulk_detect_deletes: bool = setting("bulk.detect.deletes")
    bulk_key_columns: tuple[str, ...] = setting("bulk.key.columns")

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> JdbcSourceSettings:
        return settings_from(cls, JDBC_SOURCE_DEF.parse(props), raw=dict(props))

    @property
    def mode(self) -> str:
        mode = self._mode
        if not mode:
            raise ConfigError('Missing required configuration "mode" which has no default value.')
        return mode

    @property
    def password(self) -> str | None:
        p = self._connection_password
        return p.value() if isinstance(p, Password) else p

    @property
    def query(self) -> str:
        return self._query.strip()

    @property
    def timestamp_columns(self) -> list[str]:
        return [c for c in self.timestamp_column_name if c]

    @property
    def incrementing_column(self) -> str:
        return self.incrementing_column_name.strip()

    @property
    def numeric_mapping(self) -> str:
        mapping = self._numeric_mapping
        if mapping is None:
            return "precision_only" if self.numeric_precision_mapping else "none"
        return mapping

    @property
    def quote(self) -> bool:
        return self.quote_sql_identifiers.upper() != "NEVER"

    @property
    def timezone(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.db_timezone)

    def check(self) -> None:
        """Cross-key rules Confluent applies when the connector starts."""
        mode = self.mode
        if self.timestamp_granularity != "connect_logical":
            raise ConfigError("timestamp.granularity: only connect_logical is supported")
        if mode in (TIMESTAMP, TIMESTAMP_INCREMENTING) and not self.timestamp_columns:
            raise ConfigError(f"Mode {mode} requires timestamp.column.name")
        whitelist, blacklist = self.table_whitelist, self.table_blacklist
        include, exclude = self.table_include_list, self.table_exclude_list
        if whitelist and blacklist:
            raise ConfigError("table.whitelist and table.blacklist may not both be set")
        if (whitelist or blacklist) and (include or exclude):
            raise ConfigError(
                "table.whitelist/blacklist and table.include.list/exclude.list may not be mixed"
            )


def validate_jdbc(props: Mapping[str, str]) -> list[ConfigValue]:
    """Per-key validation plus the cross-key rules, reported on the ``mode`` key."""
    results = JDBC_SOURCE_DEF.validate(props)
    by_name = {r.name: r for r in results}
    if not any(r.errors for r in results):
        try:
            JdbcSourceSettings.parse(props).check()
        except ConfigError as exc:
            by_name["mode"].add_error(str(exc))
    return results
