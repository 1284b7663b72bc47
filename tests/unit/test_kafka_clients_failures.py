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


class _Admin:
    """An AdminClient whose DescribeConfigs answers from a script: errors first, then configs."""

    def __init__(self, answers: list[KafkaError | dict[str, str]]) -> None:
        self.answers = answers
        self.calls = 0

    def describe_configs(self, resources: list, request_timeout: float) -> dict:
        from concurrent.futures import Future

        from confluent_kafka import KafkaException

        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        future: Future = Future()
        if isinstance(answer, KafkaError):
            future.set_exception(KafkaException(answer))
        else:
            future.set_result(answer)
        return {resources[0]: future}


def test_describe_topic_configs_asks_again_while_the_broker_does_not_know_the_topic() -> None:
    from cdc.kafka.failures import describe_topic_configs

    unknown = KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART, "Broker: Unknown topic or partition")
    admin = _Admin([unknown, unknown, {"min.insync.replicas": "2"}])
    assert describe_topic_configs(admin, "t", 10) == {"min.insync.replicas": "2"}
    assert admin.calls == 3


def test_describe_topic_configs_raises_other_errors_and_gives_up_after_the_timeout() -> None:
    from confluent_kafka import KafkaException

    from cdc.kafka.failures import describe_topic_configs

    denied = _Admin([KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "denied"), {}])
    with pytest.raises(KafkaException):
        describe_topic_configs(denied, "t", 10)
    assert denied.calls == 1
    unknown = _Admin([KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART, "unknown")])
    with pytest.raises(KafkaException):
        describe_topic_configs(unknown, "t", 0.5)
    assert unknown.calls >= 2
