"""TLS for every connection of the MySQL/MariaDB connector, with Debezium's ``database.ssl.*`` meaning.

``database.ssl.mode`` (Debezium's binlog connectors; the MariaDB connector's names in brackets):

* ``disabled`` (``disable``): plain connections;
* ``preferred`` (the default): TLS when the server offers it, plain when it offers none; the server's
  certificate is not checked;
* ``required`` (``trust``): TLS or no connection; the certificate is not checked;
* ``verify_ca`` (``verify-ca``): TLS with a certificate signed by a trusted CA (the trust store, else the
  system's CAs); the host name is not checked;
* ``verify_identity`` (``verify-full``): as ``verify_ca``, and the certificate names ``database.hostname``.

``database.ssl.truststore``/``.password`` (JKS, PKCS12 or PEM) are the CAs trusted, and
``database.ssl.keystore``/``.password`` the client certificate presented (a user ``REQUIRE X509``), both
read once by :mod:`cdc.keystores`. Debezium users who set the JDBC driver's TLS properties
(``database.sslMode``, ``driver.sslMode``, ``database.useSSL`` with ``requireSSL`` and
``verifyServerCertificate``) get the same mode from them; a conflicting pair is refused
(:func:`driver_tls_errors`), as are the driver's key store properties (use ``database.ssl.*``).

:class:`MySqlTls` applies one mode to each client: PyMySQL (metadata, locks, the binlog client of
python-mysql-replication, and snapshot rows without mysqlclient), mysqlclient/libmariadb (snapshot and
chunk rows) and the MariaDB Connector/J options of the Spark snapshot's JDBC reader.
"""

from __future__ import annotations

import contextlib
import re
import ssl
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc.api.errors import ConfigError
from cdc.keystores import (
    KeyPair,
    PemFiles,
    StoreKeys,
    read_keystore,
    read_truststore,
    ssl_context,
    store_kind,
)

__all__ = [
    "MODES",
    "MySqlTls",
    "TlsDowngradeError",
    "driver_tls_errors",
    "effective_mode",
    "is_driver_tls_key",
    "is_tls_failure",
    "tls_error_key",
]

MODES = ("disabled", "preferred", "required", "verify_ca", "verify_identity")
_MARIADB_NAMES = {
    "disable": "disabled",
    "trust": "required",
    "verify-ca": "verify_ca",
    "verify-full": "verify_identity",
}
# Connector/J's sslMode (MySQL: DISABLED…VERIFY_IDENTITY; MariaDB: disable, trust, verify-ca, verify-full)
_DRIVER_MODES = {**{m: m for m in MODES}, **_MARIADB_NAMES}

TRUSTSTORE = StoreKeys("database.ssl.truststore", "database.ssl.truststore.password")
KEYSTORE = StoreKeys("database.ssl.keystore", "database.ssl.keystore.password")

_HONOURED_DRIVER_KEYS = ("sslMode", "useSSL", "requireSSL", "verifyServerCertificate")
_DRIVER_TLS = re.compile(
    r"(?:database|driver)\.(?P<name>[^.]*(?:ssl|tls|keystore|truststore|certificate|cert)[^.]*)",
    re.IGNORECASE,
)


class TlsDowngradeError(ConnectionError):
    """A connection that must be encrypted is not (the server offered no TLS)."""


