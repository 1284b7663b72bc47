"""Every property a JDBC URL may carry, per driver (:data:`CATALOG`), with what it does here.

Read by :mod:`cdc.jdbc.url_properties`, which refuses any property not listed; ``docs/jdbc.md`` lists the
same tables (kept in step by hand).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ACCEPTED",
    "CATALOG",
    "CONNECTOR_J_ONLY",
    "HIDDEN_PROPERTIES",
    "HONOURED",
    "MARIADB_ONLY",
]

# Status of each property: TLS and the others we apply are "honoured"; "accepted" ones change nothing
# that a source connector's reads could see (statement caches, batching of writes, logging) and are
# documented as such; anything else is refused. Values: (status, what it does here).
HONOURED, ACCEPTED = "honoured", "accepted"

_MYSQL_COMMON: dict[str, tuple[str, str]] = {
    "user": (HONOURED, "the user (connection.user wins)"),
    "password": (HONOURED, "the password (connection.password wins)"),
    "connectTimeout": (HONOURED, "connection timeout in milliseconds (0: the default, 10 s)"),
    "socketTimeout": (HONOURED, "read/write timeout in milliseconds (0: none)"),
    "tcpKeepAlive": (ACCEPTED, "TCP keep-alives are always on"),
    "allowPublicKeyRetrieval": (ACCEPTED, "the drivers retrieve the server's RSA key for caching_sha2"),
    "useServerPrepStmts": (ACCEPTED, "statement preparation is the driver's business"),
    "cachePrepStmts": (ACCEPTED, "a statement cache"),
    "prepStmtCacheSize": (ACCEPTED, "a statement cache"),
    "prepStmtCacheSqlLimit": (ACCEPTED, "a statement cache"),
    "rewriteBatchedStatements": (ACCEPTED, "batched writes only"),
    "defaultFetchSize": (ACCEPTED, "rows are always streamed (batch.max.rows)"),
}

_CONNECTOR_J: dict[str, tuple[str, str]] = {
    **_MYSQL_COMMON,
    "sslMode": (HONOURED, "DISABLED, PREFERRED (default), REQUIRED, VERIFY_CA, VERIFY_IDENTITY"),
    "useSSL": (HONOURED, "legacy: false = DISABLED (used only without sslMode)"),
    "requireSSL": (HONOURED, "legacy: true = REQUIRED (used only without sslMode)"),
    "verifyServerCertificate": (HONOURED, "legacy: true = VERIFY_CA (used only without sslMode)"),
    "trustCertificateKeyStoreUrl": (HONOURED, "trust store (file: URL or path; JKS, PKCS12 or PEM)"),
    "trustCertificateKeyStorePassword": (HONOURED, "its password"),
    "trustCertificateKeyStoreType": (HONOURED, "JKS (default), PKCS12 or PEM; the content decides"),
    "clientCertificateKeyStoreUrl": (HONOURED, "client certificate and key store"),
    "clientCertificateKeyStorePassword": (HONOURED, "its password (also the key's)"),
    "clientCertificateKeyStoreType": (HONOURED, "JKS (default), PKCS12 or PEM; the content decides"),
    "fallbackToSystemTrustStore": (HONOURED, "false: verifying modes need trustCertificateKeyStoreUrl"),
    "fallbackToSystemKeyStore": (ACCEPTED, "there is no system key store here"),
    "serverTimezone": (HONOURED, "must name the zone of db.timezone (the session's zone)"),
    "connectionTimeZone": (HONOURED, "must name the zone of db.timezone (the session's zone)"),
    "useCursorFetch": (ACCEPTED, "rows are always streamed"),
    "useUnicode": (ACCEPTED, "connections are always utf8mb4"),
    "characterEncoding": (HONOURED, "only UTF-8 (utf8, utf8mb4): connections are utf8mb4"),
    "useLegacyDatetimeCode": (ACCEPTED, "ignored by Connector/J 8 too"),
    "useJDBCCompliantTimezoneShift": (ACCEPTED, "ignored by Connector/J 8 too"),
    "nullCatalogMeansCurrent": (
        HONOURED,
        "only false (Connector/J 8's default): tables of the URL's database",
    ),
}

_MARIADB_J: dict[str, tuple[str, str]] = {
    **_MYSQL_COMMON,
    "sslMode": (HONOURED, "disable (default), trust, verify-ca, verify-full"),
    "useSsl": (HONOURED, "legacy: true = verify-full (used only without sslMode)"),
    "useSSL": (HONOURED, "alias of useSsl"),
    "trustServerCertificate": (HONOURED, "legacy, with useSsl: trust"),
    "disableSslHostnameVerification": (HONOURED, "legacy, with useSsl: verify-ca"),
    "serverSslCert": (HONOURED, "the CA or server certificate: a path, file: URL or the PEM text"),
    "trustStore": (HONOURED, "trust store (path or file: URL; JKS, PKCS12 or PEM)"),
    "trustStorePassword": (HONOURED, "its password"),
    "trustStoreType": (HONOURED, "the content decides"),
    "keyStore": (HONOURED, "client certificate and key store"),
    "keyStorePassword": (HONOURED, "its password"),
    "keyPassword": (HONOURED, "the key's password when it differs"),
    "keyStoreType": (HONOURED, "the content decides"),
    "permitMysqlScheme": (ACCEPTED, "jdbc:mysql: URLs are read as Connector/J's anyway"),
    "useBulkStmts": (ACCEPTED, "batched writes only"),
}

_PGJDBC: dict[str, tuple[str, str]] = {
    "user": (HONOURED, "the user (connection.user wins)"),
    "password": (HONOURED, "the password (connection.password wins)"),
    "ssl": (HONOURED, "without sslmode: present or true = verify-full"),
    "sslmode": (HONOURED, "disable, allow, prefer (default), require, verify-ca, verify-full"),
    "sslrootcert": (HONOURED, "CA certificates, PEM (default ~/.postgresql/root.crt)"),
    "sslcert": (HONOURED, "client certificate, PEM"),
    "sslkey": (HONOURED, "client key: PEM, PKCS-8 DER (.pk8) or PKCS-12 (.p12/.pfx, with its certificate)"),
    "sslpassword": (HONOURED, "the key's (or PKCS-12 store's) password"),
    "sslfactory": (HONOURED, "NonValidatingFactory (no verification) or DefaultJavaSSLFactory (system CAs)"),
    "connectTimeout": (HONOURED, "connection timeout in seconds (0: the default, 10 s)"),
    "socketTimeout": (ACCEPTED, "pgJDBC's read timeout; libpq has none (the server's statement_timeout)"),
    "loginTimeout": (HONOURED, "as connectTimeout"),
    "ApplicationName": (HONOURED, "application_name of the session"),
    "currentSchema": (HONOURED, "the session's search_path"),
    "tcpKeepAlive": (HONOURED, "TCP keep-alives"),
    "prepareThreshold": (ACCEPTED, "statement preparation is the driver's business"),
    "preparedStatementCacheQueries": (ACCEPTED, "a statement cache"),
    "preparedStatementCacheSizeMiB": (ACCEPTED, "a statement cache"),
    "defaultRowFetchSize": (ACCEPTED, "rows are always streamed (batch.max.rows)"),
    "reWriteBatchedInserts": (ACCEPTED, "batched writes only"),
    "binaryTransfer": (ACCEPTED, "the wire format is the driver's business"),
    "loggerLevel": (ACCEPTED, "pgJDBC's own logging"),
    "loggerFile": (ACCEPTED, "pgJDBC's own logging"),
    "assumeMinServerVersion": (ACCEPTED, "a connection-time optimisation"),
    "readOnly": (ACCEPTED, "the source only reads"),
}

CATALOG: Mapping[str, Mapping[str, tuple[str, str]]] = {
    "mysql": _CONNECTOR_J,
    "mariadb": _MARIADB_J,
    "postgresql": _PGJDBC,
}
"""Per subprotocol: every property read from a URL, with its status and meaning here."""

HIDDEN_PROPERTIES = frozenset(
    {
        "password",
        "trustCertificateKeyStorePassword",
        "clientCertificateKeyStorePassword",
        "trustStorePassword",
        "keyStorePassword",
        "keyPassword",
        "sslpassword",
    }
)
"""Properties whose values never appear in a message."""

MARIADB_ONLY = {k for k in _MARIADB_J if k not in _CONNECTOR_J}
CONNECTOR_J_ONLY = {k for k in _CONNECTOR_J if k not in _MARIADB_J}
