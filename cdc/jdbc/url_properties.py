"""What a JDBC URL's properties mean here: honoured with the Java driver's meaning, accepted as harmless,
or refused naming the property. Nothing in a URL is dropped silently.

Each subprotocol is read as its usual driver reads it: ``jdbc:mysql:`` as MySQL Connector/J 8,
``jdbc:mariadb:`` as MariaDB Connector/J 3, ``jdbc:postgresql:`` as pgJDBC. TLS follows the driver:

* Connector/J: ``sslMode`` DISABLED | PREFERRED (the default) | REQUIRED | VERIFY_CA | VERIFY_IDENTITY;
  without ``sslMode`` the legacy ``useSSL`` (default true), ``requireSSL`` and ``verifyServerCertificate``
  are translated as Connector/J translates them. Trust: ``trustCertificateKeyStoreUrl``/``Password``/``Type``
  (the system's CAs when absent, unless ``fallbackToSystemTrustStore=false``); client certificate:
  ``clientCertificateKeyStoreUrl``/``Password``/``Type``.
* MariaDB Connector/J: ``sslMode`` disable (the default) | trust | verify-ca | verify-full; the legacy
  ``useSsl`` (``useSSL``) means verify-full, or trust with ``trustServerCertificate``, or verify-ca with
  ``disableSslHostnameVerification``. Trust: ``serverSslCert`` (a path or the PEM text; the CA or the server's
  own certificate) or ``trustStore``/``trustStorePassword``/``trustStoreType``; client certificate:
  ``keyStore``/``keyStorePassword``/``keyStoreType``/``keyPassword``.
* pgJDBC: ``sslmode`` disable | allow | prefer (the default) | require | verify-ca | verify-full; without it
  ``ssl`` (present, or ``true``) means verify-full. ``sslrootcert``, ``sslcert``, ``sslkey`` (PEM, PKCS-8
  DER ``.pk8`` or PKCS-12 ``.p12``/``.pfx``), ``sslpassword``; ``sslfactory`` =
  ``org.postgresql.ssl.NonValidatingFactory`` encrypts without verifying, ``…DefaultJavaSSLFactory`` trusts
  the system's CAs.

Store types are recognised from the files' content (JKS, JCEKS, PKCS12 or PEM), as the JVM does since
Java 9; the declared ``…Type`` is accepted. The properties' full lists with their status are in
``docs/jdbc.md`` (generated from :data:`~cdc.jdbc.url_catalog.CATALOG` by hand: keep both in step).
"""

from __future__ import annotations

import enum
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass, field

from cdc.api.connector import FileUse
from cdc.errors import ConfigError
from cdc.jdbc.url import JdbcUrl, parse_jdbc_url, sqlite_file
from cdc.jdbc.url_catalog import CATALOG, CONNECTOR_J_ONLY, HIDDEN_PROPERTIES, MARIADB_ONLY

__all__ = [
    "CATALOG",
    "HIDDEN_PROPERTIES",
    "StoreRef",
    "TlsMode",
    "UrlOptions",
    "UrlTls",
    "store_files",
    "url_files",
    "url_options",
]

URL_KEY = "connection.url"


class TlsMode(enum.Enum):
    """The drivers' TLS modes on one scale (libpq's names)."""

    DISABLE = "disable"
    ALLOW = "allow"  # pgJDBC/libpq only: plain first, TLS when the server insists
    PREFER = "prefer"  # TLS when the server offers it, not verified; plain otherwise
    REQUIRE = "require"  # TLS or fail, the certificate not verified
    VERIFY_CA = "verify-ca"
    VERIFY_FULL = "verify-full"  # the CA and the host name

    @property
    def required(self) -> bool:
        return self in (TlsMode.REQUIRE, TlsMode.VERIFY_CA, TlsMode.VERIFY_FULL)

    @property
    def verify(self) -> bool:
        return self in (TlsMode.VERIFY_CA, TlsMode.VERIFY_FULL)


