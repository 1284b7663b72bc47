"""``guardrail.collections.max`` / ``guardrail.collections.limit.action``: a cap on a task's tables.

Debezium (``MySqlConnectorTask.validateGuardrailLimits``, ``GuardrailValidator``) counts, when the task
starts and before it recovers the schema, the tables whose schemas the connector will hold in memory: the
captured tables when ``schema.history.internal.store.only.captured.tables.ddl`` is on; otherwise every table
the schema history records (those of the captured databases with
``schema.history.internal.store.only.captured.databases.ddl``, else of every database, the built-in ones
left out under ``table.ignore.builtin``). Above the limit, ``fail`` stops the task with Debezium's message
and ``warn`` (the default) logs it; 0 (the default) turns the check off.
"""

from __future__ import annotations

import logging
from typing import Any

from cdc.api.errors import ConnectError
from cdc.history.model import TableId
from cdc.mysql.config import MySqlSettings
from cdc.mysql.filters import BUILTIN_DATABASES, Filters
from cdc.mysql.table_list import list_databases, tables_in

__all__ = ["check_guardrail", "guardrail_message"]

log = logging.getLogger(__name__)

_ALL_TABLES = (  # Debezium's words (CommonConnectorConfig.validateGuardrailLimits)
    " Since 'schema.history.internal.store.only.captured.tables.ddl' is set to 'false', schemas "
    "of all the tables in the database are being captured. Increase the guardrail limit to allow "
    "the validation to pass. To reduce memory usage and validate only captured tables, consider "
    "setting 'schema.history.internal.store.only.captured.tables.ddl=true' or "
    "'schema.history.internal.store.only.captured.databases.ddl=true'. WARNING: Changing these "
    "settings means the connector will NOT be able to automatically start capturing changes from "
    "tables that were not originally added to the include list. You would need to do schema "
    "history recovery to add those tables later."
)


def _all_tables(conn: Any) -> list[TableId]:
    """Every base table of every database (Debezium's ``getAllTableIds``)."""
    cur = conn.cursor()
    try:
        # a database dropped since SHOW DATABASES is skipped, as in Debezium (cdc.mysql.table_list)
        return [t for db in list_databases(cur) for t in tables_in(cur, db) or []]
    finally:
        cur.close()


def counted(settings: MySqlSettings, filters: Filters, tables: list[TableId]) -> tuple[list[TableId], bool]:
    """The tables the guardrail counts, and whether they are all the history's (not only the captured)."""
    if settings.history_store_only_captured_tables_ddl:
        return [t for t in tables if filters.table(t)], False
    builtin = settings.table_ignore_builtin
    eligible = [t for t in tables if not (builtin and t.database.lower() in BUILTIN_DATABASES)]
    if settings.history_store_only_captured_databases_ddl:
        eligible = [t for t in eligible if filters.database(t.database)]
    return eligible, True


def guardrail_message(count: int, maximum: int, all_tables: bool) -> str:
    message = (
        f"Guardrail limit exceeded: {count} tables/collections configured for capture, "
        f"but maximum allowed is {maximum}."
    )
    return message + (_ALL_TABLES if all_tables else "")


def check_guardrail(conn: Any, settings: MySqlSettings, filters: Filters) -> None:
    """Apply the guardrail at task start: a :class:`ConnectError` under ``fail``, a WARN under ``warn``."""
    maximum = settings.guardrail_collections_max
    if maximum <= 0:
        log.info("Guardrail validation skipped")
        return
    tables, all_tables = counted(settings, filters, _all_tables(conn))
    if len(tables) <= maximum:
        log.info(
            "Guardrail validation passed: %d tables/collections configured for capture (limit: %d)",
            len(tables),
            maximum,
        )
        return
    message = guardrail_message(len(tables), maximum, all_tables)
    if settings.guardrail_collections_limit_action.lower() == "fail":
        raise ConnectError(message)
    log.warning("%s", message)
