"""The Java logger names users set levels for and route on, and the cdc loggers that do their work here.

Kafka Connect users raise ``io.debezium`` or ``io.confluent.connect.jdbc`` to DEBUG through
``PUT /admin/loggers/{name}``; here the same name sets the loggers of the cdc packages that replace
those classes. A name is mapped through its longest listed prefix: ``io.debezium.connector.mysql.
MySqlStreamingChangeEventSource`` sets ``cdc.mysql``, ``io.debezium`` every package Debezium's work is
done in. Names that are no prefix of a listed one are ordinary Python logger names.

The other way, :data:`JAVA_CLASSES` names, for each cdc module that does a Java class's work, that class
(or package, where one module does the work of several): the log line's logger (``%c``, JSON's
``logger``) is that name, so log routing, filters and alerts written on Connect's and Debezium's class
names (``io.debezium.connector.mysql.*``, ``org.apache.kafka.connect.runtime.WorkerSourceTask``) match
cdc's lines. A module without a counterpart (the Spark snapshot, cdc's own checks) keeps its Python name;
a child logger (``cdc.mysql.streaming.x``) takes its module's Java name.
"""

from __future__ import annotations

__all__ = ["JAVA_CLASSES", "JAVA_LOGGERS", "java_name", "python_loggers"]

JAVA_LOGGERS: dict[str, tuple[str, ...]] = {
    "io.debezium": ("cdc.mysql", "cdc.history", "cdc.snapshot", "cdc.transforms.debezium"),
    "io.debezium.connector.mysql": ("cdc.mysql",),
    "io.debezium.connector.mariadb": ("cdc.mysql",),
    "io.debezium.connector.binlog": ("cdc.mysql",),
    "io.debezium.relational.history": ("cdc.history",),
    "io.debezium.storage": ("cdc.history",),
    "io.debezium.transforms": ("cdc.transforms.debezium",),
    "io.confluent.connect.jdbc": ("cdc.jdbc",),
    "io.confluent.connect.avro": ("cdc.converters.avro_converter", "cdc.converters.registry_client"),
    "io.confluent.kafka.schemaregistry": ("cdc.converters.registry_client",),
    "org.apache.kafka.connect": ("cdc.worker", "cdc.api", "cdc.file", "cdc.transforms", "cdc.converters"),
    "org.apache.kafka.connect.runtime": ("cdc.worker",),
    "org.apache.kafka.connect.runtime.rest": ("cdc.worker.rest",),
    "org.apache.kafka.connect.runtime.TransformationChain": ("cdc.worker.record_trace",),
    "org.apache.kafka.connect.runtime.distributed": ("cdc.worker.distributed", "cdc.worker.connect_herder"),
    "org.apache.kafka.connect.storage": ("cdc.worker.stores",),
    "org.apache.kafka.connect.file": ("cdc.file",),
    "org.apache.kafka.connect.transforms": ("cdc.transforms",),
    "org.apache.kafka.connect.json": ("cdc.converters.json_converter",),
    "org.apache.kafka.clients": ("kafka", "cdc.kafka"),
    "org.apache.spark": ("py4j", "pyspark"),
}


_DBZ_MYSQL = "io.debezium.connector.mysql."
_CONNECT = "org.apache.kafka.connect."
_RUNTIME = _CONNECT + "runtime."
_STORAGE = _CONNECT + "storage."
_JDBC = "io.confluent.connect.jdbc."

