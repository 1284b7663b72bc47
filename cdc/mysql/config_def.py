"""``MYSQL_DEF``: every key of the MySQL connector, declared once, one function per group.

A key is added in its group's function (Connection, Filters, Snapshot, Types, Events, Signals, Schema
history), in the order ``/connector-plugins/{p}/config`` shows it, and bound to a field of
:class:`~cdc.mysql.config.MySqlSettings`.
"""

from __future__ import annotations

import re

from cdc.config import NO_DEFAULT, ConfigDef, ConfigType, Importance
from cdc.config import validators as v
from cdc.mysql.ddl.filter import DEBEZIUM_DDL_FILTER
from cdc.mysql.keys import PATTERN_KEYS
from cdc.mysql.metric_tags import validate_metric_tags
from cdc.mysql.naming import STRATEGIES as TOPIC_NAMING_STRATEGIES

__all__ = ["MYSQL_DEF"]

S, INT, L, B, LST, P = (
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.BOOLEAN,
    ConfigType.LIST,
    ConfigType.PASSWORD,
)
H, M, LO = Importance.HIGH, Importance.MEDIUM, Importance.LOW
CONN, FILT, SNAP, TYPES, EVT, HIST, ADV = (
    "Connection",
    "Filters",
    "Snapshot",
    "Types",
    "Events",
    "Schema history",
    "Advanced",
)

CLIENTS = ("producer", "consumer")

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
SIGNAL_CHANNELS = ("source", "file", "kafka")
SIGNALS = "Signals"


def _def() -> ConfigDef:
    d = ConfigDef()
    _define_connection(d)
    _define_filters(d)
    _define_snapshot(d)
    _define_types(d)
    _define_events(d)
    _define_signals(d)
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
    _define_history(d)
    _accept_groups(d)
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
        "Session time zone of the JDBC connection.",
        group=CONN,
        aliases=("database.connectionTimeZone", "database.serverTimezone"),
    )
    d.define(
        "database.initial.statements",
        S,
        "",
        None,
        LO,
        "Statements run on each new connection (;-separated).",
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
        "connect.keep.alive", B, True, None, LO, "Reconnect the binlog client when it drops.", group=CONN
    )
    d.define("connect.keep.alive.interval.ms", L, 60000, None, LO, "Keep-alive check interval.", group=CONN)
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
    d.define("snapshot.fetch.size", INT, None, None, LO, "Rows fetched per round trip.", **s)
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
        "local",
        v.case_insensitive_one_of("local", "spark"),
        LO,
        "Who reads the initial snapshot: one reader (local), or primary-key chunks read in parallel as "
        "Spark tasks that write the same records to Kafka themselves (spark; needs pyspark on the "
        "worker, see docs/snapshots.md).",
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


