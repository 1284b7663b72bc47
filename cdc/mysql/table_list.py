"""Every base table of the server, as Debezium lists them (``BinlogConnectorConnection.
getAllTableIdsWithReadableDatabases``): ``SHOW DATABASES``, then ``SHOW FULL TABLES IN`` each.

Nothing holds the list still between the two statements (the snapshot's global read lock is taken after
it under ``minimal``, never under ``none``; the guardrail's count takes none): another client may drop a
database in between, and its ``SHOW FULL TABLES`` then fails (error 1049, unknown database). Debezium
catches the error, logs ``skipping database '<db>' due to error reading tables: <message>`` and goes on
without that database (the same for any database it cannot read, DBZ-164); so does this. Only the
server's own errors are skipped: a lost connection (a client error, 2000 and up) still fails the caller.
"""

from __future__ import annotations

import logging
from typing import Any

import pymysql

from cdc.history.model import TableId

__all__ = ["list_databases", "server_error_code", "tables_in"]

log = logging.getLogger(__name__)

_CLIENT_ERRORS = 2000  # MySQL's client error codes (CR_*) start here; the server's are below


def _driver_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (pymysql.err.MySQLError,)
    try:
        import MySQLdb  # the snapshot's streaming connections when mysqlclient is installed (cdc.drivers)
    except ImportError:
        return errors
    return (*errors, MySQLdb.MySQLError)


_ERRORS = _driver_errors()


def server_error_code(exc: BaseException) -> int | None:
    """The server's error code of a driver error (PyMySQL or mysqlclient), None for anything else (a
    client error such as a lost connection, or not a driver error at all)."""
    if not isinstance(exc, _ERRORS) or not exc.args or not isinstance(exc.args[0], int):
        return None
    code = exc.args[0]
    return code if 0 < code < _CLIENT_ERRORS else None


def list_databases(cur: Any) -> list[str]:
    cur.execute("SHOW DATABASES")
    return [str(r[0]) for r in cur.fetchall()]


def tables_in(cur: Any, database: str) -> list[TableId] | None:
    """The base tables of ``database``; None (logged, as Debezium's warning) when the server cannot list
    them: the database was dropped since it was listed, or cannot be read."""
    try:
        cur.execute(f"SHOW FULL TABLES IN `{database.replace('`', '``')}` WHERE Table_Type = 'BASE TABLE'")
        return [TableId(database, str(r[0])) for r in cur.fetchall()]
    except Exception as exc:
        if server_error_code(exc) is None:
            raise
        log.warning("skipping database '%s' due to error reading tables: %s", database, exc)
        return None
