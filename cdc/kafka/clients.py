"""Kafka client settings: from the Java client keys users write to librdkafka's.

Worker and connector files carry Java client settings (``producer.acks``, ``sasl.jaas.config`` …).
librdkafka (under confluent-kafka) shares most names but rejects unknown ones, so every client goes
through :func:`to_librdkafka`: names librdkafka knows pass, a few are translated, and Java-only ones (e.g.
``key.serializer``) are dropped with a debug log naming them (never their values).

Security settings map as follows (Java → librdkafka):

* ``sasl.jaas.config``: by its login module (:mod:`cdc.kafka.jaas`); ``sasl.oauthbearer.token.endpoint.url``
  → ``sasl.oauthbearer.method=oidc``. ``sasl.mechanism``, ``security.protocol`` pass as they are.
* trust store: a PEM ``ssl.truststore.location`` → ``ssl.ca.location``; a Java one (JKS, JCEKS, PKCS12, as
  the file's content says, whatever ``ssl.truststore.type`` declares: the JVM reads them alike since Java 9)
  is read with :mod:`cdc.keystores` (``ssl.truststore.password``) → ``ssl.ca.pem``;
  ``ssl.truststore.certificates`` → ``ssl.ca.pem``.
* key store: PEM (``ssl.keystore.type=PEM`` or a PEM file) → ``ssl.certificate.location`` and
  ``ssl.key.location`` (one file with both); a Java one (JKS, JCEKS, PKCS12) is read with
  :mod:`cdc.keystores` (``ssl.keystore.password``, ``ssl.key.password`` for the key when it differs) →
  ``ssl.certificate.pem`` / ``ssl.key.pem`` (the key decrypted, in memory only); inline
  ``ssl.keystore.certificate.chain`` / ``ssl.keystore.key`` → ``ssl.certificate.pem`` / ``ssl.key.pem``;
  ``ssl.key.password`` passes for PEM keys. A store that is missing or does not open with its password is a
  :class:`~cdc.errors.ConfigError` naming the key (never the password).
* :func:`python_ssl_context`: the same settings as an ``ssl.SSLContext``, for kafka-python (the distributed
  worker's group member).
* ``ssl.endpoint.identification.algorithm`` empty (Java's "off") → ``none``.
* ``metadata.max.age.ms`` (Java: refresh the metadata at least this often, 5 min) →
  ``topic.metadata.refresh.interval.ms`` (the same meaning and default in librdkafka, whose own
  ``metadata.max.age.ms`` is the metadata cache's expiry instead).

:func:`client_config` gives one client role's Java settings from a worker file (the shared security keys,
then the ``<role>.`` ones). Connector-level client overrides (``producer.override.*``,
``consumer.override.*``, ``admin.override.*``) are allowed by the worker's
``connector.client.config.override.policy``, as in Connect: ``All`` (default), ``None`` (none at all),
``Principal`` (only ``sasl.jaas.config``, ``sasl.mechanism``, ``security.protocol``); the policy's class
names are accepted too. :func:`override_violations` gives the validate errors and
:func:`connector_client_settings` the settings of one client of a connector.
"""

from __future__ import annotations

import logging
import re
import ssl
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdc.errors import ConfigError
from cdc.kafka.jaas import jaas_to_librdkafka

if TYPE_CHECKING:
    from cdc.keystores import KeyPair

__all__ = [
    "CLIENT_SHARED_PREFIXES",
    "CONNECTOR_CLIENT_PREFIXES",
    "HISTORY_CLIENT_PREFIXES",
    "OVERRIDE_POLICY_KEY",
    "OVERRIDE_PREFIXES",
    "SIGNAL_CONSUMER_PREFIX",
    "WORKER_ONLY_CLIENT_SETTINGS",
    "client_config",
    "connector_client_overrides",
    "connector_client_settings",
    "history_client_defaults",
    "override_policy",
    "override_violations",
    "python_ssl_context",
    "to_librdkafka",
    "unsafe_client_setting",
]

log = logging.getLogger(__name__)