@dataclass(frozen=True)
class StoreRef:
    """A trust or key store named in the URL: where, its password, and the property names for errors."""

    location: str
    password: str | None = field(default=None, repr=False)
    location_property: str = ""
    password_property: str = ""
    key_password: str | None = field(default=None, repr=False)
    inline_pem: bool = False
    """``location`` is the PEM text itself (MariaDB's ``serverSslCert``)."""


@dataclass(frozen=True)
class UrlTls:
    mode: TlsMode = TlsMode.DISABLE
    truststore: StoreRef | None = None
    keystore: StoreRef | None = None
    system_trust: bool = True
    """Whether the system's CAs are trusted when no trust store is given (Connector/J's
    ``fallbackToSystemTrustStore``)."""
    partial_chain: bool = False
    """Whether the trusted certificate may be the server's own (MariaDB's ``serverSslCert``)."""
    pg_cert: StoreRef | None = None
    """pgJDBC's ``sslcert`` (the client certificate when ``sslkey`` is not PKCS-12)."""
    source: str = ""
    """The URL properties that set the mode, for messages (e.g. ``sslMode=VERIFY_IDENTITY``)."""


@dataclass(frozen=True)
class UrlOptions:
    """Everything a URL's properties ask of the connection, typed."""

    tls: UrlTls = UrlTls()
    connect_timeout_s: float | None = None
    socket_timeout_s: float | None = None
    application_name: str | None = None
    current_schema: str | None = None
    tcp_keepalive: bool | None = None
    server_timezone: str | None = None


def _shown(name: str, value: str) -> str:
    return f"{name}=[hidden]" if name in HIDDEN_PROPERTIES else f"{name}={value}"


def _error(name: str, value: str, message: str) -> ConfigError:
    # never the whole URL: it may carry a password
    return ConfigError(f"URL property {name}: {message}", URL_KEY, _shown(name, value))


def _canonical(url: JdbcUrl) -> dict[str, str]:
    """The URL's properties under the catalog's spelling; an unknown one is refused."""
    catalog = CATALOG[url.subprotocol]
    # Connector/J and MariaDB Connector/J match property names without regard to case; pgJDBC does not
    folded = {k.lower(): k for k in catalog} if url.flavour == "mysql" else {}
    out: dict[str, str] = {}
    for name, value in url.properties.items():
        canonical = name if name in catalog else folded.get(name.lower())
        if canonical is None:
            raise _error(name, value, _unknown_reason(url, name))
        if url.subprotocol == "mariadb" and canonical.lower() == "usessl":
            canonical = "useSsl"
        out[canonical] = value
    return out


def _unknown_reason(url: JdbcUrl, name: str) -> str:
    catalog = CATALOG[url.subprotocol]
    near = [k for k in catalog if k.lower() == name.lower()]
    if near:
        return f"unknown property (the driver's name is {near[0]}; names are case-sensitive)"
    if url.subprotocol == "mysql" and name in MARIADB_ONLY:
        return "a MariaDB Connector/J property: use a jdbc:mariadb: URL for it"
    if url.subprotocol == "mariadb" and name in CONNECTOR_J_ONLY:
        return "a MySQL Connector/J property: use a jdbc:mysql: URL for it"
    return (
        "not supported by this connector (each supported property is listed in docs/jdbc.md); "
        "remove it, or ask for it to be supported"
    )


def _bool(name: str, value: str, *, empty: bool | None = None) -> bool:
    text = value.strip().lower()
    if text == "" and empty is not None:
        return empty
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise _error(name, value, "must be true or false")


def _number(name: str, value: str) -> float:
    try:
        number = float(value.strip())
    except ValueError:
        raise _error(name, value, "must be a number") from None
    if number < 0:
        raise _error(name, value, "must not be negative")
    return number