def _define_events(d: ConfigDef) -> None:
    """Events: what is emitted, and how events are named and handled."""
    e = {"group": EVT}
    d.define("tombstones.on.delete", B, True, None, M, "Emit a tombstone after each delete.", **e)
    d.define("include.schema.changes", B, True, None, M, "Write DDL to the schema change topic.", **e)
    d.define(
        "include.schema.comments",
        B,
        False,
        None,
        LO,
        "Keep the COMMENT of tables and columns: in the schema history and schema change records, and as the "
        "doc of each column's field schema. Off (Debezium's default), DDL comments are left out everywhere.",
        **e,
    )
    d.define(
        "extended.headers.enabled",
        B,
        True,
        None,
        LO,
        "Add Debezium's __debezium.context.* headers (logical name, task id, connector name, run id) to "
        "every record, the parallel snapshot's included; each costs the producer about 2 us a record.",
        **e,
    )
    d.define(
        "include.query",
        B,
        False,
        None,
        LO,
        "Put the statement that wrote each row into source.query (MariaDB: binlog_annotate_row_events=ON, "
        "its default; MySQL: binlog_rows_query_log_events=ON).",
        **e,
    )
    d.define(
        "provide.transaction.metadata",
        B,
        False,
        None,
        LO,
        "Write each transaction's BEGIN and END (its event count and per-table counts) to "
        "<prefix>.<topic.transaction>, and a transaction block (id, total_order, data_collection_order) in "
        "every change event, as Debezium does (docs/mysql.md, 'Transaction metadata').",
        **e,
    )
    d.define("heartbeat.interval.ms", INT, 0, v.at_least(0), M, "Heartbeat interval (0 = off).", **e)
    d.define(
        "heartbeat.action.query",
        S,
        "",
        None,
        LO,
        "A statement run on its own connection with every heartbeat (heartbeat.interval.ms > 0), such as an "
        "upsert into a heartbeat table, so that the binlog and the committed offset move on while the "
        "captured tables are idle; a failure is logged and the heartbeat is emitted anyway.",
        **e,
    )
    d.define(
        "topic.heartbeat.prefix",
        S,
        "__debezium-heartbeat",
        None,
        LO,
        "Heartbeat topic prefix.",
        aliases=("heartbeat.topics.prefix",),
        **e,
    )
    d.define("topic.transaction", S, "transaction", None, LO, "Suffix of the transaction topic.", **e)
    d.define("topic.delimiter", S, ".", None, LO, "Delimiter of topic name parts.", **e)
    d.define(
        "topic.naming.strategy",
        S,
        "io.debezium.schema.DefaultTopicNamingStrategy",
        v.predicate(
            lambda x: x in TOPIC_NAMING_STRATEGIES,
            "cdc implements Debezium's built-in strategies "
            + ", ".join(TOPIC_NAMING_STRATEGIES)
            + "; a strategy class of your own cannot run in cdc: keep the default and rename topics with "
            "the RegexRouter transform "
            "(transforms.<name>.type=org.apache.kafka.connect.transforms.RegexRouter)",
        ),
        LO,
        "How topics are named: DefaultTopicNamingStrategy (<prefix>.<db>.<table>, invalid characters as _), "
        "DefaultUnicodeTopicNamingStrategy (invalid characters, _ included, as _uXXXX) or "
        "SchemaTopicNamingStrategy (<prefix>.<table>); record schemas are named after the topic.",
        **e,
    )
    d.define(
        "topic.cache.size",
        INT,
        10000,
        v.at_least(1),
        LO,
        "Size of Debezium's topic name cache; accepted, cdc computes each table's names once.",
        **e,
    )
    d.define("max.batch.size", INT, 2048, v.at_least(1), LO, "Maximum records per poll.", **e)
    d.define(
        "custom.metric.tags",
        S,
        "",
        validate_metric_tags,
        LO,
        "k1=v1,k2=v2: appended to the connector's metric names as Debezium appends them to its MBeans' "
        "names, so each pair is a label on every series of the connector.",
        **e,
    )
    d.define(
        "guardrail.collections.max",
        INT,
        0,
        v.at_least(0),
        M,
        "At most this many tables whose schemas the task holds (the captured ones with "
        "schema.history.internal.store.only.captured.tables.ddl, else every table the history records), "
        "checked when the task starts; 0: no limit.",
        **e,
    )
    d.define(
        "guardrail.collections.limit.action",
        S,
        "warn",
        v.case_insensitive_one_of("warn", "fail"),
        M,
        "Above guardrail.collections.max: warn logs Debezium's message and goes on, fail stops the task "
        "with it.",
        **e,
    )
    d.define("max.queue.size", INT, 8192, v.at_least(1), LO, "Maximum records buffered.", **e)
    d.define(
        "max.queue.size.in.bytes",
        L,
        0,
        v.at_least(0),
        LO,
        "Also bound the queue by the records' approximate size in bytes (Debezium's estimate); 0: by "
        "max.queue.size only.",
        **e,
    )
    d.define("poll.interval.ms", L, 500, v.at_least(0), LO, "How long a poll waits for a full batch.", **e)
    d.define(
        "event.processing.failure.handling.mode",
        S,
        "fail",
        v.case_insensitive_one_of("fail", "warn", "ignore", "skip"),
        LO,
        "What to do with a binlog event that cannot be processed (a partial row image of "
        "binlog_row_image=MINIMAL, a value that fails to decode): fail stops the task with the event's "
        "position; warn logs the position and skips the event; skip (or ignore) skips it silently. Every "
        "such event is counted in NumberOfErroneousEvents.",
        aliases=("event.deserialization.failure.handling.mode",),
        **e,
    )
    d.define(
        "post.processors",
        S,
        "",
        None,
        LO,
        "Post processors run on each change event, each <name> with <name>.type: Debezium's "
        "io.debezium.processors.reselect.ReselectColumnsPostProcessor and its <name>.reselect.* options "
        "(columns.include.list, columns.exclude.list, unavailable.values, null.values, use.event.key, "
        "error.handling.mode; see docs/mysql.md).",
        **e,
    )
    d.define(
        "event.converting.failure.handling.mode",
        S,
        "warn",
        v.case_insensitive_one_of("fail", "warn", "skip"),
        LO,
        "A column value the converter cannot turn into its field's type: fail stops the task naming the "
        "column; warn (Debezium's default) writes the field as null and logs a WARN; skip writes null and "
        "logs at DEBUG. Counted in NumberOfConvertingFailures.",
        **e,
    )
    d.define(
        "unavailable.value.placeholder",
        S,
        "__debezium_unavailable_value",
        None,
        LO,
        "The value of a BLOB/TEXT column that binlog_row_image=NOBLOB left out of a row image (bytes for "
        "binary columns, text otherwise), as Debezium emits it.",
        **e,
    )
    d.define(
        "inconsistent.schema.handling.mode",
        S,
        "fail",
        v.case_insensitive_one_of("fail", "warn", "skip"),
        LO,
        "What to do with events of tables missing from the schema.",
        **e,
    )
    d.define(
        "schema.name.adjustment.mode",
        S,
        "none",
        v.case_insensitive_one_of("none", "avro", "avro_unicode"),
        LO,
        "Schema names made valid for Avro: avro replaces an invalid character by _, avro_unicode by _uXXXX.",
        **e,
    )
    d.define(
        "field.name.adjustment.mode",
        S,
        "none",
        v.case_insensitive_one_of("none", "avro", "avro_unicode"),
        LO,
        "Field (column) names made valid for Avro: avro replaces an invalid character by _, avro_unicode by "
        "_uXXXX.",
        **e,
    )


