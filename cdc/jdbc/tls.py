"""A JDBC URL's TLS settings (:class:`~cdc.jdbc.url_properties.UrlTls`) made into driver arguments.

The stores are read once per dialect (:mod:`cdc.keystores`: JKS, JCEKS, PKCS12 or PEM, whatever the
declared type) and, where a driver only takes paths, written to a private :class:`~cdc.keystores.PemFiles`
directory that :meth:`JdbcTls.close` deletes.

* PostgreSQL (psycopg, libpq): libpq has pgJDBC's modes under the same names; ``sslrootcert``/``sslcert``
  are passed as they are when PEM, a PKCS-8 DER or PKCS-12 ``sslkey`` is converted to PEM;
  ``DefaultJavaSSLFactory`` is ``sslrootcert=system``.
* MySQL/MariaDB: the modes that verify the server (VERIFY_CA, VERIFY_IDENTITY, verify-ca, verify-full)
  connect through PyMySQL with an ``ssl.SSLContext``: Python's ``ssl`` checks the CA alone or the CA and the
  URL's host name exactly as asked, and PyMySQL refuses a server without TLS before it sends the login.
  mysqlclient (libmariadb 3.3) cannot: its VERIFY_CA also checks the host name, it would check it against
  127.0.0.1 for ``localhost``, and its ``ssl_mode=REQUIRED`` silently falls back to plain text on a
  server without TLS. So the modes that do not verify keep the fast driver: PREFERRED asks libmariadb for
  TLS (``ssl_mode=REQUIRED``, which negotiates it when offered and otherwise goes on in plain text, which is
  what PREFERRED allows); REQUIRED does the same, then reads ``Ssl_cipher`` and refuses the connection
  when it is not encrypted.
"""

from __future__ import annotations

import logging
import ssl
from typing import Any

from cdc.errors import ConfigError, ConnectError
from cdc.jdbc.url_properties import URL_KEY, StoreRef, TlsMode, UrlTls
from cdc.keystores import KeyPair, PemFiles, StoreKeys, read_keystore, read_truststore

__all__ = ["JdbcTls", "TlsConnectError", "is_tls_failure"]

log = logging.getLogger(__name__)


class TlsConnectError(ConnectError):
    """The connection failed on TLS (certificate, host name, TLS not offered or refused): a configuration
    problem, reported by validate on ``connection.url`` and never retried."""


def _url_error(exc: ConfigError, ref: StoreRef) -> ConfigError:
    """A store's error re-stated on ``connection.url``, naming the URL property (never its password)."""
    name = exc.name or ref.location_property
    text = str(exc)
    marker = f"for configuration {exc.name}: "
    reason = text.split(marker, 1)[1] if exc.name and marker in text else text
    shown = "[hidden]" if name == ref.password_property or ref.inline_pem else ref.location
    return ConfigError(f"URL property {name}: {reason}", URL_KEY, f"{name}={shown}")


def _keys(ref: StoreRef) -> StoreKeys:
    return StoreKeys(ref.location_property, ref.password_property or ref.location_property)