def _location(name: str, value: str) -> str:
    """A store named by a file: URL or a path (``classpath:`` and remote URLs cannot be read here)."""
    text = value.strip()
    if text.startswith("file:"):
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(text)
        path = unquote(parts.path)
        if parts.netloc not in ("", "localhost"):
            raise _error(name, value, "only local file: URLs can be read")
        return path
    if ":" in text.split("/")[0] and not text.startswith("/"):
        raise _error(name, value, "only a file: URL or a path can be read (not classpath: or remote URLs)")
    if not text:
        raise _error(name, value, "must name a file")
    return text


_CJ_MODES = {
    "DISABLED": TlsMode.DISABLE,
    "PREFERRED": TlsMode.PREFER,
    "REQUIRED": TlsMode.REQUIRE,
    "VERIFY_CA": TlsMode.VERIFY_CA,
    "VERIFY_IDENTITY": TlsMode.VERIFY_FULL,
}
_MARIADB_MODES = {
    "disable": TlsMode.DISABLE,
    "trust": TlsMode.REQUIRE,
    "verify-ca": TlsMode.VERIFY_CA,
    "verify-full": TlsMode.VERIFY_FULL,
}


def _connector_j_tls(props: Mapping[str, str]) -> UrlTls:
    if "sslMode" in props:
        value = props["sslMode"]
        mode = _CJ_MODES.get(value.strip().upper())
        if mode is None:
            raise _error("sslMode", value, f"must be one of {', '.join(_CJ_MODES)}")
        source = f"sslMode={value}"
    else:  # Connector/J 8's translation of the legacy properties
        use = _bool("useSSL", props.get("useSSL", "true"))
        require = _bool("requireSSL", props.get("requireSSL", "false"))
        verify = _bool("verifyServerCertificate", props.get("verifyServerCertificate", "false"))
        if not use:
            mode = TlsMode.DISABLE
        elif verify:
            mode = TlsMode.VERIFY_CA
        elif require:
            mode = TlsMode.REQUIRE
        else:
            mode = TlsMode.PREFER
        given = [f"{k}={props[k]}" for k in ("useSSL", "requireSSL", "verifyServerCertificate") if k in props]
        source = ", ".join(given) or "Connector/J's default sslMode=PREFERRED"
    trust = key = None
    if "trustCertificateKeyStoreUrl" in props:
        trust = StoreRef(
            _location("trustCertificateKeyStoreUrl", props["trustCertificateKeyStoreUrl"]),
            props.get("trustCertificateKeyStorePassword") or None,
            "trustCertificateKeyStoreUrl",
            "trustCertificateKeyStorePassword",
        )
    if "clientCertificateKeyStoreUrl" in props:
        key = StoreRef(
            _location("clientCertificateKeyStoreUrl", props["clientCertificateKeyStoreUrl"]),
            props.get("clientCertificateKeyStorePassword") or None,
            "clientCertificateKeyStoreUrl",
            "clientCertificateKeyStorePassword",
        )
    system = _bool("fallbackToSystemTrustStore", props.get("fallbackToSystemTrustStore", "true"))
    if mode.verify and trust is None and not system:
        raise _error(
            "fallbackToSystemTrustStore",
            props["fallbackToSystemTrustStore"],
            f"{source} verifies the server's certificate: set trustCertificateKeyStoreUrl",
        )
    return UrlTls(mode, trust, key, system_trust=system, source=source)


