"""The JDBC sinks: Confluent's ``io.confluent.connect.jdbc.JdbcSinkConnector`` and Debezium's
``io.debezium.connector.jdbc.JdbcSinkConnector``, into PostgreSQL, MariaDB/MySQL and SQLite.

Both classes share one write path and differ only in how a record becomes a row change:

* ``confluent_config`` / ``debezium_config``: each class's keys, defaults and messages, parsed into one
  typed :class:`~cdc.jdbcsink.plan.SinkPlan`;
* ``changes``: a :class:`~cdc.api.records.SinkRecord` → a :class:`~cdc.jdbcsink.changes.Change` (flat
  records for Confluent's class, Debezium's envelope for Debezium's);
* ``types``: Connect's and Debezium's semantic types → column types and bound values per dialect;
* ``sql``: the statements per dialect (multi-row upserts, batched deletes, DDL);
* ``buffer``: batches built across ``put`` calls, changes to one key collapsed;
* ``writer``: one database transaction per batch, tables created and evolved, a failed batch narrowed
  down to the records that caused it;
* ``task`` and ``connector``.

``docs/jdbc-sink.md`` describes the keys, the type mapping and the delivery guarantees.
"""

from __future__ import annotations

__all__ = ["PLUGINS"]

_CONFLUENT = "cdc.jdbcsink.connector:JdbcSinkConnector"
_DEBEZIUM = "cdc.jdbcsink.connector:DebeziumJdbcSinkConnector"

PLUGINS: dict[str, str] = {
    "io.confluent.connect.jdbc.JdbcSinkConnector": _CONFLUENT,
    "JdbcSinkConnector": _CONFLUENT,
    "JdbcSink": _CONFLUENT,
    "io.debezium.connector.jdbc.JdbcSinkConnector": _DEBEZIUM,
}
"""Both classes share the simple name ``JdbcSinkConnector``. It means Confluent's, as on the Connect
clusters our users come from (Confluent's plugin installed, Debezium's not); Debezium's class is written
in full."""
