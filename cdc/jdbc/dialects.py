"""The database dialects: connections, quoting, the clock, table discovery and column reflection.

The hot path talks to the drivers directly (mysqlclient or PyMySQL, psycopg 3, sqlite3) with server-side
cursors so a result set is never held whole: MySQLdb's or PyMySQL's ``SSCursor``, a psycopg named cursor
(inside the polling transaction), and sqlite3's lazy iteration. For MySQL and MariaDB, mysqlclient
(``MySQLdb``, libmariadb's C client) is used when it is installed — it decodes rows two to three times
faster than PyMySQL — and PyMySQL otherwise; ``CDC_JDBC_MYSQL_DRIVER=pymysql`` (or ``mysqlclient``)
forces one. Both give the same Python values (the tests compare the records of every type). Column
types come from SQLAlchemy Core's reflection (``Inspector.get_columns``), which already knows each
database's type names, unsigned flags and auto-increment columns; the engine is built on our own
connection factory, so both paths connect alike.

Timestamps are bound as the database compares them: MySQL gets the wall time in ``db.timezone`` (the
session time zone is set to it), PostgreSQL an aware datetime (its session TimeZone is set too), and
SQLite the text ``YYYY-MM-DD HH:MM:SS.SSS`` against ``strftime('%Y-%m-%d %H:%M:%f', col)`` — SQLite keeps
date-times as text, so both sides are brought to one canonical form (millisecond precision).
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

from cdc.api.errors import ConnectError, RetriableError
from cdc.drivers import DRIVER_ENV, mysql_driver, mysqldb_connect, pymysql_conversions
from cdc.greeting import explain, pymysql_connect
from cdc.jdbc.tables import TableId, quote_identifier
from cdc.jdbc.tls import JdbcTls, TlsConnectError, is_tls_failure
from cdc.jdbc.types import ColumnInfo, column_info_from_sqlalchemy
from cdc.jdbc.url import JdbcUrl
from cdc.jdbc.url_properties import UrlOptions, url_options

__all__ = [
    "DRIVER_ENV",
    "Dialect",
    "MySqlDialect",
    "PostgresDialect",
    "SqliteDialect",
    "dialect_for",
    "mysql_driver",
]

log = logging.getLogger(__name__)

_ISOLATION_SQL = {
    "READ_UNCOMMITTED": "READ UNCOMMITTED",
    "READ_COMMITTED": "READ COMMITTED",
    "REPEATABLE_READ": "REPEATABLE READ",
    "SERIALIZABLE": "SERIALIZABLE",
}


class Dialect:
    """What differs between databases. One instance per connector or task (it caches an engine)."""

    name = "generic"
    quote_char = '"'
    placeholder = "?"
    escape_percent = False
    with_catalog = False
    """Whether a two-part table name is catalog.table (MySQL) rather than schema.table."""

    def __init__(self, url: JdbcUrl, tz: dt.tzinfo, quote: bool = True, isolation: str = "DEFAULT") -> None:
        self.url = url
        self.tz = tz
        self.quote = quote
        self.isolation = isolation
        self._engine: Any = None
        self.options: UrlOptions = url_options(url)
        self._tls: JdbcTls | None = None

    def tls(self) -> JdbcTls:
        """The URL's TLS material, read on first use (a bad store is a ConfigError naming its property)."""
        if self._tls is None:
            self._tls = JdbcTls(self.options.tls, self.url.host)
        return self._tls

    @property
    def connect_timeout(self) -> int:
        return max(1, round(self.options.connect_timeout_s or 10))

    def _tls_error(self, exc: BaseException) -> TlsConnectError:
        return TlsConnectError(
            f"Cannot connect to {self.describe_url()} with TLS as the URL asks "
            f"({self.options.tls.source}): {exc}"
        )

    # -- connections -----------------------------------------------------------------------------------
    def connect(self) -> Any:
        """A new DB-API connection, autocommit off, session time zone = ``db.timezone``."""
        raise NotImplementedError

    def connect_with_retries(
        self, attempts: int, backoff_ms: int, stopping: Callable[[], bool] = lambda: False
    ) -> Any:
        last: Exception | None = None
        for attempt in range(1, max(1, attempts) + 1):
            try:
                return self.connect()
            except ConnectError:
                raise
            except Exception as exc:
                last = exc
                log.warning(
                    "Connection attempt %d/%d to %s failed: %s", attempt, attempts, self.describe_url(), exc
                )
                if attempt < attempts and not stopping():
                    time.sleep(backoff_ms / 1000)
        raise RetriableError(f"Could not connect to {self.describe_url()} after {attempts} attempts: {last}")

    def describe_url(self) -> str:
        return f"{self.url.subprotocol}://{self.url.host}:{self.url.port}/{self.url.database}"

    def streaming_cursor(self, conn: Any, fetch_size: int) -> Any:
        return conn.cursor()

    def close_cursor(self, cursor: Any) -> None:
        try:
            cursor.close()
        except Exception:
            log.debug("Closing a cursor failed", exc_info=True)

    # -- SQL text --------------------------------------------------------------------------------------
    def ident(self, name: str) -> str:
        return quote_identifier(name, self.quote_char) if self.quote else name

    def table_sql(self, table: TableId) -> str:
        return ".".join(self.ident(p) for p in table.parts())

    def table_text(self, table: TableId) -> str:
        """The quoted form in task configs (always quoted, as Confluent writes it)."""
        return table.quoted(self.quote_char)

    def timestamp_expr(self, column_sql: str) -> str:
        return column_sql

    def text(self, sql: str) -> str:
        """User text (a query, a suffix) made safe for the driver's parameter style."""
        return sql.replace("%", "%%") if self.escape_percent else sql

    # -- values ----------------------------------------------------------------------------------------
    def current_timestamp_sql(self) -> str:
        return "SELECT CURRENT_TIMESTAMP"

    def current_timestamp(self, conn: Any) -> dt.datetime:
        cur = conn.cursor()
        try:
            cur.execute(self.current_timestamp_sql())
            value = cur.fetchone()[0]
        finally:
            cur.close()
        return self.to_utc(value)

    def to_utc(self, value: Any) -> dt.datetime:
        if isinstance(value, str):
            value = dt.datetime.fromisoformat(value)
        if value.tzinfo is None:
            value = value.replace(tzinfo=self.tz)
        return value.astimezone(dt.UTC)

    def bind_timestamp(self, value: dt.datetime) -> Any:
        return value

    def timestamp_offset_ns(self, value: dt.datetime) -> dt.datetime:
        """The value stored in an offset for a row's timestamp (SQLite keeps milliseconds only)."""
        return value

    # -- metadata --------------------------------------------------------------------------------------
    def list_tables(
        self, conn: Any, types: Sequence[str], catalog_pattern: str | None, schema_pattern: str | None
    ) -> list[TableId]:
        raise NotImplementedError

    def engine(self) -> Any:
        if self._engine is None:
            import sqlalchemy as sa
            from sqlalchemy.pool import NullPool

            self._engine = sa.create_engine(self.sqlalchemy_url(), creator=self.connect, poolclass=NullPool)
        return self._engine

    def sqlalchemy_url(self) -> str:
        raise NotImplementedError

    def reflection_schema(self, table: TableId) -> str | None:
        return table.catalog or table.schema

    def describe_table(self, table: TableId) -> list[ColumnInfo]:
        import sqlalchemy as sa

        inspector = sa.inspect(self.engine())
        schema = self.reflection_schema(table)
        columns = inspector.get_columns(table.name, schema=schema)
        if not columns:
            raise ConnectError(f"Table {table.unquoted()} has no columns or does not exist")
        return [self.column_info(c) for c in columns]

    def primary_key(self, table: TableId) -> list[str]:
        import sqlalchemy as sa

        pk = sa.inspect(self.engine()).get_pk_constraint(table.name, schema=self.reflection_schema(table))
        return list(pk.get("constrained_columns") or [])

    def column_info(self, column: dict[str, Any]) -> ColumnInfo:
        return column_info_from_sqlalchemy(column)

    def describe_cursor(self, description: Sequence[Any]) -> list[ColumnInfo] | None:
        """Columns of a result set; None when the driver cannot say (then values decide)."""
        return None

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        if self._tls is not None:
            self._tls.close()
            self._tls = None