def _mariadb_tls(props: Mapping[str, str]) -> UrlTls:
    if "sslMode" in props:
        value = props["sslMode"]
        mode = _MARIADB_MODES.get(value.strip().lower().replace("_", "-"))
        if mode is None:
            raise _error("sslMode", value, f"must be one of {', '.join(_MARIADB_MODES)}")
        source = f"sslMode={value}"
    elif _bool("useSsl", props.get("useSsl", "false"), empty=True):
        if _bool("trustServerCertificate", props.get("trustServerCertificate", "false")):
            mode = TlsMode.REQUIRE
        elif _bool("disableSslHostnameVerification", props.get("disableSslHostnameVerification", "false")):
            mode = TlsMode.VERIFY_CA
        else:
            mode = TlsMode.VERIFY_FULL
        source = "useSsl=" + props["useSsl"]
    else:
        mode, source = TlsMode.DISABLE, "MariaDB Connector/J's default sslMode=disable"
    trust = key = None
    partial = False
    if "trustStore" in props:
        trust = StoreRef(
            _location("trustStore", props["trustStore"]),
            props.get("trustStorePassword") or None,
            "trustStore",
            "trustStorePassword",
        )
    elif "serverSslCert" in props:
        cert = props["serverSslCert"]
        inline = cert.lstrip().startswith("-----BEGIN")
        trust = StoreRef(
            cert if inline else _location("serverSslCert", cert), None, "serverSslCert", "", inline_pem=inline
        )
        partial = True
    if "keyStore" in props:
        key = StoreRef(
            _location("keyStore", props["keyStore"]),
            props.get("keyStorePassword") or None,
            "keyStore",
            "keyStorePassword",
            key_password=props.get("keyPassword") or None,
        )
    return UrlTls(mode, trust, key, partial_chain=partial, source=source)


_PG_MODES = {m.value: m for m in TlsMode}
_NON_VALIDATING = "org.postgresql.ssl.NonValidatingFactory"
_SYSTEM_CAS = "org.postgresql.ssl.DefaultJavaSSLFactory"
_LIBPQ_FACTORY = ("org.postgresql.ssl.LibPQFactory", "org.postgresql.ssl.jdbc4.LibPQFactory")


def _pg_tls(props: Mapping[str, str]) -> UrlTls:
    if "sslmode" in props:
        value = props["sslmode"]
        mode = _PG_MODES.get(value.strip().lower())
        if mode is None:
            raise _error("sslmode", value, f"must be one of {', '.join(_PG_MODES)}")
        source = f"sslmode={value}"
    elif "ssl" in props and _bool("ssl", props["ssl"], empty=True):
        mode, source = TlsMode.VERIFY_FULL, f"ssl={props['ssl']} (pgJDBC: verify-full)"
    else:  # ssl=false too: pgJDBC's SslMode.of then falls back to prefer
        mode, source = TlsMode.PREFER, "pgJDBC's default sslmode=prefer"
    system = False
    factory = props.get("sslfactory", "").strip()
    if factory == _NON_VALIDATING:
        if mode.verify:
            mode = TlsMode.REQUIRE
        source += f", sslfactory={factory} (not verified)"
    elif factory == _SYSTEM_CAS:
        system = True
    elif factory and factory not in _LIBPQ_FACTORY:
        raise _error("sslfactory", factory, f"only {_NON_VALIDATING}, {_SYSTEM_CAS} or LibPQFactory")
    trust = key = cert = None
    if "sslrootcert" in props and not system:
        trust = StoreRef(_location("sslrootcert", props["sslrootcert"]), None, "sslrootcert", "")
    if "sslkey" in props:
        key = StoreRef(
            _location("sslkey", props["sslkey"]),
            props.get("sslpassword") or None,
            "sslkey",
            "sslpassword",
        )
    if "sslcert" in props:
        cert = StoreRef(_location("sslcert", props["sslcert"]), None, "sslcert", "")
    return UrlTls(mode, trust, key, system_trust=system, pg_cert=cert, source=source)


