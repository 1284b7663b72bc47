"""``MYSQL_DEF``: every key of the MySQL connector, declared once, one function per group.

A key is added in its group's function (Connection, Filters, Snapshot, Types here; Events, Signals and
Schema history in ``config_groups``), in the order ``/connector-plugins/{p}/config`` shows it, and bound to
a field of :class:`~cdc.mysql.config.MySqlSettings`.
"""

from __future__ import annotations

from cdc.config import NO_DEFAULT, ConfigDef
from cdc.config import validators as v
from cdc.config.shorthands import INT, LO, LST, B, H, L, M, P, S
from cdc.mysql.config_groups import (
    CONN,
    FILT,
    SIGNALS,
    SNAP,
    TYPES,
    accept_groups,
    define_events,
    define_history,
    define_signals,
)
from cdc.mysql.config_groups_more import define_more
from cdc.mysql.config_tuning import define_openlineage, define_tuning

__all__ = ["MYSQL_DEF"]

SNAPSHOT_MODES = (
    "initial",
    "initial_only",
    "when_needed",
    "no_data",
    "schema_only",
    "recovery",
    "schema_only_recovery",
    "always",
    "never",
    "configuration_based",
)
LOCKING_MODES = ("minimal", "extended", "none", "minimal_percona")
UNMATCHED_MODES = ("fail", "warn")


def _def() -> ConfigDef:
    d = ConfigDef()
    _define_connection(d)
    _define_filters(d)
    _define_snapshot(d)
    _define_types(d)
    define_events(d)
    define_signals(d)
    d.define(
        "notification.enabled.channels",
        LST,
        "",
        v.predicate(
            lambda xs: all(str(x).strip().lower() in ("sink", "log", "jmx") for x in xs),
            "Channels are sink, log and jmx",
        ),
        LO,
        "Where snapshot progress notifications go (Debezium's shape): sink (a topic, "
        "notification.sink.topic.name), log (INFO lines), jmx (published as metrics: cdc has no JMX).",
        group=SIGNALS,
    )
    d.define(
        "notification.sink.topic.name",
        S,
        None,
        None,
        LO,
        "The topic of the sink notification channel; required when it is enabled.",
        group=SIGNALS,
    )
    define_history(d)
    define_openlineage(d)
    define_tuning(d)
    define_more(d)
    accept_groups(d)
    return d


