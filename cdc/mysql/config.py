"""The MySQL connector's configuration: Debezium's keys, defaults and the 1.x names users still have.

``MYSQL_DEF`` declares every key once (REST validate, docs, masking). :class:`MySqlSettings` is the
parsed, typed view the task's parts receive, so no part reads raw strings. 1.x names map through
``aliases`` (``database.server.name`` → ``topic.prefix``, ``database.history.*`` →
``schema.history.internal.*``, ``*.whitelist``/``*.blacklist`` → ``*.include.list``/``*.exclude.list``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from cdc.config import NO_DEFAULT, ConfigDef, ConfigType, Importance, Password
from cdc.config import validators as v
from cdc.config.settings import setting, settings_from
from cdc.mysql.keys import PATTERN_KEYS

__all__ = ["MYSQL_DEF", "MySqlSettings"]

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
)
LOCKING_MODES = ("minimal", "extended", "none", "minimal_percona")
SIGNAL_CHANNELS = ("source", "file", "kafka")
SIGNALS = "Signals"


def _def() -> ConfigDef:
    d = ConfigDef()
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
        v.one_of(
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
        LO,
        "TLS use.",
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
    d.define("message.key.columns", S, "", None, LO, "Key columns per table: db.t:c1,c2;db.t2:c.", **f)
    d.define("skipped.operations", LST, "t", None, LO, "Operations not emitted: c, u, d, t or none.", **f)
    d.define("gtid.source.includes", LST, "", v.regex, LO, "GTID source UUIDs to use.", **f)
    d.define("gtid.source.excludes", LST, "", v.regex, LO, "GTID source UUIDs to ignore.", **f)
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
    e = {"group": EVT}
    d.define("tombstones.on.delete", B, True, None, M, "Emit a tombstone after each delete.", **e)
    d.define("include.schema.changes", B, True, None, M, "Write DDL to the schema change topic.", **e)
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
    d.define("provide.transaction.metadata", B, False, None, LO, "Write transaction BEGIN/END events.", **e)
    d.define("heartbeat.interval.ms", INT, 0, v.at_least(0), M, "Heartbeat interval (0 = off).", **e)
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
    d.define("max.batch.size", INT, 2048, v.at_least(1), LO, "Maximum records per poll.", **e)
    d.define("max.queue.size", INT, 8192, v.at_least(1), LO, "Maximum records buffered.", **e)
    d.define("poll.interval.ms", L, 500, v.at_least(0), LO, "Wait for records in poll.", **e)
    d.define(
        "event.processing.failure.handling.mode",
        S,
        "fail",
        v.case_insensitive_one_of("fail", "warn", "ignore", "skip"),
        LO,
        "What to do with an event that cannot be processed.",
        aliases=("event.deserialization.failure.handling.mode",),
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
        "Adjust schema names for Avro.",
        **e,
    )
    _define_signals(d)
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
        "schema.history.internal.kafka.recovery.poll.interval.ms", INT, 100, None, LO, "Recovery poll.", **h
    )
    d.define("schema.history.internal.kafka.recovery.attempts", INT, 100, None, LO, "Recovery attempts.", **h)
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
    return d


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


@dataclass(frozen=True, eq=False)
class MySqlSettings:
    """The connector's config, parsed and typed: one field per key of :data:`MYSQL_DEF` (``a.b.c`` is
    ``a_b_c``; ``schema.history.internal.x`` is ``history_x``); ``raw`` keeps the original strings (for
    prefixed keys such as per-table ``snapshot.select.statement.overrides.<table>``)."""

    raw: Mapping[str, str]
    database_hostname: str = setting("database.hostname")
    database_port: int = setting("database.port")
    database_user: str = setting("database.user")
    database_password: Password | None = setting("database.password")
    database_server_id: int = setting("database.server.id")
    database_ssl_mode: str = setting("database.ssl.mode")
    database_connection_timezone: str | None = setting("database.connectionTimezone")
    database_initial_statements: str = setting("database.initial.statements")
    connect_timeout_ms: int = setting("connect.timeout.ms")
    errors_max_retries: int = setting("errors.max.retries")
    connect_keep_alive: bool = setting("connect.keep.alive")
    connect_keep_alive_interval_ms: int = setting("connect.keep.alive.interval.ms")
    topic_prefix: str = setting("topic.prefix")
    database_include_list: tuple[str, ...] = setting("database.include.list")
    database_exclude_list: tuple[str, ...] = setting("database.exclude.list")
    table_include_list: tuple[str, ...] = setting("table.include.list")
    table_exclude_list: tuple[str, ...] = setting("table.exclude.list")
    column_include_list: tuple[str, ...] = setting("column.include.list")
    column_exclude_list: tuple[str, ...] = setting("column.exclude.list")
    table_ignore_builtin: bool = setting("table.ignore.builtin")
    message_key_columns: str = setting("message.key.columns")
    skipped_operations: tuple[str, ...] = setting("skipped.operations")
    gtid_source_includes: tuple[str, ...] = setting("gtid.source.includes")
    gtid_source_excludes: tuple[str, ...] = setting("gtid.source.excludes")
    snapshot_mode: str = setting("snapshot.mode")
    snapshot_locking_mode: str = setting("snapshot.locking.mode")
    snapshot_lock_timeout_ms: int = setting("snapshot.lock.timeout.ms")
    snapshot_fetch_size: int | None = setting("snapshot.fetch.size")
    snapshot_delay_ms: int = setting("snapshot.delay.ms")
    snapshot_include_collection_list: tuple[str, ...] = setting("snapshot.include.collection.list")
    snapshot_select_statement_overrides: str = setting("snapshot.select.statement.overrides")
    snapshot_engine: str = setting("snapshot.engine")
    snapshot_spark_master: str = setting("snapshot.spark.master")
    snapshot_spark_partitions: int | None = setting("snapshot.spark.partitions")
    snapshot_spark_chunk_rows: int = setting("snapshot.spark.chunk.rows")
    snapshot_spark_encoder: str = setting("snapshot.spark.encoder")
    snapshot_spark_delivery: str = setting("snapshot.spark.delivery")
    snapshot_spark_stall_timeout_ms: int = setting("snapshot.spark.stall.timeout.ms")
    snapshot_spark_state_dir: str | None = setting("snapshot.spark.state.dir")
    time_precision_mode: str = setting("time.precision.mode")
    decimal_handling_mode: str = setting("decimal.handling.mode")
    bigint_unsigned_handling_mode: str = setting("bigint.unsigned.handling.mode")
    binary_handling_mode: str = setting("binary.handling.mode")
    enable_time_adjuster: bool = setting("enable.time.adjuster")
    include_unknown_datatypes: bool = setting("include.unknown.datatypes")
    column_propagate_source_type: tuple[str, ...] = setting("column.propagate.source.type")
    datatype_propagate_source_type: tuple[str, ...] = setting("datatype.propagate.source.type")
    converters: tuple[str, ...] = setting("converters")
    tombstones_on_delete: bool = setting("tombstones.on.delete")
    include_schema_changes: bool = setting("include.schema.changes")
    include_query: bool = setting("include.query")
    provide_transaction_metadata: bool = setting("provide.transaction.metadata")
    heartbeat_interval_ms: int = setting("heartbeat.interval.ms")
    topic_heartbeat_prefix: str = setting("topic.heartbeat.prefix")
    topic_transaction: str = setting("topic.transaction")
    topic_delimiter: str = setting("topic.delimiter")
    max_batch_size: int = setting("max.batch.size")
    max_queue_size: int = setting("max.queue.size")
    poll_interval_ms: int = setting("poll.interval.ms")
    event_processing_failure_handling_mode: str = setting("event.processing.failure.handling.mode")
    inconsistent_schema_handling_mode: str = setting("inconsistent.schema.handling.mode")
    schema_name_adjustment_mode: str = setting("schema.name.adjustment.mode")
    schema_history_internal: str = setting("schema.history.internal")
    history_kafka_topic: str | None = setting("schema.history.internal.kafka.topic")
    history_kafka_bootstrap_servers: str | None = setting("schema.history.internal.kafka.bootstrap.servers")
    history_file_filename: str | None = setting("schema.history.internal.file.filename")
    history_skip_unparseable_ddl: bool = setting("schema.history.internal.skip.unparseable.ddl")
    history_store_only_captured_tables_ddl: bool = setting(
        "schema.history.internal.store.only.captured.tables.ddl"
    )
    history_store_only_captured_databases_ddl: bool = setting(
        "schema.history.internal.store.only.captured.databases.ddl"
    )
    history_kafka_recovery_poll_interval_ms: int = setting(
        "schema.history.internal.kafka.recovery.poll.interval.ms"
    )
    history_kafka_recovery_attempts: int = setting("schema.history.internal.kafka.recovery.attempts")
    signal_enabled_channels: tuple[str, ...] = setting("signal.enabled.channels")
    signal_data_collection: str | None = setting("signal.data.collection")
    signal_file: str = setting("signal.file")
    signal_poll_interval_ms: int = setting("signal.poll.interval.ms")
    signal_kafka_topic: str | None = setting("signal.kafka.topic")
    signal_kafka_bootstrap_servers: str | None = setting("signal.kafka.bootstrap.servers")
    signal_kafka_group_id: str = setting("signal.kafka.groupId")
    signal_kafka_poll_timeout_ms: int = setting("signal.kafka.poll.timeout.ms")
    incremental_snapshot_chunk_size: int = setting("incremental.snapshot.chunk.size")
    incremental_snapshot_watermarking_strategy: str = setting("incremental.snapshot.watermarking.strategy")
    incremental_snapshot_allow_schema_changes: bool = setting("incremental.snapshot.allow.schema.changes")
    incremental_snapshot_parallelism: int = setting("incremental.snapshot.parallelism")
    incremental_snapshot_engine: str = setting("incremental.snapshot.engine")
    incremental_snapshot_spark_min_rows: int = setting("incremental.snapshot.spark.min.rows")
    read_only: bool = setting("read.only")

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> MySqlSettings:
        return settings_from(cls, MYSQL_DEF.parse(props), raw=dict(props))

    @property
    def prefix(self) -> str:
        return self.topic_prefix

    @property
    def password(self) -> str:
        pw = self.database_password
        return pw.value() if isinstance(pw, Password) else (pw or "")

    @functools.cached_property
    def override_tables(self) -> frozenset[str]:
        """The tables ``snapshot.select.statement.overrides`` names (``db.table``)."""
        return frozenset(t.strip() for t in self.snapshot_select_statement_overrides.split(",") if t.strip())

    def select_override(self, table: str) -> str | None:
        """The snapshot SELECT given for ``table`` (``snapshot.select.statement.overrides.<table>``)."""
        if table not in self.override_tables:
            return None
        return self.raw.get(f"snapshot.select.statement.overrides.{table}")

    @property
    def incremental_spark(self) -> bool:
        """Whether incremental snapshots of large tables are read by the Spark engine."""
        engine = self.incremental_snapshot_engine.lower()
        if engine == "auto":
            return self.snapshot_engine.lower() == "spark"
        return engine == "spark"

    def skipped(self, op: str) -> bool:
        return op in self.skipped_op_codes

    @functools.cached_property
    def skipped_op_codes(self) -> frozenset[str]:
        """``skipped.operations`` as a set (empty for ``none``); asked once per change event."""
        ops = {o.strip().lower() for o in self.skipped_operations}
        return frozenset() if "none" in ops else frozenset(ops)
