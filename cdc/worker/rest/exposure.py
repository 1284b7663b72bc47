"""The worker refuses a REST listener open to every network interface without authentication.

A listener is *open* when it binds every interface (an empty host, ``0.0.0.0``, ``::``) and nothing
authenticates its callers: no basic authentication (:mod:`cdc.worker.rest.auth`) and, for an ``https``
listener, no required client certificate (``listeners.https.ssl.client.auth=required``).

The decision, and why. Connect's default listener is ``http://:8083`` (every interface, no
authentication), and the seed configs rely on it (``rest.port=8083`` alone, or no REST key at all); a
drop-in worker must start on them unchanged, and users of a worker in a container need remote access. So:

* an open listener the user *wrote* (``listeners=http://:8083``, ``listeners=http://0.0.0.0:8083``,
  ``admin.listeners=…``, ``rest.host.name=0.0.0.0``) stops the start with a message naming the ways
  out, unless ``rest.allow.unauthenticated.all.interfaces=true``;
* an open listener that is only Connect's default (no ``listeners`` key, no ``rest.host.name``; a
  ``rest.port`` alone keeps the default host) starts, with a WARNING in the log naming the same ways out.

Writing an address is where a user decides who may reach the API, so that is where we ask them to
decide about authentication too; the default keeps the behaviour users of Connect expect.
"""

from __future__ import annotations

import ipaddress
import logging

from cdc.api.errors import ConfigError
from cdc.worker.rest.settings import Listener, RestSettings

__all__ = ["ALLOW_CONFIG", "check_exposure", "is_all_interfaces", "open_listeners"]

log = logging.getLogger(__name__)

ALLOW_CONFIG = "rest.allow.unauthenticated.all.interfaces"


def is_all_interfaces(host: str) -> bool:
    host = host.strip().strip("[]")
    if not host:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_unspecified
    except ValueError:
        return False


def open_listeners(settings: RestSettings) -> list[Listener]:
    """The listeners that bind every interface and authenticate nobody."""
    if settings.authenticator is not None:
        return []
    out = []
    for listener in [*settings.listeners, *(settings.admin_listeners or [])]:
        if not is_all_interfaces(listener.host):
            continue
        if listener.scheme == "https" and settings.ssl.client_auth == "required":
            continue
        out.append(listener)
    return out


def _ways_out(listeners: list[Listener]) -> str:
    names = ", ".join(str(x) for x in listeners)
    port = listeners[0].port
    return (
        f"The REST listener(s) {names} accept connections on every network interface without "
        f"authentication. Bind them to one address (e.g. listeners=http://127.0.0.1:{port}), turn on "
        "basic authentication (rest.basic.auth.credentials.file=/path/users.properties, or Connect's "
        "rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension."
        "BasicAuthSecurityRestExtension), require client certificates on an https listener "
        f"(listeners.https.ssl.client.auth=required), or set {ALLOW_CONFIG}=true"
    )


def check_exposure(settings: RestSettings) -> None:
    """Raise :class:`ConfigError` for an open listener the user wrote; warn for the default one."""
    exposed = open_listeners(settings)
    if not exposed:
        return
    if settings.allow_unauthenticated_all_interfaces:
        log.warning(
            "REST API open to every network interface without authentication (%s=true): %s",
            ALLOW_CONFIG,
            ", ".join(str(x) for x in exposed),
        )
        return
    explicit = [x for x in exposed if settings.listeners_explicit or x in (settings.admin_listeners or [])]
    if explicit:
        raise ConfigError(f"Refusing to start: {_ways_out(explicit)}.")
    log.warning(
        "*** SECURITY WARNING *** %s. Connect's default listener is kept for compatibility; "
        "a listener written this way in 'listeners' would stop the worker.",
        _ways_out(exposed),
    )