def _define_history(d: ConfigDef) -> None:
    """Schema history: where DDL is recorded and what is kept."""
    h = {"group": HIST}
    d.define(
        "schema.history.internal",
        S,
        "io.debezium.storage.kafka.history.KafkaSchemaHistory",
        None,
        LO,
        "Schema history implementation.",
        aliases=("database.history",),
        **h,
    )
    d.define(
        "schema.history.internal.kafka.topic",
        S,
        None,
        None,
        H,
        "Schema history topic.",
        aliases=("database.history.kafka.topic",),
        **h,
    )
    d.define(
        "schema.history.internal.kafka.bootstrap.servers",
        S,
        None,
        None,
        H,
        "Brokers of the schema history topic.",
        aliases=("database.history.kafka.bootstrap.servers",),
        **h,
    )
    d.define(
        "schema.history.internal.file.filename",
        S,
        None,
        None,
        LO,
        "File schema history.",
        aliases=("database.history.file.filename",),
        **h,
    )
    d.define(
        "schema.history.internal.skip.unparseable.ddl",
        B,
        False,
        None,
        LO,
        "Skip DDL that cannot be parsed.",
        aliases=("database.history.skip.unparseable.ddl",),
        **h,
    )
    d.define(
        "schema.history.internal.store.only.captured.tables.ddl",
        B,
        False,
        None,
        LO,
        "Record only the DDL of captured tables.",
        aliases=(
            "database.history.store.only.captured.tables.ddl",
            "database.history.store.only.monitored.tables.ddl",
        ),
        **h,
    )
    d.define(
        "schema.history.internal.store.only.captured.databases.ddl",
        B,
        False,
        None,
        LO,
        "Record only the DDL of captured databases.",
        **h,
    )
    d.define(
        "schema.history.internal.ddl.filter",
        S,
        DEBEZIUM_DDL_FILTER,
        None,
        LO,
        "Statements left out of the history and the schema change topic: comma-separated regular expressions,"
        " each matching a whole statement, case-insensitive. The default is Debezium 3.5's (grants, users and"
        " roles, views and routines, table maintenance, RDS heartbeats); TRUNCATE stays a data event.",
        aliases=("database.history.ddl.filter",),
        **h,
    )
    d.define(
        "schema.history.internal.kafka.recovery.poll.interval.ms", INT, 100, None, LO, "Recovery poll.", **h
    )
    d.define("schema.history.internal.kafka.recovery.attempts", INT, 100, None, LO, "Recovery attempts.", **h)


