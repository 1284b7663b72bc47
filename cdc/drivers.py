"""Which client library reads MySQL/MariaDB rows: mysqlclient when installed, PyMySQL otherwise.

mysqlclient (``MySQLdb``, libmariadb's C client) decodes rows two to three times faster than PyMySQL and
releases the GIL while it waits for the server, so a reading thread overlaps with the threads that
convert and produce. Both give the same Python values: :func:`mysqldb_conversions` changes MySQLdb's
converters where PyMySQL's values differ. Shared by the JDBC source (:mod:`cdc.jdbc.dialects`) and the
MySQL connector's snapshot reads (:mod:`cdc.mysql.connection`); ``CDC_JDBC_MYSQL_DRIVER=pymysql`` (or
``mysqlclient``) forces one for both.

Every connection either driver opens for cdc has multi-statements off (:func:`mysqldb_connect`,
:func:`pymysql_connect`): mysqlclient turns the ``CLIENT_MULTI_STATEMENTS`` flag on unless told not to,
and a statement that carries text from outside (a signal's filter) must never become two, whatever that
text holds (:mod:`cdc.mysql.incremental.filters`). ``SELECT 1; SELECT 2`` is a syntax error on them.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from cdc.api.errors import ConnectError

__all__ = [
    "DRIVER_ENV",
    "SelectedTimestamp",
    "mysql_driver",
    "mysqldb_connect",
    "mysqldb_conversions",
    "pymysql_connect",
    "pymysql_conversions",
    "statement_refused",
    "timestamp_from_text",
]

DRIVER_ENV = "CDC_JDBC_MYSQL_DRIVER"


def mysql_driver() -> str:
    """``mysqlclient`` when ``MySQLdb`` imports (unless ``CDC_JDBC_MYSQL_DRIVER=pymysql``), else PyMySQL."""
    wanted = os.environ.get(DRIVER_ENV, "").strip().lower()
    if wanted == "pymysql":
        return "pymysql"
    try:
        import MySQLdb  # noqa: F401
    except ImportError:
        if wanted == "mysqlclient":
            raise ConnectError(f"{DRIVER_ENV}=mysqlclient, but mysqlclient is not installed") from None
        return "pymysql"
    return "mysqlclient"


_MYSQLDB_CONV: dict[Any, Any] | None = None


def _mysqldb_datetime(text: str) -> Any:
    # datetime.fromisoformat is C; MySQL's zero and invalid dates fall back to the text, as PyMySQL returns
    # them (the value converters turn '0000-00-00 …' into their zero-date handling either way)
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return text


class SelectedTimestamp(dt.datetime):
    """A TIMESTAMP value as a SELECT returned it. Debezium's snapshot writes such a value with Java's
    ISO_OFFSET_DATE_TIME (no trailing zeros in the fraction) where a streamed TIMESTAMP(n) has n digits, so
    the MySQL connector's converter needs to know where the value came from."""

    __slots__ = ()


def timestamp_from_text(text: str | bytes) -> Any:
    """A TIMESTAMP column's text as :class:`SelectedTimestamp` (zero and invalid dates stay text)."""
    if isinstance(text, bytes):
        text = text.decode("ascii")
    try:
        return SelectedTimestamp.fromisoformat(text)
    except ValueError:
        return text


def _mysqldb_date(text: str) -> Any:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return text


def pymysql_conversions() -> dict[Any, Any]:
    """PyMySQL's converters with TIMESTAMP as :class:`SelectedTimestamp`, as :func:`mysqldb_conversions`
    reads it, so both drivers give the same Python values."""
    import pymysql.converters
    from pymysql.constants import FIELD_TYPE

    return {**pymysql.converters.conversions, FIELD_TYPE.TIMESTAMP: timestamp_from_text}


