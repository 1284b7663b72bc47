"""JDBC URLs' TLS properties against servers of the tests' own with TLS on (a private MariaDB and a private
PostgreSQL, certificates from :mod:`tests.integration.tls_pki`), proved on the server side: MariaDB's
``Ssl_cipher`` of the session, PostgreSQL's ``pg_stat_ssl`` row for the connection's backend pid.

Users that only TLS admits: MariaDB ``tlsonly`` (``REQUIRE SSL``) and ``x509`` (``REQUIRE X509``: a client
certificate), PostgreSQL ``tlsonly`` (``hostssl`` only). 127.0.0.2 is loopback too, but the server's
certificate covers only localhost and 127.0.0.1: the host name mismatch.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from cdc.errors import ConfigError
from cdc.jdbc.connector import JdbcSourceConnector
from cdc.jdbc.dialects import Dialect, dialect_for
from cdc.jdbc.tls import TlsConnectError
from cdc.jdbc.url import parse_jdbc_url
from cdc.worker.runtime import ConnectRuntime, build_standalone
from tests.integration.private_mariadb import PrivateMariaDb
from tests.integration.private_postgres import PrivatePostgres
from tests.integration.tls_pki import make_pki

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def mariadb(pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDb]:
    server = PrivateMariaDb(
        tmp_path_factory.mktemp("mariadb-tls"),
        {
            "ssl_ca": str(pki / "ca.pem"),
            "ssl_cert": str(pki / "server.pem"),
            "ssl_key": str(pki / "server.key"),
            "bind-address": "127.0.0.1,127.0.0.2",
        },
    )
    server.start()
    try:
        with server.root_connection() as conn, conn.cursor() as cur:
            cur.execute("CREATE USER 'tlsonly'@'%' IDENTIFIED BY 'tlsonly' REQUIRE SSL")
            cur.execute("CREATE USER 'x509'@'%' IDENTIFIED BY 'x509' REQUIRE X509")
            cur.execute("CREATE DATABASE tlsdb")
            cur.execute("CREATE TABLE tlsdb.items (id INT PRIMARY KEY, name VARCHAR(20))")
            cur.execute("INSERT INTO tlsdb.items VALUES (1, 'one'), (2, 'two')")
            for user in ("tlsonly", "x509"):
                cur.execute(f"GRANT ALL ON tlsdb.* TO '{user}'@'%'")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def postgres(pki: Path) -> Iterator[PrivatePostgres]:
    server = PrivatePostgres(pki)
    try:
        server.start()
        with server.connect() as conn:
            conn.execute("CREATE TABLE items (id INT PRIMARY KEY, name TEXT)")
            conn.execute("INSERT INTO items VALUES (1, 'one'), (2, 'two')")
            conn.execute("GRANT SELECT ON items TO tlsonly")
        yield server
    finally:
        server.stop()


def _dialect(url: str, user: str | None, password: str | None) -> Dialect:
    return dialect_for(parse_jdbc_url(url).with_credentials(user, password), "", dt.UTC, True, "DEFAULT")


def _mariadb_cipher(url: str, user: str = "tlsonly", password: str = "tlsonly") -> str:
    dialect = _dialect(url, user, password)
    try:
        conn = dialect.connect()
        try:
            cur = conn.cursor()
            cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")  # the server's view of this session
            cipher = str(cur.fetchone()[1])
            cur.execute("SELECT COUNT(*) FROM tlsdb.items")
            assert cur.fetchone()[0] == 2
            return cipher
        finally:
            conn.close()
    finally:
        dialect.close()


def _mariadb_cipher_on(url: str, table: str) -> str:
    dialect = _dialect(url, None, None)  # the URL's own user and password
    try:
        conn = dialect.connect()
        try:
            cur = conn.cursor()
            cur.execute(f"SELECT COUNT(*) FROM {table}")
            cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            return str(cur.fetchone()[1])
        finally:
            conn.close()
    finally:
        dialect.close()


def _pg_ssl(server: PrivatePostgres, url: str, user: str = "tlsonly", password: str = "tlsonly") -> Any:
    dialect = _dialect(url, user, password)
    try:
        conn = dialect.connect()
        try:
            pid = conn.info.backend_pid
            assert conn.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 2
            with server.connect() as admin:  # another session reads this one's row
                return admin.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = %s", (pid,)).fetchone()
        finally:
            conn.close()
    finally:
        dialect.close()


# ------------------------------------------------------------------------------------------- MariaDB


def test_connector_j_default_is_preferred_and_negotiates_tls(mariadb: PrivateMariaDb) -> None:
    # Connector/J 8's default sslMode is PREFERRED: encrypted when the server offers TLS
    assert _mariadb_cipher(f"jdbc:mysql://127.0.0.1:{mariadb.port}/tlsdb", "cdc", "cdc-private")
    assert not _mariadb_cipher(
        f"jdbc:mysql://127.0.0.1:{mariadb.port}/tlsdb?useSSL=false", "cdc", "cdc-private"
    )
    # MariaDB Connector/J's default is disable
    assert not _mariadb_cipher(f"jdbc:mariadb://127.0.0.1:{mariadb.port}/tlsdb", "cdc", "cdc-private")


@pytest.mark.parametrize(
    "query",
    [
        "sslMode=REQUIRED",
        "requireSSL=true",
        "sslMode=VERIFY_CA&trustCertificateKeyStoreUrl=file:{pki}/trust.jks"
        "&trustCertificateKeyStorePassword=trustpass",
        "sslMode=VERIFY_IDENTITY&trustCertificateKeyStoreUrl=file://{pki}/trust.p12"
        "&trustCertificateKeyStorePassword=trustpass&trustCertificateKeyStoreType=PKCS12",
        "useSSL=true&verifyServerCertificate=true&trustCertificateKeyStoreUrl=file:{pki}/trust.jks"
        "&trustCertificateKeyStorePassword=trustpass",
    ],
)
def test_connector_j_tls_modes_encrypt(mariadb: PrivateMariaDb, pki: Path, query: str) -> None:
    url = f"jdbc:mysql://localhost:{mariadb.port}/tlsdb?" + query.format(pki=pki)
    assert _mariadb_cipher(url).startswith("TLS")


@pytest.mark.parametrize(
    "query",
    [
        "sslMode=trust",
        "sslMode=verify-full&serverSslCert={pki}/ca.pem",
        "sslMode=verify-full&serverSslCert={pki}/server.pem",  # the server's own certificate
        "useSsl=true&trustStore={pki}/trust.jks&trustStorePassword=trustpass",
        "useSSL=true&trustServerCertificate=true",
    ],
)
def test_mariadb_connector_j_tls_modes_encrypt(mariadb: PrivateMariaDb, pki: Path, query: str) -> None:
    url = f"jdbc:mariadb://localhost:{mariadb.port}/tlsdb?" + query.format(pki=pki)
    assert _mariadb_cipher(url).startswith("TLS")


def test_client_certificate_from_java_key_stores(mariadb: PrivateMariaDb, pki: Path) -> None:
    mysql = (
        f"jdbc:mysql://localhost:{mariadb.port}/tlsdb?sslMode=VERIFY_IDENTITY"
        f"&trustCertificateKeyStoreUrl=file:{pki}/trust.jks&trustCertificateKeyStorePassword=trustpass"
        f"&clientCertificateKeyStoreUrl=file:{pki}/client.jks&clientCertificateKeyStorePassword=keypass"
    )
    assert _mariadb_cipher(mysql, "x509", "x509")
    mariadb_url = (
        f"jdbc:mariadb://localhost:{mariadb.port}/tlsdb?sslMode=trust"
        f"&keyStore={pki}/client.p12&keyStorePassword=keypass"
    )
    assert _mariadb_cipher(mariadb_url, "x509", "x509")
    with pytest.raises(Exception, match="Access denied"):  # without the certificate: refused
        _mariadb_cipher(f"jdbc:mysql://localhost:{mariadb.port}/tlsdb?sslMode=REQUIRED", "x509", "x509")


def test_verify_failures_are_clear_and_not_retried(mariadb: PrivateMariaDb, pki: Path) -> None:
    trust = f"&trustCertificateKeyStoreUrl=file:{pki}/trust.jks&trustCertificateKeyStorePassword=trustpass"
    # the system's CAs do not know the test CA
    with pytest.raises(TlsConnectError, match=r"sslMode=VERIFY_CA.*certificate verify failed"):
        _mariadb_cipher(f"jdbc:mysql://localhost:{mariadb.port}/tlsdb?sslMode=VERIFY_CA")
    # 127.0.0.2 is not in the certificate: VERIFY_IDENTITY fails, VERIFY_CA (no host check) connects
    with pytest.raises(TlsConnectError, match=r"127\.0\.0\.2"):
        _mariadb_cipher(f"jdbc:mysql://127.0.0.2:{mariadb.port}/tlsdb?sslMode=VERIFY_IDENTITY{trust}")
    assert _mariadb_cipher(f"jdbc:mysql://127.0.0.2:{mariadb.port}/tlsdb?sslMode=VERIFY_CA{trust}")
    with pytest.raises(ConfigError, match="trustCertificateKeyStorePassword") as info:
        _mariadb_cipher(
            f"jdbc:mysql://localhost:{mariadb.port}/tlsdb?sslMode=VERIFY_CA"
            + trust.replace("=trustpass", "=nope")
        )
    assert "nope" not in str(info.value)


def test_required_against_a_server_without_tls_fails(tmp_path: Path) -> None:
    # a server without TLS: REQUIRED must not fall back to plain text (libmariadb would), PREFERRED does
    server = PrivateMariaDb(tmp_path / "plain").start()
    try:
        with server.root_connection() as conn, conn.cursor() as cur:
            cur.execute("CREATE DATABASE tlsdb")
            cur.execute("CREATE TABLE tlsdb.items (id INT PRIMARY KEY)")
            cur.execute("INSERT INTO tlsdb.items VALUES (1), (2)")
        url = f"jdbc:mysql://127.0.0.1:{server.port}/tlsdb"
        for query in ("?sslMode=REQUIRED", "?useSSL=true&requireSSL=true"):
            with pytest.raises(TlsConnectError, match=r"did not encrypt|doesn't support"):
                _mariadb_cipher(url + query, server.user, server.password)
        assert _mariadb_cipher(url, server.user, server.password) == ""
        with pytest.raises(TlsConnectError, match=r"doesn't support"):  # PyMySQL, before the login
            _mariadb_cipher(url + "?sslMode=VERIFY_CA", server.user, server.password)
    finally:
        server.stop()


# ------------------------------------------------------------------------------------------ PostgreSQL


def test_pgjdbc_modes(postgres: PrivatePostgres, pki: Path) -> None:
    base = f"jdbc:postgresql://localhost:{postgres.port}/cdc"
    # pgJDBC's default is prefer: encrypted when the server offers it
    assert _pg_ssl(postgres, base)[0] is True
    assert _pg_ssl(postgres, f"{base}?sslmode=disable", "cdc", "cdc")[0] is False
    assert _pg_ssl(postgres, f"{base}?sslmode=require")[0] is True
    row = _pg_ssl(postgres, f"{base}?sslmode=verify-full&sslrootcert={pki}/ca.pem")
    assert row[0] is True and row[1].startswith("TLS")
    assert _pg_ssl(postgres, f"{base}?ssl=true&sslrootcert={pki}/ca.pem")[0] is True
    assert _pg_ssl(postgres, f"{base}?ssl=true&sslfactory=org.postgresql.ssl.NonValidatingFactory")[0] is True
    # a client certificate as pgJDBC takes it: PKCS-8 DER (.pk8) or PKCS-12
    assert _pg_ssl(
        postgres,
        f"{base}?sslmode=verify-ca&sslrootcert={pki}/ca.pem&sslcert={pki}/client.pem&sslkey={pki}/client.pk8",
    )[0]
    assert _pg_ssl(
        postgres,
        f"{base}?sslmode=verify-ca&sslrootcert={pki}/ca.pem&sslkey={pki}/client.p12&sslpassword=keypass",
    )[0]


def test_pg_host_name_mismatch_and_plain_refused(postgres: PrivatePostgres, pki: Path) -> None:
    url = f"jdbc:postgresql://127.0.0.2:{postgres.port}/cdc?sslmode=verify-full&sslrootcert={pki}/ca.pem"
    with pytest.raises(TlsConnectError, match=r"127\.0\.0\.2"):
        _pg_ssl(postgres, url)
    assert _pg_ssl(postgres, url.replace("verify-full", "verify-ca"))[0] is True
    with pytest.raises(TlsConnectError, match="no encryption"):  # the hostssl-only role
        _pg_ssl(postgres, f"jdbc:postgresql://localhost:{postgres.port}/cdc?sslmode=disable")


# ------------------------------------------------------------------------- validate and a running task


def _props(url: str, user: str, password: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": url,
        "connection.user": user,
        "connection.password": password,
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "topic.prefix": "tls-",
        "tasks.max": "1",
    }


def _url_errors(props: dict[str, str]) -> list[str]:
    values = JdbcSourceConnector().validate(props)
    return next(v.errors for v in values if v.name == "connection.url")


def test_validate_names_the_property(postgres: PrivatePostgres, mariadb: PrivateMariaDb, pki: Path) -> None:
    pg = f"jdbc:postgresql://127.0.0.2:{postgres.port}/cdc?sslmode=verify-full&sslrootcert={pki}/ca.pem"
    (error,) = _url_errors(_props(pg, "tlsonly", "tlsonly"))
    assert "sslmode=verify-full" in error and "127.0.0.2" in error
    assert _url_errors(_props(pg.replace("127.0.0.2", "localhost"), "tlsonly", "tlsonly")) == []
    (error,) = _url_errors(_props(pg + "&sslMode=require", "tlsonly", "tlsonly"))
    assert "sslMode" in error and "sslmode" in error  # the driver's spelling is suggested
    mysql = f"jdbc:mysql://localhost:{mariadb.port}/tlsdb?sslMode=VERIFY_CA&trustCertificateKeyStoreUrl=file:{pki}/nope.jks"
    (error,) = _url_errors(_props(mysql, "tlsonly", "tlsonly"))
    assert "trustCertificateKeyStoreUrl" in error and "No such file" in error


@pytest.fixture
def worker(tmp_path: Path, kafka: Any) -> Iterator[ConnectRuntime]:
    runtime = build_standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "listeners": "http://127.0.0.1:0",
        }
    )
    runtime.start()
    try:
        yield runtime
    finally:
        runtime.stop()


def test_connector_over_verified_tls_and_400_on_mismatch(
    worker: ConnectRuntime, kafka: Any, mariadb: PrivateMariaDb, pki: Path
) -> None:
    base = worker.url.rstrip("/")
    prefix = kafka.prefix
    url = (
        f"jdbc:mysql://127.0.0.2:{mariadb.port}/tlsdb?sslMode=VERIFY_IDENTITY"
        f"&trustCertificateKeyStoreUrl=file:{pki}/trust.jks&trustCertificateKeyStorePassword=trustpass"
    )
    config = {**_props(url, "tlsonly", "tlsonly"), "topic.prefix": prefix, "table.whitelist": "items"}
    unknown = {**config, "connection.url": url + "&zeroDateTimeBehavior=convertToNull"}
    answer = requests.post(f"{base}/connectors", json={"name": "tls-unknown", "config": unknown}, timeout=60)
    assert answer.status_code == 400 and "zeroDateTimeBehavior" in answer.json()["message"], answer.text
    answer = requests.post(f"{base}/connectors", json={"name": "tls-bad", "config": config}, timeout=60)
    assert answer.status_code == 400, answer.text
    assert "connection.url" in answer.json()["message"] and "127.0.0.2" in answer.json()["message"]
    assert (
        "trustpass" not in answer.text
        and "tlsonly" not in answer.json()["message"].split("127.0.0.2")[0][-40:]
    )

    config["connection.url"] = url.replace("127.0.0.2", "localhost")
    answer = requests.post(f"{base}/connectors", json={"name": "tls-good", "config": config}, timeout=60)
    assert answer.status_code in (200, 201), answer.text
    topic = f"{prefix}items"
    deadline = time.monotonic() + 60
    values: list[Any] = []
    while time.monotonic() < deadline and len(values) < 2:
        if topic in kafka.admin.list_topics(timeout=10).topics:
            values = [json.loads(m.value()) for m in kafka.read_to_end(topic, timeout=10)]
        time.sleep(0.5)
    assert [v["payload"]["name"] for v in values] == ["one", "two"]


# ------------------------------------------------------------- the stack's TLS servers and TLS-only users


def test_seed_jdbc_config_with_verify_identity_as_the_tls_only_user(
    worker: ConnectRuntime, kafka: Any, stack: Any, stack_tls: Any
) -> None:
    """jdbc-incrementing.properties unchanged but for the URL's TLS properties (the Java user's JKS trust
    store) and the stack's REQUIRE SSL user; the records arrive and the server saw TLS."""
    import pymysql

    from cdc.worker.properties import load_properties

    props = load_properties(
        Path(__file__).resolve().parents[2] / "tests/fixtures/seed-configs/jdbc-incrementing.properties"
    )
    name = props.pop("name")
    assert props["connection.url"] == "jdbc:mysql://localhost:3306/kafkadb?user=kafka&password=kafka123"
    props["connection.url"] = (
        f"jdbc:mysql://localhost:{stack.mysql_port}/kafkadb?user={stack_tls.user}&password={stack_tls.password}"
        f"&sslMode=VERIFY_IDENTITY&trustCertificateKeyStoreUrl=file:{stack_tls.path('truststore.jks')}"
        f"&trustCertificateKeyStorePassword={stack_tls.store_password}"
    )
    props["topic.prefix"] = kafka.prefix + props["topic.prefix"]
    admin = pymysql.connect(
        host="127.0.0.1", port=stack.mysql_port, user="cdc", password="cdc", autocommit=True
    )
    with admin, admin.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM kafkadb.orders")
        if cur.fetchone()[0] == 0:  # the seed tables as `stack.sh seed-tables` left them: empty
            cur.execute("INSERT INTO kafkadb.orders(name, product) VALUES ('tls', 'computer')")
        cur.execute("SELECT COUNT(*) FROM kafkadb.orders")
        rows = cur.fetchone()[0]
    base = worker.url.rstrip("/")
    answer = requests.post(f"{base}/connectors", json={"name": name, "config": props}, timeout=60)
    assert answer.status_code in (200, 201), answer.text
    topic = props["topic.prefix"] + "orders"
    deadline = time.monotonic() + 60
    values: list[Any] = []
    while time.monotonic() < deadline and len(values) < max(rows, 1):
        if topic in kafka.admin.list_topics(timeout=10).topics:
            values = list(kafka.read_to_end(topic, timeout=10))
        time.sleep(0.5)
    assert rows and len(values) == rows
    # the same URL: the server reports the session encrypted
    assert _mariadb_cipher_on(props["connection.url"], "kafkadb.orders")


def test_stack_postgres_verify_full_as_the_hostssl_only_role(stack_tls: Any) -> None:
    port = int(os.environ.get("CDC_POSTGRES_PORT", "5432"))
    url = f"jdbc:postgresql://localhost:{port}/cdc?sslmode=verify-full&sslrootcert={stack_tls.ca}"
    dialect = _dialect(url, stack_tls.user, stack_tls.password)
    try:
        conn = dialect.connect()
        try:
            row = conn.execute(
                "SELECT ssl, version FROM pg_stat_ssl WHERE pid = %s", (conn.info.backend_pid,)
            ).fetchone()
        finally:
            conn.close()
    finally:
        dialect.close()
    assert row[0] is True and row[1].startswith("TLS")
