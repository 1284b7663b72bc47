"""Connections to the source server, and the checks made before capturing from it.

Both flavours are supported: MySQL 8.x and MariaDB 10.5+. The checks fail with a message that says
what to change (binary log, binlog format, row image, grants); they run at validate (and so at create)
and again when the task starts.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import pymysql
import pymysql.cursors

from cdc.api.errors import ConfigError, ConnectError, RetriableError
from cdc.drivers import mysql_driver, mysqldb_connect, pymysql_conversions
from cdc.greeting import GreetingError, explain
from cdc.logs.context import in_context
from cdc.mysql.config import MySqlSettings
from cdc.mysql.config_tuning import VALIDATION_WAIT_MAX_MS
from cdc.mysql.tls import TlsDowngradeError, is_tls_failure, tls_error_key

__all__ = [
    "ServerInfo",
    "buffered_cursor",
    "check_server",
    "connect",
    "inspect_server",
    "query_timeout_s",
    "validate_connection",
]

log = logging.getLogger(__name__)


def connect(settings: MySqlSettings, *, streaming: bool = False, database: str | None = None) -> Any:
    """A connection with the session time zone UTC and ``database.initial.statements`` run.

    ``streaming``: for reading rows (the snapshots): unbuffered cursors, so a table is never held whole,
    through mysqlclient when it is installed (:mod:`cdc.drivers`: faster rows, the same Python values, and
    the GIL released while the server is awaited), PyMySQL otherwise. Everything else uses PyMySQL.
    Either way with ``database.ssl.*``'s TLS (:attr:`MySqlSettings.tls`); libmariadb cannot check a CA
    without the host name, so ``verify_ca`` reads rows with PyMySQL.
    """
    if streaming and mysql_driver() == "mysqlclient" and settings.tls.mysqlclient_usable:
        conn = _connect_mysqlclient(settings, database)
    else:
        conn = _connect_pymysql(settings, streaming, database)
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        for statement in settings.database_initial_statements.split(";"):
            if statement.strip():
                cur.execute(statement)
    return conn


_PYMYSQL_CONV = pymysql_conversions()


def query_timeout_s(settings: MySqlSettings) -> float | None:
    """``database.query.timeout.ms`` as a socket read timeout (seconds; None: no limit). Debezium gives it
    to every JDBC statement (``Statement.setQueryTimeout``): how long a query may go unanswered. A read
    timeout is that bound here: a server that sends nothing for so long fails the query (and drops the
    connection), whatever the statement; rows still arriving keep a long snapshot read going."""
    ms = settings.database_query_timeout_ms
    return ms / 1000 if ms > 0 else None


def buffered_cursor(conn: Any) -> Any:
    """A cursor that takes a whole result at once, on a connection :func:`connect` opened ``streaming``
    (``min.row.count.to.stream.results``: small tables, as Connector/J reads them by default): the server's
    statement ends as soon as the rows are sent. Any other connection (a test's): its own cursor."""
    if isinstance(conn, pymysql.connections.Connection):
        return conn.cursor(pymysql.cursors.Cursor)
    if type(conn).__module__.startswith("MySQLdb"):
        import MySQLdb.cursors

        return conn.cursor(MySQLdb.cursors.Cursor)
    return conn.cursor()


def _mysqlclient_read_timeout(settings: MySqlSettings) -> dict[str, int]:
    """libmariadb takes whole seconds (rounded up, so a small timeout is not 0, i.e. none)."""
    ms = settings.database_query_timeout_ms
    return {"read_timeout": -(-ms // 1000)} if ms > 0 else {}


def _connect_pymysql(settings: MySqlSettings, streaming: bool, database: str | None) -> Any:
    try:
        # The timeout covers the server's greeting too (cdc.greeting).
        return settings.tls.pymysql_connect(
            greeting_timeout=max(1, settings.connect_timeout_ms // 1000),
            host=settings.database_hostname,
            port=settings.database_port,
            user=settings.database_user,
            password=settings.password,
            database=database,
            charset="utf8mb4",
            read_timeout=query_timeout_s(settings),
            autocommit=True,
            cursorclass=pymysql.cursors.SSCursor if streaming else pymysql.cursors.Cursor,
            conv=_PYMYSQL_CONV,
        )
    except (pymysql.err.OperationalError, GreetingError) as exc:
        raise _connect_error(settings, exc) from exc


def _connect_mysqlclient(settings: MySqlSettings, database: str | None) -> Any:
    import MySQLdb
    import MySQLdb.cursors

    tls = settings.tls
    try:
        with tls.mysqlclient_options() as tls_options:
            conn = mysqldb_connect(
                settings.database_hostname,
                settings.database_port,
                settings.database_user,
                settings.password or "",
                database,
                autocommit=True,
                connect_timeout=max(1, settings.connect_timeout_ms // 1000),
                cursorclass=MySQLdb.cursors.SSCursor,
                **_mysqlclient_read_timeout(settings),
                **tls_options,
            )
        tls.check_encrypted(conn, f"{settings.database_hostname}:{settings.database_port}")
    except MySQLdb.OperationalError as exc:
        if "validation of ssl server certificate failed" in str(exc).lower():
            # libmariadb does not say which check failed (the Python path does)
            exc.args = (
                exc.args[0],
                f"{exc.args[1]}: it must be signed by a CA of database.ssl.truststore (else the system's) "
                f"and, under verify_identity, name database.hostname '{settings.database_hostname}'",
            )
        reason = explain(exc, settings.database_hostname, settings.database_port)
        raise _connect_error(settings, GreetingError(0, reason) if reason else exc) from exc
    except TlsDowngradeError as exc:
        raise ConnectError(str(exc)) from exc
    return conn


def _connect_error(settings: MySqlSettings, exc: Exception) -> Exception:
    """Access denied and TLS failures (an untrusted certificate, a host name mismatch, a server without TLS
    under a mode that requires it) are the user's to fix (ConnectError); anything else may pass
    (RetriableError)."""
    code = exc.args[0] if exc.args else 0
    where = f"{settings.database_hostname}:{settings.database_port}"
    message = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    if code in (1045, 1044):
        hint = ""
        if settings.tls.mode == "disabled":
            hint = " (if the user must connect over TLS, set database.ssl.mode)"
        return ConnectError(f"Access denied for user '{settings.database_user}' to {where}: {message}{hint}")
    if is_tls_failure(message):
        return ConnectError(f"TLS to {where} failed (database.ssl.mode={settings.tls.mode}): {message}")
    return RetriableError(f"Cannot connect to {where}: {exc}")


@dataclass(frozen=True)
class ServerInfo:
    version: str
    mariadb: bool
    server_id: int
    gtid_mode: bool

    @property
    def flavour(self) -> str:
        return "MariaDB" if self.mariadb else "MySQL"


def _var(cur: Any, name: str) -> str | None:
    cur.execute("SHOW GLOBAL VARIABLES LIKE %s", (name,))
    row = cur.fetchone()
    return None if row is None else str(row[1])


def check_server(conn: Any, settings: MySqlSettings) -> ServerInfo:
    """Verify binlog settings and grants; raise ConnectError naming what to change."""
    server, problems = inspect_server(conn, settings)
    if problems:
        raise ConnectError("; ".join(m for messages in problems.values() for m in messages))
    return server


def inspect_server(conn: Any, settings: MySqlSettings) -> tuple[ServerInfo, dict[str, list[str]]]:
    """The server and what stops capturing from it, by the config key the fix concerns.

    Binlog settings as Debezium's task checks them (log_bin, binlog_format=ROW, binlog_row_image=FULL);
    ``binlog_row_metadata`` may be anything: with MINIMAL or NO_LOG the column names and types come from
    the schema history (:mod:`cdc.mysql.tablemap`). Grants: REPLICATION SLAVE and REPLICATION CLIENT
    (MariaDB's BINLOG MONITOR / REPLICATION REPLICA count).
    """
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        version = str(cur.fetchone()[0])
        mariadb = "mariadb" in version.lower()
        settings_problems: list[str] = []
        log_bin = _var(cur, "log_bin")
        if (log_bin or "").upper() not in ("ON", "1"):
            settings_problems.append("the binary log is off (set log_bin)")
        for name, wanted in (("binlog_format", "ROW"), ("binlog_row_image", "FULL")):
            value = _var(cur, name)
            if value is not None and value.upper() != wanted:
                settings_problems.append(
                    f"{name} is {value} but must be {wanted} (SET GLOBAL {name}={wanted}, and in "
                    f"the server's configuration file)"
                )
        server_id = int(_var(cur, "server_id") or 0)
        if mariadb:
            gtid_mode = bool(_var(cur, "gtid_binlog_pos"))
        else:
            gtid_mode = (_var(cur, "gtid_mode") or "OFF").upper() == "ON"
        cur.execute("SHOW GRANTS FOR CURRENT_USER()")
        grants = " ".join(str(r[0]).upper() for r in cur.fetchall())
    flavour = "MariaDB" if mariadb else "MySQL"
    where = f"{settings.database_hostname}:{settings.database_port}"
    problems: dict[str, list[str]] = {}
    if settings_problems:
        problems["database.hostname"] = [
            f"The {flavour} server at {where} is not configured for change data capture: "
            + "; ".join(settings_problems)
        ]
    if "ALL PRIVILEGES ON *.*" not in grants:
        missing = [
            g
            for g in ("REPLICATION SLAVE", "REPLICATION CLIENT")
            if g not in grants
            and not (g == "REPLICATION CLIENT" and "BINLOG MONITOR" in grants)
            and not (g == "REPLICATION SLAVE" and "REPLICATION REPLICA" in grants)
        ]
        if missing:
            user = settings.database_user
            problems["database.user"] = [
                f"User '{user}' lacks the privileges {', '.join(missing)}; grant them with: GRANT SELECT, "
                f"RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{user}'"
            ]
    return ServerInfo(version, mariadb, server_id, gtid_mode), problems


def validate_connection(settings: MySqlSettings) -> dict[str, list[str]]:
    """What Debezium's ``validateConnection`` reports (``Unable to connect: …`` on the host) plus the
    binlog settings and grants its task checks at start, by key: so a connector that cannot run is
    refused at validate and create (400) rather than created and failed.

    Within ``connection.validation.timeout.ms`` (at most :data:`VALIDATION_WAIT_MAX_MS`: validate answers a
    REST request), else Debezium's ``Connection validation timed out after N ms``; the check left running
    ends by its own socket timeouts."""
    wait_ms = min(settings.connection_validation_timeout_ms, VALIDATION_WAIT_MAX_MS)
    result: dict[str, list[str]] = {}
    done = threading.Event()

    def check() -> None:
        try:
            result.update(_validate_connection(settings, wait_ms / 1000))
        except Exception as exc:  # reported as Debezium does: on the host
            result["database.hostname"] = [f"Error during connection validation: {exc}"]
        finally:
            done.set()

    threading.Thread(target=in_context(check), name="connection-validation", daemon=True).start()
    if not done.wait(wait_ms / 1000):
        return {"database.hostname": [f"Connection validation timed out after {wait_ms} ms"]}
    return result


def _validate_connection(settings: MySqlSettings, wait_s: float) -> dict[str, list[str]]:
    import pymysql

    try:
        tls = settings.tls
    except ConfigError as exc:  # a store that cannot be read: validate_mysql has said so on its key
        return {exc.name or "database.ssl.mode": [str(exc)]}
    try:
        conn = (
            tls.pymysql_connect(  # the timeout covers the greeting: an answer within ~10 s whatever listens
                greeting_timeout=max(1, min(settings.connect_timeout_ms // 1000, 10)),
                host=settings.database_hostname,
                port=settings.database_port,
                user=settings.database_user,
                password=settings.password,
                charset="utf8mb4",
                read_timeout=wait_s,  # the checks' queries end too (the caller stops waiting then)
            )
        )
    except (pymysql.err.MySQLError, OSError) as exc:
        message = str(exc.args[1] if isinstance(exc, pymysql.err.MySQLError) and len(exc.args) > 1 else exc)
        code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else 0
        if code not in (1044, 1045) and is_tls_failure(message):
            return {
                tls_error_key(message, tls): [
                    f"Unable to connect over TLS (database.ssl.mode={tls.mode}): {message}"
                ]
            }
        return {"database.hostname": [f"Unable to connect: {message}"]}
    try:
        return inspect_server(conn, settings)[1]
    except pymysql.err.MySQLError as exc:
        return {"database.hostname": [f"Unable to connect: {exc}"]}
    finally:
        conn.close()
