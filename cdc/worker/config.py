"""The worker's and every connector's runtime config keys, declared once.

``WORKER_DEF`` (with ``DISTRIBUTED_DEF`` / ``STANDALONE_DEF`` on top) covers the worker properties
file; ``connector_def(kind)`` the keys the runtime reads from every connector config (name, class,
tasks.max, converters, transforms, predicates, error handling, topic creation, exactly-once). Names,
defaults and groups are Kafka Connect's, so ``/connector-plugins/{p}/config`` and validate read the same.
"""

from __future__ import annotations

from cdc.config import NO_DEFAULT, ConfigDef, ConfigType
from cdc.config import validators as v
from cdc.config.shorthands import CLS, INT, LO, LST, B, H, L, M, S
from cdc.logs.format import DEFAULT_PATTERN, compile_pattern

__all__ = [
    "COMMON_GROUP",
    "CONNECTOR_CLASS_CONFIG",
    "DISTRIBUTED_DEF",
    "ERROR_GROUP",
    "NAME_CONFIG",
    "PLUGIN_DEF",
    "REST_DEF",
    "REST_KEYS",
    "STANDALONE_DEF",
    "WORKER_DEF",
    "connector_def",
    "worker_subset",
]


JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"

# The two keys the runtime reads from a stored connector config before (or without) parsing it, as
# Connect's ConnectorConfig.NAME_CONFIG / CONNECTOR_CLASS_CONFIG: which plugin to load, which name to show.
NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"


