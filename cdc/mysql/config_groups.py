"""The later groups of :data:`~cdc.mysql.config_def.MYSQL_DEF` (Events, Schema history, Signals, the keys
accepted as groups) and the type, importance and group abbreviations every group function uses.

Split from ``config_def`` only to keep each module small: ``config_def._def`` still calls every group in
the order ``/connector-plugins/{p}/config`` shows them.
"""

from __future__ import annotations

import re

from cdc.config import ConfigDef, ConfigType, Importance
from cdc.config import validators as v
from cdc.config.sanitize import DEBEZIUM_SANITIZE_PATTERN, SANITIZE_KEY, pattern_error
from cdc.mysql.ddl.filter import DEBEZIUM_DDL_FILTER
from cdc.mysql.keys import PATTERN_KEYS
from cdc.mysql.metric_tags import validate_metric_tags
from cdc.mysql.naming import STRATEGIES as TOPIC_NAMING_STRATEGIES

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
SIGNAL_CHANNELS = ("source", "file", "kafka")
SIGNALS = "Signals"


def define_events(d: ConfigDef) -> None:
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


def define_history(d: ConfigDef) -> None:
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


def accept_groups(d: ConfigDef) -> None:
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


def define_signals(d: ConfigDef) -> None:
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
        None,
        LO,
        "Only false (Debezium's default) is accepted: a table altered during its incremental snapshot must "
        "be snapshotted again.",
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


OPENLINEAGE = "OpenLineage"


def define_openlineage(d: ConfigDef) -> None:
    """Debezium's OpenLineage integration (``cdc.openlineage``; docs/mysql.md, "OpenLineage")."""
    from cdc.openlineage.config import parse_pairs

    g = {"group": OPENLINEAGE}

    def pairs(name: str, value: object) -> None:
        parse_pairs(",".join(str(x) for x in value) if isinstance(value, list) else str(value or ""), name)

    d.define(
        "openlineage.integration.enabled",
        B,
        False,
        None,
        LO,
        "Emit OpenLineage run events (START, RUNNING with the captured tables as input datasets, FAIL, "
        "COMPLETE) through the transport openlineage.integration.config.file.path configures.",
        **g,
    )
    d.define(
        "openlineage.integration.config.file.path",
        S,
        "./openlineage.yml",
        None,
        LO,
        "The OpenLineage client's YAML file (transport console, file, http or kafka, in the Java client's "
        "spelling Debezium reads); the worker opens it, so it must be inside connector.file.allowed.paths.",
        **g,
    )
    d.define(
        "openlineage.integration.job.namespace",
        S,
        None,
        None,
        LO,
        "The namespace of the job; default: topic.prefix.",
        **g,
    )
    d.define(
        "openlineage.integration.job.description",
        S,
        None,
        None,
        LO,
        "The job's description (its documentation facet); default: 'Debezium CDC job for <topic.prefix>'.",
        **g,
    )
    d.define(
        "openlineage.integration.job.tags",
        LST,
        None,
        pairs,
        LO,
        "The job's tags, a comma-separated list of key=value (source CONFIG).",
        **g,
    )
    d.define(
        "openlineage.integration.job.owners",
        LST,
        None,
        pairs,
        LO,
        "The job's owners, a comma-separated list of name=type.",
        **g,
    )
    d.define(
        "openlineage.integration.dataset.kafka.bootstrap.servers",
        S,
        None,
        None,
        LO,
        "The Kafka of the output datasets' namespace (kafka://<this>), which the OpenLineage transform "
        "(io.debezium.transforms.openlineage.OpenLineage) writes; default: the first of "
        "schema.history.internal.kafka.bootstrap.servers. Only named, never connected to.",
        **g,
    )


NET_TIMEOUT_MAX_S = 31536000
"""The server's own maximum of ``net_write_timeout``/``net_read_timeout`` (a year, in seconds)."""
SHUTDOWN_WAIT_MAX_MS = 60000
"""``executor.shutdown.timeout.ms`` above this waits this long: a task's stop runs on the worker's herder
thread, which a REST user must not be able to hold for hours (docs/security.md)."""
BUFFERED_ROWS_MAX = 100000
"""``min.row.count.to.stream.results`` above this is refused: a REST user must not make the worker hold a
large table in memory."""
FETCH_ROWS_NOTE = "2000 at a time from an unbuffered cursor, or whole for a small table"
VALIDATION_WAIT_MAX_MS = 60000
"""``connection.validation.timeout.ms`` above this (Debezium's default) waits this long: validate answers a
REST request."""


