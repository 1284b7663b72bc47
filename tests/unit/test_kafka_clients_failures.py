"""Which librdkafka errors fail a task (:func:`cdc.kafka.failures.client_failure`): refused
credentials and fatal errors do; a broker down, or a handshake cut by a stopping broker, does not."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from cdc.kafka.failures import client_failure, client_failure_message

BROKER = "sasl_plaintext://127.0.0.1:9092/1"


@pytest.mark.parametrize(
    "error",
    [
        KafkaError(
            KafkaError._AUTHENTICATION,
            f"{BROKER}: SASL authentication error: Authentication failed: Invalid username or password "
            "(after 3ms in state AUTH_REQ)",
        ),
        KafkaError(KafkaError.SASL_AUTHENTICATION_FAILED, "Authentication failed"),
        KafkaError(
            KafkaError._AUTHENTICATION,
            f"{BROKER}: SASL SCRAM-SHA-256 mechanism handshake failed: Broker: Request not valid in current "
            "SASL state: broker's supported mechanisms: PLAIN",
        ),
        KafkaError(
            KafkaError._SSL,
            "ssl://127.0.0.1:9093/1: SSL handshake failed: error:0A000086:SSL routines::certificate verify "
            "failed: broker certificate could not be verified",
        ),
        KafkaError(KafkaError._FATAL, "Fatal error: Local: Inconsistent state", fatal=True),
        KafkaError(
            KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER,
            "Broker: Broker received an out of order sequence number",
            fatal=True,
        ),
    ],
    ids=["sasl-refused", "broker-code", "mechanism", "ssl-verify", "fatal", "fatal-idempotence"],
)
def test_refused_credentials_and_fatal_errors_fail_the_task(error: KafkaError) -> None:
    assert client_failure(error)


@pytest.mark.parametrize(
    "error",
    [
        KafkaError(
            KafkaError._TRANSPORT, f"{BROKER}: Connect to ipv4#127.0.0.1:9092 failed: Connection refused"
        ),
        KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"),
        KafkaError(KafkaError._RESOLVE, "Failed to resolve 'kafka:9092'"),
        KafkaError(KafkaError._TIMED_OUT, "Timed out"),
        # librdkafka gives a handshake cut by a stopping broker the handshake's code
        KafkaError(
            KafkaError._AUTHENTICATION,
            f"{BROKER}: SASL authentication error: SaslAuthenticateRequest failed: Local: Broker transport "
            "failure (after 1ms in state AUTH_REQ)",
        ),
        KafkaError(KafkaError._SSL, "ssl://127.0.0.1:9093/1: SSL handshake failed: Disconnected"),
    ],
    ids=["transport", "all-down", "resolve", "timeout", "sasl-cut", "ssl-cut"],
)
def test_a_broker_away_does_not_fail_the_task(error: KafkaError) -> None:
    assert not client_failure(error)


def test_the_failure_names_authentication_and_the_client() -> None:
    error = KafkaError(
        KafkaError._AUTHENTICATION,
        f"{BROKER}: SASL authentication error: Authentication failed: Invalid username or password",
    )
    message = client_failure_message("producer", error)
    assert "producer failed to authenticate" in message and "SaslAuthenticationException" in message
    assert "Invalid username or password" in message and "producer.override." in message
    fatal = KafkaError(KafkaError._FATAL, "Fatal error: Local: Inconsistent state", fatal=True)
    assert client_failure_message("consumer", fatal).startswith(
        "Unrecoverable error from the task's consumer"
    )