_PASS = {
    "bootstrap.servers",
    "client.id",
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.username",
    "sasl.password",
    "sasl.kerberos.service.name",
    "sasl.oauthbearer.config",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.extensions",
    "sasl.oauthbearer.method",
    "enable.sasl.oauthbearer.unsecure.jwt",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.cipher.suites",
    "ssl.ca.pem",
    "ssl.certificate.pem",
    "ssl.key.pem",
    "sasl.kerberos.keytab",
    "sasl.kerberos.principal",
    "sasl.kerberos.kinit.cmd",
    "acks",
    "linger.ms",
    "batch.size",
    "batch.num.messages",
    "compression.type",
    "enable.idempotence",
    "retries",
    "retry.backoff.ms",
    "request.timeout.ms",
    "delivery.timeout.ms",
    "message.timeout.ms",
    "transactional.id",
    "transaction.timeout.ms",
    "isolation.level",
    "auto.offset.reset",
    "enable.auto.commit",
    "group.id",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "fetch.max.bytes",
    "fetch.min.bytes",
    "max.partition.fetch.bytes",
    "fetch.wait.max.ms",
    "socket.timeout.ms",
    "socket.keepalive.enable",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "queue.buffering.max.messages",
    "queue.buffering.max.kbytes",
    "queue.buffering.max.ms",
    "message.max.bytes",
    "partitioner",
    "statistics.interval.ms",
    "client.dns.lookup",
    "group.instance.id",
    "partition.assignment.strategy",
    "receive.message.max.bytes",
    "topic.metadata.refresh.interval.ms",
    "enable.partition.eof",
    "allow.auto.create.topics",
    "debug",
    "max.in.flight.requests.per.connection",
    "max.in.flight",
    "sticky.partitioning.linger.ms",
    "enable.gapless.guarantee",
    "connections.max.idle.ms",
    "enable.ssl.certificate.verification",
    "api.version.request",
    "log_level",
    "auto.commit.interval.ms",
}

_RENAME = {
    "max.request.size": "message.max.bytes",
    "buffer.memory": None,  # librdkafka counts in kbytes; see below
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "ssl.truststore.certificates": "ssl.ca.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.keystore.key": "ssl.key.pem",
}

_SSL_STORE_KEYS = (
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.keystore.password",
    "ssl.truststore.password",
)


