"""Configuration keys of the schema history (``schema.history.internal.*``, 1.x ``database.history.*``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.config import ConfigDef, ConfigType, Importance
from cdc.config.validators import at_least

__all__ = [
    "FILE_HISTORY_CLASSES",
    "KAFKA_HISTORY_CLASSES",
    "MEMORY_HISTORY_CLASSES",
    "PREFIX",
    "HistorySettings",
    "client_overrides",
    "history_config_def",
]

PREFIX = "schema.history.internal"
LEGACY_PREFIX = "database.history"

KAFKA_HISTORY_CLASSES = (
    "io.debezium.storage.kafka.history.KafkaSchemaHistory",
    "io.debezium.relational.history.KafkaDatabaseHistory",
)
FILE_HISTORY_CLASSES = (
    "io.debezium.storage.file.history.FileSchemaHistory",
    "io.debezium.relational.history.FileDatabaseHistory",
)
MEMORY_HISTORY_CLASSES = (
    "io.debezium.relational.history.MemorySchemaHistory",
    "io.debezium.relational.history.MemoryDatabaseHistory",
)

_GROUP = "History Storage"


def history_config_def() -> ConfigDef:
    """The history keys, each with its 1.x alias."""
    d = ConfigDef()

    def key(
        suffix: str,
        type_: ConfigType,
        default: Any,
        doc: str,
        importance: Importance = Importance.LOW,
        **extra: Any,
    ) -> None:
        d.define(
            f"{PREFIX}.{suffix}" if suffix else PREFIX,
            type_,
            default,
            importance=importance,
            documentation=doc,
            group=_GROUP,
            aliases=(f"{LEGACY_PREFIX}.{suffix}" if suffix else LEGACY_PREFIX,),
            **extra,
        )

    key(
        "",
        ConfigType.STRING,
        KAFKA_HISTORY_CLASSES[0],
        "The implementation of the schema history (Kafka, file or memory).",
        Importance.MEDIUM,
    )
    key(
        "kafka.topic",
        ConfigType.STRING,
        None,
        "The topic holding the connector's schema history (1 partition, delete policy, infinite retention).",
        Importance.HIGH,
    )
    key(
        "kafka.bootstrap.servers",
        ConfigType.STRING,
        None,
        "Kafka brokers of the schema history topic.",
        Importance.HIGH,
    )
    key(
        "kafka.recovery.poll.interval.ms",
        ConfigType.INT,
        100,
        "How long one poll waits while the history is recovered.",
        validator=at_least(1),
    )
    key(
        "kafka.recovery.attempts",
        ConfigType.INT,
        100,
        "Consecutive empty polls after which recovery gives up.",
        validator=at_least(1),
    )
    key(
        "kafka.query.timeout.ms",
        ConfigType.LONG,
        3000,
        "Timeout of admin queries about the topic.",
        validator=at_least(1),
    )
    key(
        "kafka.create.timeout.ms",
        ConfigType.LONG,
        30000,
        "Timeout of the topic's creation.",
        validator=at_least(1),
    )
    key("file.filename", ConfigType.STRING, None, "The file of the file-based schema history.")
    key(
        "skip.unparseable.ddl",
        ConfigType.BOOLEAN,
        False,
        "Skip (with a warning) DDL statements that cannot be parsed, instead of failing.",
    )
    key(
        "store.only.captured.tables.ddl", ConfigType.BOOLEAN, False, "Record the DDL of captured tables only."
    )
    key(
        "store.only.captured.databases.ddl",
        ConfigType.BOOLEAN,
        False,
        "Record the DDL of captured databases only.",
    )
    key("ddl.filter", ConfigType.STRING, "", "Regular expressions of DDL statements to leave out.")
    key(
        "prefer.ddl",
        ConfigType.BOOLEAN,
        False,
        "On recovery, re-parse each record's DDL instead of applying its table changes.",
    )
    return d


@dataclass(frozen=True)
class HistorySettings:
    """The parsed history keys."""

    history_class: str = KAFKA_HISTORY_CLASSES[0]
    kafka_topic: str | None = None
    kafka_bootstrap_servers: str | None = None
    recovery_poll_interval_ms: int = 100
    recovery_attempts: int = 100
    query_timeout_ms: int = 3000
    create_timeout_ms: int = 30000
    file_filename: str | None = None
    skip_unparseable_ddl: bool = False
    store_only_captured_tables_ddl: bool = False
    store_only_captured_databases_ddl: bool = False
    ddl_filter: str = ""
    prefer_ddl: bool = False
    producer: Mapping[str, Any] | None = None
    consumer: Mapping[str, Any] | None = None

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> HistorySettings:
        v = history_config_def().parse(props)

        def g(suffix: str) -> Any:
            return v[f"{PREFIX}.{suffix}" if suffix else PREFIX]

        return cls(
            history_class=g(""),
            kafka_topic=g("kafka.topic"),
            kafka_bootstrap_servers=g("kafka.bootstrap.servers"),
            recovery_poll_interval_ms=g("kafka.recovery.poll.interval.ms"),
            recovery_attempts=g("kafka.recovery.attempts"),
            query_timeout_ms=g("kafka.query.timeout.ms"),
            create_timeout_ms=g("kafka.create.timeout.ms"),
            file_filename=g("file.filename"),
            skip_unparseable_ddl=g("skip.unparseable.ddl"),
            store_only_captured_tables_ddl=g("store.only.captured.tables.ddl"),
            store_only_captured_databases_ddl=g("store.only.captured.databases.ddl"),
            ddl_filter=g("ddl.filter") or "",
            prefer_ddl=g("prefer.ddl"),
            producer=client_overrides(props, "producer"),
            consumer=client_overrides(props, "consumer"),
        )


def client_overrides(props: Mapping[str, Any], client: str) -> dict[str, Any]:
    """``<prefix>.producer.*`` / ``.consumer.*`` settings (new names win over 1.x ones)."""
    out: dict[str, Any] = {}
    for prefix in (f"{LEGACY_PREFIX}.{client}.", f"{PREFIX}.{client}."):
        for k, v in props.items():
            if k.startswith(prefix):
                out[k[len(prefix) :]] = v
    return out
