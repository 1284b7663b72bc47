"""JDBC URLs (``jdbc:mysql://…``, ``jdbc:mariadb://…``, ``jdbc:postgresql://…``, ``jdbc:sqlite:…``).

Host, port, database, user and password (``connection.user`` and ``connection.password`` win over the
URL's ``?user=&password=``) and the other properties, which :mod:`cdc.jdbc.url_properties` reads with
the Java driver's meaning (TLS, timeouts …) or refuses: none is ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, parse_qsl, unquote

from cdc.api.errors import ConfigError

__all__ = ["JdbcUrl", "parse_jdbc_url", "sqlite_file"]

_DEFAULT_PORTS = {"mysql": 3306, "mariadb": 3306, "postgresql": 5432}


@dataclass(frozen=True)
class JdbcUrl:
    subprotocol: str
    """mysql, mariadb, postgresql or sqlite."""
    host: str = ""
    port: int = 0
    database: str = ""
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def flavour(self) -> str:
        """The dialect family: mysql (MySQL and MariaDB), postgresql or sqlite."""
        return "mysql" if self.subprotocol in ("mysql", "mariadb") else self.subprotocol

    def with_credentials(self, user: str | None, password: str | None) -> JdbcUrl:
        return JdbcUrl(
            self.subprotocol,
            self.host,
            self.port,
            self.database,
            user if user is not None else self.user,
            password if password is not None else self.password,
            dict(self.properties),
        )


def parse_jdbc_url(url: str) -> JdbcUrl:
    text = url.strip()
    if not text.startswith("jdbc:"):
        raise ConfigError(f"Not a JDBC URL (must start with jdbc:): {text}", "connection.url")
    rest = text[5:]
    sub, _, tail = rest.partition(":")
    sub = sub.lower()
    if sub == "sqlite":
        path, _, query = tail.partition("?") if tail.startswith("file:") else (tail, "", "")
        props = dict(parse_qsl(query))
        if query:
            path = f"{path}?{query}"  # a sqlite URI keeps its own parameters (mode=memory, cache=shared)
        return JdbcUrl("sqlite", database=path or ":memory:", properties=props)
    if sub not in _DEFAULT_PORTS:
        raise ConfigError(
            f"Unsupported JDBC subprotocol {sub!r} (mysql, mariadb, postgresql or sqlite)", "connection.url"
        )
    if not tail.startswith("//"):
        if sub == "postgresql":  # jdbc:postgresql:database
            database, _, query = tail.partition("?")
            props = dict(parse_qsl(query, keep_blank_values=True))
            return JdbcUrl(sub, "localhost", 5432, database, props.get("user"), props.get("password"), props)
        raise ConfigError(f"Malformed JDBC URL: {text}", "connection.url")
    authority_path, _, query = tail[2:].partition("?")
    authority, _, database = authority_path.partition("/")
    props = dict(parse_qsl(query, keep_blank_values=True))
    user = password = None
    if "@" in authority:  # jdbc:mysql://user:pass@host/db
        creds, _, authority = authority.rpartition("@")
        user, _, pw = creds.partition(":")
        user, password = unquote(user), (unquote(pw) if pw else None)
    first = authority.split(",")[0]  # failover lists: the first host
    if first.startswith("["):
        host, _, port_text = first[1:].partition("]")
        port_text = port_text.lstrip(":")
    else:
        host, _, port_text = first.partition(":")
    try:
        port = int(port_text) if port_text else _DEFAULT_PORTS[sub]
    except ValueError as exc:
        raise ConfigError(f"Bad port in JDBC URL: {text}", "connection.url") from exc
    return JdbcUrl(
        sub,
        host or "localhost",
        port,
        unquote(database),
        props.get("user", user),
        props.get("password", password),
        props,
    )


def sqlite_file(database: str) -> str | None:
    """The file :mod:`sqlite3` opens (and creates) for a ``jdbc:sqlite:`` URL's database, None for an
    in-memory or temporary one. ``file:`` URIs as SQLite reads them (``dialects.SqliteDialect`` opens
    them with ``uri=True``): an authority of ``localhost`` or none, the path percent-decoded,
    ``mode=memory`` and ``:memory:`` in memory; SQLite refuses other authorities itself."""
    if database in ("", ":memory:"):
        return None
    if not database.startswith("file:"):
        return database
    rest, _, query = database[len("file:") :].partition("?")
    rest = rest.partition("#")[0]
    if rest.startswith("//"):
        _authority, slash, rest = rest[2:].partition("/")
        rest = slash + rest
    path = unquote(rest)
    modes = parse_qs(query).get("mode", [])
    if not path or path == ":memory:" or "memory" in modes:
        return None
    return path