def _worker_def() -> ConfigDef:
    d = ConfigDef()
    d.define("bootstrap.servers", LST, "localhost:9092", None, H, "Kafka brokers to connect to.")
    d.define("client.id", S, "", None, LO, "Prefix of the client ids of the worker's Kafka clients.")
    d.define("key.converter", CLS, NO_DEFAULT, None, H, "Converter class for record keys.")
    d.define("value.converter", CLS, NO_DEFAULT, None, H, "Converter class for record values.")
    d.define(
        "header.converter",
        CLS,
        "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        None,
        LO,
        "Converter class for record headers.",
    )
    d.define(
        "listeners", LST, "http://:8083", None, LO, "REST listeners, e.g. http://:8083,https://host:8443."
    )
    d.define("rest.advertised.host.name", S, None, None, LO, "Host name given to other workers.")
    d.define("rest.advertised.port", INT, None, None, LO, "Port given to other workers.")
    d.define("rest.advertised.listener", S, None, None, LO, "Listener scheme given to other workers.")
    # Connect 3.x's listener keys, removed in 4.0: read when ``listeners`` is not set, as 3.x read them
    d.define("rest.host.name", S, None, None, LO, "Host of the REST listener when listeners is not set.")
    d.define(
        "rest.port",
        INT,
        8083,
        v.between(0, 65535),
        LO,
        "Port of the REST listener when listeners is not set.",
    )
    d.define("access.control.allow.methods", S, "", None, LO, "CORS allowed methods.")
    d.define(
        "response.http.headers.config",
        S,
        "",
        None,
        LO,
        "Headers of every REST response: [action] [name]:[value], comma-separated (Jetty's HeaderFilter).",
    )
    d.define(
        "rest.extension.classes",
        LST,
        "",
        None,
        LO,
        "REST extensions: only org.apache.kafka.connect.rest.basic.auth.extension."
        "BasicAuthSecurityRestExtension is available; another class is logged and ignored.",
    )
    d.define(
        "rest.basic.auth.credentials.file",
        S,
        None,
        None,
        LO,
        "cdc's users file for basic authentication (user: password[, role]), instead of a JAAS file.",
    )
    d.define(
        "rest.allow.unauthenticated.all.interfaces",
        B,
        False,
        None,
        LO,
        "Let the REST API listen on every interface without authentication (refused by default).",
    )
    d.define(
        "plugin.path",
        LST,
        None,
        None,
        LO,
        "Directories of Python plugins (cdc.plugins entry points); an entry naming Kafka's connect-file jar "
        "(or a directory holding it) enables the FileStream connectors in distributed mode.",
    )
    d.define(
        "filestream.connectors.enable",
        B,
        None,
        None,
        LO,
        "Offer FileStreamSource/FileStreamSink: always in standalone mode unless false, in distributed "
        "mode only when true or named by plugin.path (they read and write the worker's files).",
    )
    d.define(
        "rest.request.body.max.bytes",
        INT,
        1048576,
        v.at_least(1),
        LO,
        "Largest REST request body; a larger one is refused with 413 before it is read.",
    )
    d.define(
        "rest.request.header.timeout.ms",
        INT,
        20000,
        v.at_least(1),
        LO,
        "Time a client has to send a request's line and headers, from the connection (or the previous "
        "response); a slower client is disconnected.",
    )
    d.define(
        "rest.idle.timeout.ms",
        INT,
        30000,
        v.at_least(1),
        LO,
        "Time a kept-alive connection may stay idle between requests (Jetty's idle timeout, 30 s).",
    )
    d.define(
        "connectors.max",
        INT,
        1000,
        v.at_least(0),
        LO,
        "Most connectors the worker (its group) holds; creating one more answers 400 (0: no limit).",
    )
    d.define(
        "connector.config.max.bytes",
        INT,
        524288,
        v.at_least(1),
        LO,
        "Largest connector config (its keys and values in UTF-8); a larger one answers 400, well before the "
        "config topic's record limit (max.request.size) would fail the write.",
    )
    d.define("offset.flush.interval.ms", L, 60000, v.at_least(0), LO, "How often source offsets are flushed.")
    d.define(
        "offset.flush.timeout.ms", L, 5000, v.at_least(0), LO, "How long a flush may take before it fails."
    )
    d.define(
        "task.shutdown.graceful.timeout.ms",
        L,
        5000,
        v.at_least(0),
        LO,
        "Time to wait for tasks to stop gracefully (in total).",
    )
    d.define("config.providers", LST, "", None, LO, "Config provider aliases.")
    d.define("topic.creation.enable", B, True, None, LO, "Let source connectors create their topics.")
    d.define("topic.tracking.enable", B, True, None, LO, "Track the topics each connector uses.")
    d.define("topic.tracking.allow.reset", B, True, None, LO, "Allow resetting the tracked topics.")
    d.define(
        "connector.client.config.override.policy",
        S,
        "All",
        v.one_of("All", "None", "Principal"),
        M,
        "Which client settings connectors may override.",
    )
    d.define(
        "exactly.once.source.support",
        S,
        "disabled",
        v.case_insensitive_one_of("disabled", "preparing", "enabled"),
        H,
        "Exactly-once delivery for source connectors.",
    )
    d.define("metrics.port", INT, None, None, LO, "Deprecated alias of the REST listener's /metrics.")
    d.define("access.control.allow.origin", S, "", None, LO, "CORS allowed origin.")
    d.define("admin.listeners", LST, None, None, LO, "Listeners for /admin endpoints.")
    # cdc's own (Connect takes these from connect-log4j.properties); docs/logging.md
    d.define(
        "log.format",
        S,
        "log4j",
        v.one_of("log4j", "json"),
        LO,
        "Log lines as log4j's PatternLayout writes them (log.pattern), or one JSON object per line.",
    )
    d.define(
        "log.pattern",
        S,
        DEFAULT_PATTERN,
        v.predicate(_valid_pattern, "a log4j pattern of supported conversions (docs/logging.md)"),
        LO,
        "The log4j pattern of log.format=log4j: %d %p %m %c %t %L %X{connector.context} %n %%.",
    )
    d.define("log.file", S, None, None, LO, "Also write the log to this file (appended).")
    # cdc's own: what connectors' Spark snapshots may use (docs/snapshots.md, cdc.snapshot.spark_conf)
    d.define(
        "snapshot.spark.allowed.masters",
        LST,
        "",
        None,
        LO,
        "Spark masters other than local[...] that connectors may name in snapshot.spark.master.",
    )
    # and snapshot.spark.conf.<spark key> (read as a group, cdc.worker.worker.worker_client_entries): the
    # Spark settings of every Spark snapshot of the worker (any key but spark.master)
    return d


def _valid_pattern(pattern: object) -> bool:
    try:
        compile_pattern(str(pattern))
    except ValueError:
        return False
    return True


WORKER_DEF = _worker_def()

REST_KEYS = (
    "listeners",
    "rest.host.name",
    "rest.port",
    "admin.listeners",
    "rest.advertised.host.name",
    "rest.advertised.port",
    "rest.advertised.listener",
    "access.control.allow.origin",
    "access.control.allow.methods",
    "response.http.headers.config",
    "rest.extension.classes",
    "rest.basic.auth.credentials.file",
    "rest.allow.unauthenticated.all.interfaces",
    "rest.request.body.max.bytes",
    "rest.request.header.timeout.ms",
    "rest.idle.timeout.ms",
    "topic.tracking.enable",
    "topic.tracking.allow.reset",
    "connector.client.config.override.policy",
    "snapshot.spark.allowed.masters",
)
"""The worker keys the REST server reads (:class:`cdc.worker.rest.RestSettings`), declared in
:data:`WORKER_DEF`: :data:`REST_DEF` parses them alone, so a REST settings object needs no converter keys."""


