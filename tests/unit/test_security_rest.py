"""Basic authentication, JAAS files, the open-listener refusal and TLS settings of the REST API."""

from __future__ import annotations

import base64
import logging
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_rest_api import FakeHerder  # the in-memory herder of the REST API tests

from cdc.api.errors import ConfigError
from cdc.worker.rest import RestServer, RestSettings, create_app, sign
from cdc.worker.rest.auth import (
    BASIC_AUTH_EXTENSION,
    BasicAuthenticator,
    CredentialsFile,
    jaas_config_path,
    parse_jaas,
)
from cdc.worker.rest.exposure import check_exposure, is_all_interfaces
from cdc.worker.rest.tls import server_context

MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def users(tmp_path: Path) -> Path:
    path = tmp_path / "users.properties"
    path.write_text("# users\nalice=wonder land\nbob: builder\n", encoding="utf-8")
    return path


@pytest.fixture
def jaas(tmp_path: Path, users: Path) -> Path:
    path = tmp_path / "jaas.conf"
    path.write_text(
        "// Connect's example\nKafkaConnect {\n"
        f'  {MODULE} required\n  file="{users}";\n}};\n'
        'KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required username="x"; };\n',
        encoding="utf-8",
    )
    return path


# -- JAAS and credentials ------------------------------------------------------------------------------
def test_parse_jaas_sections_flags_and_options(jaas: Path, users: Path) -> None:
    sections = parse_jaas(jaas.read_text())
    (entry,) = sections["KafkaConnect"]
    assert (entry.login_module, entry.flag, entry.options) == (MODULE, "required", {"file": str(users)})
    assert sections["KafkaServer"][0].options == {"username": "x"}


@pytest.mark.parametrize("text", ["KafkaConnect { x badflag; };", "KafkaConnect { x required a= ; ", "{ };"])
def test_parse_jaas_errors(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_jaas(text)


def test_jaas_path_from_kafka_opts() -> None:
    opts = "-Xmx1g -Djava.security.auth.login.config=/etc/connect/jaas.conf -Dfoo=bar"
    assert jaas_config_path({"KAFKA_OPTS": opts}) == "/etc/connect/jaas.conf"
    assert jaas_config_path({"KAFKA_OPTS": "'-Djava.security.auth.login.config==/a b.conf'"}) == "/a b.conf"
    assert jaas_config_path({}) is None


def test_credentials_checked_and_reloaded(users: Path) -> None:
    creds = CredentialsFile(str(users))
    assert creds.check("alice", "wonder land") and creds.check("bob", "builder")
    assert not creds.check("alice", "wrong") and not creds.check("carol", "")
    users.write_text("alice=new-password-longer\n", encoding="utf-8")
    assert creds.check("alice", "new-password-longer") and not creds.check("bob", "builder")


def test_empty_credentials_file_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.properties"
    empty.write_text("# nobody\n")
    with pytest.raises(ConfigError, match="empty"):
        CredentialsFile(str(empty))
    with pytest.raises(ConfigError, match="Error loading"):
        CredentialsFile(str(tmp_path / "missing.properties"))


def test_jaas_flags(tmp_path: Path) -> None:
    a, b = tmp_path / "a.properties", tmp_path / "b.properties"
    a.write_text("u=pa\n")
    b.write_text("u=pb\n")
    header = lambda pw: basic("u", pw)["Authorization"]  # noqa: E731
    both = BasicAuthenticator(
        [("required", CredentialsFile(str(a))), ("required", CredentialsFile(str(b)))], "t"
    )
    assert not both.authenticate(header("pa"))
    either = BasicAuthenticator(
        [("sufficient", CredentialsFile(str(a))), ("optional", CredentialsFile(str(b)))], "t"
    )
    assert either.authenticate(header("pa")) and either.authenticate(header("pb"))
    assert not either.authenticate(header("pc"))


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer abc",
        "Basic !!!",
        "Basic " + base64.b64encode(b"nocolon").decode(),
        "Basic " + base64.b64encode(b":empty-user").decode(),
    ],
)
def test_malformed_headers_fail(users: Path, header: str | None) -> None:
    assert not BasicAuthenticator.from_file(str(users)).authenticate(header)


def test_settings_turn_auth_on(jaas: Path, users: Path) -> None:
    assert RestSettings.from_properties({}, environ={}).authenticator is None
    props = {"rest.extension.classes": BASIC_AUTH_EXTENSION}
    env = {"KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas}"}
    assert RestSettings.from_properties(props, environ=env).authenticator is not None
    with pytest.raises(ConfigError, match="KAFKA_OPTS"):
        RestSettings.from_properties(props, environ={})
    ours = RestSettings.from_properties({"rest.basic.auth.credentials.file": str(users)}, environ={})
    assert ours.authenticator.authenticate(basic("alice", "wonder land")["Authorization"])


def test_unsupported_login_module(tmp_path: Path) -> None:
    path = tmp_path / "jaas.conf"
    path.write_text('KafkaConnect { com.example.Ldap required url="ldap://x"; };')
    with pytest.raises(ConfigError, match="Unsupported login module"):
        BasicAuthenticator.from_jaas(str(path))


# -- the middleware ---------------------------------------------------------------------------------------
@pytest.fixture
def secured(users: Path) -> TestClient:
    settings = RestSettings.from_properties(
        {"listeners": "http://127.0.0.1:0", "rest.basic.auth.credentials.file": str(users)}, environ={}
    )
    return TestClient(create_app(FakeHerder(), settings))