def _define_connection(d: ConfigDef) -> None:
    """Connection: the server, the credentials, TLS and the connection's timings."""
    d.define("database.hostname", S, NO_DEFAULT, v.non_empty_string, H, "MySQL host.", group=CONN)
    d.define("database.port", INT, 3306, v.between(1, 65535), H, "MySQL port.", group=CONN)
    d.define("database.user", S, NO_DEFAULT, None, H, "User with the replication grants.", group=CONN)
    d.define("database.password", P, None, None, H, "Password of database.user.", group=CONN)
    d.define(
        "database.server.id",
        L,
        5400,
        v.at_least(1),
        H,
        "Unique numeric id of this client among the server's replicas.",
        group=CONN,
    )
    d.define(
        "database.server.id.offset",
        L,
        10000,
        None,
        LO,
        "Declared by Debezium 3.6 and read by nothing there (the parallel snapshot that added it to "
        "database.server.id is gone): accepted, and as in Debezium it changes no server id.",
        group=CONN,
    )
    d.define(
        "database.ssl.mode",
        S,
        "preferred",
        v.case_insensitive_one_of(  # Debezium parses its enumerated values ignoring case
            "disabled",
            "preferred",
            "required",
            "verify_ca",
            "verify_identity",
            "disable",
            "trust",
            "verify-ca",
            "verify-full",
        ),
        M,
        "TLS on every connection, binlog included: disabled; preferred (TLS when the server offers it, "
        "unverified); required (TLS, unverified); verify_ca (the server's certificate signed by a trusted "
        "CA); verify_identity (verify_ca, and the certificate names database.hostname). The MariaDB "
        "connector's disable, trust, verify-ca, verify-full mean the same as disabled, required, verify_ca, "
        "verify_identity.",
        group=CONN,
    )
    d.define(
        "database.ssl.truststore",
        S,
        None,
        None,
        LO,
        "The CAs trusted under verify_ca/verify_identity (JKS, PKCS12 or PEM file); the system's CAs when "
        "not set.",
        group=CONN,
    )
    d.define(
        "database.ssl.truststore.password",
        P,
        None,
        None,
        LO,
        "Password of database.ssl.truststore (a JKS store opens without one, unchecked).",
        group=CONN,
    )
    d.define(
        "database.ssl.keystore",
        S,
        None,
        None,
        LO,
        "The client certificate and key presented to the server (JKS, PKCS12, or PEM with both).",
        group=CONN,
    )
    d.define(
        "database.ssl.keystore.password",
        P,
        None,
        None,
        LO,
        "Password of database.ssl.keystore and of its key.",
        group=CONN,
    )
    d.define(
        "database.connectionTimezone",
        S,
        None,
        None,
        LO,
        "Connector/J's connection time zone. cdc reads TIMESTAMP values as the instants the server stores "
        "(its sessions are in UTC), whatever the zone, in snapshots and streaming.",
        group=CONN,
        aliases=("database.connectionTimeZone", "database.serverTimezone"),
    )
    d.define(
        "database.initial.statements",
        S,
        "",
        None,
        LO,
        "Statements (;-separated) run on each new connection cdc opens to read or check the database "
        "(the snapshots' readers, the Spark snapshot's executors, the checks); as Debezium, not on the "
        "binlog connection.",
        group=CONN,
    )
    d.define("connect.timeout.ms", INT, 30000, v.at_least(1), LO, "Connection timeout.", group=CONN)
    d.define(
        "errors.max.retries",
        INT,
        -1,
        v.at_least(-1),
        LO,
        "Reconnections of the binlog client after a retriable error before the task fails (-1: no "
        "limit, 0: none). Counted per incident: a connection that made progress starts a new count.",
        group=CONN,
    )
    d.define(
        "connect.keep.alive",
        B,
        True,
        None,
        LO,
        "Keep the binlog connection alive: a lost or silent connection is opened again (up to "
        "errors.max.retries times in a row). false: the binlog client does not reconnect and a lost "
        "connection fails the task.",
        group=CONN,
    )
    d.define(
        "connect.keep.alive.interval.ms",
        L,
        60000,
        v.at_least(1),
        LO,
        "With connect.keep.alive: the server is asked for a binlog heartbeat every 0.8 x this interval "
        "(at least every second, at most every 100 ms) and a binlog connection that brings nothing for this "
        "long (at least 200 ms) is taken as lost and opened again, as Debezium's binlog client does.",
        group=CONN,
    )
    d.define(
        "topic.prefix",
        S,
        NO_DEFAULT,
        v.non_empty_string,
        H,
        "Prefix of every topic name; also the offsets' server name.",
        group=CONN,
        aliases=("database.server.name",),
    )


def _define_filters(d: ConfigDef) -> None:
    """Filters: which databases, tables, columns and operations are captured."""
    f = {"group": FILT}
    d.define(
        "database.include.list",
        LST,
        "",
        v.regex,
        H,
        "Databases to capture (regexes).",
        aliases=("database.whitelist",),
        **f,
    )
    d.define(
        "database.exclude.list",
        LST,
        "",
        v.regex,
        M,
        "Databases not to capture.",
        aliases=("database.blacklist",),
        **f,
    )
    d.define(
        "table.include.list",
        LST,
        "",
        v.regex,
        H,
        "Tables (db.table) to capture.",
        aliases=("table.whitelist",),
        **f,
    )
    d.define(
        "table.exclude.list", LST, "", v.regex, M, "Tables not to capture.", aliases=("table.blacklist",), **f
    )
    d.define(
        "column.include.list",
        LST,
        "",
        v.regex,
        LO,
        "Columns (db.table.column) to include.",
        aliases=("column.whitelist",),
        **f,
    )
    d.define(
        "column.exclude.list",
        LST,
        "",
        v.regex,
        LO,
        "Columns to leave out.",
        aliases=("column.blacklist",),
        **f,
    )
    d.define("table.ignore.builtin", B, True, None, LO, "Ignore mysql, sys, performance_schema …", **f)
    d.define(
        "include.list.unmatched.mode",
        S,
        "fail",
        v.case_insensitive_one_of(*UNMATCHED_MODES),
        M,
        "When database.include.list or table.include.list match no existing database or table: "
        "fail (validate answers an error on that key, so creating the connector answers 400) or warn "
        "(accepted, as Debezium does; the task logs a WARN at start). Use warn to create a connector "
        "before its tables exist.",
        **f,
    )
    d.define("message.key.columns", S, "", None, LO, "Key columns per table: db.t:c1,c2;db.t2:c.", **f)
    d.define("skipped.operations", LST, "t", None, LO, "Operations not emitted: c, u, d, t or none.", **f)
    d.define(
        "gtid.source.includes",
        LST,
        "",
        v.regex,
        LO,
        "GTID sources to follow (regexes matching a MySQL server UUID or a MariaDB domain-server pair, "
        "whole, ignoring case): row events of other sources are not emitted, and a resumed offset's gtids "
        "keep only these sources.",
        **f,
    )
    d.define(
        "gtid.source.excludes",
        LST,
        "",
        v.regex,
        LO,
        "GTID sources not to follow (as gtid.source.includes, which may not be set with it).",
        **f,
    )