def worker_subset(names: tuple[str, ...]) -> ConfigDef:
    """The keys ``names`` of :data:`WORKER_DEF` as a definition of their own, for a part of the runtime
    that reads only them (and must not require the keys it does not read, such as the converters)."""
    d = ConfigDef()
    for key in WORKER_DEF.keys():  # noqa: SIM118 (ConfigDef.keys() is a list of ConfigKey)
        if key.name in names:
            d.add(key)
    return d


REST_DEF = worker_subset(REST_KEYS)
PLUGIN_DEF = worker_subset(("plugin.path", "filestream.connectors.enable"))
"""The keys :class:`cdc.worker.plugin_path.PluginSettings` reads."""


def _distributed_def() -> ConfigDef:
    d = ConfigDef(WORKER_DEF.keys())
    d.define("group.id", S, NO_DEFAULT, None, H, "The Connect cluster's group id.")
    d.define("config.storage.topic", S, NO_DEFAULT, None, H, "Topic of connector and task configs.")
    d.define("offset.storage.topic", S, NO_DEFAULT, None, H, "Topic of source offsets.")
    d.define("status.storage.topic", S, NO_DEFAULT, None, H, "Topic of connector and task states.")
    d.define("config.storage.replication.factor", ConfigType.SHORT, 3, None, LO, "RF of the config topic.")
    d.define("offset.storage.replication.factor", ConfigType.SHORT, 3, None, LO, "RF of the offsets topic.")
    d.define("status.storage.replication.factor", ConfigType.SHORT, 3, None, LO, "RF of the status topic.")
    d.define("offset.storage.partitions", INT, 25, None, LO, "Partitions of the offsets topic.")
    d.define("status.storage.partitions", INT, 5, None, LO, "Partitions of the status topic.")
    d.define("session.timeout.ms", INT, 10000, None, H, "Group session timeout.")
    d.define("heartbeat.interval.ms", INT, 3000, None, H, "Group heartbeat interval.")
    d.define("rebalance.timeout.ms", INT, 60000, None, H, "Group rebalance timeout.")
    d.define("worker.sync.timeout.ms", INT, 3000, None, M, "Time to catch up with the config topic.")
    d.define("worker.unsync.backoff.ms", INT, 300000, None, M, "Backoff after failing to catch up.")
    d.define(
        "connect.protocol",
        S,
        "sessioned",
        v.case_insensitive_one_of("eager", "compatible", "sessioned"),
        LO,
        "Group protocol.",
    )
    d.define(
        "scheduled.rebalance.max.delay.ms", INT, 300000, v.at_least(0), LO, "Delay before lost work moves."
    )
    d.define("inter.worker.key.generation.algorithm", S, "HmacSHA256", None, LO, "Session key algorithm.")
    d.define("inter.worker.signature.algorithm", S, "HmacSHA256", None, LO, "Request signature algorithm.")
    d.define("inter.worker.verification.algorithms", LST, "HmacSHA256", None, LO, "Accepted signatures.")
    d.define("inter.worker.key.ttl.ms", INT, 3600000, None, LO, "Session key lifetime.")
    d.define(
        "connector.file.allowed.paths",
        LST,
        "",
        None,
        M,
        "Directories where connector configs may name files the worker opens or creates (signal.file, a "
        "file schema history, jdbc:sqlite: databases, snapshot.spark.state.dir); none by default.",
    )
    return d


DISTRIBUTED_DEF = _distributed_def()


def _standalone_def() -> ConfigDef:
    d = ConfigDef(WORKER_DEF.keys())
    d.define("offset.storage.file.filename", S, NO_DEFAULT, None, H, "File of source offsets.")
    d.define(
        "connector.file.allowed.paths",
        LST,
        None,
        None,
        M,
        "Directories where connector configs may name files the worker opens or creates (signal.file, a "
        "file schema history, jdbc:sqlite: databases, snapshot.spark.state.dir); any path when not set.",
    )
    return d


STANDALONE_DEF = _standalone_def()

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
TOPIC_CREATION_GROUP = "Topic Creation"
EOS_GROUP = "Exactly Once Support"
OFFSETS_GROUP = "offsets.topic"