def _mysql_extras(props: Mapping[str, str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in ("serverTimezone", "connectionTimeZone"):
        if name in props:
            zone = props[name].strip()
            if zone.upper() not in ("LOCAL", "SERVER"):
                try:
                    zoneinfo.ZoneInfo(zone)
                except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                    raise _error(name, zone, "not a time zone identifier") from None
            out["server_timezone"] = zone
    if "characterEncoding" in props:
        value = props["characterEncoding"]
        if value.strip().lower().replace("-", "") not in ("utf8", "utf8mb4"):
            raise _error("characterEncoding", value, "only UTF-8: connections are always utf8mb4")
    if "nullCatalogMeansCurrent" in props and _bool(
        "nullCatalogMeansCurrent", props["nullCatalogMeansCurrent"]
    ):
        raise _error(
            "nullCatalogMeansCurrent",
            props["nullCatalogMeansCurrent"],
            "only false: use catalog.pattern to list other databases' tables",
        )
    return out


def url_options(url: JdbcUrl) -> UrlOptions:
    """The typed meaning of ``url``'s properties; a :class:`ConfigError` on ``connection.url`` naming the
    first property that is unknown or has a bad value. SQLite URLs carry SQLite's own URI parameters."""
    if url.subprotocol not in CATALOG:
        return UrlOptions()
    props = _canonical(url)
    extras: dict[str, object] = {}
    if url.subprotocol == "postgresql":
        tls = _pg_tls(props)
        connect = props.get("connectTimeout") or props.get("loginTimeout")
        connect_name = "connectTimeout" if "connectTimeout" in props else "loginTimeout"
        if connect:
            extras["connect_timeout_s"] = _number(connect_name, connect) or None
        if "ApplicationName" in props:
            extras["application_name"] = props["ApplicationName"]
        if "currentSchema" in props:
            extras["current_schema"] = props["currentSchema"]
        if "tcpKeepAlive" in props:
            extras["tcp_keepalive"] = _bool("tcpKeepAlive", props["tcpKeepAlive"])
    else:
        tls = _connector_j_tls(props) if url.subprotocol == "mysql" else _mariadb_tls(props)
        if "connectTimeout" in props:
            extras["connect_timeout_s"] = _number("connectTimeout", props["connectTimeout"]) / 1000 or None
        if "socketTimeout" in props:
            extras["socket_timeout_s"] = _number("socketTimeout", props["socketTimeout"]) / 1000 or None
        extras.update(_mysql_extras(props))
    return UrlOptions(tls=tls, **extras)  # type: ignore[arg-type]


def store_files(url: JdbcUrl) -> list[tuple[str, str]]:
    """(property, path) of each key or trust store file the URL's TLS properties name (a PEM given inline
    is no file); none for a URL whose properties do not parse (refused on their own)."""
    try:
        tls = url_options(url).tls
    except ConfigError:
        return []
    refs = (tls.truststore, tls.keystore, tls.pg_cert)
    return [(r.location_property, r.location) for r in refs if r is not None and not r.inline_pem]


def url_files(key: str, value: str) -> list[FileUse]:
    """The files a JDBC URL config value makes the worker open: a ``jdbc:sqlite:`` database's file (created
    with its journal beside it) and the key and trust stores its TLS properties name (read; a client key is
    the worker's identity to the server). None for a URL that does not parse (refused on its own)."""

    try:
        url = parse_jdbc_url(value)
    except ConfigError:
        return []
    path = sqlite_file(url.database) if url.flavour == "sqlite" else None
    out = [] if path is None else [FileUse(key, path)]
    return out + [FileUse(key, location) for _prop, location in store_files(url)]


def check_server_timezone(options: UrlOptions, db_timezone: str) -> None:
    """Connector/J converts with ``serverTimezone``, we with ``db.timezone`` (the session's zone): they must
    agree, or values would shift."""
    zone = options.server_timezone
    if zone is None:
        return
    if zone.upper() in ("LOCAL", "SERVER") or not _same_zone(zone, db_timezone):
        raise ConfigError(
            f"URL property serverTimezone/connectionTimeZone={zone} differs from db.timezone={db_timezone}: "
            "set db.timezone to the zone the server's values are in, and the same zone in the URL",
            URL_KEY,
            f"serverTimezone={zone}",
        )


def _same_zone(a: str, b: str) -> bool:
    if a == b:
        return True
    utc = {"UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z", "UCT", "Etc/UCT", "Universal", "Zulu"}
    return a in utc and b in utc