def _define_snapshot(d: ConfigDef) -> None:
    """Snapshot: the initial snapshot's mode, locking, selects and the Spark engine."""
    s = {"group": SNAP}
    d.define(
        "snapshot.mode",
        S,
        "initial",
        v.case_insensitive_one_of(*SNAPSHOT_MODES),
        H,
        "When to run a snapshot.",
        **s,
    )
    d.define(
        "snapshot.locking.mode",
        S,
        "minimal",
        v.case_insensitive_one_of(*LOCKING_MODES),
        M,
        "How the snapshot locks.",
        **s,
    )
    d.define("snapshot.lock.timeout.ms", L, 10000, v.at_least(0), LO, "Lock wait timeout.", **s)
    d.define(
        "snapshot.fetch.size",
        INT,
        None,
        v.at_least(0),
        LO,
        "The most rows the snapshot reads from a table in one go (and emits as one batch); rows come from an "
        "unbuffered cursor, so memory stays bounded whatever the size. Unset or 0: 2000.",
        **s,
    )
    d.define("snapshot.delay.ms", L, 0, v.at_least(0), LO, "Delay before the snapshot starts.", **s)
    d.define(
        "streaming.delay.ms",
        L,
        0,
        v.at_least(0),
        LO,
        "Delay between a completed snapshot and the start of streaming (so that the snapshot's offset can be "
        "committed first); not applied when streaming resumes from an offset.",
        **s,
    )
    for switch, doc in (
        ("snapshot.data", "read the data of every captured table (and the schema) on each start"),
        ("snapshot.schema", "read the schema on each start"),
        ("start.stream", "stream the binlog after the snapshot"),
        ("snapshot.on.schema.error", "read the schema again when the schema history is missing"),
        ("snapshot.on.data.error", "snapshot again when the offset's binlog position is gone"),
    ):
        d.define(
            f"snapshot.mode.configuration.based.{switch}",
            B,
            False,
            None,
            LO,
            f"snapshot.mode=configuration_based: {doc}.",
            **s,
        )
    d.define(
        "snapshot.max.threads",
        INT,
        1,
        v.between(1, 64),
        LO,
        "Connections reading the local initial snapshot at once: each table's primary-key chunks (the Spark "
        "engine's planning) are read in parallel, all in the snapshot's consistent view, and written in key "
        "order, so the records are the single reader's.",
        **s,
    )
    d.define(
        "snapshot.max.threads.multiplier",
        INT,
        1,
        v.at_least(1),
        LO,
        "Chunks per table: at least snapshot.max.threads * this (and at most 50000 rows each).",
        **s,
    )
    d.define(
        "snapshot.tables.order.by.row.count",
        S,
        "disabled",
        v.case_insensitive_one_of("disabled", "ascending", "descending"),
        LO,
        "The order the initial snapshot reads tables in: by the server's row estimate, ascending or "
        "descending (ties in name order), or disabled (name order).",
        **s,
    )
    d.define("snapshot.include.collection.list", LST, "", v.regex, LO, "Tables to snapshot.", **s)
    d.define(
        "snapshot.select.statement.overrides", S, "", None, LO, "Tables with custom snapshot SELECTs.", **s
    )
    d.define(
        "snapshot.engine",
        S,
        "auto",
        v.case_insensitive_one_of("auto", "local", "spark"),
        LO,
        "Who reads the initial snapshot: one reader (local), or primary-key chunks read in parallel as "
        "Spark tasks that write the same records to Kafka themselves (spark; needs pyspark on the "
        "worker, see docs/snapshots.md); auto: spark when pyspark is installed and the tables are large "
        "enough for Spark's start-up to pay on the master's cores (the server's row estimate), else local.",
        **s,
    )
    d.define(
        "snapshot.spark.master",
        S,
        "local[*]",
        None,
        LO,
        "snapshot.engine=spark: the Spark master (local[N], spark://host:7077 …).",
        **s,
    )
    d.define(
        "snapshot.spark.partitions",
        INT,
        None,
        v.predicate(lambda n: n is None or n >= 1, "Value must be at least 1"),
        LO,
        "snapshot.engine=spark: parallel readers (Spark tasks at once); default: the master's cores.",
        **s,
    )
    d.define(
        "snapshot.spark.chunk.rows",
        INT,
        50000,
        v.at_least(1),
        LO,
        "snapshot.engine=spark: target rows per primary-key chunk.",
        **s,
    )
    d.define(
        "snapshot.spark.encoder",
        S,
        "auto",
        v.case_insensitive_one_of("auto", "sql", "python"),
        LO,
        "snapshot.engine=spark: how chunks become records. auto: the JVM path (Spark JDBC reader, values "
        "encoded by SQL) for every table it can encode byte-identically, the Python path for the others; "
        "sql: the JVM path or fail; python: always the Python path (see docs/snapshots.md).",
        **s,
    )
    d.define(
        "snapshot.spark.delivery",
        S,
        "exactly_once",
        v.case_insensitive_one_of("exactly_once", "at_least_once"),
        LO,
        "snapshot.engine=spark: exactly_once writes each chunk in a Kafka transaction of its own, committed "
        "once the chunk is complete and fenced when the chunk is retried, so read_committed consumers see "
        "one op=r record per row even when executors die; at_least_once writes without transactions (a "
        "retried chunk's records appear twice).",
        **s,
    )
    d.define(
        "snapshot.spark.stall.timeout.ms",
        L,
        300000,
        v.at_least(1),
        LO,
        "snapshot.engine=spark: when no chunk finishes and no record is written for this long (every "
        "executor gone), or Spark loses the application, the snapshot stops with an error and keeps what it "
        "finished for the next attempt.",
        **s,
    )
    d.define(
        "snapshot.spark.state.dir",
        S,
        None,
        None,
        LO,
        "snapshot.engine=spark: where an unfinished run keeps what it finished, so a restarted task "
        "resumes it (default ~/.cache/cdc/snapshots).",
        **s,
    )


