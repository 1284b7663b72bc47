"""What a connector config may make of the Kafka clients a task builds and of the converter classes it
names (issue #24): every client prefix goes through the worker's override policy and no connector sets a
native library or command; converter class names resolve only against cdc's and the plugin registry's."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from cdc.api.errors import ConnectError
from cdc.kafka.clients import (
    connector_client_overrides,
    connector_client_settings,
    override_violations,
    to_librdkafka,
    unsafe_client_setting,
)
from cdc.mysql.converters import CustomConverter, Registration, converter_errors
from cdc.plugins import registry

UNSECURED = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
    'unsecuredLoginStringClaim_sub="admin";'
)
KRB5 = 'com.sun.security.auth.module.Krb5LoginModule required keyTab="/k.keytab" principal="{}";'


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("plugin.library.paths", "/tmp/x.so"),
        ("ssl.engine.location", "/tmp/x.so"),
        ("ssl.engine.id", "x"),
        ("ssl_engine_id", "x"),
        ("ssl.providers", "legacy"),
        ("sasl.kerberos.kinit.cmd", "touch /tmp/m"),
        ("enable.sasl.oauthbearer.unsecure.jwt", "true"),
        ("sasl.kerberos.principal", "kafka/host@REALM; touch /tmp/m"),
        ("sasl.kerberos.keytab", '/k" ; touch /tmp/m; "'),
        ("sasl.kerberos.keytab", "/k$(touch /tmp/m)"),
        ("sasl.jaas.config", UNSECURED),
        ("sasl.jaas.config", KRB5.format("x`touch /tmp/m`")),
    ],
)
def test_settings_that_load_code_or_run_commands_never_come_from_a_connector(name: str, value: str) -> None:
    assert unsafe_client_setting(name, value) is not None
    for prefix in ("producer.override.", "signal.consumer.", "schema.history.internal.consumer."):
        assert [k for k, _ in override_violations({prefix + name: value}, "All")] == [prefix + name]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("enable.sasl.oauthbearer.unsecure.jwt", "false"),
        ("sasl.kerberos.principal", "kafka/host.example.com@EXAMPLE.COM"),
        ("sasl.kerberos.keytab", "/etc/security/keytabs/kafka.keytab"),
        ("sasl.jaas.config", KRB5.format("kafka/h@R")),
        (
            "sasl.jaas.config",
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";',
        ),
        ("sasl.jaas.config", "not a JAAS line"),  # the client refuses it with Kafka's message
        ("acks", "all"),
    ],
)
def test_ordinary_settings_pass(name: str, value: str) -> None:
    assert unsafe_client_setting(name, value) is None


def test_every_client_prefix_follows_the_policy() -> None:
    config = {
        "producer.override.acks": "1",
        "signal.consumer.fetch.max.bytes": "1",
        "schema.history.internal.producer.linger.ms": "1",
        "database.history.consumer.fetch.min.bytes": "1",
        "signal.consumer.security.protocol": "SSL",
        "topic.prefix": "x",
    }
    assert override_violations(config, "All") == []
    assert sorted(k for k, _ in override_violations(config, "None")) == sorted(set(config) - {"topic.prefix"})
    principal = override_violations(config, "Principal")
    assert "signal.consumer.security.protocol" not in dict(principal)
    assert dict(principal)["signal.consumer.fetch.max.bytes"] == (
        "The 'Principal' policy does not allow 'fetch.max.bytes' to be overridden in the connector "
        "configuration."
    )


def test_a_tasks_own_clients_are_checked_only_under_a_worker() -> None:
    config = {"signal.consumer.plugin.library.paths": "/x.so", "signal.consumer.acks": "1"}
    with pytest.raises(ConnectError, match=r"signal\.consumer\.plugin\.library\.paths"):
        connector_client_overrides(config, ("signal.consumer.",), {"bootstrap.servers": "b:9092"})
    with pytest.raises(ConnectError, match="'None' policy"):
        connector_client_overrides(
            {"signal.consumer.acks": "1"},
            ("signal.consumer.",),
            {"connector.client.config.override.policy": "None"},
        )
    connector_client_overrides(config, ("signal.consumer.",), {})  # `cdc snapshot`: the operator's file
    # the worker file's own settings are the operator's: not checked, and only librdkafka's list passes
    assert "plugin.library.paths" not in to_librdkafka({"plugin.library.paths": "/x.so", "acks": "1"})


def test_a_producer_override_that_runs_a_command_fails_the_task() -> None:
    with pytest.raises(ConnectError, match=r"sasl\.kerberos\.kinit\.cmd"):
        connector_client_settings(
            {"bootstrap.servers": "b:9092"},
            {"producer.override.sasl.kerberos.kinit.cmd": "id"},
            "producer",
            "All",
        )


class _Upper(CustomConverter):
    def converter_for(self, column: Any) -> Registration | None:
        return None


def test_converter_names_resolve_only_against_cdcs_and_the_registry(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:10]
    marker = tmp_path / "imported"
    (tmp_path / f"conv_probe_{tag}.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\n"
        "from cdc.mysql.converters import CustomConverter\n"
        "class P(CustomConverter):\n    def converter_for(self, column):\n        return None\n",
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    try:
        for name in (f"conv_probe_{tag}.P", f"conv_probe_{tag}:P", "..x", ":", "os.system"):
            errors = converter_errors(["c"], {"c.type": name})
            assert errors == {
                "c.type": f"Invalid value {name} for configuration c.type: Class {name} could not be found. "
                "A custom converter is a subclass of cdc.mysql.converters.CustomConverter registered in the "
                "cdc.plugins entry point group by a package installed on the worker"
            }
        assert not marker.exists() and f"conv_probe_{tag}" not in sys.modules
    finally:
        sys.path.remove(str(tmp_path))

    # a converter a package registers (the cdc.plugins entry points; register() here) is found
    registry.register(f"com.example.Upper{tag}", _Upper)
    assert converter_errors(["c"], {"c.type": f"com.example.Upper{tag}"}) == {}
    # a registered plugin of another kind is not a converter
    errors = converter_errors(["c"], {"c.type": "org.apache.kafka.connect.transforms.RegexRouter"})
    assert "is not a subclass of cdc.mysql.converters.CustomConverter" in errors["c.type"]
    errors = converter_errors(["c"], {"c.type": "io.debezium.connector.mysql.converters.Nope"})
    assert "is not one of cdc's converters" in errors["c.type"]
