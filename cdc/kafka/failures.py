"""Which Kafka client errors fail a task, and the first request a worker makes.

librdkafka reports refused credentials and fatal errors only to ``error_cb`` and retries for ever;
Connect fails the task (or the worker, at its first request) instead. :func:`client_failure` tells the
errors that fail a task from those librdkafka retries (a broker down), :func:`client_failure_message`
words the failure, :class:`ClientErrors` is the ``error_cb`` that keeps the first one for the task's
thread, :func:`lookup_cluster_id` is Connect's ``ConnectUtils.lookupKafkaClusterId``: the first request a
worker makes, failing at once, with a message naming the cause, when the credentials are wrong.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from cdc.kafka.clients import to_librdkafka

__all__ = [
    "ClientErrors",
    "client_failure",
    "client_failure_message",
    "create_topic_if_missing",
    "describe_topic_configs",
    "lookup_cluster_id",
]

log = logging.getLogger(__name__)

_CONNECT_FAILED = "Failed to connect to and describe Kafka cluster. " + (
    "Check worker's broker connection and security properties."
)


# librdkafka reports a connection lost in the middle of a SASL or SSL handshake (a broker stopping) with the
# handshake's code too: "SASL authentication error: SaslAuthenticateRequest failed: Local: Broker transport
# failure", "SSL handshake failed: Disconnected". Those are retried like any lost connection.
_TRANSIENT_HANDSHAKE = (
    "Local: Broker transport failure",
    "Local: Broker handle destroyed",
    "Local: Timed out",
    "Disconnected",
    "Connection reset",
    "Connection refused",
    "Broken pipe",
    "timed out",
)


def _authentication_failure(error: Any) -> bool:
    """Whether a librdkafka error (``error_cb``) is the brokers refusing the client's credentials: a SASL
    or SSL handshake that failed for another reason than a lost connection."""
    from confluent_kafka import KafkaError

    codes = {KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED, KafkaError._SSL}
    if error.code() not in codes:
        return False
    text = str(error.str())
    return not any(marker in text for marker in _TRANSIENT_HANDSHAKE)


def client_failure(error: Any) -> bool:
    """Whether an error a task's Kafka client reports to ``error_cb`` must fail the task.

    Kafka Connect fails a task whose client throws ``SaslAuthenticationException`` /
    ``SslAuthenticationException`` or a fatal error; librdkafka only reports them to ``error_cb`` and
    retries for ever. An authentication failure (:func:`_authentication_failure`) or a fatal error
    (``error.fatal()``: e.g. an idempotent producer's fatal sequence error) fails the task; a broker
    down (``_TRANSPORT``, ``_ALL_BROKERS_DOWN``, ``_RESOLVE`` …) or a handshake cut by a stopping broker
    does not: librdkafka reconnects.
    """
    try:
        fatal = bool(error.fatal())
    except (AttributeError, TypeError):
        fatal = False
    return fatal or _authentication_failure(error)


def client_failure_message(client: str, error: Any) -> str:
    """The task's failure for a :func:`client_failure` ``error`` of its ``client`` (``producer`` …):
    names the authentication failure, with librdkafka's reason (which never holds the password)."""
    reason = str(error.str())
    if _authentication_failure(error):
        return (
            f"The task's {client} failed to authenticate to Kafka (SaslAuthenticationException / "
            f"SslAuthenticationException): {reason}. Check the {client}'s security.protocol, "
            "sasl.mechanism, sasl.jaas.config and ssl.* settings (and the connector's "
            f"{client}.override.* ones)"
        )
    return f"Unrecoverable error from the task's {client}: {reason}"


def lookup_cluster_id(settings: Mapping[str, Any], timeout: float = 30.0) -> str:
    """The Kafka cluster id, read with an admin client of Java-style ``settings`` (Connect's
    ``ConnectUtils.lookupKafkaClusterId``, which every worker calls before anything else).

    A SASL or SSL handshake the brokers refuse fails it as soon as librdkafka reports it — a
    :class:`~cdc.api.errors.ConnectError` with Connect's message and librdkafka's reason (``SASL
    authentication error: Authentication failed: Invalid username or password``); so does a timeout.
    """
    import concurrent.futures
    import time

    from confluent_kafka.admin import AdminClient

    from cdc.api.errors import ConnectError

    errors: list[Any] = []
    config: dict[str, Any] = {**to_librdkafka(settings), "error_cb": errors.append}
    admin = AdminClient(config)
    future = admin.describe_cluster(request_timeout=timeout)
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        # The answer completes the future from librdkafka's background thread, not through poll: waiting
        # in poll(0.1) added 100 ms to every worker's start. Wait on the future; poll only serves error_cb.
        concurrent.futures.wait([future], timeout=0.05)
        admin.poll(0)
        refused = next((e for e in errors if _authentication_failure(e)), None)
        if refused is not None:
            future.cancel()
            raise ConnectError(f"{_CONNECT_FAILED} Authentication failed: {refused.str()}")
    try:
        return str(future.result(max(0.1, deadline - time.monotonic())).cluster_id)
    except Exception as exc:
        last = f" Last error: {errors[-1].str()}" if errors else ""
        raise ConnectError(f"{_CONNECT_FAILED} {exc}{last}") from exc


class ClientErrors:
    """The ``error_cb`` of one of a task's clients (``producer``, ``consumer``): keeps the first
    :func:`client_failure` for :meth:`check` to raise in the task's thread, and logs the errors librdkafka
    retries (a broker down) at WARNING once a minute per error code, at DEBUG otherwise (librdkafka logs
    each failed connection itself; during an outage they come several times a second)."""

    def __init__(self, owner: object, client: str, interval: float = 60.0) -> None:
        self.owner = owner
        self.client = client
        self.interval = interval
        self.failure: Any = None
        self._logged: dict[int, float] = {}

    def __call__(self, error: Any) -> None:
        import time

        if client_failure(error):
            if self.failure is None:
                self.failure = error
            return
        now, code = time.monotonic(), int(error.code())
        if now - self._logged.get(code, -self.interval) >= self.interval:
            self._logged[code] = now
            log.warning("%s %s error (retried): %s", self.owner, self.client.capitalize(), error.str())
        else:
            log.debug("%s %s error (retried): %s", self.owner, self.client.capitalize(), error.str())

    def check(self) -> None:
        """Raise the task's failure (a :class:`~cdc.api.errors.ConnectError`) if the client reported one."""
        if self.failure is not None:
            from cdc.api.errors import ConnectError

            raise ConnectError(client_failure_message(self.client, self.failure))


def create_topic_if_missing(
    admin_settings: Mapping[str, Any],
    topic: str,
    partitions: int,
    replication: int,
    config: Mapping[str, str] | None = None,
    owner: str = "",
) -> bool:
    """Create ``topic`` unless it exists (or another client creates it meanwhile); True if we did.
    The admin client's ``error_cb`` is served on a failure, so refused credentials raise a
    :class:`~cdc.api.errors.ConnectError` naming them rather than a bare timeout."""
    from confluent_kafka.admin import AdminClient, NewTopic

    errors = ClientErrors(owner or f"topic creation for {topic}", "admin")
    config_with_cb: dict[str, Any] = {**admin_settings, "error_cb": errors}
    admin = AdminClient(config_with_cb)
    try:
        if topic in admin.list_topics(timeout=10).topics:
            return False
        new = NewTopic(topic, int(partitions), int(replication), config=dict(config or {}))
        try:
            admin.create_topics([new])[topic].result(30)
        except Exception as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
            return False
    except Exception:
        admin.poll(0)  # serves error_cb
        errors.check()
        raise
    return True


def describe_topic_configs(admin: Any, topic: str, timeout: float) -> dict[str, Any]:
    """``topic``'s configs (name → ConfigEntry), asked again while the answering broker does not know the
    topic yet: on a cluster of several brokers a topic just created reaches each broker's metadata a little
    later, and DescribeConfigs goes to any broker (a clean-clone CI run saw UNKNOWN_TOPIC_OR_PART there).
    Other errors, and that one past ``timeout`` seconds, raise the client's ``KafkaException``."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import ConfigResource

    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    deadline = time.monotonic() + timeout
    while True:
        remaining = max(1.0, deadline - time.monotonic())
        try:
            result: dict[str, Any] = admin.describe_configs([resource], request_timeout=remaining)[
                resource
            ].result(remaining + 5)
            return result
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            unknown = isinstance(error, KafkaError) and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
            if not unknown or time.monotonic() >= deadline:
                raise
        time.sleep(0.2)
