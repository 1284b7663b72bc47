"""``sasl.jaas.config`` as Kafka parses it, mapped to librdkafka, and its secrets masked in logs."""

from __future__ import annotations

import socket

import pytest

from cdc.api.errors import ConfigError, ConnectError
from cdc.kafka.clients import to_librdkafka
from cdc.kafka.failures import lookup_cluster_id
from cdc.kafka.jaas import parse_jaas
from cdc.worker.security import jaas_secrets, redact, register_config_secrets, secrets

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
KRB5 = "com.sun.security.auth.module.Krb5LoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


@pytest.fixture(autouse=True)
def _clean_registry() -> None:
    secrets.clear()


def test_quoted_values_are_unescaped_as_java_streamtokenizer_does() -> None:
    entry = parse_jaas(
        f"{PLAIN} required username='alice' /* a comment */ "
        r'password="a\"b\\c\n\101\7x" // to the end of the line' + "\n;"
    )
    assert entry.module == PLAIN and entry.flag == "required" and entry.simple_name == "PlainLoginModule"
    assert entry.options == {"username": "alice", "password": 'a"b\\c\nA\x07x'}
    unquoted = parse_jaas(
        "com.sun.security.auth.module.Krb5LoginModule REQUIRED useKeyTab=true storeKey=true;"
    )
    assert unquoted.options == {"useKeyTab": "true", "storeKey": "true"}


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "Login module not specified in JAAS config"),
        (PLAIN, "Login module control flag not specified in JAAS config"),
        (f'{PLAIN} mandatory username="u";', "Invalid login module control flag 'mandatory' in JAAS config"),
        (f'{PLAIN} required username="u" password="pw-123456"', "not terminated by semi-colon"),
        (f"{PLAIN} required password=;", "Value not specified for key 'password' in JAAS config"),
        (f"{PLAIN} required password=123456;", "Value not specified for key 'password' in JAAS config"),
        (f'{PLAIN} required a="1"; {PLAIN} required b="2";', "contains 2 login modules, should be 1 module"),
    ],
)
def test_values_kafka_refuses_are_refused_without_quoting_them(value: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason) as caught:
        to_librdkafka({"sasl.jaas.config": value})
    assert "pw-123456" not in str(caught.value) and "123456" not in str(caught.value)
    assert str(caught.value).startswith("Invalid value [hidden] for configuration sasl.jaas.config: ")


def test_plain_and_scram_credentials_as_the_broker_receives_them() -> None:
    out = to_librdkafka(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            r"""username='bob' password="q\"uo\\te";""",
        }
    )
    assert out == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "bob",
        "sasl.password": 'q"uo\\te',
    }


def test_oauthbearer_unsecured_tokens_use_librdkafkas_unsecured_jwt_handler() -> None:
    out = to_librdkafka(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f"{OAUTH} required "
            'unsecuredLoginStringClaim_sub="alice" unsecuredLoginListClaim_scope="|read|write" '
            'unsecuredLoginLifetimeSeconds="600" unsecuredLoginExtension_traceId="t1";',
        }
    )
    assert out == {
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": "true",
        "sasl.oauthbearer.config": "principal=alice scope=read,write lifeSeconds=600 extension_traceId=t1",
    }
    custom = to_librdkafka(
        {
            "sasl.jaas.config": 'OAuthBearerLoginModule required unsecuredLoginPrincipalClaimName="azp" '
            'unsecuredLoginStringClaim_azp="svc";'
        }
    )
    assert custom["sasl.oauthbearer.config"] == "principalClaimName=azp principal=svc"


def test_oauthbearer_oidc_client_credentials() -> None:
    out = to_librdkafka(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
            "sasl.login.callback.handler.class": "org.apache.kafka.common.security.oauthbearer."
            "OAuthBearerLoginCallbackHandler",
            "sasl.jaas.config": f"{OAUTH} required "
            'clientId="connect" clientSecret="oidc-s3cret" scope="kafka" extension_logicalCluster="lkc-1";',
        }
    )
    assert out == {
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.client.id": "connect",
        "sasl.oauthbearer.client.secret": "oidc-s3cret",
        "sasl.oauthbearer.scope": "kafka",
        "sasl.oauthbearer.extensions": "logicalCluster=lkc-1",
    }


def test_kerberos_service_name_from_jaas_unless_the_key_sets_it() -> None:
    jaas = (
        'com.sun.security.auth.module.Krb5LoginModule required keyTab="/k" principal="c@R" serviceName="kfk";'
    )
    assert to_librdkafka({"sasl.jaas.config": jaas})["sasl.kerberos.service.name"] == "kfk"
    for settings in (
        {"sasl.kerberos.service.name": "kafka", "sasl.jaas.config": jaas},
        {"sasl.jaas.config": jaas, "sasl.kerberos.service.name": "kafka"},
    ):
        assert to_librdkafka(settings)["sasl.kerberos.service.name"] == "kafka"


def test_jaas_secrets_are_masked_as_written_and_as_sent() -> None:
    assert jaas_secrets(r"""X required username="u" password='sq-pass\'1' clientSecret=word-secret;""") == [
        r"sq-pass\'1",
        "word-secret",
        "sq-pass'1",
        "word-secret",
    ]
    # Not a valid JAAS line (no ';'): what looks like a secret option still counts.
    assert jaas_secrets('X required password="half-line"') == ["half-line"]
    register_config_secrets(
        {
            "producer.override.sasl.jaas.config": (
                r"""org.apache.kafka.common.security.plain.PlainLoginModule required username="u" """
                r"""password="esc\"aped-pw";"""
            ),
            "sasl.jaas.config": "OAuthBearerLoginModule required clientId='c' clientSecret='oidc-secret-9';",
        }
    )
    line = 'sent esc"aped-pw, wrote esc\\"aped-pw, and oidc-secret-9'
    assert redact(line) == "sent [hidden], wrote [hidden], and [hidden]"


def test_lookup_cluster_id_fails_with_connects_message_when_no_broker_answers() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(
        ConnectError, match=r"Failed to connect to and describe Kafka cluster\. Check worker's"
    ):
        lookup_cluster_id({"bootstrap.servers": f"127.0.0.1:{port}", "log_level": "0"}, timeout=1.0)
