"""Include lists that match nothing: ``database.include.list`` / ``table.include.list`` against the server.

Debezium accepts lists that match no database or table: the connector is RUNNING with "0 tables" after its
snapshot took the global read lock over every schema, and a typo (``inventroy.orders``) goes unseen. cdc
checks the lists against the server's databases and base tables:

* at validate (and so at create and config update, which validate first), an error on the list's key when
  ``include.list.unmatched.mode=fail`` (the default, cdc's own key);
* at task start, a WARN naming the lists whatever the mode (the tables may have been dropped since, or
  the mode is ``warn``), and the snapshot then takes no lock (:mod:`cdc.mysql.snapshot`).

A database list that matches an existing but empty database is not an error: tables created later are
captured. The signal table (always captured) does not count as a match of ``table.include.list``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from cdc.history.model import TableId
from cdc.mysql.config import MySqlSettings
from cdc.mysql.filters import BUILTIN_DATABASES, Filters

__all__ = ["include_list_errors", "unmatched_include_lists", "warn_unmatched"]

log = logging.getLogger(__name__)

_SHOWN = 8  # databases or tables named in a message


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return f"{shown}{more}" if names else "none"


def unmatched_include_lists(cur: Any, settings: MySqlSettings) -> dict[str, str]:
    """The include-list keys that match nothing on the server (through cursor ``cur``), each with the
    message to show; empty when every set list matches something (or none is set)."""
    if not settings.database_include_list and not settings.table_include_list:
        return {}
    filters = Filters(settings)
    cur.execute("SHOW DATABASES")
    databases = sorted(str(r[0]) for r in cur.fetchall())
    where = f"the server at {settings.database_hostname}:{settings.database_port}"
    captured = [d for d in databases if filters.database(d)]
    listed = ",".join(settings.database_include_list)
    if settings.database_include_list and not captured:
        visible = [d for d in databases if not (filters.ignore_builtin and d.lower() in BUILTIN_DATABASES)]
        return {
            "database.include.list": f"database.include.list '{listed}' matches no database of {where} "
            f"(its databases: {_names(visible)})"
        }
    if not settings.table_include_list:
        return {}
    marks = ", ".join(["%s"] * len(captured))
    tables: list[TableId] = []
    if captured:
        cur.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            f"WHERE table_type = 'BASE TABLE' AND table_schema IN ({marks}) ORDER BY 1, 2",
            captured,
        )
        tables = [TableId(str(r[0]), str(r[1])) for r in cur.fetchall()]
    matched = [t for t in tables if t != filters.signal_table and filters.table(t)]
    if matched:
        return {}
    listed_tables = ",".join(settings.table_include_list)
    scope = f"the databases {_names(captured)}" if settings.database_include_list else where
    return {
        "table.include.list": f"table.include.list '{listed_tables}' matches no table of {scope} "
        f"(tables there: {_names([str(t) for t in tables])}; the names are regular expressions matched "
        "against <database>.<table>)"
    }


_HINT = (
    "; check the names, or set include.list.unmatched.mode=warn to create the connector before its "
    "databases or tables exist"
)


def include_list_errors(settings: MySqlSettings) -> dict[str, list[str]]:
    """Validate's check (``include.list.unmatched.mode=fail``): the errors by key, on a connection of its
    own. A failure to look is no error here: the connection check reports it."""
    if settings.include_list_unmatched_mode.lower() != "fail":
        return {}
    from cdc.mysql.connection import connect

    try:
        conn = connect(settings)
    except Exception as exc:
        log.debug("Include lists not checked: %s", exc)
        return {}
    try:
        with conn.cursor() as cur:
            unmatched = unmatched_include_lists(cur, settings)
        return {k: [m + _HINT] for k, m in unmatched.items()}
    except Exception as exc:
        log.debug("Include lists not checked: %s", exc)
        return {}
    finally:
        conn.close()


def warn_unmatched(conn: Any, settings: MySqlSettings) -> bool:
    """At task start: a WARN for each include list that matches nothing; True when one did. A failure to
    look (a user that may not list databases) is logged at DEBUG: the task goes on as before."""
    try:
        with conn.cursor() as cur:
            unmatched = unmatched_include_lists(cur, settings)
    except Exception as exc:
        log.debug("Include lists not checked: %s", exc)
        return False
    for message in unmatched.values():
        log.warning("Nothing is captured: %s", message)
    return bool(unmatched)