def _store_type(settings: Mapping[str, Any], kind: str) -> str:
    """PEM, or JAVA for a JKS/JCEKS/PKCS12 store (read from its content by :mod:`cdc.keystores`)."""
    declared = str(settings.get(f"ssl.{kind}.type") or "").strip().upper()
    if declared == "PEM":
        return "PEM"
    location = str(settings.get(f"ssl.{kind}.location") or "")
    try:
        with open(location, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return "JAVA"  # cdc.keystores names the key in its error
    return "PEM" if head.lstrip().startswith(b"-----BEGIN") else "JAVA"


def _password(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    if value is None or value == "":
        return None
    return value.value() if hasattr(value, "value") and callable(value.value) else str(value)


def _java_truststore(settings: Mapping[str, Any]) -> str:
    from cdc.keystores import StoreKeys, read_truststore  # cryptography loads only for users of stores

    return read_truststore(
        str(settings["ssl.truststore.location"]),
        _password(settings, "ssl.truststore.password"),
        StoreKeys("ssl.truststore.location", "ssl.truststore.password"),
    )


def _java_keystore(settings: Mapping[str, Any]) -> KeyPair:
    from cdc.keystores import StoreKeys, read_keystore

    return read_keystore(
        str(settings["ssl.keystore.location"]),
        _password(settings, "ssl.keystore.password"),
        StoreKeys("ssl.keystore.location", "ssl.keystore.password", "ssl.key.password"),
        _password(settings, "ssl.key.password"),
    )


def _ssl_stores(settings: Mapping[str, Any], out: dict[str, Any]) -> bool:
    """Java's key and trust store settings in librdkafka's terms (see the module docstring); whether the
    key was decrypted from a Java store (then ``ssl.key.password`` is not passed on)."""
    truststore = settings.get("ssl.truststore.location")
    if truststore:
        if _store_type(settings, "truststore") == "PEM":
            out["ssl.ca.location"] = truststore
        else:
            out["ssl.ca.pem"] = _java_truststore(settings)
    keystore = settings.get("ssl.keystore.location")
    if keystore:
        if _store_type(settings, "keystore") == "PEM":
            out["ssl.certificate.location"] = keystore
            out["ssl.key.location"] = keystore
            if "ssl.key.password" not in settings and settings.get("ssl.keystore.password") is not None:
                out["ssl.key.password"] = settings["ssl.keystore.password"]
        else:
            pair = _java_keystore(settings)
            out["ssl.certificate.pem"] = pair.certificate_chain
            out["ssl.key.pem"] = pair.private_key
            return True
    return False


def python_ssl_context(settings: Mapping[str, Any]) -> ssl.SSLContext:
    """An ``ssl.SSLContext`` for Java-style client ``settings`` (kafka-python, which uses Python's ``ssl``):
    the trust store (PEM or Java; the system's CAs when none), host names checked unless
    ``ssl.endpoint.identification.algorithm`` is empty (Java's default is ``https``), the key store's
    certificate presented."""
    from cdc.keystores import KeyPair, StoreKeys, read_truststore, ssl_context

    cadata: str | None = None
    if settings.get("ssl.truststore.location"):
        cadata = _java_truststore(settings)  # cdc.keystores reads PEM bundles too
    elif settings.get("ssl.ca.location"):  # librdkafka's name, which worker files may use
        cadata = read_truststore(str(settings["ssl.ca.location"]), None, StoreKeys("ssl.ca.location", ""))
    if settings.get("ssl.truststore.certificates"):
        cadata = (cadata or "") + str(settings["ssl.truststore.certificates"])
    pair: KeyPair | None = None
    if settings.get("ssl.keystore.location"):
        pair = _java_keystore(settings)
    elif settings.get("ssl.keystore.certificate.chain") and settings.get("ssl.keystore.key"):
        from cryptography.hazmat.primitives import serialization

        secret = _password(settings, "ssl.key.password")
        try:
            key = serialization.load_pem_private_key(
                str(settings["ssl.keystore.key"]).encode(), secret.encode() if secret else None
            )
        except (TypeError, ValueError):
            raise ConfigError("cannot read the inline PEM key", "ssl.keystore.key", "[hidden]") from None
        text = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode("ascii")
        pair = KeyPair(str(settings["ssl.keystore.certificate.chain"]), text)
    identification = str(settings.get("ssl.endpoint.identification.algorithm", "https") or "").strip()
    return ssl_context(cadata, pair, verify=True, check_hostname=bool(identification))


def to_librdkafka(settings: Mapping[str, Any]) -> dict[str, Any]:
    """librdkafka settings for Java-style client ``settings``."""
    out: dict[str, Any] = {}
    dropped: list[str] = []
    decrypted = _ssl_stores(settings, out)
    for key, value in settings.items():
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if key in _SSL_STORE_KEYS or (key == "ssl.key.password" and decrypted):
            continue
        if key == "sasl.jaas.config":
            for name, mapped in jaas_to_librdkafka(str(value)).items():
                if name == "sasl.kerberos.service.name":  # the key wins over the JAAS option, as in Java
                    out.setdefault(name, mapped)
                else:
                    out[name] = mapped
        elif key == "sasl.oauthbearer.token.endpoint.url":  # Java's OIDC login (KIP-768)
            out[key] = value
            out.setdefault("sasl.oauthbearer.method", "oidc")
        elif key == "ssl.endpoint.identification.algorithm":
            out[key] = str(value).strip().lower() or "none"
        elif key == "metadata.max.age.ms":
            # Java: the period of a forced metadata refresh; librdkafka's key of that name is its cache's
            # expiry (3x the refresh interval by default). librdkafka's own key wins when both are given.
            if "topic.metadata.refresh.interval.ms" not in settings:
                out["topic.metadata.refresh.interval.ms"] = value
        elif key == "buffer.memory":
            out["queue.buffering.max.kbytes"] = max(1, int(value) // 1024)
        elif key in _RENAME:
            target = _RENAME[key]
            if target is None:
                dropped.append(key)
            else:
                out[target] = value
        elif key in _PASS:
            out[key] = value
        else:
            dropped.append(key)
    if dropped:
        log.debug("Client settings not used by librdkafka: %s", ", ".join(sorted(dropped)))
    if "acks" in out and str(out["acks"]) == "all":
        out["acks"] = "all"
    return out


CLIENT_SHARED_PREFIXES = ("security.protocol", "sasl.", "ssl.", "client.dns.lookup", "socket.", "reconnect.")
"""The worker file's settings every one of its Kafka clients gets (``<role>.`` keys override them)."""


def client_config(worker: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """Kafka client settings for one client role (``producer.``, ``consumer.``, ``admin.``).

    Security and connection settings given at the top of the worker file apply to every client, as in
    Connect; ``<prefix>``-ed keys override them.
    """
    out: dict[str, str] = {
        "bootstrap.servers": ",".join(worker["bootstrap.servers"])
        if isinstance(worker.get("bootstrap.servers"), list)
        else str(worker.get("bootstrap.servers", "localhost:9092"))
    }
    for key, value in worker.items():
        if key.startswith(CLIENT_SHARED_PREFIXES) and not key.startswith(("ssl.endpoint", "listeners")):
            out[key] = str(value)
    for key, value in worker.items():
        if key.startswith(prefix):
            out[key[len(prefix) :]] = str(value)
    return out


# -- connector client overrides --------------------------------------------------------------------------
OVERRIDE_POLICY_KEY = "connector.client.config.override.policy"
OVERRIDE_PREFIXES = {
    "producer": "producer.override.",
    "consumer": "consumer.override.",
    "admin": "admin.override.",
}
HISTORY_CLIENT_PREFIXES = (
    "schema.history.internal.producer.",
    "schema.history.internal.consumer.",
    "database.history.producer.",
    "database.history.consumer.",
)
SIGNAL_CONSUMER_PREFIX = "signal.consumer."
CONNECTOR_CLIENT_PREFIXES: tuple[str, ...] = (
    *OVERRIDE_PREFIXES.values(),
    SIGNAL_CONSUMER_PREFIX,
    *HISTORY_CLIENT_PREFIXES,
)
"""Every connector key prefix whose rest becomes a setting of a Kafka client: Connect's overrides, and
Debezium's signal consumer and schema history clients. Each goes through the worker's override policy
and :func:`unsafe_client_setting`, then :func:`to_librdkafka`."""

WORKER_ONLY_CLIENT_SETTINGS: Mapping[str, str] = {
    "plugin.library.paths": "it loads native libraries into the worker",
    "ssl.engine.location": "it loads an OpenSSL engine (a native library) into the worker",
    "ssl.engine.id": "it picks the OpenSSL engine a native library provides",
    "ssl_engine_callback_data": "it is handed to an OpenSSL engine",
    "ssl.providers": "it loads OpenSSL providers (native libraries) into the worker",
    "sasl.kerberos.kinit.cmd": "it is a shell command the client runs on the worker",
    "enable.sasl.oauthbearer.unsecure.jwt": (
        "it makes the client sign its own tokens for any principal (the unsecured OAUTHBEARER login)"
    ),
}
"""librdkafka settings no connector config may make, whatever the policy: they load native code or run a
command on the worker host, or let the client name its own principal. A worker file's settings are the
operator's and are not checked."""

# The Kerberos keytab and principal are pasted into librdkafka's kinit command line (the keytab inside
# double quotes, the principal bare): only characters a shell leaves alone there.
_SHELL_SAFE = {
    "sasl.kerberos.keytab": re.compile(r"[^\"$`\n\r]*"),
    "sasl.kerberos.principal": re.compile(r"[A-Za-z0-9._/@+=:-]*"),
}
_POLICIES = {
    "all": "All",
    "none": "None",
    "principal": "Principal",
    "org.apache.kafka.connect.connector.policy.allconnectorclientconfigoverridepolicy": "All",
    "org.apache.kafka.connect.connector.policy.noneconnectorclientconfigoverridepolicy": "None",
    "org.apache.kafka.connect.connector.policy.principalconnectorclientconfigoverridepolicy": "Principal",
}
_PRINCIPAL_KEYS = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


def override_policy(value: Any) -> str:
    """``All``, ``None`` or ``Principal`` for the worker's ``connector.client.config.override.policy``."""
    text = "All" if value is None or not str(value).strip() else str(value).strip()
    policy = _POLICIES.get(text.lower())
    if policy is None:
        raise ConfigError("must be All, None or Principal", "connector.client.config.override.policy", text)
    return policy


def _allowed(policy: str, name: str) -> bool:
    return policy == "All" or (policy == "Principal" and name in _PRINCIPAL_KEYS)


def _unsafe_librdkafka(name: str, value: Any) -> str | None:
    reason = WORKER_ONLY_CLIENT_SETTINGS.get(name)
    if reason is not None:
        if name == "enable.sasl.oauthbearer.unsecure.jwt" and str(value).strip().lower() != "true":
            return None
        return f"'{name}' cannot be set in a connector configuration: {reason}"
    pattern = _SHELL_SAFE.get(name)
    if pattern is not None and not pattern.fullmatch(str(value)):
        return f"'{name}' holds characters a shell would interpret (it is pasted into the kinit command)"
    return None


def unsafe_client_setting(name: str, value: Any) -> str | None:
    """Why the client setting ``name`` (Java or librdkafka name, without its connector prefix) may not come
    from a connector config, or None. ``sasl.jaas.config`` is judged by the settings it becomes."""
    if name == "sasl.jaas.config":
        try:
            translated = jaas_to_librdkafka(str(value))
        except Exception:  # a malformed value: the client refuses it with Kafka's message
            return None
        for mapped, mapped_value in translated.items():
            reason = _unsafe_librdkafka(mapped, mapped_value)
            if reason:
                return f"'{name}' cannot be set in a connector configuration this way: {reason}"
        return None
    return _unsafe_librdkafka(name.replace("_", ".") if name.startswith("ssl_") else name, value) or (
        _unsafe_librdkafka(name, value)
    )


def override_violations(connector_config: Mapping[str, Any], policy: Any) -> list[tuple[str, str]]:
    """``(key, message)`` for each connector client setting (:data:`CONNECTOR_CLIENT_PREFIXES`) the policy
    forbids, in Connect's words, or that no connector may make (:func:`unsafe_client_setting`)."""
    name = override_policy(policy)
    out = []
    for key, value in connector_config.items():
        prefix = next((p for p in CONNECTOR_CLIENT_PREFIXES if key.startswith(p)), None)
        if prefix is None:
            continue
        setting = key[len(prefix) :]
        unsafe = unsafe_client_setting(setting, value)
        if unsafe is not None:
            out.append((key, unsafe))
        elif not _allowed(name, setting):
            out.append(
                (
                    key,
                    f"The '{name}' policy does not allow '{setting}' to be overridden "
                    "in the connector configuration.",
                )
            )
    return out


def connector_client_overrides(
    connector_config: Mapping[str, Any], prefixes: tuple[str, ...], worker: Mapping[str, Any]
) -> None:
    """Raise when a task's own client (the schema history's, the signal consumer) would get a setting from
    ``connector_config`` under ``prefixes`` that the worker's policy forbids or no connector may make.

    ``worker``: the worker's entries (the task context's ``worker_client_config``, which carries the
    policy); empty when there is no worker (``cdc snapshot``, run by an operator on a file of their own),
    and then nothing is checked. REST refuses the same keys on create and update; this is for a config
    stored before (another policy, an older version).
    """
    if not worker:
        return
    violations = override_violations(
        {k: v for k, v in connector_config.items() if k.startswith(prefixes)}, worker.get(OVERRIDE_POLICY_KEY)
    )
    if violations:
        from cdc.api.errors import ConnectError

        raise ConnectError(
            "Client Config Overrides not allowed " + "; ".join(f"{k}: {m}" for k, m in violations)
        )


def connector_client_settings(
    worker_props: Mapping[str, Any], connector_config: Mapping[str, Any], role: str, policy: Any
) -> dict[str, str]:
    """Java-style settings of a connector's ``role`` client (producer, consumer, admin).

    The worker's shared settings and its ``<role>.`` keys (:func:`client_config`), then
    the connector's ``<role>.override.`` keys; an override the policy forbids is an error, as in
    Connect's ``Worker.connectorClientConfigOverrides``.
    """
    from cdc.api.errors import ConnectError

    violations = override_violations(
        {k: v for k, v in connector_config.items() if k.startswith(OVERRIDE_PREFIXES[role])}, policy
    )
    if violations:
        raise ConnectError("Client Config Overrides not allowed " + "; ".join(m for _, m in violations))
    settings = client_config(worker_props, role + ".")
    prefix = OVERRIDE_PREFIXES[role]
    settings.update({k[len(prefix) :]: str(v) for k, v in connector_config.items() if k.startswith(prefix)})
    return settings


_HISTORY_BOOTSTRAP_KEYS = (
    "schema.history.internal.kafka.bootstrap.servers",
    "database.history.kafka.bootstrap.servers",
)
_HISTORY_PREFIXES = ("schema.history.internal.", "database.history.")
_SHARED_SECURITY = ("security.protocol", "sasl.", "ssl.")


def history_client_defaults(
    worker_props: Mapping[str, Any], task_config: Mapping[str, Any]
) -> dict[str, str]:
    """Security settings for a Debezium schema history that falls back to the worker's brokers.

    A MySQL source whose config names no history brokers writes its history to the worker's cluster
    (:func:`cdc.mysql.history.open_history`), so its history clients need the worker's ``security.protocol``,
    ``sasl.*`` and ``ssl.*`` too: they are given as ``schema.history.internal.{producer,consumer}.*``
    defaults, unless the connector sets that key under either prefix. A history on brokers the
    connector names keeps Debezium's rule: its clients get only the connector's own settings.
    """
    if any(task_config.get(key) for key in _HISTORY_BOOTSTRAP_KEYS):
        return {}
    out: dict[str, str] = {}
    for key, value in worker_props.items():
        if not key.startswith(_SHARED_SECURITY) or value is None:
            continue
        for role in ("producer", "consumer"):
            if not any(f"{prefix}{role}.{key}" in task_config for prefix in _HISTORY_PREFIXES):
                out[f"schema.history.internal.{role}.{key}"] = str(value)
    return out
