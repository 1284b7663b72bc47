"""Kafka client settings: from the Java client keys users write to librdkafka's.

Worker and connector files carry Java client settings (``producer.acks``, ``sasl.jaas.config`` …).
librdkafka (under confluent-kafka) shares most names but rejects unknown ones, so every client the
worker builds goes through :func:`to_librdkafka`: names librdkafka knows pass, a few are translated, and
Java-only ones (e.g. ``key.serializer``) are dropped with a debug log naming them (never their values).

Security settings map as follows (Java → librdkafka):

* ``sasl.jaas.config``, parsed as Kafka's ``JaasConfig`` does (:func:`parse_jaas`: ``"…"`` or ``'…'``
  values unescaped, Kafka's errors for a malformed value): ``PlainLoginModule`` / ``ScramLoginModule``
  ``username``/``password`` → ``sasl.username``/``sasl.password``; ``Krb5LoginModule``
  ``keyTab``/``principal``/``serviceName`` → ``sasl.kerberos.keytab``/``.principal``/``.service.name``;
  ``OAuthBearerLoginModule``'s unsecured-token options → librdkafka's unsecured JWT handler
  (``enable.sasl.oauthbearer.unsecure.jwt`` + ``sasl.oauthbearer.config``), its OIDC options
  (``clientId``, ``clientSecret``, ``scope``, ``extension_*``) with ``sasl.oauthbearer.token.endpoint.url``
  → ``sasl.oauthbearer.method=oidc`` and ``sasl.oauthbearer.client.id`` …. ``sasl.mechanism``,
  ``security.protocol`` pass as they are.
* trust store: a PEM ``ssl.truststore.location`` → ``ssl.ca.location``; ``ssl.truststore.certificates``
  → ``ssl.ca.pem``. A JKS trust store cannot be read by librdkafka: it is dropped with a warning.
* key store by ``ssl.keystore.type`` (or the file's extension when absent): PKCS12 →
  ``ssl.keystore.location`` + ``ssl.keystore.password``; PEM → ``ssl.certificate.location`` and
  ``ssl.key.location`` (one file with both); inline ``ssl.keystore.certificate.chain`` /
  ``ssl.keystore.key`` → ``ssl.certificate.pem`` / ``ssl.key.pem``; ``ssl.key.password`` passes. JKS is
  dropped with a warning.
* ``ssl.endpoint.identification.algorithm`` empty (Java's "off") → ``none``.
* ``metadata.max.age.ms`` (Java: refresh the metadata at least this often, 5 min) →
  ``topic.metadata.refresh.interval.ms`` (the same meaning and default in librdkafka, whose own
  ``metadata.max.age.ms`` is the metadata cache's expiry instead).

Connector-level client overrides (``producer.override.*``, ``consumer.override.*``, ``admin.override.*``)
are allowed by the worker's ``connector.client.config.override.policy``, as in Connect: ``All`` (default),
``None`` (none at all), ``Principal`` (only ``sasl.jaas.config``, ``sasl.mechanism``, ``security.protocol``);
the policy's class names are accepted too. :func:`override_violations` gives the validate errors and
:func:`connector_client_settings` the settings of one client of a connector.

:func:`lookup_cluster_id` is Connect's ``ConnectUtils.lookupKafkaClusterId``: the first request a worker
makes, failing at once, with a message naming the cause, when the credentials are wrong (librdkafka itself
only retries, and an admin request then times out without saying why). A task's clients report to an
``error_cb`` too: :func:`client_failure` tells which errors fail the task (refused credentials, fatal
errors) from those librdkafka retries (a broker down), :func:`client_failure_message` words the failure.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdc.api.errors import ConfigError

__all__ = [
    "OVERRIDE_PREFIXES",
    "ClientErrors",
    "JaasEntry",
    "client_failure",
    "client_failure_message",
    "connector_client_settings",
    "history_client_defaults",
    "lookup_cluster_id",
    "override_policy",
    "override_violations",
    "parse_jaas",
    "to_librdkafka",
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


# -- sasl.jaas.config ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JaasEntry:
    """One login module of a ``sasl.jaas.config`` value, as Kafka's ``JaasConfig`` parses it."""

    module: str
    flag: str
    options: dict[str, str]

    @property
    def simple_name(self) -> str:
        """The module's class name without its package (``PlainLoginModule``)."""
        return self.module.rsplit(".", 1)[-1]


