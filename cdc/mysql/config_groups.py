"""The later groups of :data:`~cdc.mysql.config_def.MYSQL_DEF` (Events, Schema history, Signals, the keys
accepted as groups) and the type, importance and group abbreviations every group function uses.

Split from ``config_def`` only to keep each module small: ``config_def._def`` still calls every group in
the order ``/connector-plugins/{p}/config`` shows them.
"""

from __future__ import annotations

import re

from cdc.config import ConfigDef
from cdc.config import validators as v
from cdc.config.shorthands import INT, LO, LST, B, H, L, M, S
from cdc.mysql.ddl.filter import DEBEZIUM_DDL_FILTER
from cdc.mysql.keys import PATTERN_KEYS
from cdc.mysql.metric_tags import validate_metric_tags
from cdc.mysql.naming import STRATEGIES as TOPIC_NAMING_STRATEGIES

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
