"""The Java logger names users set levels for, and the cdc loggers that do their work here.

Kafka Connect users raise ``io.debezium`` or ``io.confluent.connect.jdbc`` to DEBUG through
``PUT /admin/loggers/{name}``; here the same name sets the loggers of the cdc packages that replace
those classes. A name is mapped through its longest listed prefix: ``io.debezium.connector.mysql.
MySqlStreamingChangeEventSource`` sets ``cdc.mysql``, ``io.debezium`` every package Debezium's work is
done in. Names that are no prefix of a listed one are ordinary Python logger names.
"""

from __future__ import annotations

__all__ = ["JAVA_LOGGERS", "python_loggers"]

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
    "org.apache.kafka.connect.runtime.distributed": ("cdc.worker.distributed", "cdc.worker.connect_herder"),
    "org.apache.kafka.connect.storage": ("cdc.worker.stores",),
    "org.apache.kafka.connect.file": ("cdc.file",),
    "org.apache.kafka.connect.transforms": ("cdc.transforms",),
    "org.apache.kafka.connect.json": ("cdc.converters.json_converter",),
    "org.apache.kafka.clients": ("kafka",),
    "org.apache.spark": ("py4j", "pyspark"),
}


def python_loggers(name: str) -> tuple[str, ...] | None:
    """The cdc loggers a Java logger name stands for (its longest listed prefix), None if none."""
    best = ""
    for java in JAVA_LOGGERS:
        if (name == java or name.startswith(java + ".")) and len(java) > len(best):
            best = java
    return JAVA_LOGGERS[best] if best else None
