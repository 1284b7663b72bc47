"""The last groups of :data:`~cdc.mysql.config_def.MYSQL_DEF`: Debezium's OpenLineage integration and its
timings and internal switches (query, binlog net and shutdown timeouts, validation, restarts, statistics),
with the bounds a REST user cannot go past. Split from :mod:`cdc.mysql.config_groups` to keep each module
under the house's 25 KB; the same abbreviations.
"""

from __future__ import annotations

from cdc.config import ConfigDef
from cdc.config import validators as v
from cdc.config.sanitize import DEBEZIUM_SANITIZE_PATTERN, SANITIZE_KEY, pattern_error
from cdc.config.shorthands import INT, LO, LST, B, L, M, S
from cdc.mysql.config_groups import ADV

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
