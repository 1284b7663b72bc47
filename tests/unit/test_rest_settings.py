"""RestSettings from worker properties: listeners, advertised URL, headers config, TLS keys."""

from __future__ import annotations

import pytest

from cdc.api.errors import ConfigError
from cdc.worker.rest import HeaderAction, Listener, RestSettings
from cdc.worker.rest.settings import local_host_address, parse_header_config, parse_listeners


def test_defaults() -> None:
    settings = RestSettings.from_properties({})
    assert settings.listeners == [Listener("http", "", 8083)]
    assert settings.admin_listeners is None
    assert settings.advertised_url() == f"http://{local_host_address()}:8083/"
    assert settings.worker_id() == f"{local_host_address()}:8083"
    assert settings.request_timeout_s == 90.0


def test_listeners_scheme_case_insensitive_and_lists() -> None:
    settings = RestSettings.from_properties({"listeners": "HTTP://:18083, https://myhost:8443"})
    assert settings.listeners == [Listener("http", "", 18083), Listener("https", "myhost", 8443)]
    assert settings.advertised_scheme() == "http"
    assert settings.advertised_url() == f"http://{local_host_address()}:18083/"


def test_ipv6_listener() -> None:
    (listener,) = parse_listeners("http://[::1]:8083")
    assert listener == Listener("http", "::1", 8083)
    assert str(listener) == "http://[::1]:8083"
    assert RestSettings(listeners=[listener]).advertised_url() == "http://[::1]:8083/"


@pytest.mark.parametrize("value", ["ftp://:8083", "http://host", "nonsense", "http://:99999"])
def test_bad_listeners(value: str) -> None:
    with pytest.raises(ConfigError):
        RestSettings.from_properties({"listeners": value})


def test_legacy_host_and_port_only_without_listeners() -> None:
    settings = RestSettings.from_properties({"rest.host.name": "10.0.0.5", "rest.port": "8084"})
    assert settings.listeners == [Listener("http", "10.0.0.5", 8084)]
    assert settings.worker_id() == "10.0.0.5:8084"
    settings = RestSettings.from_properties({"rest.port": "8084", "listeners": "http://:8085"})
    assert settings.listeners == [Listener("http", "", 8085)]


def test_advertised() -> None:
    props = {
        "listeners": "http://:0,https://:8443",
        "rest.advertised.host.name": "connect-1.example",
        "rest.advertised.listener": "HTTPS",
    }
    settings = RestSettings.from_properties(props)
    assert settings.advertised_url() == "https://connect-1.example:8443/"
    assert settings.advertised_url([5555, 6666]) == "https://connect-1.example:6666/"
    settings = RestSettings.from_properties({**props, "rest.advertised.port": "9999"})
    assert settings.worker_id([5555, 6666]) == "connect-1.example:9999"
    settings = RestSettings.from_properties({"listeners": "http://:0"})
    assert settings.worker_id([41234]) == f"{local_host_address()}:41234"


def test_admin_listeners() -> None:
    assert RestSettings.from_properties({"admin.listeners": ""}).admin_listeners == []
    settings = RestSettings.from_properties({"admin.listeners": "http://localhost:8084"})
    assert settings.admin_listeners == [Listener("http", "localhost", 8084)]
    assert settings.admin_separate


def test_cors_and_extensions() -> None:
    settings = RestSettings.from_properties(
        {
            "access.control.allow.origin": "*",
            "access.control.allow.methods": "GET, PUT",
            "rest.extension.classes": "com.example.Ext",
        }
    )
    assert settings.cors_allowed_origins == ["*"]
    assert settings.cors_allowed_methods == ["GET", "PUT"]
    assert settings.rest_extension_classes == ["com.example.Ext"]


def test_header_config() -> None:
    actions = parse_header_config(
        'set X-Frame-Options: DENY, "add Cache-Control: no-cache, no-store, must-revalidate", '
        "addDate Expires: 3000"
    )
    assert actions == [
        HeaderAction("set", "X-Frame-Options", "DENY"),
        HeaderAction("add", "Cache-Control", "no-cache, no-store, must-revalidate"),
        HeaderAction("addDate", "Expires", "3000"),
    ]
    with pytest.raises(ConfigError):
        parse_header_config("remove X-Foo: bar")


def test_ssl_keys() -> None:
    settings = RestSettings.from_properties(
        {
            "listeners": "https://:8443",
            "listeners.https.ssl.keystore.location": "/etc/store.pem",
            "ssl.keystore.location": "/ignored.pem",
            "ssl.key.password": "pw",
            "listeners.https.ssl.client.auth": "REQUIRED",
        }
    )
    assert settings.ssl.keystore_location == "/etc/store.pem"
    assert settings.ssl.key_password == "pw"
    assert settings.ssl.client_auth == "required"
    assert settings.advertised_scheme() == "https"
    # ssl.* also configures Kafka clients: a JKS store is fine while no https listener needs it
    jks = RestSettings.from_properties({"ssl.keystore.location": "/x.jks", "ssl.keystore.type": "JKS"})
    assert jks.ssl.keystore_type == "JKS"