def _bool(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.strip().lower() in ("true", "yes", "1")


def _driver_props(props: Mapping[str, str], name: str) -> list[tuple[str, str]]:
    """``driver.<name>`` and ``database.<name>`` as given (Debezium hands both to its JDBC driver)."""
    return [(f"{p}.{name}", props[f"{p}.{name}"]) for p in ("driver", "database") if f"{p}.{name}" in props]


def _driver_mode(props: Mapping[str, str]) -> tuple[str, str] | None:
    """The mode the JDBC driver's TLS properties ask for, and the key that says so; None when none is set."""
    for key, value in _driver_props(props, "sslMode"):
        mode = _DRIVER_MODES.get(value.strip().lower())
        if mode is None:
            raise ConfigError(f"not a Connector/J sslMode (one of {', '.join(_DRIVER_MODES)})", key, value)
        return mode, key
    use = _driver_props(props, "useSSL")
    if not use:
        return None
    key, value = use[0]
    if not _bool(value):
        return "disabled", key
    require = any(_bool(v) for _k, v in _driver_props(props, "requireSSL"))
    verify = any(_bool(v) for _k, v in _driver_props(props, "verifyServerCertificate"))
    # Connector/J 5.1's combinations: verifying the certificate implies requiring TLS
    return ("verify_ca" if verify else "required" if require else "preferred"), key


def effective_mode(props: Mapping[str, str]) -> str:
    """``database.ssl.mode`` in Debezium's MySQL names; when it is not set, what the driver's TLS
    properties ask for; else ``preferred``."""
    given = props.get("database.ssl.mode")
    if given is not None and given.strip():
        value = given.strip().lower()
        return _MARIADB_NAMES.get(value, value)
    driver = _driver_mode(props)
    return driver[0] if driver else "preferred"


def driver_tls_errors(props: Mapping[str, str]) -> dict[str, str]:
    """Validate errors for the JDBC driver's TLS properties under ``database.``/``driver.``: the mode they
    ask for must agree with ``database.ssl.mode`` when both are set, and the driver's own key store
    properties are refused (``database.ssl.truststore``/``keystore`` say it for every connection)."""
    errors: dict[str, str] = {}
    try:
        driver = _driver_mode(props)
    except ConfigError as exc:
        return {str(exc.name): str(exc)}
    given = props.get("database.ssl.mode")
    if driver and given is not None and given.strip():
        mode = effective_mode(props)
        if driver[0] != mode:
            key = driver[1]
            errors[key] = (
                f"The '{key}' value {props[key]!r} asks for TLS mode {driver[0]}, which conflicts with "
                f"database.ssl.mode={given}; remove one (database.ssl.mode applies to every connection)"
            )
    for key in props:
        match = _DRIVER_TLS.fullmatch(key)
        if match and match.group("name") not in _HONOURED_DRIVER_KEYS and key not in errors:
            errors[key] = (
                f"The '{key}' value is not supported by cdc: a TLS property of the JDBC driver; cdc's "
                "connections (SQL and binlog) take TLS from database.ssl.mode, "
                "database.ssl.truststore[.password] and database.ssl.keystore[.password]"
            )
    return errors


def is_driver_tls_key(key: str) -> bool:
    """``database.``/``driver.`` + ``sslMode``, ``useSSL``, ``requireSSL`` or ``verifyServerCertificate``:
    read as ``database.ssl.mode`` (:func:`effective_mode`)."""
    prefix, _, name = key.partition(".")
    return prefix in ("database", "driver") and name in _HONOURED_DRIVER_KEYS


def tls_error_key(message: str, tls: MySqlTls) -> str:
    """The key whose value a TLS failure concerns, for validate: a host name mismatch is the host's, an
    untrusted certificate the trust store's (or the mode's, when there is none), anything else the mode's."""
    lowered = message.lower()
    if "mismatch, certificate is not valid" in lowered or "doesn't match" in lowered:
        return "database.hostname"
    if "certificate verify failed" in lowered or "self-signed" in lowered or "unable to get" in lowered:
        return TRUSTSTORE.location if tls.truststore_given else "database.ssl.mode"
    if "certificate" in lowered and tls.keypair is not None:
        return KEYSTORE.location
    return "database.ssl.mode"


_TLS_FAILURE = re.compile(r"\bssl\b|\btls\b|\[ssl|certificate", re.IGNORECASE)


def is_tls_failure(message: str) -> bool:
    """Whether a driver's connect error is about TLS (whole words: a user named cdc_tls is no TLS error)."""
    return _TLS_FAILURE.search(message) is not None


@dataclass(frozen=True, eq=False)
class MySqlTls:
    """One connector's TLS: the mode, the CAs trusted (PEM, None: the system's) and the client's key."""

    mode: str
    cadata: str | None = None
    keypair: KeyPair | None = None
    truststore_given: bool = False
    jvm_keystore: tuple[str, str, str] | None = field(default=None, repr=False)
    """The key store as the JVM reads it (path, password, JKS|PKCS12): Spark's Connector/J reads it itself."""

    @classmethod
    def from_props(cls, props: Mapping[str, str], passwords: Callable[[str], str | None]) -> MySqlTls:
        """Reads the stores (a :class:`ConfigError` naming the key when one cannot be read); ``passwords``
        gives a password key's clear value."""
        mode = effective_mode(props)
        if mode not in MODES:
            raise ConfigError(f"must be one of {', '.join(MODES)}", "database.ssl.mode", mode)
        cadata = keypair = None
        trust = (props.get(TRUSTSTORE.location) or "").strip()
        if trust and mode != "disabled":
            cadata = read_truststore(trust, passwords(TRUSTSTORE.password), TRUSTSTORE)
        key = (props.get(KEYSTORE.location) or "").strip()
        jvm_keystore = None
        if key and mode != "disabled":
            password = passwords(KEYSTORE.password)
            keypair = read_keystore(key, password, KEYSTORE)
            kind = store_kind(key)
            if kind != "pem":
                jvm_keystore = (key, password or "", "JKS" if kind == "jks" else "PKCS12")
        return cls(mode, cadata, keypair, bool(trust), jvm_keystore)

    @property
    def verifies(self) -> bool:
        return self.mode in ("verify_ca", "verify_identity")

    def context(self) -> ssl.SSLContext:
        """The client context of the mode (made per connection: a context holds no secret once loaded and
        is cheap next to a connection, and settings objects stay picklable)."""
        return ssl_context(
            self.cadata, self.keypair, verify=self.verifies, check_hostname=self.mode == "verify_identity"
        )

    # ----------------------------------------------------------------------------------------- PyMySQL

    def pymysql_options(self) -> dict[str, Any]:
        """PyMySQL's TLS arguments for every mode but ``preferred`` with a client key (see
        :meth:`pymysql_connect`). ``preferred`` without one is PyMySQL's own default: TLS when the server
        offers it, certificate unchecked."""
        if self.mode == "disabled":
            return {"ssl_disabled": True}
        if self.mode == "preferred" and self.keypair is None:
            return {}
        return {"ssl": self.context()}

    def pymysql_connect(self, greeting_timeout: float | None = None, **kwargs: Any) -> Any:
        """``pymysql.connect(**kwargs)`` with this TLS; a ``pymysql_wrapper`` for python-mysql-replication,
        so the binlog connections are encrypted as the SQL ones are."""
        import pymysql

        if greeting_timeout is not None:
            # the timeout covers the server's greeting too (cdc.greeting); multi-statements off there too
            from cdc.greeting import pymysql_connect as greeted

            def pymysql_connect(**options: Any) -> Any:
                return greeted(greeting_timeout, **options)

        else:
            from cdc.drivers import pymysql_connect  # multi-statements off on every connection

        if self.mode == "preferred" and self.keypair is not None:
            # PyMySQL requires TLS whenever it is given a context: fall back by hand, and only when the
            # server offers no TLS at all (as Connector/J's PREFERRED does)
            try:
                return pymysql_connect(**kwargs, ssl=self.context())
            except pymysql.err.OperationalError as exc:
                if "server doesn't support" not in str(exc):
                    raise
                return pymysql_connect(**kwargs)
        return pymysql_connect(**kwargs, **self.pymysql_options())

    # ------------------------------------------------------------------------------ mysqlclient (C)

    @property
    def mysqlclient_usable(self) -> bool:
        """Whether libmariadb can give this mode: it verifies a CA only together with the host name, so
        ``verify_ca`` reads with PyMySQL."""
        return self.mode != "verify_ca"

    @contextlib.contextmanager
    def mysqlclient_options(self) -> Iterator[dict[str, Any]]:
        """mysqlclient's TLS arguments; the PEM files libmariadb reads live for the ``with`` block only.

        libmariadb's ``REQUIRED`` is Debezium's ``preferred`` (TLS when offered, else plain): ``required``
        is the same plus :meth:`check_encrypted` after connecting."""
        if self.mode == "disabled":
            yield {"ssl_mode": "DISABLED"}
            return
        options: dict[str, Any] = {"ssl_mode": "VERIFY_IDENTITY" if self.verifies else "REQUIRED"}
        ca = self.cadata if self.verifies else None  # libmariadb would check a CA it is given
        if ca is None and self.keypair is None:
            yield options
            return
        with PemFiles(prefix="cdc-mysql-tls-") as files:
            ssl_files: dict[str, str] = {}
            if ca is not None:
                ssl_files["ca"] = files.write("ca.pem", ca)
            if self.keypair is not None:
                ssl_files["cert"] = files.write("cert.pem", self.keypair.certificate_chain)
                ssl_files["key"] = files.write("key.pem", self.keypair.private_key)
            yield {**options, "ssl": ssl_files}

    def check_encrypted(self, conn: Any, where: str) -> None:
        """For ``required`` over mysqlclient: the session must be encrypted (libmariadb falls back to
        plain text when the server offers no TLS); nothing but the handshake has crossed yet."""
        if self.mode in ("disabled", "preferred"):
            return
        cur = conn.cursor()
        try:
            cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            row = cur.fetchone()
        finally:
            cur.close()
        if not row or not row[1]:
            conn.close()
            raise TlsDowngradeError(
                f"SSL is required but the server doesn't support it ({where}, database.ssl.mode={self.mode})"
            )

    # ------------------------------------------------------------------- MariaDB Connector/J (Spark)

    def jdbc_options(self, server_offers_tls: Callable[[], bool]) -> dict[str, str]:
        """MariaDB Connector/J's connection properties for this mode (as Spark reader options, never in
        the URL, which Spark logs). Connector/J has no ``preferred``: it is ``trust`` when the server
        offers TLS (``server_offers_tls`` asks), ``disable`` otherwise."""
        if self.mode == "disabled" or (self.mode == "preferred" and not server_offers_tls()):
            return {"sslMode": "disable"}
        mode = {"verify_ca": "verify-ca", "verify_identity": "verify-full"}.get(self.mode, "trust")
        options = {"sslMode": mode}
        if self.verifies and self.cadata is not None:
            options["serverSslCert"] = self.cadata  # the PEM itself: Connector/J takes it inline
        if self.keypair is not None:
            if self.jvm_keystore is None:
                raise ConfigError(
                    "the Spark snapshot's JDBC reader needs a JKS or PKCS12 key store, not PEM",
                    KEYSTORE.location,
                    "(a PEM file)",
                )
            path, password, kind = self.jvm_keystore
            options.update(keyStore=path, keyStorePassword=password, keyStoreType=kind)
        return options
