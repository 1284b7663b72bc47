"""The MySQL/MariaDB binlog source, compatible with Debezium's MySQL connector.

Everything MySQL-specific lives in this package: the connector and task, the snapshot and the binlog
stream sharing one :class:`~cdc.mysql.capture.CaptureContext`, the DDL parser (:mod:`cdc.mysql.ddl`)
and the parallel snapshot on Spark (:mod:`cdc.mysql.spark`). It stands on generic libraries
(:mod:`cdc.history` for the schema history, :mod:`cdc.snapshot` for chunk planning and runners,
:mod:`cdc.kafka` for client settings) and on the plugin API; it imports nothing from the worker.

The connectors stay top-level packages (``cdc.mysql``, ``cdc.jdbc``, ``cdc.file``) rather than moving
under a ``cdc/connectors/`` parent: the import test already keeps them apart from the runtime, and the
smaller move keeps every import path users and tests know.
"""

PLUGINS: dict[str, str] = {
    name: "cdc.mysql.connector:MySqlConnector"
    for name in ("io.debezium.connector.mysql.MySqlConnector", "MySqlConnector", "MySql")
} | {
    name: "cdc.mysql.connector:MariaDbConnector"
    for name in ("io.debezium.connector.mariadb.MariaDbConnector", "MariaDbConnector", "MariaDb")
}

__all__ = ["PLUGINS"]
