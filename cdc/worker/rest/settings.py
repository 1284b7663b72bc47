"""REST server settings, read from the worker properties the way Kafka Connect's ``RestServerConfig`` does.

* ``listeners`` (default ``http://:8083``): comma list of ``scheme://host:port``; the scheme is ``http`` or
  ``https`` in any case, an empty host binds every interface. Only when ``listeners`` is absent do the
  legacy ``rest.host.name`` / ``rest.port`` make the single listener.
* ``admin.listeners``: absent → ``/admin`` is served on the main listeners; empty → ``/admin`` is off;
  otherwise ``/admin`` is served only there.
* ``rest.advertised.{host.name,port,listener}``: the URL published to peers and the ``worker_id``.
* ``access.control.allow.{origin,methods}`` (CORS), ``response.http.headers.config`` (Jetty's
  ``HeaderFilter`` syntax: ``[action] [name]: [value]`` with actions set, add, setDate, addDate),
  ``topic.tracking.enable`` / ``topic.tracking.allow.reset``.
* ``https`` listeners take ``listeners.https.ssl.*`` (falling back to ``ssl.*``); PEM key stores only
  (``ssl.keystore.location`` or the inline ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``), PEM
  trust stores (``ssl.truststore.location`` or inline ``ssl.truststore.certificates``). The same material
  makes the client this worker uses to reach its peers (:mod:`cdc.worker.rest.client`).
* Authentication (:mod:`cdc.worker.rest.auth`): ``rest.extension.classes`` with Connect's
  ``BasicAuthSecurityRestExtension``, or our ``rest.basic.auth.credentials.file``.
* ``rest.allow.unauthenticated.all.interfaces`` (ours, default false): see :mod:`cdc.worker.rest.exposure`.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc.api.errors import ConfigError
from cdc.config.settings import setting, setting_keys, settings_from

__all__ = ["HeaderAction", "Listener", "RestSettings", "SslSettings", "parse_listeners"]

# Connect's RestServer.LISTENER_PATTERN: scheme://host:port, IPv6 hosts in brackets.
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")
_HEADER = re.compile(r"^\s*(set|add|setDate|addDate)\s+([^\s:]+)\s*:\s*(.*?)\s*$")
# Commas split header entries except inside double quotes (Connect's RestServerConfig does the same).
_COMMA_OUTSIDE_QUOTES = re.compile(r',(?=(?:[^"]*"[^"]*")*[^"]*$)')


@dataclass(frozen=True)
class Listener:
    scheme: str  # "http" | "https", lower case
    host: str  # "" = every interface
    port: int  # 0 = any free port

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


@dataclass(frozen=True)
class HeaderAction:
    action: str  # set | add | setDate | addDate
    name: str
    value: str


@dataclass(frozen=True)
class SslSettings:
    """The key and trust stores of an ``https`` listener: PEM, or Java stores (JKS, JCEKS, PKCS12) read with
    :mod:`cdc.keystores`; ``keys`` names the configuration key each value came from, for errors."""

    keystore_type: str = "PEM"  # declared; the file's content decides, as in the JVM since Java 9
    keystore_location: str | None = None  # PEM (private key + chain), JKS or PKCS12
    keystore_certificate_chain: str | None = None  # inline PEM (Kafka's ssl.keystore.certificate.chain)
    keystore_key: str | None = None  # inline PEM (ssl.keystore.key)
    key_password: str | None = field(default=None, repr=False)
    keystore_password: str | None = field(default=None, repr=False)
    truststore_type: str = "PEM"
    truststore_location: str | None = None  # PEM bundle of trusted certificates, JKS or PKCS12
    truststore_password: str | None = field(default=None, repr=False)
    truststore_certificates: str | None = None  # inline PEM (ssl.truststore.certificates)
    client_auth: str = "none"  # none | requested | required
    endpoint_identification: bool = True  # ssl.endpoint.identification.algorithm: "https" (default) or ""
    keys: Mapping[str, str] = field(default_factory=dict)
    """``keystore.location`` → ``listeners.https.ssl.keystore.location`` or ``ssl.keystore.location``."""

    def key(self, name: str) -> str:
        return self.keys.get(name, f"ssl.{name}")

    @property
    def has_keystore(self) -> bool:
        return bool(self.keystore_location or (self.keystore_certificate_chain and self.keystore_key))

    @property
    def has_truststore(self) -> bool:
        return bool(self.truststore_location or self.truststore_certificates)


def parse_listeners(value: str, key: str = "listeners") -> list[Listener]:
    listeners = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        match = _LISTENER.match(item)
        if match is None:
            raise ConfigError(f"Could not parse listener {item}", key, value)
        scheme = match.group(1).lower()
        if scheme not in ("http", "https"):
            message = f'Listener protocol must be either "http" or "https", but is {scheme}'
            raise ConfigError(message, key, value)
        port = int(match.group(3))
        if not 0 <= port <= 65535:
            raise ConfigError(f"Invalid port {port} in listener {item}", key, value)
        listeners.append(Listener(scheme, match.group(2), port))
    return listeners


def parse_header_config(value: str) -> list[HeaderAction]:
    actions = []
    for raw in _COMMA_OUTSIDE_QUOTES.split(value):
        entry = raw.strip()
        if entry.startswith('"') and entry.endswith('"') and len(entry) >= 2:
            entry = entry[1:-1]
        if not entry:
            continue
        match = _HEADER.match(entry)
        if match is None:
            raise ConfigError(
                "Invalid format of header config. Expected: '[action] [header name]:[header value]'",
                "response.http.headers.config",
                raw.strip(),
            )
        actions.append(HeaderAction(match.group(1), match.group(2), match.group(3)))
    return actions


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _ssl(props: Mapping[str, str]) -> SslSettings:
    keys: dict[str, str] = {}

    def get(name: str) -> str | None:
        key = f"listeners.https.ssl.{name}" if f"listeners.https.ssl.{name}" in props else f"ssl.{name}"
        keys[name] = key
        value = props.get(key)
        return value if value else None

    client_auth = (get("client.auth") or "none").strip().lower()
    if client_auth not in ("none", "requested", "required"):
        raise ConfigError(
            "must be one of none, requested, required", "listeners.https.ssl.client.auth", client_auth
        )
    identification = props.get(
        "listeners.https.ssl.endpoint.identification.algorithm",
        props.get("ssl.endpoint.identification.algorithm", "https"),
    )
    return SslSettings(
        keystore_type=(get("keystore.type") or "PEM").strip().upper(),
        keystore_location=get("keystore.location"),
        keystore_certificate_chain=get("keystore.certificate.chain"),
        keystore_key=get("keystore.key"),
        key_password=get("key.password") or get("keystore.password"),
        keystore_password=get("keystore.password"),
        truststore_type=(get("truststore.type") or "PEM").strip().upper(),
        truststore_location=get("truststore.location"),
        truststore_password=get("truststore.password"),
        truststore_certificates=get("truststore.certificates"),
        client_auth=client_auth,
        endpoint_identification=bool((identification or "").strip()),
        keys=keys,
    )


# Kafka's max.request.size: the largest config record Connect's producer writes to the config topic, so the
# largest connector config a Connect worker can store.
DEFAULT_REQUEST_BODY_MAX_BYTES = 1048576


@dataclass(frozen=True)
class RestKeys:
    """The REST keys of the worker file, parsed by :data:`cdc.worker.config.REST_DEF`."""

    listeners: tuple[str, ...] = setting("listeners")
    rest_host_name: str | None = setting("rest.host.name")
    rest_port: int = setting("rest.port")
    admin_listeners: tuple[str, ...] | None = setting("admin.listeners")
    rest_advertised_host_name: str | None = setting("rest.advertised.host.name")
    rest_advertised_port: int | None = setting("rest.advertised.port")
    rest_advertised_listener: str | None = setting("rest.advertised.listener")
    access_control_allow_origin: str = setting("access.control.allow.origin")
    access_control_allow_methods: str = setting("access.control.allow.methods")
    response_http_headers_config: str = setting("response.http.headers.config")
    rest_extension_classes: tuple[str, ...] = setting("rest.extension.classes")
    rest_basic_auth_credentials_file: str | None = setting("rest.basic.auth.credentials.file")
    rest_allow_unauthenticated_all_interfaces: bool = setting("rest.allow.unauthenticated.all.interfaces")
    rest_request_body_max_bytes: int = setting("rest.request.body.max.bytes")
    rest_request_header_timeout_ms: int = setting("rest.request.header.timeout.ms")
    rest_idle_timeout_ms: int = setting("rest.idle.timeout.ms")
    topic_tracking_enable: bool = setting("topic.tracking.enable")
    topic_tracking_allow_reset: bool = setting("topic.tracking.allow.reset")
    connector_client_config_override_policy: str = setting("connector.client.config.override.policy")
    snapshot_spark_allowed_masters: tuple[str, ...] = setting("snapshot.spark.allowed.masters")

    @staticmethod
    def listeners_given(props: Mapping[str, str]) -> bool:
        """Whether the file sets ``listeners`` (else Connect 3.x's rest.host.name/rest.port apply)."""
        return setting_keys(RestKeys)["listeners"] in props


@dataclass
class RestSettings:
    listeners: list[Listener] = field(default_factory=lambda: [Listener("http", "", 8083)])
    admin_listeners: list[Listener] | None = None  # None: admin on the main listeners; []: admin off
    advertised_host_name: str | None = None
    advertised_port: int | None = None
    advertised_listener: str | None = None  # "http" | "https"
    cors_allowed_origins: list[str] = field(default_factory=list)
    cors_allowed_methods: list[str] = field(default_factory=list)
    response_headers: list[HeaderAction] = field(default_factory=list)
    rest_extension_classes: list[str] = field(default_factory=list)  # BasicAuthSecurityRestExtension only
    topic_tracking_enable: bool = True
    topic_tracking_allow_reset: bool = True
    ssl: SslSettings = field(default_factory=SslSettings)
    request_timeout_s: float = 90.0
    health_timeout_s: float = 10.0
    authenticator: Any = None  # a cdc.worker.rest.auth.BasicAuthenticator when basic auth is on
    listeners_explicit: bool = False  # the listeners were written by the user, not Connect's default
    allow_unauthenticated_all_interfaces: bool = False
    client_override_policy: str = "All"  # connector.client.config.override.policy, checked on create/update
    spark_allowed_masters: tuple[str, ...] = ()  # snapshot.spark.allowed.masters, checked on create/update
    request_body_max_bytes: int = DEFAULT_REQUEST_BODY_MAX_BYTES  # rest.request.body.max.bytes
    header_timeout_s: float = 20.0  # rest.request.header.timeout.ms
    idle_timeout_s: float = 30.0  # rest.idle.timeout.ms

    @classmethod
    def from_properties(
        cls, props: Mapping[str, str], environ: Mapping[str, str] | None = None
    ) -> RestSettings:
        """The settings of ``props`` (the worker file); ``environ`` (default ``os.environ``) supplies
        ``KAFKA_OPTS``. The keys are parsed by :data:`cdc.worker.config.REST_DEF` (declared once, in the
        worker's definition) and read as :class:`RestKeys`; only the TLS keys, read as a group by prefix
        (``listeners.https.ssl.*`` over ``ssl.*``), stay a mapping."""
        from cdc.kafka.clients import override_policy
        from cdc.worker.config import REST_DEF
        from cdc.worker.rest.auth import basic_auth

        keys = settings_from(RestKeys, REST_DEF.parse(props))
        if keys.listeners_given(props):
            listeners = parse_listeners(",".join(keys.listeners))
            if not listeners:
                raise ConfigError("At least one listener is required", "listeners", ",".join(keys.listeners))
            explicit = True
        else:
            host = (keys.rest_host_name or "").strip()
            listeners = [Listener("http", host, keys.rest_port)]
            explicit = bool(host)  # rest.host.name=0.0.0.0 is a choice; no host at all is the default
        admin = (
            None
            if keys.admin_listeners is None
            else parse_listeners(",".join(keys.admin_listeners), "admin.listeners")
        )
        return cls(
            listeners=listeners,
            admin_listeners=admin,
            advertised_host_name=keys.rest_advertised_host_name or None,
            advertised_port=keys.rest_advertised_port or None,
            advertised_listener=(keys.rest_advertised_listener or "").strip().lower() or None,
            cors_allowed_origins=_csv(keys.access_control_allow_origin),
            cors_allowed_methods=_csv(keys.access_control_allow_methods),
            response_headers=parse_header_config(keys.response_http_headers_config or ""),
            rest_extension_classes=list(keys.rest_extension_classes),
            topic_tracking_enable=keys.topic_tracking_enable,
            topic_tracking_allow_reset=keys.topic_tracking_allow_reset,
            ssl=_ssl(props),
            authenticator=basic_auth(
                keys.rest_extension_classes, keys.rest_basic_auth_credentials_file, environ
            ),
            listeners_explicit=explicit,
            client_override_policy=override_policy(keys.connector_client_config_override_policy),
            spark_allowed_masters=keys.snapshot_spark_allowed_masters,
            allow_unauthenticated_all_interfaces=keys.rest_allow_unauthenticated_all_interfaces,
            request_body_max_bytes=keys.rest_request_body_max_bytes,
            header_timeout_s=keys.rest_request_header_timeout_ms / 1000,
            idle_timeout_s=keys.rest_idle_timeout_ms / 1000,
        )

    @property
    def admin_separate(self) -> bool:
        """True when ``/admin`` lives on its own listeners (or is switched off)."""
        return self.admin_listeners is not None

    def advertised_scheme(self) -> str:
        if self.advertised_listener:
            return self.advertised_listener
        schemes = {listener.scheme for listener in self.listeners}
        return "http" if "http" in schemes or not schemes else "https"

    def advertised_listener_index(self) -> int:
        """Index in :attr:`listeners` of the listener whose port is advertised (first of its scheme)."""
        scheme = self.advertised_scheme()
        for index, listener in enumerate(self.listeners):
            if listener.scheme == scheme:
                return index
        return 0

    def advertised_url(self, bound_ports: list[int] | None = None) -> str:
        """The URL peers use, ``scheme://host:port/``; ``bound_ports`` are the listeners' real ports."""
        index = self.advertised_listener_index()
        listener = self.listeners[index]
        host = self.advertised_host_name or listener.host or local_host_address()
        if self.advertised_port is not None:
            port = self.advertised_port
        elif bound_ports:
            port = bound_ports[index]
        else:
            port = listener.port
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"{self.advertised_scheme()}://{host}:{port}/"

    def worker_id(self, bound_ports: list[int] | None = None) -> str:
        """The advertised ``host:port`` without a scheme, as in Connect's status records."""
        return self.advertised_url(bound_ports).split("://", 1)[1].rstrip("/")


def local_host_address() -> str:
    """What Java's ``InetAddress.getLocalHost().getHostAddress()`` gives (often ``127.0.1.1`` on Debian)."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
