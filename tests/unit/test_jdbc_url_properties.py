"""JDBC URL properties: each driver's TLS modes and defaults, the harmless ones, and every other one refused
at validate naming the property (never showing a password)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cdc.errors import ConfigError
from cdc.jdbc.config import validate_jdbc
from cdc.jdbc.connector import JdbcSourceConnector
from cdc.jdbc.url import parse_jdbc_url
from cdc.jdbc.url_properties import CATALOG, TlsMode, check_server_timezone, url_options

REPO = Path(__file__).resolve().parents[2]


def mode(url: str) -> TlsMode:
    return url_options(parse_jdbc_url(url)).tls.mode


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", TlsMode.PREFER),  # Connector/J 8's default
        ("?sslMode=DISABLED", TlsMode.DISABLE),
        ("?sslMode=preferred", TlsMode.PREFER),
        ("?sslMode=REQUIRED", TlsMode.REQUIRE),
        ("?sslMode=VERIFY_CA", TlsMode.VERIFY_CA),
        ("?sslMode=VERIFY_IDENTITY", TlsMode.VERIFY_FULL),
        ("?useSSL=false", TlsMode.DISABLE),
        ("?useSSL=true", TlsMode.PREFER),
        ("?useSSL=true&requireSSL=true", TlsMode.REQUIRE),
        ("?useSSL=true&verifyServerCertificate=true", TlsMode.VERIFY_CA),
        ("?useSSL=false&sslMode=REQUIRED", TlsMode.REQUIRE),  # sslMode wins over the legacy ones
        ("?usessl=false", TlsMode.DISABLE),  # Connector/J's names are not case-sensitive
    ],
)
def test_connector_j_modes(query: str, expected: TlsMode) -> None:
    assert mode("jdbc:mysql://db:3306/x" + query) is expected


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", TlsMode.DISABLE),  # MariaDB Connector/J's default
        ("?sslMode=trust", TlsMode.REQUIRE),
        ("?sslMode=verify-ca", TlsMode.VERIFY_CA),
        ("?sslMode=VERIFY_FULL", TlsMode.VERIFY_FULL),
        ("?useSsl=true", TlsMode.VERIFY_FULL),
        ("?useSSL=true&trustServerCertificate=true", TlsMode.REQUIRE),
        ("?useSsl&disableSslHostnameVerification=true", TlsMode.VERIFY_CA),
    ],
)
def test_mariadb_connector_j_modes(query: str, expected: TlsMode) -> None:
    assert mode("jdbc:mariadb://db/x" + query) is expected


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", TlsMode.PREFER),  # pgJDBC's default
        ("?ssl=true", TlsMode.VERIFY_FULL),  # pgJDBC's SslMode.of: ssl without sslmode is verify-full
        ("?ssl", TlsMode.VERIFY_FULL),
        ("?ssl=false", TlsMode.PREFER),  # ... and ssl=false falls back to prefer, as in pgJDBC
        ("?sslmode=allow", TlsMode.ALLOW),
        ("?sslmode=require", TlsMode.REQUIRE),
        ("?ssl=true&sslmode=verify-ca", TlsMode.VERIFY_CA),
        ("?sslmode=verify-full&sslfactory=org.postgresql.ssl.NonValidatingFactory", TlsMode.REQUIRE),
    ],
)
def test_pgjdbc_modes(query: str, expected: TlsMode) -> None:
    assert mode("jdbc:postgresql://db/x" + query) is expected
    assert mode("jdbc:postgresql:x" + query) is expected


def test_stores_and_options() -> None:
    options = url_options(
        parse_jdbc_url(
            "jdbc:mysql://db/x?sslMode=VERIFY_CA&trustCertificateKeyStoreUrl=file:///etc/ts.jks"
            "&trustCertificateKeyStorePassword=s3cret&clientCertificateKeyStoreUrl=/etc/ks.p12"
            "&connectTimeout=2500&socketTimeout=0&serverTimezone=UTC&useCursorFetch=true"
        )
    )
    assert options.tls.truststore is not None and options.tls.truststore.location == "/etc/ts.jks"
    assert options.tls.truststore.password == "s3cret" and "s3cret" not in repr(options)
    assert options.tls.keystore is not None and options.tls.keystore.location == "/etc/ks.p12"
    assert options.connect_timeout_s == 2.5 and options.socket_timeout_s is None
    check_server_timezone(options, "UTC")
    check_server_timezone(options, "Etc/UTC")
    with pytest.raises(ConfigError, match=r"db\.timezone"):
        check_server_timezone(options, "Asia/Seoul")
    pg = url_options(
        parse_jdbc_url("jdbc:postgresql://db/x?ApplicationName=cdc&currentSchema=app&connectTimeout=3")
    )
    assert (pg.application_name, pg.current_schema, pg.connect_timeout_s) == ("cdc", "app", 3.0)


@pytest.mark.parametrize(
    "url, named",
    [
        ("jdbc:mysql://db/x?zeroDateTimeBehavior=convertToNull", "zeroDateTimeBehavior"),
        ("jdbc:mysql://db/x?sslMode=SOMETIMES", "sslMode"),
        ("jdbc:mysql://db/x?serverSslCert=/ca.pem", "jdbc:mariadb:"),  # a MariaDB Connector/J property
        ("jdbc:mariadb://db/x?trustCertificateKeyStoreUrl=/ts.jks", "jdbc:mysql:"),
        ("jdbc:mysql://db/x?trustCertificateKeyStoreUrl=classpath:ts.jks", "trustCertificateKeyStoreUrl"),
        ("jdbc:mysql://db/x?characterEncoding=latin1", "characterEncoding"),
        ("jdbc:postgresql://db/x?sslMode=require", "sslmode"),  # pgJDBC's names are case-sensitive
        ("jdbc:postgresql://db/x?sslfactory=com.acme.Factory", "sslfactory"),
        ("jdbc:postgresql://db/x?targetServerType=primary", "targetServerType"),
        (
            "jdbc:mysql://db/x?sslMode=VERIFY_CA&fallbackToSystemTrustStore=false",
            "trustCertificateKeyStoreUrl",
        ),
    ],
)
def test_refused_at_validate_naming_the_property(url: str, named: str) -> None:
    props = {"connection.url": url, "mode": "bulk", "topic.prefix": "t-"}
    values = JdbcSourceConnector().validate(props)
    errors = {v.name: v.errors for v in values if v.errors}
    assert list(errors) == ["connection.url"]
    assert named in errors["connection.url"][0]


def test_secrets_never_in_the_message() -> None:
    url = "jdbc:mysql://db/x?password=hunter2&trustCertificateKeyStorePassword=hunter3&bogus=1"
    with pytest.raises(ConfigError) as info:
        url_options(parse_jdbc_url(url))
    assert "bogus" in str(info.value) and "hunter" not in str(info.value)
    with pytest.raises(ConfigError) as info:
        url_options(
            parse_jdbc_url("jdbc:mariadb://db/x?keyStorePassword=hunter4&keyStore=/nope&useSsl=maybe")
        )
    assert "useSsl" in str(info.value) and "hunter" not in str(info.value)


def test_seed_urls_keep_working() -> None:
    seeds = REPO / "tests" / "fixtures" / "seed-configs"
    urls = re.findall(r"jdbc:[^\s\"]+", "\n".join(p.read_text() for p in seeds.glob("jdbc-*")))
    assert urls
    for url in urls:
        url_options(parse_jdbc_url(url))
        props = {"connection.url": url, "mode": "bulk", "topic.prefix": "t-"}
        assert not any(v.errors for v in validate_jdbc(props))


def test_docs_list_every_property_with_its_status() -> None:
    text = (REPO / "docs" / "jdbc.md").read_text()
    for subprotocol, properties in CATALOG.items():
        for name, (status, _) in properties.items():
            assert re.search(rf"`{re.escape(name)}`[^\n]*{status}", text), (subprotocol, name)


def test_url_passwords_are_recorded_as_secrets_for_the_logs() -> None:
    from cdc.worker.security import redact, register_config_secrets

    url = "jdbc:mysql://db/x?sslMode=VERIFY_CA&trustCertificateKeyStorePassword=tr%2Bst-pw&password=hunter22"
    register_config_secrets({"connection.url": url})
    assert redact("opened with tr+st-pw and hunter22") == "opened with [hidden] and [hidden]"