def _accept_groups(d: ConfigDef) -> None:
    """Keys read as groups: the history store's own, the clients' and the column rules'."""
    # The history store's own keys (cdc.history.config), the column rules whose names carry a parameter,
    # and the worker's cdc.worker.* entries (task configs written before SourceTaskContext carried them).
    from cdc.history.config import history_config_def

    history_keys = history_config_def().keys()
    history = [n for k in history_keys for n in (k.name, *k.aliases) if n not in d]
    clients = [f"{p}.{c}." for p in ("schema.history.internal", "database.history") for c in CLIENTS]
    d.accept(
        prefixes=(*clients, "cdc.worker."),
        patterns=(*PATTERN_KEYS, *(re.escape(n) for n in history)),
    )


def _define_signals(d: ConfigDef) -> None:
    """Debezium's signal and incremental-snapshot keys (``cdc.mysql.signals``, ``cdc.mysql.incremental``)."""
    g = {"group": SIGNALS}
    d.define(
        "signal.enabled.channels",
        LST,
        "source",
        v.predicate(
            lambda xs: all(str(x).strip().lower() in SIGNAL_CHANNELS for x in xs),
            "Channels are source, file and kafka",
        ),
        LO,
        "Where signals are read from: source (the signal.data.collection table), file, kafka.",
        **g,
    )
    d.define(
        "signal.data.collection",
        S,
        None,
        None,
        M,
        "The signal table (db.table, columns id, type, data); rows inserted there are signals, and the "
        "incremental snapshot writes its watermarks there.",
        **g,
    )
    d.define("signal.file", S, "file-signals.txt", None, LO, "The file channel's file (JSON lines).", **g)
    d.define("signal.poll.interval.ms", L, 5000, v.at_least(0), LO, "How often file/kafka are read.", **g)
    d.define(
        "signal.kafka.topic", S, None, None, LO, "The kafka channel's topic (default <prefix>-signal).", **g
    )
    d.define("signal.kafka.bootstrap.servers", S, None, None, LO, "The kafka channel's brokers.", **g)
    d.define("signal.kafka.groupId", S, "kafka-signal", None, LO, "The kafka channel's consumer group.", **g)
    d.define("signal.kafka.poll.timeout.ms", INT, 0, v.at_least(0), LO, "The kafka channel's poll wait.", **g)
    d.define(
        "incremental.snapshot.chunk.size",
        INT,
        1024,
        v.at_least(1),
        M,
        "Rows per incremental snapshot chunk (read between two watermarks).",
        **g,
    )
    d.define(
        "incremental.snapshot.watermarking.strategy",
        S,
        "insert_insert",
        v.case_insensitive_one_of("insert_insert", "insert_delete"),
        LO,
        "insert_insert: open and close rows are inserted; insert_delete: the open row is deleted to close.",
        **g,
    )
    d.define(
        "incremental.snapshot.allow.schema.changes",
        B,
        False,
        v.predicate(lambda x: not x, "Schema changes during an incremental snapshot are not supported"),
        LO,
        "Only false is accepted: a table altered during its incremental snapshot must be snapshotted again.",
        **g,
    )
    d.define(
        "incremental.snapshot.parallelism",
        INT,
        1,
        v.between(1, 64),
        LO,
        "Chunks read at once inside one watermark window, each on its own connection (cdc only; "
        "Debezium reads 1).",
        **g,
    )
    d.define(
        "incremental.snapshot.engine",
        S,
        "auto",
        v.case_insensitive_one_of("auto", "local", "spark"),
        LO,
        "Who reads an incremental snapshot's rows (cdc only). local: DBLog chunks between watermarks; "
        "spark: a table of at least incremental.snapshot.spark.min.rows rows is read by the parallel Spark "
        "engine (the snapshot.spark.* settings) while streaming goes on, then the keys changed meanwhile "
        "are read again in watermark windows; auto: spark when snapshot.engine=spark, else local (see "
        "docs/snapshots.md).",
        **g,
    )
    d.define(
        "incremental.snapshot.spark.min.rows",
        L,
        100000,
        v.at_least(0),
        LO,
        "incremental.snapshot.engine=spark: tables the server estimates smaller than this are read in "
        "DBLog chunks (starting Spark costs more than reading them).",
        **g,
    )
    d.define(
        "read.only",
        B,
        False,
        None,
        LO,
        "Incremental snapshots without writing to the source: the server's GTID set (or binlog position) "
        "after each chunk is its high watermark; signals then come from the file or kafka channel.",
        **g,
    )


MYSQL_DEF = _def()