def mysqldb_conversions() -> dict[Any, Any]:
    """MySQLdb's converters, changed where PyMySQL gives other Python values.

    * DATETIME/TIMESTAMP/DATE: ``fromisoformat`` (C) instead of MySQLdb's Python parser, and zero dates
      as text, as PyMySQL gives them; TIMESTAMP as :class:`SelectedTimestamp`;
    * SET columns (flagged strings): text ``'a,b'`` as PyMySQL, not a Python set.
    """
    global _MYSQLDB_CONV
    if _MYSQLDB_CONV is None:
        from MySQLdb.constants import FIELD_TYPE
        from MySQLdb.converters import conversions

        conv = dict(conversions)
        conv[FIELD_TYPE.DATETIME] = _mysqldb_datetime
        conv[FIELD_TYPE.TIMESTAMP] = timestamp_from_text
        conv[FIELD_TYPE.DATE] = _mysqldb_date
        conv.pop(FIELD_TYPE.SET, None)
        _MYSQLDB_CONV = conv
    return _MYSQLDB_CONV


def mysqldb_connect(
    host: str,
    port: int,
    user: str,
    password: str,
    database: str | None,
    *,
    autocommit: bool,
    connect_timeout: int,
    **extra: Any,
) -> Any:
    """A MySQLdb connection in utf8mb4 with :func:`mysqldb_conversions`; ``extra`` goes to ``connect``.

    ``localhost`` is taken as TCP to 127.0.0.1, as JDBC URLs, Debezium and PyMySQL mean it (libmariadb
    would take its unix socket). The caller maps ``MySQLdb.OperationalError`` to its own errors.
    """
    import MySQLdb

    kwargs: dict[str, Any] = {
        "host": "127.0.0.1" if (host or "localhost").lower() == "localhost" else host,
        "port": int(port),
        "user": user or "",
        "password": password or "",
        "charset": "utf8mb4",
        "autocommit": autocommit,
        "connect_timeout": connect_timeout,
        "conv": mysqldb_conversions(),
        **extra,
        # mysqlclient sets CLIENT_MULTI_STATEMENTS by default: one statement per execute, always
        "multi_statements": False,
        "client_flag": _without_multi_statements(int(extra.get("client_flag", 0))),
    }
    if database:
        kwargs["database"] = database
    return MySQLdb.connect(**kwargs)


def statement_refused(exc: BaseException) -> bool:
    """Whether ``exc`` (PyMySQL's or MySQLdb's) is the server refusing a statement (a syntax error, an
    unknown column, a statement time limit) rather than the connection failing (client errors 2000-2999,
    a server going away, a lock wait): the first fails again however often it is retried."""
    import pymysql

    errors: tuple[type[BaseException], ...] = (pymysql.MySQLError,)
    try:
        import MySQLdb

        errors += (MySQLdb.MySQLError,)
    except ImportError:
        pass
    if not isinstance(exc, errors) or not exc.args or not isinstance(exc.args[0], int):
        return False
    code = exc.args[0]
    return code >= 1000 and not 2000 <= code < 3000 and code not in _TRANSIENT_SERVER_ERRORS


_TRANSIENT_SERVER_ERRORS = frozenset({1040, 1053, 1205, 1213, 1317, 1927})
"""Too many connections, server shutdown, lock wait timeout, deadlock, query interrupted (KILL QUERY),
connection killed: the statement may pass when tried again."""


def _without_multi_statements(flags: int) -> int:
    from pymysql.constants import CLIENT  # the protocol's flag values, the same for both drivers

    return flags & ~CLIENT.MULTI_STATEMENTS


def pymysql_connect(**kwargs: Any) -> Any:
    """``pymysql.connect(**kwargs)`` with multi-statements off: the flag is masked out of ``client_flag``
    and checked on the connection made (PyMySQL 1.x leaves it off by default; 0.x turned it on)."""
    import pymysql
    from pymysql.constants import CLIENT

    kwargs["client_flag"] = _without_multi_statements(int(kwargs.get("client_flag", 0)))
    conn = pymysql.connect(**kwargs)
    if conn.client_flag & CLIENT.MULTI_STATEMENTS:
        conn.close()
        raise ConnectError("PyMySQL turned multi-statements on; cdc needs them off (upgrade PyMySQL)")
    return conn