def _define_types(d: ConfigDef) -> None:
    """Types: how MySQL values become Connect values."""
    t = {"group": TYPES}
    d.define(
        "time.precision.mode",
        S,
        "adaptive_time_microseconds",
        v.case_insensitive_one_of("adaptive_time_microseconds", "adaptive", "connect"),
        M,
        "How temporal values are represented.",
        **t,
    )
    d.define(
        "decimal.handling.mode",
        S,
        "precise",
        v.case_insensitive_one_of("precise", "double", "string"),
        M,
        "How DECIMAL values are represented.",
        **t,
    )
    d.define(
        "bigint.unsigned.handling.mode",
        S,
        "long",
        v.case_insensitive_one_of("long", "precise"),
        M,
        "How BIGINT UNSIGNED is represented.",
        **t,
    )
    d.define(
        "binary.handling.mode",
        S,
        "bytes",
        v.case_insensitive_one_of("bytes", "base64", "base64-url-safe", "hex"),
        M,
        "How binary columns are represented.",
        **t,
    )
    d.define("enable.time.adjuster", B, True, None, LO, "Map two-digit years into 1970-2069.", **t)
    d.define(
        "include.unknown.datatypes", B, False, None, LO, "Include columns of unknown types as bytes.", **t
    )
    d.define(
        "column.propagate.source.type",
        LST,
        "",
        v.regex,
        LO,
        "Columns (db.table.column regexes) whose field schemas get the __debezium.source.column.* "
        "parameters (type, length, scale, name).",
        **t,
    )
    d.define(
        "datatype.propagate.source.type",
        LST,
        "",
        v.regex,
        LO,
        "As column.propagate.source.type, for columns whose db.table.TYPE matches.",
        **t,
    )
    d.define(
        "converters",
        LST,
        "",
        None,
        LO,
        "Custom converters: names, each with <name>.type (a class, Debezium's names accepted) and "
        "<name>.<option> settings (see docs/mysql.md).",
        **t,
    )


MYSQL_DEF = _def()