def _common_connector_def() -> ConfigDef:
    d = ConfigDef()
    g = {"group": COMMON_GROUP}
    d.define(
        "name",
        S,
        NO_DEFAULT,
        v.non_empty_string,
        H,
        "Globally unique name to use for this connector.",
        display_name="Connector name",
        **g,
    )
    d.define(
        "connector.class",
        S,
        NO_DEFAULT,
        None,
        H,
        "Name or alias of the class for this connector.",
        display_name="Connector class",
        **g,
    )
    d.define(
        "tasks.max",
        INT,
        1,
        v.at_least(1),
        H,
        "Maximum number of tasks to use for this connector.",
        display_name="Tasks max",
        **g,
    )
    d.define(
        "tasks.max.enforce",
        B,
        True,
        None,
        LO,
        "Fail a connector that generates more tasks than tasks.max.",
        **g,
    )
    d.define("key.converter", CLS, None, None, LO, "Converter class for keys (the worker's by default).", **g)
    d.define(
        "value.converter", CLS, None, None, LO, "Converter class for values (the worker's by default).", **g
    )
    d.define(
        "header.converter", CLS, None, None, LO, "Converter class for headers (the worker's by default).", **g
    )
    d.define(
        "config.action.reload",
        S,
        "restart",
        v.case_insensitive_one_of("none", "restart"),
        LO,
        "What to do when a config provider's value changes.",
        **g,
    )
    d.define(
        "transforms",
        LST,
        "",
        None,
        LO,
        "Aliases for the transformations to apply to records.",
        group=TRANSFORMS_GROUP,
        display_name="Transforms",
    )
    d.define(
        "predicates",
        LST,
        "",
        None,
        LO,
        "Aliases for the predicates used by transformations.",
        group=PREDICATES_GROUP,
        display_name="Predicates",
    )
    e = {"group": ERROR_GROUP}
    d.define(
        "errors.retry.timeout", L, 0, None, M, "Maximum duration in ms a failed operation is retried.", **e
    )
    d.define("errors.retry.delay.max.ms", L, 60000, None, M, "Maximum wait between retries.", **e)
    d.define(
        "errors.tolerance",
        S,
        "none",
        v.case_insensitive_one_of("none", "all"),
        M,
        "Behaviour for tolerating errors during connector operation.",
        **e,
    )
    d.define("errors.log.enable", B, False, None, M, "Log each error and the failed operation.", **e)
    d.define("errors.log.include.messages", B, False, None, M, "Include the records in error logs.", **e)
    # Keys read as groups: converter and client settings, transform/predicate settings, topic creation.
    d.accept(
        prefixes=(
            "key.converter.",
            "value.converter.",
            "header.converter.",
            "producer.override.",
            "consumer.override.",
            "admin.override.",
            "transforms.",
            "predicates.",
            "topic.creation.",
        )
    )
    return d


def _source_def() -> ConfigDef:
    d = _common_connector_def()
    t = {"group": TOPIC_CREATION_GROUP}
    d.define("topic.creation.groups", LST, "", None, LO, "Groups of configurations for created topics.", **t)
    d.define(
        "topic.creation.default.replication.factor",
        ConfigType.SHORT,
        None,
        None,
        LO,
        "Replication factor of topics created for this connector (-1: broker default).",
        **t,
    )
    d.define(
        "topic.creation.default.partitions",
        INT,
        None,
        None,
        LO,
        "Partitions of topics created for this connector (-1: broker default).",
        **t,
    )
    x = {"group": EOS_GROUP}
    d.define(
        "exactly.once.support",
        S,
        "requested",
        v.case_insensitive_one_of("requested", "required"),
        M,
        "Whether the connector must guarantee exactly-once delivery.",
        **x,
    )
    d.define(
        "transaction.boundary",
        S,
        "poll",
        v.case_insensitive_one_of("poll", "interval", "connector"),
        M,
        "Where producer transactions begin and end.",
        **x,
    )
    d.define("transaction.boundary.interval.ms", L, None, None, LO, "Transaction length for 'interval'.", **x)
    d.define(
        "offsets.storage.topic",
        S,
        None,
        None,
        LO,
        "A separate offsets topic for this connector.",
        group=OFFSETS_GROUP,
    )
    return d


def _sink_def() -> ConfigDef:
    d = _common_connector_def()
    g = {"group": COMMON_GROUP}
    d.define("topics", LST, "", None, H, "Topics to consume.", **g)
    d.define("topics.regex", S, "", v.regex, H, "Regular expression of topics to consume.", **g)
    e = {"group": ERROR_GROUP}
    d.define("errors.deadletterqueue.topic.name", S, "", None, M, "Dead letter queue topic.", **e)
    d.define(
        "errors.deadletterqueue.topic.replication.factor",
        ConfigType.SHORT,
        3,
        None,
        M,
        "Replication factor of the dead letter queue topic.",
        **e,
    )
    d.define(
        "errors.deadletterqueue.context.headers.enable",
        B,
        False,
        None,
        M,
        "Add error context headers to dead-lettered records.",
        **e,
    )
    return d


_DEFS = {"source": _source_def(), "sink": _sink_def(), "unknown": _common_connector_def()}


def connector_def(kind: str) -> ConfigDef:
    """The runtime's keys for a ``source``, ``sink`` (or ``unknown``) connector."""
    return _DEFS[kind]
