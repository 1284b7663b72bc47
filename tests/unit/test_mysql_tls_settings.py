"""cdc.mysql.tls: database.ssl.mode's meaning for each client, the JDBC driver's TLS keys, validate errors.

The connections themselves are proven against a TLS server in tests/integration/test_mysql_tls.py."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import pytest

from cdc.mysql.config import MySqlSettings
from cdc.mysql.tls import MySqlTls, driver_tls_errors, effective_mode, tls_error_key
from cdc.mysql.validation import validate_mysql

BASE = {
    "connector.class": "io.debezium.connector.mysql.MySqlConnector",
    "database.hostname": "db.example.com",
    "database.user": "u",
    "database.password": "p",
    "database.server.id": "5",
    "topic.prefix": "t",
    "schema.history.internal.kafka.topic": "h",
}


def _errors(props: dict[str, str]) -> dict[str, list[str]]:
    return {v.name: v.errors for v in validate_mysql({**BASE, **props}) if v.errors}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("stores")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ca",
         "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        ["keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(d / "ca.pem"), "-keystore",
         str(d / "trust.jks"), "-storetype", "JKS", "-storepass", "secret1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return d


@pytest.mark.parametrize(
    ("props", "mode"),
    [
        ({}, "preferred"),  # Debezium's default
        ({"database.ssl.mode": "VERIFY_IDENTITY"}, "verify_identity"),
        ({"database.ssl.mode": "trust"}, "required"),  # the MariaDB connector's names
        ({"database.ssl.mode": "verify-full"}, "verify_identity"),
        ({"database.ssl.mode": "disable"}, "disabled"),
        ({"database.useSSL": "false"}, "disabled"),  # Connector/J 5.1 properties Debezium passed on
        ({"database.useSSL": "true"}, "preferred"),
        ({"database.useSSL": "true", "database.requireSSL": "true"}, "required"),
        ({"driver.useSSL": "true", "driver.verifyServerCertificate": "true"}, "verify_ca"),
        ({"driver.sslMode": "VERIFY_IDENTITY"}, "verify_identity"),
        ({"database.sslMode": "verify-ca"}, "verify_ca"),
        ({"database.sslMode": "REQUIRED", "database.ssl.mode": "required"}, "required"),
    ],
)
def test_effective_mode(props: dict[str, str], mode: str) -> None:
    assert effective_mode(props) == mode
    assert _errors(props) == {}
    assert MySqlSettings.parse({**BASE, **props}).tls.mode == mode


def test_driver_mode_conflicting_with_database_ssl_mode_is_refused() -> None:
    errors = _errors({"database.useSSL": "false", "database.ssl.mode": "verify_identity"})
    assert list(errors) == ["database.useSSL"]
    assert "conflicts with database.ssl.mode=verify_identity" in errors["database.useSSL"][0]
    assert "database.sslMode" in _errors({"database.sslMode": "sometimes"})


@pytest.mark.parametrize(
    "key",
    [
        "database.trustCertificateKeyStoreUrl",
        "driver.clientCertificateKeyStorePassword",
        "database.serverSslCert",
        "driver.enabledTLSProtocols",
        "database.trustStore",
    ],
)
def test_driver_key_stores_are_refused_naming_the_key(key: str) -> None:
    errors = _errors({key: "x"})
    assert key in errors and "database.ssl.truststore" in errors[key][0]
    assert key in driver_tls_errors({key: "x"})


def test_unrelated_driver_properties_are_still_accepted() -> None:
    assert _errors({"database.allowPublicKeyRetrieval": "true", "driver.connectTimeout": "5"}) == {}


def test_store_errors_are_on_their_keys(stores: Path) -> None:
    wrong = _errors(
        {
            "database.ssl.mode": "verify_ca",
            "database.ssl.truststore": str(stores / "trust.jks"),
            "database.ssl.truststore.password": "not-it",
        }
    )
    assert list(wrong) == ["database.ssl.truststore.password"]
    assert "wrong password" in wrong["database.ssl.truststore.password"][0]
    assert "not-it" not in str(wrong)
    missing = _errors({"database.ssl.keystore": str(stores / "nope.p12")})
    assert (
        list(missing) == ["database.ssl.keystore"] and "No such file" in missing["database.ssl.keystore"][0]
    )
    ok = {"database.ssl.truststore": str(stores / "trust.jks"), "database.ssl.truststore.password": "secret1"}
    assert _errors({"database.ssl.mode": "verify_identity", **ok}) == {}


def test_passwords_are_masked_in_settings(stores: Path) -> None:
    settings = MySqlSettings.parse(
        {
            **BASE,
            "database.ssl.mode": "verify_ca",
            "database.ssl.truststore": str(stores / "trust.jks"),
            "database.ssl.truststore.password": "secret1",
        }
    )
    assert "secret1" not in repr(settings.database_ssl_truststore_password)
    assert "secret1" not in repr(settings.tls)
    assert settings.tls.cadata is not None and "BEGIN CERTIFICATE" in settings.tls.cadata


@pytest.mark.parametrize(
    ("mode", "verify", "hostname", "pymysql"),
    [
        ("disabled", None, None, {"ssl_disabled": True}),
        ("preferred", None, None, {}),  # PyMySQL's own: TLS when offered, unverified
        ("required", ssl.CERT_NONE, False, None),
        ("verify_ca", ssl.CERT_REQUIRED, False, None),
        ("verify_identity", ssl.CERT_REQUIRED, True, None),
    ],
)
def test_pymysql_options(mode: str, verify: int | None, hostname: bool | None, pymysql: dict | None) -> None:
    options = MySqlTls(mode).pymysql_options()
    if pymysql is not None:
        assert options == pymysql
        return
    context = options["ssl"]
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == verify and context.check_hostname is hostname


def test_mysqlclient_options_write_private_files_for_the_call_only(stores: Path) -> None:
    tls = MySqlTls("verify_identity", cadata=(stores / "ca.pem").read_text())
    with tls.mysqlclient_options() as options:
        ca = Path(options["ssl"]["ca"])
        assert options["ssl_mode"] == "VERIFY_IDENTITY" and ca.read_text().startswith("-----BEGIN")
        assert ca.stat().st_mode & 0o077 == 0
    assert not ca.exists()
    with MySqlTls("required").mysqlclient_options() as options:
        assert options == {"ssl_mode": "REQUIRED"}  # libmariadb would check a CA it is given
    assert not MySqlTls("verify_ca").mysqlclient_usable  # libmariadb checks the host with the CA


def test_jdbc_options() -> None:
    assert MySqlTls("disabled").jdbc_options(lambda: True) == {"sslMode": "disable"}
    assert MySqlTls("preferred").jdbc_options(lambda: True) == {"sslMode": "trust"}
    assert MySqlTls("preferred").jdbc_options(lambda: False) == {"sslMode": "disable"}
    assert MySqlTls("required").jdbc_options(lambda: False) == {"sslMode": "trust"}
    full = MySqlTls("verify_identity", cadata="-----BEGIN CERTIFICATE-----\n").jdbc_options(lambda: True)
    assert full == {"sslMode": "verify-full", "serverSslCert": "-----BEGIN CERTIFICATE-----\n"}
    assert MySqlTls("verify_ca").jdbc_options(lambda: True) == {"sslMode": "verify-ca"}


def test_tls_error_key() -> None:
    with_store = MySqlTls("verify_identity", truststore_given=True)
    for what in ("Hostname", "IP address"):
        mismatch = f"certificate verify failed: {what} mismatch, certificate is not valid for 'x'"
        assert tls_error_key(mismatch, with_store) == "database.hostname"
    untrusted = "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in chain"
    assert tls_error_key(untrusted, with_store) == "database.ssl.truststore"
    assert tls_error_key(untrusted, MySqlTls("verify_ca")) == "database.ssl.mode"
    assert (
        tls_error_key("SSL is required but the server doesn't support it", with_store) == "database.ssl.mode"
    )