def define_tuning(d: ConfigDef) -> None:
    """Debezium's timings of connections, queries and shutdown (``CommonConnectorConfig``,
    ``BinlogConnectorConfig``, ``RelationalDatabaseConnectorConfig``), each with its meaning in cdc."""
    a = {"group": ADV}
    d.define(
        "database.query.timeout.ms",
        INT,
        600000,
        v.at_least(0),
        LO,
        "How long cdc waits for the server's answer to a query on its SQL connections (snapshot reads, "
        "checks, heartbeat action, signals; not the binlog connection): a read timeout on the socket, after "
        "which the query fails; 0: no limit.",
        **a,
    )
    for which in ("write", "read"):
        d.define(
            f"binlog.net.{which}.timeout",
            L,
            0,
            v.between(0, NET_TIMEOUT_MAX_S),
            M,
            f"Seconds: the binlog connection's session net_{which}_timeout, set before the dump starts "
            "(as Debezium sets it on its binlog client); 0: the server's default.",
            **a,
        )
    d.define(
        "use.nongraceful.disconnect",
        B,
        False,
        None,
        M,
        "Close the binlog connection without COM_QUIT, resetting the socket (SO_LINGER 0): Debezium does so "
        "when its keep-alive drops a stale connection; cdc whenever it closes the binlog connection (a "
        "reconnect, the task's stop).",
        **a,
    )
    d.define(
        "connection.validation.timeout.ms",
        L,
        60000,
        v.at_least(1),
        LO,
        "How long validate (and so connector creation) waits for the connection check: past it, "
        f"'Connection validation timed out after N ms' on database.hostname; waits at most "
        f"{VALIDATION_WAIT_MAX_MS} ms.",
        **a,
    )
    d.define(
        "executor.shutdown.timeout.ms",
        L,
        4000,
        v.at_least(1),
        M,
        "How long the task's stop waits for its capture thread (snapshot, streaming) to end after asking it "
        f"to; waits at most {SHUTDOWN_WAIT_MAX_MS} ms.",
        **a,
    )
    d.define(
        "gtid.source.filter.dml.events",
        B,
        True,
        None,
        M,
        "With gtid.source.includes/excludes: true leaves out the row events of transactions whose GTID "
        "source the filter rejects; false emits them (the filter then only trims the offsets' GTID set).",
        **a,
    )
    d.define(
        "retriable.restart.connector.wait.ms",
        L,
        10000,
        v.at_least(1),
        LO,
        "A task that cannot connect when it starts (a retriable error) does not fail: it waits this long, "
        "then starts again on a later poll, as Debezium's task restarts.",
        **a,
    )
    d.define(
        "statistics.metrics.enabled",
        B,
        True,
        None,
        M,
        "Keep the streaming lag's quantiles (MilliSecondsBehindSourceP50/P95/P99, from a sketch within 1 %, "
        "as Debezium's DDSketch); false: they are not collected nor exported (min, max and average stay).",
        **a,
    )
    d.define(
        SANITIZE_KEY,
        S,
        DEBEZIUM_SANITIZE_PATTERN,
        v.predicate(lambda x: x is None or pattern_error(str(x)) is None, "Not a valid regular expression"),
        LO,
        "A regular expression matching whole config keys whose values are masked: in the task's "
        "configuration log line and, as secrets, in every log line, status trace and REST answer of the "
        "worker. Added to the keys cdc masks anyway (passwords, secret-looking names); Debezium's replaces "
        "its default pattern.",
        **a,
    )
    d.define(
        "min.row.count.to.stream.results",
        INT,
        1000,
        v.between(0, BUFFERED_ROWS_MAX),
        LO,
        "The snapshot reads a table InnoDB estimates at most this many rows whole (a buffered result: the "
        "server's statement ends at once) and streams the larger ones; 0: every table streamed. At most "
        f"{BUFFERED_ROWS_MAX} (a larger table is never held in the worker's memory).",
        **a,
    )
    d.define(
        "query.fetch.size",
        INT,
        0,
        v.at_least(0),
        LO,
        "Rows a JDBC statement fetches per round trip in Debezium's Oracle and SQL Server connectors; its "
        "MySQL and MariaDB connectors read nothing with it, and neither does cdc (rows are read "
        f"{FETCH_ROWS_NOTE}).",
        **a,
    )
    d.define(
        "internal.log.position.check.enable",
        B,
        True,
        None,
        LO,
        "Debezium's internal switch of the check, at start, that the offset's binlog position is still on "
        "the server (snapshot.mode when_needed and configuration_based take a new snapshot when it is not); "
        "false: no check, streaming resumes there and fails if the binlog is gone.",
        **a,
    )
    d.define(
        "internal.advanced.metrics.enable",
        B,
        False,
        None,
        LO,
        "Debezium's internal switch of the streaming change events counted by table: "
        "NumberOf{Create,Update,Delete}EventsSeen{table=...} (truncates are not counted by table).",
        **a,
    )
    d.define(
        "internal.snapshot.scan.all.columns.force",
        B,
        False,
        None,
        LO,
        "Debezium's internal switch of how its JDBC metadata scan reads columns (all tables' at once); its "
        "MySQL and MariaDB connectors read each table's schema with SHOW CREATE TABLE and never consult it, "
        "and neither does cdc.",
        **a,
    )
