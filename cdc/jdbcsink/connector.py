"""The two connector classes: each hands its config to ``tasks.max`` identical tasks (partitions are
spread by the consumer group), and validates its keys, its cross-key rules and the connection.

Validate connects once (one attempt, no backoff) when the keys are valid, so a wrong URL, an unreachable
host or a wrong password is an error on ``connection.url`` or ``connection.password`` — the REST API
answers 400 when a connector is created with them, as it does for a bad key. SQLite is not opened at
validate (sqlite3 would create the file before the worker checked its path).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from cdc.api.connector import FileUse, SinkConnector, Task
from cdc.api.errors import ConfigError
from cdc.config import ConfigDef, ConfigValue
from cdc.jdbc.url_properties import url_files
from cdc.jdbcsink.confluent_config import CONFLUENT_SINK_DEF, ConfluentSinkSettings
from cdc.jdbcsink.debezium_config import DEBEZIUM_SINK_DEF, DebeziumSinkSettings
from cdc.jdbcsink.plan import SinkPlan
from cdc.jdbcsink.task import DebeziumJdbcSinkTask, JdbcSinkTask, make_sql

__all__ = ["DebeziumJdbcSinkConnector", "JdbcSinkConnector", "check_connection"]

log = logging.getLogger(__name__)


def check_connection(plan: SinkPlan) -> tuple[str, str] | None:
    """(key, message) when the database cannot be reached with ``plan``'s URL and credentials."""
    try:
        sql = make_sql(plan)
    except ConfigError as exc:
        return "connection.url", str(exc)
    except Exception as exc:
        return "connection.url", f"Invalid JDBC URL or dialect: {exc}"
    if sql.family == "sqlite":
        # Nothing to check (no host, no password), and connecting creates the file: validate runs before
        # the worker confines it to connector.file.allowed.paths, so validate must not open it.
        return None
    try:
        conn = sql.dialect.connect()
    except Exception as exc:
        text = str(exc)
        lowered = text.lower()
        key = (
            "connection.password" if "password" in lowered or "access denied" in lowered else "connection.url"
        )
        return key, f"Cannot connect to {sql.dialect.describe_url()}: {text.strip()}"
    try:
        conn.close()
    except Exception:
        log.debug("Closing the validation connection failed", exc_info=True)
    return None


class JdbcSinkConnector(SinkConnector):
    """``io.confluent.connect.jdbc.JdbcSinkConnector``."""

    definition: ConfigDef = CONFLUENT_SINK_DEF

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def start(self, props: dict[str, str]) -> None:
        self._plan(props)
        self._props = dict(props)

    def _plan(self, props: Mapping[str, str]) -> SinkPlan:
        settings = ConfluentSinkSettings.parse(props)
        settings.check()
        return settings.plan()

    def _problems(self, props: Mapping[str, str]) -> dict[str, str]:
        return ConfluentSinkSettings.parse(props).problems()

    def task_class(self) -> type[Task]:
        return JdbcSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing runs in the connector itself."""

    def config(self) -> ConfigDef:
        return self.definition

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        results = self.definition.validate(props)
        if any(r.errors for r in results):
            return results
        by_name = {r.name: r for r in results}
        problems = self._problems(props)
        for key, message in problems.items():
            by_name[key].add_error(message)
        if not problems:
            failure = check_connection(self._plan(props))
            if failure is not None:
                by_name[failure[0]].add_error(failure[1])
        return results

    def files(self, props: Mapping[str, str]) -> list[FileUse]:
        """A ``jdbc:sqlite:`` database's file (sqlite3 creates it) and the key and trust stores the URL's
        TLS properties name."""
        return url_files("connection.url", str(props.get("connection.url") or ""))

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[Any, Any]) -> bool:
        return True  # sink offsets are consumer offsets; the runtime checks them


class DebeziumJdbcSinkConnector(JdbcSinkConnector):
    """``io.debezium.connector.jdbc.JdbcSinkConnector``."""

    definition = DEBEZIUM_SINK_DEF

    def _plan(self, props: Mapping[str, str]) -> SinkPlan:
        settings = DebeziumSinkSettings.parse(props)
        settings.check()
        return settings.plan()

    def _problems(self, props: Mapping[str, str]) -> dict[str, str]:
        return DebeziumSinkSettings.parse(props).problems()

    def task_class(self) -> type[Task]:
        return DebeziumJdbcSinkTask