def test_401_without_or_with_wrong_credentials(secured: TestClient) -> None:
    for headers in ({}, basic("alice", "nope"), basic("mallory", "wonder land")):
        response = secured.get("/connectors", headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Basic")
        assert response.json() == {"error_code": 401, "message": "User cannot access the resource."}
    assert secured.get("/connectors", headers=basic("alice", "wonder land")).json() == []
    assert secured.get("/openapi.json").status_code == 401


def test_internal_request_needs_password_unless_signed_under_sessioned(secured: TestClient) -> None:
    body = b"[]"
    headers = {"Content-Type": "application/json", **sign(b"k" * 32, body)}
    # FakeHerder has no sessioned membership: a signature proves nothing, so the password is asked for.
    assert secured.post("/connectors/x/tasks", content=body, headers=headers).status_code == 401


# -- exposure ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "host,expected",
    [
        ("", True),
        ("0.0.0.0", True),
        ("::", True),
        ("[::]", True),
        ("127.0.0.1", False),
        ("::1", False),
        ("myhost", False),
    ],
)
def test_all_interfaces(host: str, expected: bool) -> None:
    assert is_all_interfaces(host) is expected


@pytest.mark.parametrize(
    "props",
    [
        {"listeners": "http://:8083"},
        {"listeners": "http://0.0.0.0:8083"},
        {"listeners": "http://[::]:8083"},
        {"listeners": "http://127.0.0.1:8083", "admin.listeners": "http://0.0.0.0:9093"},
        {"rest.host.name": "0.0.0.0", "rest.port": "8083"},
    ],
)
def test_explicit_open_listener_refused(props: dict[str, str]) -> None:
    settings = RestSettings.from_properties(props, environ={})
    with pytest.raises(
        ConfigError, match=r"Refusing to start.*rest.allow.unauthenticated.all.interfaces=true"
    ):
        check_exposure(settings)
    with pytest.raises(ConfigError):
        RestServer(FakeHerder(), settings)  # before anything binds


@pytest.mark.parametrize("props", [{}, {"rest.port": "8083"}])
def test_connect_default_listener_starts_with_a_warning(
    props: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        check_exposure(RestSettings.from_properties(props, environ={}))
    assert "SECURITY WARNING" in caplog.text


def test_opt_out_auth_or_client_certificates_allow_all_interfaces(users: Path, tmp_path: Path) -> None:
    open_ = {"listeners": "http://0.0.0.0:8083"}
    check_exposure(
        RestSettings.from_properties(
            {**open_, "rest.allow.unauthenticated.all.interfaces": "true"}, environ={}
        )
    )
    check_exposure(
        RestSettings.from_properties({**open_, "rest.basic.auth.credentials.file": str(users)}, environ={})
    )
    mtls = {"listeners": "https://0.0.0.0:8443", "listeners.https.ssl.client.auth": "required"}
    check_exposure(RestSettings.from_properties(mtls, environ={}))
    check_exposure(RestSettings.from_properties({"listeners": "http://127.0.0.1:8083"}, environ={}))


# -- TLS settings ---------------------------------------------------------------------------------------
def test_ssl_settings_prefer_listener_keys() -> None:
    settings = RestSettings.from_properties(
        {
            "listeners": "https://127.0.0.1:8443",
            "ssl.truststore.location": "/kafka/ca.pem",
            "listeners.https.ssl.truststore.location": "/rest/ca.pem",
            "listeners.https.ssl.client.auth": "REQUESTED",
            "ssl.endpoint.identification.algorithm": "",
        },
        environ={},
    )
    assert settings.ssl.truststore_location == "/rest/ca.pem"
    assert settings.ssl.client_auth == "requested"
    assert settings.ssl.endpoint_identification is False
    with pytest.raises(ConfigError):
        RestSettings.from_properties({"listeners.https.ssl.client.auth": "maybe"}, environ={})


def test_missing_stores_refused_naming_the_key() -> None:
    settings = RestSettings.from_properties(
        {"listeners.https.ssl.keystore.type": "JKS", "listeners.https.ssl.keystore.location": "/ks.jks"},
        environ={},
    )
    with pytest.raises(ConfigError, match=r"listeners\.https\.ssl\.keystore\.location"):
        server_context(settings.ssl)
    with pytest.raises(ConfigError, match="needs a key store"):
        server_context(RestSettings.from_properties({}, environ={}).ssl)


# -- client override policy at the REST API --------------------------------------------------------------
FILE_SOURCE = {
    "connector.class": "FileStreamSource",
    "topic": "t",
    "file": "/tmp/x",
    "producer.override.linger.ms": "5",
}


def test_override_policy_none_rejects_create_and_validate_reports() -> None:
    settings = RestSettings.from_properties(
        {"listeners": "http://127.0.0.1:0", "connector.client.config.override.policy": "None"}, environ={}
    )
    client = TestClient(create_app(FakeHerder(), settings))
    response = client.post("/connectors", json={"name": "src", "config": FILE_SOURCE})
    assert response.status_code == 400
    message = response.json()["message"]
    assert message.startswith("Connector configuration is invalid and contains the following 1 error(s):")
    assert (
        "The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration."
        in message
    )
    assert client.put("/connectors/src/config", json=FILE_SOURCE).status_code == 400
    assert client.patch("/connectors/src/config", json={"producer.override.acks": "1"}).status_code == 400


def test_validate_hides_undeclared_secret_keys() -> None:
    from cdc.worker import validation

    infos = validation.validate({**FILE_SOURCE, "producer.override.sasl.jaas.config": 'x password="pw"'})
    values = {c["value"]["name"]: c["value"]["value"] for c in infos["configs"]}
    assert values.get("producer.override.sasl.jaas.config", "[hidden]") == "[hidden]"
    with pytest.raises(Exception, match=r"\[hidden\]") as info:
        validation.validate({"database.password": "pw-12345"})
    assert "pw-12345" not in str(info.value)
