"""Secrets out of logs, status traces and stored task configs; Kafka client security settings."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc.api.errors import ConfigError, ConnectError
from cdc.kafka.clients import (
    connector_client_settings,
    history_client_defaults,
    override_policy,
    override_violations,
    to_librdkafka,
)
from cdc.worker.config_providers import ConfigTransformer, EnvVarConfigProvider, FileConfigProvider
from cdc.worker.security import (
    RedactingFilter,
    format_trace,
    register_config_secrets,
    reverse_transform,
    secrets,
    tracking_resolver,
)

SECRET = "s3cr3t-Pa55word"


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    secrets.clear()
    yield
    secrets.clear()


def provider_resolver(tmp_path: Path) -> tuple[dict[str, str], object]:
    secret_file = tmp_path / "db.properties"
    secret_file.write_text(f"password={SECRET}\nhost=db.internal\n")
    env = EnvVarConfigProvider({"TOKEN": "env-token-value"})
    env.configure({})
    transformer = ConfigTransformer({"file": FileConfigProvider(), "env": env})
    raw = {
        "connection.url": f"jdbc:mysql://${{file:{secret_file}:host}}:3306/db",
        "connection.pwd": f"${{file:{secret_file}:password}}",
        "api.token": "${env:TOKEN}",
        "topic": "plain",
    }
    return raw, tracking_resolver(lambda c: transformer.transform(c)[0])


def test_provider_values_are_registered_and_masked(tmp_path: Path) -> None:
    raw, resolve = provider_resolver(tmp_path)
    resolved = resolve(raw)  # type: ignore[operator]
    assert resolved["connection.pwd"] == SECRET
    assert SECRET in secrets and "env-token-value" in secrets and "db.internal" in secrets
    assert "plain" not in secrets
    try:
        raise ConnectError(f"Access denied for password {SECRET!r} at {resolved['connection.url']}")
    except ConnectError as exc:
        trace = format_trace(exc)
    assert SECRET not in trace and "db.internal" not in trace
    assert "[hidden]" in trace and "ConnectError" in trace


def test_secret_named_keys_and_jaas_passwords_registered() -> None:
    register_config_secrets(
        {
            "database.password": "mysql-pw-1",
            "producer.override.sasl.jaas.config": (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                'username="u" password="jaas-pw-2";'
            ),
            "tasks.max": "1",
            "short.password": "abc",  # too short to mask everywhere
        }
    )
    assert "mysql-pw-1" in secrets and "jaas-pw-2" in secrets
    assert "1" not in secrets and "abc" not in secrets


def test_log_filter_masks_message_args_and_exception() -> None:
    secrets.add([SECRET])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("test.security.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("connecting with %s", SECRET)
        try:
            raise ValueError(f"bad password {SECRET}")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert SECRET not in text
    assert text.count("[hidden]") == 2


def test_reverse_transform_puts_placeholders_back(tmp_path: Path) -> None:
    raw, resolve = provider_resolver(tmp_path)
    resolved = resolve(raw)  # type: ignore[operator]
    tasks = [{"connection.pwd": SECRET, "copied.password": SECRET, "topic": "plain", "task.id": "0"}]
    (task,) = reverse_transform(raw, resolved, tasks)
    assert task["connection.pwd"] == raw["connection.pwd"]
    assert task["copied.password"] == raw["connection.pwd"]  # resolves to the same value at task start
    assert task["api.token"] == "${env:TOKEN}"  # Connect's rule: every placeholder key of the connector
    assert task["topic"] == "plain" and task["task.id"] == "0"
    assert SECRET not in str(task)


# -- Kafka clients --------------------------------------------------------------------------------------
def test_sasl_and_ssl_mapping() -> None:
    out = to_librdkafka(
        {
            "bootstrap.servers": "b:9093",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="alice" password="al\\"ice";',
            "ssl.truststore.location": "/etc/ca.pem",
            "ssl.truststore.type": "PEM",
            "ssl.endpoint.identification.algorithm": "",
            "ssl.enabled.protocols": "TLSv1.2",
        }
    )
    assert out == {
        "bootstrap.servers": "b:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": 'al"ice',
        "ssl.ca.location": "/etc/ca.pem",
        "ssl.endpoint.identification.algorithm": "none",
    }


def test_pem_keystore_and_inline_pem_and_jks() -> None:
    pem = to_librdkafka(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "/c.pem",
            "ssl.key.password": "k",
            "ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----",
        }
    )
    assert pem == {
        "ssl.certificate.location": "/c.pem",
        "ssl.key.location": "/c.pem",
        "ssl.key.password": "k",
        "ssl.ca.pem": "-----BEGIN CERTIFICATE-----",
    }
    # Java stores are read (tests/unit/test_java_stores_clients.py): a missing one names its key
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.location"):
        to_librdkafka({"ssl.truststore.location": "/t.jks", "ssl.keystore.location": "/k.jks"})
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.location"):
        to_librdkafka({"ssl.keystore.location": "/etc/client.p12", "ssl.keystore.password": "kspw"})
    kerberos = to_librdkafka(
        {
            "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required "
            'useKeyTab=true keyTab="/k.keytab" principal="connect@EX";'
        }
    )
    assert kerberos == {"sasl.kerberos.keytab": "/k.keytab", "sasl.kerberos.principal": "connect@EX"}


WORKER = {
    "bootstrap.servers": "b:9092",
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.jaas.config": 'PlainLoginModule required username="w" password="wpw";',
    "producer.linger.ms": "7",
    "consumer.max.poll.interval.ms": "1000",
    "admin.request.timeout.ms": "9",
}


@pytest.mark.parametrize("role", ["producer", "consumer", "admin"])
def test_every_client_role_gets_worker_security(role: str) -> None:
    out = to_librdkafka(connector_client_settings(WORKER, {}, role, "All"))
    assert out["security.protocol"] == "SASL_PLAINTEXT" and out["sasl.username"] == "w"
    assert out["bootstrap.servers"] == "b:9092"
    own = {"producer": "linger.ms", "consumer": "max.poll.interval.ms", "admin": "request.timeout.ms"}[role]
    assert own in out


def test_override_policies() -> None:
    connector = {
        "producer.override.linger.ms": "50",
        "producer.override.sasl.jaas.config": 'PlainLoginModule required username="c" password="cpw";',
    }
    out = to_librdkafka(connector_client_settings(WORKER, connector, "producer", "All"))
    assert out["linger.ms"] == "50" and out["sasl.username"] == "c"
    assert override_violations(
        connector, "org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy"
    ) == [
        (
            "producer.override.linger.ms",
            "The 'Principal' policy does not allow 'linger.ms' to be overridden "
            "in the connector configuration.",
        )
    ]
    assert len(override_violations(connector, "None")) == 2
    with pytest.raises(ConnectError, match="Client Config Overrides not allowed"):
        connector_client_settings(WORKER, connector, "producer", "None")
    assert connector_client_settings(WORKER, connector, "consumer", "None")["sasl.mechanism"] == "PLAIN"
    with pytest.raises(ConfigError):
        override_policy("Some")


def test_history_inherits_worker_security_only_on_worker_brokers() -> None:
    defaults = history_client_defaults(WORKER, {"schema.history.internal.consumer.sasl.mechanism": "SCRAM"})
    assert defaults["schema.history.internal.producer.security.protocol"] == "SASL_PLAINTEXT"
    assert defaults["schema.history.internal.consumer.sasl.jaas.config"] == WORKER["sasl.jaas.config"]
    assert "schema.history.internal.consumer.sasl.mechanism" not in defaults
    assert (
        history_client_defaults(WORKER, {"schema.history.internal.kafka.bootstrap.servers": "other:9092"})
        == {}
    )