JAVA_CLASSES: dict[str, str] = {
    # Debezium's MySQL connector
    "cdc.mysql.connector": _DBZ_MYSQL + "MySqlConnector",
    "cdc.mysql.task": _DBZ_MYSQL + "MySqlConnectorTask",
    "cdc.mysql.config": _DBZ_MYSQL + "MySqlConnectorConfig",
    "cdc.mysql.validation": _DBZ_MYSQL + "MySqlConnectorConfig",
    "cdc.mysql.connection": _DBZ_MYSQL + "MySqlConnection",
    "cdc.mysql.streaming": _DBZ_MYSQL + "MySqlStreamingChangeEventSource",
    "cdc.mysql.binlog": _DBZ_MYSQL + "MySqlStreamingChangeEventSource",
    "cdc.mysql.snapshot": _DBZ_MYSQL + "MySqlSnapshotChangeEventSource",
    "cdc.mysql.schema": _DBZ_MYSQL + "MySqlDatabaseSchema",
    "cdc.mysql.ddl": _DBZ_MYSQL + "antlr.MySqlAntlrDdlParser",
    "cdc.mysql.converters": _DBZ_MYSQL + "MySqlValueConverters",
    "cdc.mysql.rowdecoder": _DBZ_MYSQL + "RowDeserializers",
    "cdc.mysql.gtid_position": _DBZ_MYSQL + "GtidSet",
    "cdc.mysql.offsets": _DBZ_MYSQL + "MySqlOffsetContext",
    "cdc.mysql.incremental.snapshot": (
        "io.debezium.pipeline.source.snapshot.incremental.AbstractIncrementalSnapshotChangeEventSource"
    ),
    "cdc.mysql.incremental.readonly": _DBZ_MYSQL + "MySqlReadOnlyIncrementalSnapshotChangeEventSource",
    "cdc.mysql.incremental.blocking": "io.debezium.pipeline.ChangeEventSourceCoordinator",
    "cdc.mysql.signals.processor": "io.debezium.pipeline.signal.SignalProcessor",
    "cdc.mysql.signals.channels": "io.debezium.pipeline.signal.channels",
    "cdc.mysql.signals.actions": "io.debezium.pipeline.signal.actions",
    "cdc.history.kafka_store": "io.debezium.storage.kafka.history.KafkaSchemaHistory",
    "cdc.history.store": "io.debezium.relational.history.AbstractSchemaHistory",
    "cdc.transforms.debezium": "io.debezium.transforms.ExtractNewRecordState",
    # Confluent's JDBC source
    "cdc.jdbc.connector": _JDBC + "JdbcSourceConnector",
    "cdc.jdbc.task": _JDBC + "source.JdbcSourceTask",
    "cdc.jdbc.querier": _JDBC + "source.TableQuerier",
    "cdc.jdbc.dialects": _JDBC + "dialect.GenericDatabaseDialect",
    "cdc.jdbc.types": _JDBC + "dialect.GenericDatabaseDialect",
    # Kafka Connect's runtime
    "cdc.worker.worker": _RUNTIME + "Worker",
    "cdc.worker.task": _RUNTIME + "WorkerTask",
    "cdc.worker.source_task": _RUNTIME + "WorkerSourceTask",
    "cdc.worker.record_trace": _RUNTIME + "TransformationChain",
    "cdc.worker.exactly_once": _RUNTIME + "ExactlyOnceWorkerSourceTask",
    "cdc.worker.sink_task": _RUNTIME + "WorkerSinkTask",
    "cdc.worker.tolerance": _RUNTIME + "errors.RetryWithToleranceOperator",
    "cdc.worker.validation": _RUNTIME + "AbstractHerder",
    "cdc.worker.connect_herder": _RUNTIME + "AbstractHerder",
    "cdc.worker.config_providers": _RUNTIME + "WorkerConfigTransformer",
    "cdc.worker.plugin_path": _RUNTIME + "isolation.Plugins",
    "cdc.worker.runtime": _CONNECT + "cli.AbstractConnectCli",
    "cdc.worker.distributed.coordinator": _RUNTIME + "distributed.WorkerCoordinator",
    "cdc.worker.distributed.membership": _RUNTIME + "distributed.WorkerGroupMember",
    "cdc.worker.rest.server": _RUNTIME + "rest.RestServer",
    "cdc.worker.rest.protocol": _RUNTIME + "rest.RestServer",
    "cdc.worker.rest.exposure": _RUNTIME + "rest.RestServer",
    "cdc.worker.rest.forwarding": _RUNTIME + "rest.RestClient",
    "cdc.worker.rest.errors": _RUNTIME + "rest.errors.ConnectExceptionMapper",
    "cdc.worker.rest.auth": _CONNECT + "rest.basic.auth.extension.JaasBasicAuthFilter",
    "cdc.worker.stores.kafka": _STORAGE + "KafkaOffsetBackingStore",
    "cdc.worker.stores.kafka_status": _STORAGE + "KafkaStatusBackingStore",
    "cdc.worker.stores.config_state": _STORAGE + "KafkaConfigBackingStore",
    "cdc.worker.stores.file": _STORAGE + "FileOffsetBackingStore",
    "cdc.worker.stores.base": _STORAGE + "OffsetStorageWriter",
    "cdc.worker.stores.kafka_log": _CONNECT + "util.KafkaBasedLog",
    "cdc.worker.stores.kafka_settings": _CONNECT + "util.KafkaBasedLog",
    "cdc.worker.stores.topics": _CONNECT + "util.TopicAdmin",
    "cdc.file.source": _CONNECT + "file.FileStreamSourceTask",
    "cdc.file.sink": _CONNECT + "file.FileStreamSinkTask",
    "cdc.kafka.clients": "org.apache.kafka.clients",
    "cdc.kafka.failures": "org.apache.kafka.clients",
}


def java_name(logger: str) -> str:
    """The name a line of the Python logger ``logger`` shows: its module's (or package's) Java class,
    else ``logger`` itself."""
    name = logger
    while name:
        java = JAVA_CLASSES.get(name)
        if java is not None:
            return java
        name = name.rpartition(".")[0]
    return logger


def python_loggers(name: str) -> tuple[str, ...] | None:
    """The cdc loggers a Java logger name stands for (its longest listed prefix), None if none."""
    best = ""
    for java in JAVA_LOGGERS:
        if (name == java or name.startswith(java + ".")) and len(java) > len(best):
            best = java
    return JAVA_LOGGERS[best] if best else None