_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_JAVA_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_OCTAL = "01234567"
_VALUES = ("word", "quoted")  # a number has no string value in StreamTokenizer: Kafka refuses it


def _word_char(c: str, first: bool) -> bool:
    """java.io.StreamTokenizer's word characters, with the ``-``, ``_`` and ``$`` JaasConfig adds; digits
    and ``.`` continue a word (they are "numeric" characters, which a word may hold past its start)."""
    if ("a" <= c <= "z") or ("A" <= c <= "Z") or c in "_$" or ord(c) >= 160:
        return True
    return not first and ((c.isascii() and c.isdigit()) or c in ".-")


def _jaas_tokens(text: str) -> list[tuple[str, str]]:
    """The tokens of a JAAS value as ``(kind, text)``: ``word``, ``quoted`` (unescaped, ``"`` or ``'``),
    ``number``, or a single other character as its own kind (``=``, ``;`` …). Comments (``//``, ``/* */``
    and a lone ``/`` to the line's end) and white space are skipped, as java.io.StreamTokenizer does."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == "/":
            while i < n and text[i] not in "\r\n":
                i += 1
        elif c in "\"'":
            i += 1
            chars: list[str] = []
            while i < n and text[i] != c and text[i] not in "\r\n":
                if text[i] == "\\" and i + 1 < n:
                    escaped = text[i + 1]
                    if escaped in _OCTAL:  # up to three octal digits, the first at most 3 for three
                        j = i + 2
                        limit = i + (4 if escaped <= "3" else 3)
                        while j < min(limit, n) and text[j] in _OCTAL:
                            j += 1
                        chars.append(chr(int(text[i + 1 : j], 8)))
                        i = j
                    else:
                        chars.append(_JAVA_ESCAPES.get(escaped, escaped))
                        i += 2
                else:
                    chars.append(text[i])
                    i += 1
            i += 1  # the closing quote (an unterminated string ends at the line's end, as in Java)
            out.append(("quoted", "".join(chars)))
        elif _word_char(c, first=True):
            j = i + 1
            while j < n and _word_char(text[j], first=False):
                j += 1
            out.append(("word", text[i:j]))
            i = j
        elif (c.isascii() and c.isdigit()) or c in ".-":
            j = i + 1
            while j < n and ((text[j].isascii() and text[j].isdigit()) or text[j] == "."):
                j += 1
            out.append(("number", text[i:j]))
            i = j
        else:
            out.append((c, c))
            i += 1
    return out


def _jaas_error(reason: str) -> ConfigError:
    from cdc.api.errors import ConfigError

    # Never the value: it holds the password.
    return ConfigError(f"Invalid value [hidden] for configuration sasl.jaas.config: {reason}")


def parse_jaas(value: str) -> JaasEntry:
    """The login module of a client's ``sasl.jaas.config``, parsed as Kafka's ``JaasConfig`` does.

    Quoted values (``"…"`` or ``'…'``) are unescaped as java.io.StreamTokenizer does (``\\"`` is ``"``,
    ``\\\\`` is ``\\``, ``\\n`` a line feed …); unquoted words are taken as they are. A value Kafka
    refuses is refused with Kafka's message (no login module, a bad control flag, a key without a value,
    no terminating ``;``, more than one module): a :class:`~cdc.api.errors.ConfigError` that never quotes
    the value.
    """
    tokens = _jaas_tokens(value)
    entries: list[JaasEntry] = []
    pos = 0
    while pos < len(tokens):
        module = tokens[pos][1]
        pos += 1
        if pos >= len(tokens):
            raise _jaas_error("Login module control flag not specified in JAAS config")
        flag = tokens[pos][1]
        pos += 1
        if flag.upper() not in _FLAGS:
            raise _jaas_error(f"Invalid login module control flag '{flag}' in JAAS config")
        options: dict[str, str] = {}
        while pos < len(tokens) and tokens[pos][0] != ";":
            key = tokens[pos][1]
            if pos + 2 >= len(tokens) or tokens[pos + 1][0] != "=" or tokens[pos + 2][0] not in _VALUES:
                raise _jaas_error(f"Value not specified for key '{key}' in JAAS config")
            options[key] = tokens[pos + 2][1]
            pos += 3
        if pos >= len(tokens):
            raise _jaas_error("JAAS config entry not terminated by semi-colon")
        pos += 1
        entries.append(JaasEntry(module, flag, options))
    if not entries:
        raise _jaas_error("Login module not specified in JAAS config")
    if len(entries) > 1:
        raise _jaas_error(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    return entries[0]


# OAuthBearerLoginModule's unsecured-token options (Java) and librdkafka's unsecured JWT handler's names.
_UNSECURED = "unsecuredLogin"


def _oauthbearer(options: Mapping[str, str]) -> dict[str, str]:
    """librdkafka's OAUTHBEARER settings for OAuthBearerLoginModule's options.

    With ``unsecuredLogin*`` options (Java's built-in unsecured tokens): librdkafka's unsecured JWT
    handler, ``sasl.oauthbearer.config`` = ``principalClaimName``, ``principal``, ``scopeClaimName``,
    ``scope``, ``lifeSeconds`` and ``extension_<name>``. Otherwise (OIDC, KIP-768, with
    ``sasl.oauthbearer.token.endpoint.url``): ``clientId``, ``clientSecret``, ``scope`` and
    ``extension_<name>`` → ``sasl.oauthbearer.client.id`` … ``sasl.oauthbearer.extensions``.
    """
    out: dict[str, str] = {}
    if any(k.startswith(_UNSECURED) for k in options):
        principal_claim = options.get(_UNSECURED + "PrincipalClaimName", "sub")
        scope_claim = options.get(_UNSECURED + "ScopeClaimName", "scope")
        parts = []
        if principal_claim != "sub":
            parts.append(f"principalClaimName={principal_claim}")
        principal = options.get(f"{_UNSECURED}StringClaim_{principal_claim}")
        if principal is not None:
            parts.append(f"principal={principal}")
        if scope_claim != "scope":
            parts.append(f"scopeClaimName={scope_claim}")
        scopes = options.get(f"{_UNSECURED}ListClaim_{scope_claim}")
        if scopes:  # Java: the first character is the delimiter
            parts.append("scope=" + ",".join(s for s in scopes[1:].split(scopes[0]) if s))
        elif options.get(f"{_UNSECURED}StringClaim_{scope_claim}"):
            parts.append(f"scope={options[f'{_UNSECURED}StringClaim_{scope_claim}']}")
        if options.get(_UNSECURED + "LifetimeSeconds"):
            parts.append(f"lifeSeconds={options[_UNSECURED + 'LifetimeSeconds']}")
        prefix = _UNSECURED + "Extension_"
        parts.extend(f"extension_{k[len(prefix) :]}={v}" for k, v in options.items() if k.startswith(prefix))
        out["enable.sasl.oauthbearer.unsecure.jwt"] = "true"
        if parts:
            out["sasl.oauthbearer.config"] = " ".join(parts)
        return out
    for java, name in (
        ("clientId", "sasl.oauthbearer.client.id"),
        ("clientSecret", "sasl.oauthbearer.client.secret"),
        ("scope", "sasl.oauthbearer.scope"),
    ):
        if java in options:
            out[name] = options[java]
    extensions = [f"{k[len('extension_') :]}={v}" for k, v in options.items() if k.startswith("extension_")]
    if extensions:
        out["sasl.oauthbearer.extensions"] = ",".join(extensions)
    return out


def _jaas(value: str) -> dict[str, str]:
    entry = parse_jaas(value)
    options, name = entry.options, entry.simple_name
    out: dict[str, str] = {}
    if name == "Krb5LoginModule":
        if "keyTab" in options:
            out["sasl.kerberos.keytab"] = options["keyTab"]
        if "principal" in options:
            out["sasl.kerberos.principal"] = options["principal"]
        if "serviceName" in options:
            out["sasl.kerberos.service.name"] = options["serviceName"]
        return out
    if name == "OAuthBearerLoginModule":
        return _oauthbearer(options)
    if "username" in options:  # PlainLoginModule, ScramLoginModule
        out["sasl.username"] = options["username"]
    if "password" in options:
        out["sasl.password"] = options["password"]
    return out


def _store_type(settings: Mapping[str, Any], kind: str) -> str:
    declared = settings.get(f"ssl.{kind}.type")
    if declared:
        return str(declared).strip().upper()
    location = str(settings.get(f"ssl.{kind}.location") or "").lower()
    if location.endswith((".p12", ".pfx", ".pkcs12")):
        return "PKCS12"
    if location.endswith((".pem", ".crt", ".cer", ".key")):
        return "PEM"
    return "JKS"  # Java's default


def _ssl_stores(settings: Mapping[str, Any], out: dict[str, Any]) -> None:
    """Java's key and trust store settings in librdkafka's terms (see the module docstring)."""
    truststore = settings.get("ssl.truststore.location")
    if truststore:
        if _store_type(settings, "truststore") == "PEM":
            out["ssl.ca.location"] = truststore
        else:
            log.warning(
                "ssl.truststore.location %s is not PEM, which the Kafka clients of this worker "
                "cannot read: give a PEM file (ssl.truststore.type=PEM)",
                truststore,
            )
    keystore = settings.get("ssl.keystore.location")
    if keystore:
        kind = _store_type(settings, "keystore")
        if kind == "PKCS12":
            out["ssl.keystore.location"] = keystore
            if settings.get("ssl.keystore.password") is not None:
                out["ssl.keystore.password"] = settings["ssl.keystore.password"]
        elif kind == "PEM":
            out["ssl.certificate.location"] = keystore
            out["ssl.key.location"] = keystore
            if "ssl.key.password" not in settings and settings.get("ssl.keystore.password") is not None:
                out["ssl.key.password"] = settings["ssl.keystore.password"]
        else:
            log.warning(
                "ssl.keystore.location %s is a %s key store, which the Kafka clients of this worker "
                "cannot read: give a PEM or PKCS12 file",
                keystore,
                kind,
            )


def to_librdkafka(settings: Mapping[str, Any]) -> dict[str, Any]:
    """librdkafka settings for Java-style client ``settings``."""
    out: dict[str, Any] = {}
    dropped: list[str] = []
    _ssl_stores(settings, out)
    for key, value in settings.items():
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if key in _SSL_STORE_KEYS:
            continue
        if key == "sasl.jaas.config":
            for name, mapped in _jaas(str(value)).items():
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


# -- the first request -----------------------------------------------------------------------------------
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
    import time

    from confluent_kafka.admin import AdminClient

    from cdc.api.errors import ConnectError

    errors: list[Any] = []
    config: dict[str, Any] = {**to_librdkafka(settings), "error_cb": errors.append}
    admin = AdminClient(config)
    future = admin.describe_cluster(request_timeout=timeout)
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        admin.poll(0.1)  # serves error_cb
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


# -- connector client overrides --------------------------------------------------------------------------
OVERRIDE_PREFIXES = {
    "producer": "producer.override.",
    "consumer": "consumer.override.",
    "admin": "admin.override.",
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
        from cdc.api.errors import ConfigError

        raise ConfigError("must be All, None or Principal", "connector.client.config.override.policy", text)
    return policy


def _allowed(policy: str, name: str) -> bool:
    return policy == "All" or (policy == "Principal" and name in _PRINCIPAL_KEYS)


def override_violations(connector_config: Mapping[str, Any], policy: Any) -> list[tuple[str, str]]:
    """``(key, message)`` for each client override the policy forbids, in Connect's words."""
    name = override_policy(policy)
    out = []
    for key in connector_config:
        for prefix in OVERRIDE_PREFIXES.values():
            if key.startswith(prefix) and not _allowed(name, key[len(prefix) :]):
                out.append(
                    (
                        key,
                        f"The '{name}' policy does not allow '{key[len(prefix) :]}' to be overridden "
                        "in the connector configuration.",
                    )
                )
    return out


def connector_client_settings(
    worker_props: Mapping[str, Any], connector_config: Mapping[str, Any], role: str, policy: Any
) -> dict[str, str]:
    """Java-style settings of a connector's ``role`` client (producer, consumer, admin).

    The worker's shared settings and its ``<role>.`` keys (:func:`cdc.worker.config.client_config`), then
    the connector's ``<role>.override.`` keys; an override the policy forbids is an error, as in
    Connect's ``Worker.connectorClientConfigOverrides``.
    """
    from cdc.api.errors import ConnectError
    from cdc.worker.config import client_config

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
    (``cdc.worker.bootstrap.servers``), so its history clients need the worker's ``security.protocol``,
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
