"""``io.debezium.connector.mysql.MySqlConnector`` (and the MariaDB one): one task, Debezium's keys."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cdc.api.connector import ExactlyOnceSupport, FileUse, SourceConnector, Task
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
        problems = validate_connection(settings)
        if not problems:
            problems = _replica_problems(settings)
        for key, messages in problems.items():
            for message in messages:
                by_name[key].add_error(message)
        if not problems:
            from cdc.mysql.include_lists import include_list_errors

            for key, messages in include_list_errors(settings).items():
                for message in messages:
                    by_name[key].add_error(message)
        return values

    def files(self, props: Mapping[str, str]) -> list[FileUse]:
        """The file channel's ``signal.file`` (read; :class:`cdc.mysql.signals.channels.FileChannel` keeps its
        position beside it), the file-based schema history's file (appended, its directories created), the
        TLS key and trust stores (read), ``snapshot.spark.state.dir`` (created, written) and the OpenLineage
        client's file (read)."""
        from cdc.history.factory import history_file

        out = []
        enabled = str(props.get("signal.enabled.channels") or "source")
        channels = {c.strip().lower() for c in enabled.split(",")}
        if "file" in channels:
            out.append(FileUse("signal.file", str(props.get("signal.file") or "file-signals.txt")))
        history = history_file(props)
        if history is not None:
            out.append(FileUse(*history))
        for key in ("database.ssl.truststore", "database.ssl.keystore"):  # read: a key is the identity
            store = str(props.get(key) or "").strip()
            if store:
                out.append(FileUse(key, store))
        state = str(props.get("snapshot.spark.state.dir") or "").strip()
        if state:
            out.append(FileUse("snapshot.spark.state.dir", os.path.expanduser(state)))
        if str(props.get("openlineage.integration.enabled") or "").strip().lower() == "true":
            # read; the files it names (a file transport's log…) are checked when the task reads it
            path = str(props.get("openlineage.integration.config.file.path") or "./openlineage.yml")
            out.append(FileUse("openlineage.integration.config.file.path", os.path.expanduser(path)))
        return out

    def validate_in_group(
        self, props: Mapping[str, str], others: Mapping[str, Mapping[str, str]]
    ) -> dict[str, list[str]]:
        """A ``database.server.id`` another binlog connector of the group uses on the same server."""
        from cdc.mysql.server_ids import group_conflicts

        values = {v.name: v.value for v in MYSQL_DEF.validate(props)}
        messages = group_conflicts(
            int(values["database.server.id"]),
            str(values["database.hostname"]),
            int(values["database.port"]),
            others,
            _is_binlog_connector,
        )
        return {"database.server.id": messages} if messages else {}

    def validate_offset(
        self, props: Mapping[str, str], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> bool:
        prefix = props.get("topic.prefix") or props.get("database.server.name") or ""
        check_offset(prefix, partition, offset)
        return True


MARIADB_LOCKING_MODES = ("minimal", "extended", "none")
"""``snapshot.locking.mode`` of Debezium's MariaDbConnector (its enum: extended, minimal, none and custom,
which cdc refuses): ``minimal_percona`` is the MySQL connector's (Percona's ``LOCK TABLES FOR BACKUP``,
which MariaDB does not have)."""


class MariaDbConnector(MySqlConnector):
    def task_class(self) -> type[Task]:
        from cdc.mysql.task import MariaDbSourceTask

        return MariaDbSourceTask

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        values = super().validate(props)
        for value in values:
            mode = value.value
            if (
                value.name == "snapshot.locking.mode"
                and not value.errors
                and str(mode).lower() not in MARIADB_LOCKING_MODES
            ):
                value.add_error("Value must be one of " + ", ".join(MARIADB_LOCKING_MODES))
        return values


def _is_binlog_connector(class_name: str) -> bool:
    from cdc.plugins import registry

    try:
        return issubclass(registry.load(class_name), MySqlConnector)
    except Exception:  # not loadable here: not one of ours
        return False


def _replica_problems(settings: MySqlSettings) -> dict[str, list[str]]:
    """A live replica of the server holding ``database.server.id`` (not this connector's own client)."""
    from cdc.mysql.connection import connect
    from cdc.mysql.server_ids import replica_conflicts

    where = f"{settings.database_hostname}:{settings.database_port}"
    conn = connect(settings)
    try:
        messages = replica_conflicts(conn, settings.database_server_id, settings.prefix, where)
    finally:
        conn.close()
    return {"database.server.id": messages} if messages else {}