class JdbcTls:
    """The loaded TLS material of one URL; :meth:`close` removes the files written for the drivers."""

    def __init__(self, tls: UrlTls, host: str) -> None:
        self.tls = tls
        self.host = host
        self._files: PemFiles | None = None
        self.cadata: str | None = None
        self.keypair: KeyPair | None = None
        self._ca_path: str | None = None
        self._cert_path: str | None = None
        self._key_path: str | None = None
        self._load()

    @property
    def mode(self) -> TlsMode:
        return self.tls.mode

    def _pem_files(self) -> PemFiles:
        if self._files is None:
            self._files = PemFiles(prefix="cdc-jdbc-tls-")
        return self._files

    def _load(self) -> None:
        tls = self.tls
        if tls.mode is TlsMode.DISABLE:
            return
        trust = tls.truststore
        if trust is not None:
            try:
                if trust.inline_pem:
                    from cryptography import x509
                    from cryptography.hazmat.primitives import serialization

                    try:
                        certs = x509.load_pem_x509_certificates(trust.location.encode())
                    except ValueError as exc:
                        raise ConfigError(f"not a PEM certificate: {exc}", trust.location_property) from None
                    self.cadata = "".join(
                        c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in certs
                    )
                else:
                    self.cadata = read_truststore(trust.location, trust.password, _keys(trust))
            except ConfigError as exc:
                raise _url_error(exc, trust) from None
        key = tls.keystore
        if key is None:
            return
        if key.location_property == "sslkey" and not _is_pkcs12(key.location):
            self._check_pg_key(key)  # a bare key, PEM or PKCS-8 DER, as pgJDBC's sslkey
            return
        try:
            self.keypair = read_keystore(key.location, key.password, _keys(key), key.key_password)
        except ConfigError as exc:
            raise _url_error(exc, key) from None

    def _check_pg_key(self, key: StoreRef) -> None:
        from cryptography.hazmat.primitives import serialization

        data = _read_key(key)
        secret = key.password.encode() if key.password else None
        pem = data.lstrip().startswith(b"-----BEGIN")
        try:
            private = (
                serialization.load_pem_private_key(data, secret)
                if pem
                else serialization.load_der_private_key(data, secret)
            )
        except (TypeError, ValueError) as exc:
            wrong_password = key.password is not None or "encrypt" in str(exc).lower()
            prop = "sslpassword" if wrong_password else "sslkey"
            raise ConfigError(
                f"URL property {prop}: cannot read the private key in {key.location} (PEM or PKCS-8 DER; "
                "wrong or missing sslpassword?)",
                URL_KEY,
                "sslpassword=[hidden]" if prop == "sslpassword" else f"sslkey={key.location}",
            ) from None
        if not pem:  # pgJDBC's .pk8 is PKCS-8 DER; libpq reads PEM only
            text = private.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ).decode("ascii")
            self._key_path = self._pem_files().write("client.key", text)

    # -- PostgreSQL ------------------------------------------------------------------------------------
    def psycopg_kwargs(self) -> dict[str, Any]:
        tls = self.tls
        out: dict[str, Any] = {"sslmode": tls.mode.value}
        if tls.mode is TlsMode.DISABLE:
            return out
        if tls.system_trust:
            out["sslrootcert"] = "system"
        elif tls.truststore is not None:
            out["sslrootcert"] = tls.truststore.location
        if tls.pg_cert is not None:
            out["sslcert"] = tls.pg_cert.location
        key = tls.keystore
        if key is not None:
            if self.keypair is not None:  # PKCS-12: its certificate replaces sslcert, as in pgJDBC
                files = self._pem_files()
                out["sslcert"] = self._cert_path = self._cert_path or files.write(
                    "client.pem", self.keypair.certificate_chain
                )
                out["sslkey"] = self._key_path = self._key_path or files.write(
                    "client.key", self.keypair.private_key
                )
            elif self._key_path is not None:  # the PKCS-8 DER key, converted to PEM
                out["sslkey"] = self._key_path
            else:
                out["sslkey"] = key.location
                if key.password:
                    out["sslpassword"] = key.password
        return out

    # -- MySQL / MariaDB -------------------------------------------------------------------------------
    @property
    def needs_pymysql(self) -> bool:
        """Whether the mode verifies the server, which only PyMySQL does as asked (see the module doc)."""
        return self.tls.mode.verify

    def ssl_context(self) -> ssl.SSLContext:
        tls = self.tls
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if tls.mode.verify:
            context.verify_mode = ssl.CERT_REQUIRED
            if self.cadata is not None:
                context.load_verify_locations(cadata=self.cadata)
            else:
                context.load_default_certs(ssl.Purpose.SERVER_AUTH)
            if tls.partial_chain:  # MariaDB's serverSslCert may be the server's own certificate
                context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
            context.check_hostname = tls.mode is TlsMode.VERIFY_FULL
        else:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.keypair is not None:
            cert, key = self._client_files()
            context.load_cert_chain(cert, key)
        return context

    def _client_files(self) -> tuple[str, str]:
        assert self.keypair is not None
        if self._cert_path is None or self._key_path is None:
            files = self._pem_files()
            self._cert_path = files.write("client.pem", self.keypair.certificate_chain)
            self._key_path = files.write("client.key", self.keypair.private_key)
        return self._cert_path, self._key_path

    def pymysql_kwargs(self) -> dict[str, Any]:
        mode = self.tls.mode
        if mode is TlsMode.DISABLE:
            return {"ssl_disabled": True}
        if mode is TlsMode.PREFER and self.keypair is None:
            return {}  # PyMySQL's own PREFERRED: TLS, unverified, when the server offers it
        # an SSLContext makes PyMySQL require TLS: it refuses a server without it before the login
        return {"ssl": self.ssl_context()}

    def mysqlclient_kwargs(self) -> dict[str, Any]:
        mode = self.tls.mode
        if mode is TlsMode.DISABLE:
            return {"ssl_mode": "DISABLED"}
        out: dict[str, Any] = {"ssl_mode": "REQUIRED"}
        if self.keypair is not None:
            cert, key = self._client_files()
            out["ssl"] = {"cert": cert, "key": key}
        return out

    def check_encrypted(self, conn: Any) -> None:
        """REQUIRED over mysqlclient: refuse a connection libmariadb left in plain text."""
        if self.tls.mode is not TlsMode.REQUIRE:
            return
        cur = conn.cursor()
        try:
            cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            row = cur.fetchone()
        finally:
            cur.close()
        if not row or not row[1]:
            conn.close()
            raise TlsConnectError(
                f"The server at {self.host} did not encrypt the connection, and the URL's {self.tls.source} "
                "requires TLS: enable TLS on the server, or lower the mode"
            )

    def close(self) -> None:
        if self._files is not None:
            self._files.close()
            self._files = None
            self._cert_path = self._key_path = None


def _is_pkcs12(location: str) -> bool:
    return location.lower().endswith((".p12", ".pfx"))


def _read_key(key: StoreRef) -> bytes:
    try:
        with open(key.location, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigError(
            f"URL property {key.location_property}: cannot read the key: {exc.strerror or exc}",
            URL_KEY,
            f"{key.location_property}={key.location}",
        ) from None


_MYSQL_TLS_CODES = (2026,)  # CR_SSL_CONNECTION_ERROR (libmariadb and PyMySQL)
_PG_TLS_PHRASES = ("SSL", "certificate", "does not match host name", "no encryption")


def is_tls_failure(exc: BaseException) -> bool:
    """Whether a driver's connection error is about TLS (a certificate, a host name, TLS not offered or
    refused): a configuration problem that trying again cannot fix. By error code where the driver has one
    (the message also carries user and host names, which may contain anything)."""
    if isinstance(exc, ssl.SSLError):
        return True
    args = getattr(exc, "args", ())
    if args and isinstance(args[0], int):  # MySQLdb / PyMySQL: (code, message)
        message = str(args[1]) if len(args) > 1 else ""
        return args[0] in _MYSQL_TLS_CODES or (args[0] == 2003 and "[SSL" in message)
    text = str(exc)
    return any(phrase in text for phrase in _PG_TLS_PHRASES)
