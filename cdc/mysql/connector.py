"""``io.debezium.connector.mysql.MySqlConnector`` (and the MariaDB one): one task, Debezium's keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.api.connector import ExactlyOnceSupport, SourceConnector, Task
from cdc.config import ConfigDef, ConfigValue
from cdc.config.settings import settings_from
from cdc.mysql.config import MYSQL_DEF, MySqlSettings
from cdc.mysql.offsets import check_offset
from cdc.mysql.validation import validate_mysql

__all__ = ["MariaDbConnector", "MySqlConnector"]


class MySqlConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        from cdc.mysql.task import MySqlSourceTask

        return MySqlSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return MYSQL_DEF

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        # As Debezium's (2.5+): one task, and the offset names the exact place in the binlog (row and event
        # counts inside a transaction), so records and offsets committed together are never repeated.
        return ExactlyOnceSupport.SUPPORTED

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        """The keys (:func:`validate_mysql`), then — when the connection keys are valid — the server:
        reachable with these credentials, binlog settings, grants (errors on the keys they concern)."""
        values = validate_mysql(props)
        by_name = {v.name: v for v in values}
        connection_keys = ("database.hostname", "database.port", "database.user", "database.password")
        if any(by_name[k].errors for k in connection_keys) or not by_name["database.hostname"].value:
            return values
        if any(v.errors for v in values if v.name.startswith("database.ssl.")):
            return values  # a store that does not open: no connection can be tried with it
        from cdc.mysql.connection import validate_connection

        parsed = {v.name: v.value for v in values if v.name in MYSQL_DEF}
        settings = settings_from(MySqlSettings, parsed, raw=dict(props))
        for key, messages in validate_connection(settings).items():
            for message in messages:
                by_name[key].add_error(message)
        return values

    def validate_offset(
        self, props: Mapping[str, str], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> bool:
        prefix = props.get("topic.prefix") or props.get("database.server.name") or ""
        check_offset(prefix, partition, offset)
        return True


class MariaDbConnector(MySqlConnector):
    def task_class(self) -> type[Task]:
        from cdc.mysql.task import MariaDbSourceTask

        return MariaDbSourceTask
