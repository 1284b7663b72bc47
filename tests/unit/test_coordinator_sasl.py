"""The distributed worker's group client (kafka-python) reads ``sasl.jaas.config`` with Kafka's grammar
(:func:`cdc.kafka.jaas.parse_jaas`), as the librdkafka clients do."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from cdc.api.errors import ConfigError
from cdc.kafka.clients import to_librdkafka
from cdc.worker.distributed.coordinator import UnsecuredTokenProvider, kafka_python_sasl

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def _sasl(mechanism: str | None, jaas: str, **extra: str) -> dict[str, Any]:
    settings = {"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": jaas, **extra}
    if mechanism is not None:
        settings["sasl.mechanism"] = mechanism
    return settings


@pytest.mark.parametrize(
    ("jaas", "password"),
    [
        (f'{PLAIN} required username="alice" password="a\\"b\\\\c";', 'a"b\\c'),  # escapes
        (f"{PLAIN} REQUIRED username='alice' password='say \"hi\"';", 'say "hi"'),  # single quotes
        (f'{PLAIN} required /* note */ username="alice" password="p=w;x";', "p=w;x"),
        (f"{PLAIN} required username=alice password=secret;", "secret"),  # unquoted words
    ],
)
def test_the_group_client_reads_the_jaas_line_as_librdkafka_clients_do(jaas: str, password: str) -> None:
    out = kafka_python_sasl(_sasl("PLAIN", jaas))
    rdkafka = to_librdkafka({"sasl.jaas.config": jaas})
    assert out["sasl_mechanism"] == "PLAIN"
    assert out["sasl_plain_username"] == rdkafka["sasl.username"] == "alice"
    assert out["sasl_plain_password"] == rdkafka["sasl.password"] == password


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "scram-sha-512"])
def test_scram_credentials(mechanism: str) -> None:
    out = kafka_python_sasl(_sasl(mechanism, f'{SCRAM} required username="bob" password="pw";'))
    assert out == {
        "sasl_mechanism": mechanism.upper(),
        "sasl_plain_username": "bob",
        "sasl_plain_password": "pw",
    }


def test_no_sasl_without_a_sasl_protocol() -> None:
    assert kafka_python_sasl({"security.protocol": "SSL", "sasl.jaas.config": "not parsed"}) == {}
    assert kafka_python_sasl({}) == {}


def test_malformed_or_incomplete_values_are_refused_without_quoting_them() -> None:
    with pytest.raises(ConfigError, match="not terminated by semi-colon") as caught:
        kafka_python_sasl(_sasl("PLAIN", f'{PLAIN} required username="u" password="pw-123456"'))
    assert "pw-123456" not in str(caught.value)
    with pytest.raises(ConfigError, match="username and password") as caught:
        kafka_python_sasl(_sasl("SCRAM-SHA-256", f'{SCRAM} required password="pw-123456";'))
    assert "pw-123456" not in str(caught.value)
    with pytest.raises(ConfigError, match=r"sasl\.mechanism"):
        kafka_python_sasl(_sasl("FOO", f'{PLAIN} required username="u" password="p";'))


def _claims(token: str) -> dict[str, Any]:
    header, payload, signature = token.split(".")
    assert json.loads(base64.urlsafe_b64decode(header + "==")) == {"alg": "none"} and signature == ""
    claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=="))
    return claims


def test_oauthbearer_unsecured_tokens_as_java_makes_them() -> None:
    jaas = (
        f'{OAUTH} required unsecuredLoginStringClaim_sub="alice" unsecuredLoginListClaim_scope=",a,b" '
        'unsecuredLoginLifetimeSeconds="600" unsecuredLoginExtension_traceId="t1";'
    )
    out = kafka_python_sasl(_sasl("OAUTHBEARER", jaas))
    provider = out["sasl_oauth_token_provider"]
    assert isinstance(provider, UnsecuredTokenProvider) and out["sasl_mechanism"] == "OAUTHBEARER"
    claims = _claims(provider.token())
    assert claims["sub"] == "alice" and claims["scope"] == ["a", "b"]
    assert claims["exp"] - claims["iat"] == 600
    assert provider.extensions() == {"traceId": "t1"}
    assert provider.token() == provider.token()  # reused until half its life


def test_oauthbearer_oidc_is_refused_clearly() -> None:
    jaas = f'{OAUTH} required clientId="c" clientSecret="s3cr3t-77";'
    with pytest.raises(ConfigError, match="OIDC") as caught:
        kafka_python_sasl(_sasl("OAUTHBEARER", jaas, **{"sasl.oauthbearer.token.endpoint.url": "https://x"}))
    assert "s3cr3t-77" not in str(caught.value)


def test_gssapi_is_javas_default_mechanism() -> None:
    jaas = (
        "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
        'serviceName="kafka-svc" principal="connect@EXAMPLE.COM";'
    )
    assert kafka_python_sasl(_sasl(None, jaas)) == {
        "sasl_mechanism": "GSSAPI",
        "sasl_kerberos_service_name": "kafka-svc",
    }