class MySqlDialect(Dialect):
    """MySQL and MariaDB through mysqlclient (``MySQLdb``) when installed, PyMySQL otherwise."""

    name = "mysql"
    quote_char = "`"
    placeholder = "%s"
    escape_percent = True
    with_catalog = True

    def __init__(self, url: JdbcUrl, tz: dt.tzinfo, quote: bool = True, isolation: str = "DEFAULT") -> None:
        super().__init__(url, tz, quote, isolation)
        self.driver = mysql_driver()
        if self.driver == "mysqlclient" and self.options.tls.mode.verify:
            # only PyMySQL verifies as asked (CA alone, or CA and the URL's host): see cdc.jdbc.tls
            self.driver = "pymysql"

    def connect(self) -> Any:
        conn = self._connect_mysqlclient() if self.driver == "mysqlclient" else self._connect_pymysql()
        with conn.cursor() as cur:
            offset = self._session_zone()
            cur.execute("SET time_zone = %s", (offset,))
            if self.isolation in _ISOLATION_SQL:
                cur.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {_ISOLATION_SQL[self.isolation]}")
        conn.commit()
        return conn

    def _connect_pymysql(self) -> Any:
        import pymysql

        timeout = self.options.socket_timeout_s
        try:
            return pymysql_connect(  # the timeout covers the server's greeting too (cdc.greeting)
                self.connect_timeout,
                host=self.url.host or "localhost",
                port=self.url.port,
                user=self.url.user or "",
                password=self.url.password or "",
                database=self.url.database or None,
                charset="utf8mb4",
                autocommit=False,
                read_timeout=timeout,
                write_timeout=timeout,
                conv=pymysql_conversions(),
                **self.tls().pymysql_kwargs(),
            )
        except pymysql.err.OperationalError as exc:
            if is_tls_failure(exc):
                raise self._tls_error(exc) from exc
            if exc.args and exc.args[0] in (1044, 1045, 1049):
                raise ConnectError(f"Cannot connect to {self.describe_url()}: {exc.args[1]}") from exc
            raise

    def _connect_mysqlclient(self) -> Any:
        import MySQLdb

        tls = self.tls()
        extra: dict[str, Any] = tls.mysqlclient_kwargs()
        if self.options.socket_timeout_s:
            extra["read_timeout"] = extra["write_timeout"] = max(1, round(self.options.socket_timeout_s))
        try:
            conn = mysqldb_connect(
                self.url.host or "localhost",
                int(self.url.port),
                self.url.user or "",
                self.url.password or "",
                self.url.database or None,
                autocommit=False,
                connect_timeout=self.connect_timeout,
                **extra,
            )
        except MySQLdb.OperationalError as exc:
            if is_tls_failure(exc):
                raise self._tls_error(exc) from exc
            if exc.args and exc.args[0] in (1044, 1045, 1049):
                raise ConnectError(f"Cannot connect to {self.describe_url()}: {exc.args[1]}") from exc
            # libmariadb words a refused port "(115)" (EINPROGRESS), a silent one as a lost handshake
            reason = explain(exc, self.url.host or "localhost", int(self.url.port))
            if reason is not None:
                raise MySQLdb.OperationalError(exc.args[0], reason) from exc
            raise
        tls.check_encrypted(conn)
        return conn

    def _session_zone(self) -> str:
        # A fixed offset works without the server's time zone tables; it is the zone's offset now.
        offset = dt.datetime.now(self.tz).utcoffset() or dt.timedelta(0)
        minutes = int(offset.total_seconds() // 60)
        sign = "-" if minutes < 0 else "+"
        return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"

    def streaming_cursor(self, conn: Any, fetch_size: int) -> Any:
        if self.driver == "mysqlclient":
            import MySQLdb.cursors

            return conn.cursor(MySQLdb.cursors.SSCursor)
        import pymysql.cursors

        return conn.cursor(pymysql.cursors.SSCursor)

    def current_timestamp_sql(self) -> str:
        return "SELECT CURRENT_TIMESTAMP(6)"

    def bind_timestamp(self, value: dt.datetime) -> Any:
        return value.astimezone(self.tz).replace(tzinfo=None)

    def sqlalchemy_url(self) -> str:
        return "mysql+mysqldb://" if self.driver == "mysqlclient" else "mysql+pymysql://"

    def list_tables(
        self, conn: Any, types: Sequence[str], catalog_pattern: str | None, schema_pattern: str | None
    ) -> list[TableId]:
        kinds = {"TABLE": "BASE TABLE", "VIEW": "VIEW"}
        wanted = [kinds[t] for t in types if t in kinds] or ["BASE TABLE"]
        pattern = catalog_pattern or self.url.database
        sql = (
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE IN ("
            + ",".join(["%s"] * len(wanted))
            + ")"
        )
        params: list[Any] = list(wanted)
        if pattern:
            sql += " AND TABLE_SCHEMA LIKE %s"
            params.append(pattern)
        else:
            sql += " AND TABLE_SCHEMA NOT IN ('mysql','sys','performance_schema','information_schema')"
        with conn.cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
        conn.commit()
        return sorted(TableId(str(s), None, str(n)) for s, n in rows)

    def describe_cursor(self, description: Sequence[Any]) -> list[ColumnInfo] | None:
        from pymysql.constants import FIELD_TYPE as F

        kinds = {
            F.TINY: "int8",
            F.SHORT: "int16",
            F.INT24: "int32",
            F.LONG: "int32",
            F.LONGLONG: "int64",
            F.FLOAT: "float32",
            F.DOUBLE: "float64",
            F.DECIMAL: "decimal",
            F.NEWDECIMAL: "decimal",
            F.DATE: "date",
            F.TIME: "time",
            F.DATETIME: "timestamp",
            F.TIMESTAMP: "timestamp",
            F.YEAR: "year",
            F.BIT: "bit",
            F.JSON: "json",
            F.VARCHAR: "string",
            F.VAR_STRING: "string",
            F.STRING: "string",
            F.ENUM: "string",
            F.SET: "string",
            F.BLOB: "string",
            F.TINY_BLOB: "string",
            F.MEDIUM_BLOB: "string",
            F.LONG_BLOB: "string",
        }
        out = []
        for d in description:
            name, code, _, length, precision, scale, null_ok = d[:7]
            kind = kinds.get(code)
            if kind == "decimal":
                out.append(ColumnInfo(name, kind, bool(null_ok), int(precision or 0), int(scale or 0)))
            else:
                out.append(ColumnInfo(name, kind, bool(null_ok), int(length or 0) if kind == "bit" else 0))
        return out


class PostgresDialect(Dialect):
    """PostgreSQL through psycopg 3."""

    name = "postgresql"
    placeholder = "%s"
    escape_percent = True
    _cursors = 0

    def connect(self) -> Any:
        import psycopg

        options = self.options
        extra: dict[str, Any] = self.tls().psycopg_kwargs()
        if options.application_name is not None:
            extra["application_name"] = options.application_name
        if options.current_schema is not None:  # pgJDBC's currentSchema: the session's search_path
            extra["options"] = "-c search_path=" + options.current_schema.replace(" ", "\\ ")
        if options.tcp_keepalive is not None:
            extra["keepalives"] = int(options.tcp_keepalive)
        try:
            conn = psycopg.connect(
                host=self.url.host,
                port=self.url.port,
                dbname=self.url.database or None,
                user=self.url.user,
                password=self.url.password,
                connect_timeout=self.connect_timeout,
                autocommit=False,
                **extra,
            )
        except psycopg.OperationalError as exc:
            if is_tls_failure(exc):
                raise self._tls_error(exc) from exc
            if "authentication failed" in str(exc) or "does not exist" in str(exc):
                raise ConnectError(f"Cannot connect to {self.describe_url()}: {exc}") from exc
            raise
        if self.isolation in _ISOLATION_SQL:
            conn.isolation_level = getattr(psycopg.IsolationLevel, self.isolation)
        with conn.cursor() as cur:
            cur.execute("SELECT set_config('TimeZone', %s, false)", (getattr(self.tz, "key", "UTC"),))
        conn.commit()
        return conn

    def streaming_cursor(self, conn: Any, fetch_size: int) -> Any:
        PostgresDialect._cursors += 1
        cur = conn.cursor(name=f"cdc_jdbc_{PostgresDialect._cursors}")
        cur.itersize = fetch_size
        return cur

    def sqlalchemy_url(self) -> str:
        return "postgresql+psycopg://"

    def list_tables(
        self, conn: Any, types: Sequence[str], catalog_pattern: str | None, schema_pattern: str | None
    ) -> list[TableId]:
        kinds = {"TABLE": "BASE TABLE", "VIEW": "VIEW"}
        wanted = [kinds[t] for t in types if t in kinds] or ["BASE TABLE"]
        sql = (
            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = ANY(%s)"
            " AND table_schema NOT IN ('pg_catalog', 'information_schema')"
            " AND table_schema NOT LIKE 'pg\\_%%'"
        )
        params: list[Any] = [wanted]
        if schema_pattern:
            sql += " AND table_schema LIKE %s"
            params.append(schema_pattern)
        with conn.cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
        conn.commit()
        return sorted(TableId(None, str(s), str(n)) for s, n in rows)

    def describe_cursor(self, description: Sequence[Any]) -> list[ColumnInfo] | None:
        kinds = {
            16: "boolean",
            20: "int64",
            21: "int16",
            23: "int32",
            700: "float32",
            701: "float64",
            1700: "decimal",
            25: "string",
            1043: "string",
            1042: "string",
            18: "string",
            19: "string",
            17: "bytes",
            1082: "date",
            1083: "time",
            1114: "timestamp",
            1184: "timestamptz",
            114: "json",
            3802: "json",
            2950: "string",
        }
        out = []
        for col in description:
            kind = kinds.get(col.type_code)
            out.append(
                ColumnInfo(
                    col.name,
                    kind,
                    True,
                    int(col.precision or 0),
                    int(col.scale or 0),
                    numeric=kind == "decimal",
                )
            )
        return out


def _no_attach(action: int, *_: object) -> int:
    """sqlite3 authorizer: no ``ATTACH`` (nor ``VACUUM INTO``, which SQLite authorizes as one), so a
    ``query`` cannot open or create a file besides the database ``connection.url`` names, the one the
    worker's ``connector.file.allowed.paths`` checked."""
    return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_ATTACH else sqlite3.SQLITE_OK


class SqliteDialect(Dialect):
    """SQLite through the standard library's sqlite3 (date-times are text, compared canonically)."""

    name = "sqlite"
    _memory: sqlite3.Connection | None = None

    def connect(self) -> Any:
        path = self.url.database
        if path == ":memory:":  # one database per dialect instance, shared by the task and reflection
            if self._memory is None:
                self._memory = sqlite3.connect(path, check_same_thread=False)
                self._memory.set_authorizer(_no_attach)
            return self._memory
        conn = sqlite3.connect(path, uri=path.startswith("file:"), check_same_thread=False, timeout=30)
        conn.set_authorizer(_no_attach)
        if self.isolation == "READ_UNCOMMITTED":
            conn.execute("PRAGMA read_uncommitted = 1")
        return conn

    def engine(self) -> Any:
        if self._engine is None and self.url.database == ":memory:":
            import sqlalchemy as sa
            from sqlalchemy.pool import StaticPool

            self._engine = sa.create_engine("sqlite://", creator=self.connect, poolclass=StaticPool)
        return super().engine()

    def describe_url(self) -> str:
        return f"sqlite:{self.url.database}"

    def timestamp_expr(self, column_sql: str) -> str:
        return f"strftime('%Y-%m-%d %H:%M:%f', {column_sql})"

    def current_timestamp_sql(self) -> str:
        return "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')"

    def current_timestamp(self, conn: Any) -> dt.datetime:
        value = conn.execute(self.current_timestamp_sql()).fetchone()[0]
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)  # 'now' is always UTC in SQLite

    def bind_timestamp(self, value: dt.datetime) -> Any:
        local = value.astimezone(self.tz)
        return local.strftime("%Y-%m-%d %H:%M:%S.") + f"{local.microsecond // 1000:03d}"

    def timestamp_offset_ns(self, value: dt.datetime) -> dt.datetime:
        return value.replace(microsecond=value.microsecond // 1000 * 1000)

    def sqlalchemy_url(self) -> str:
        return "sqlite://"

    def list_tables(
        self, conn: Any, types: Sequence[str], catalog_pattern: str | None, schema_pattern: str | None
    ) -> list[TableId]:
        wanted = [t.lower() for t in types] or ["table"]
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN (" + ",".join("?" * len(wanted)) + ")"
            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
            wanted,
        ).fetchall()
        return sorted(TableId(None, None, str(r[0])) for r in rows)

    def reflection_schema(self, table: TableId) -> str | None:
        return None

    def column_info(self, column: dict[str, Any]) -> ColumnInfo:
        info = super().column_info(column)
        wide = {"int8": "int64", "int16": "int64", "int32": "int64", "float32": "float64"}.get(
            info.kind or ""
        )
        if wide is None:
            return info
        return ColumnInfo(
            info.name, wide, info.nullable, info.precision, info.scale, False, info.autoincrement
        )

    def describe_table(self, table: TableId) -> list[ColumnInfo]:
        columns = super().describe_table(table)
        pk = self.primary_key(table)
        if len(pk) == 1:  # an INTEGER PRIMARY KEY is the rowid: never null, SQLite's auto-increment column
            return [
                ColumnInfo(c.name, c.kind, False, c.precision, c.scale, c.unsigned, True, c.numeric)
                if c.name == pk[0] and c.kind == "int64"
                else c
                for c in columns
            ]
        return columns


def dialect_for(url: JdbcUrl, name: str, tz: dt.tzinfo, quote: bool, isolation: str) -> Dialect:
    """The dialect named by ``dialect.name`` (Confluent's class names accepted) or by the URL."""
    key = (name or url.flavour).lower().replace("databasedialect", "")
    classes: dict[str, type[Dialect]] = {
        "mysql": MySqlDialect,
        "mariadb": MySqlDialect,
        "postgresql": PostgresDialect,
        "postgres": PostgresDialect,
        "sqlite": SqliteDialect,
    }
    cls = classes.get(key)
    if cls is None:
        raise ConnectError(f"Unsupported dialect {name or url.subprotocol!r}")
    return cls(url, tz, quote, isolation)
