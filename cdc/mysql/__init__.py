"""The MySQL/MariaDB binlog source, compatible with Debezium's MySQL connector."""

PLUGINS: dict[str, str] = {
    name: "cdc.mysql.connector:MySqlConnector"
    for name in ("io.debezium.connector.mysql.MySqlConnector", "MySqlConnector", "MySql")
} | {
    name: "cdc.mysql.connector:MariaDbConnector"
    for name in ("io.debezium.connector.mariadb.MariaDbConnector", "MariaDbConnector", "MariaDb")
}

__all__ = ["PLUGINS"]
