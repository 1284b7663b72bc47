"""Pure logic of the hardening (issue #20): connector-name rules, stored bad names set aside, which plugins a
worker offers, and cluster log-level records. The attacks themselves run against real workers in
``tests/security/``."""

from __future__ import annotations

import pytest

from cdc.api.errors import ConfigError
from cdc.plugins import Registry
from cdc.worker.names import MAX_NAME_BYTES, alias, name_error, printable
from cdc.worker.plugin_path import PluginSettings, apply_plugin_settings
from cdc.worker.stores import records as r
from cdc.worker.stores.config_state import ConfigLog
from cdc.worker.stores.memory import MemoryConfigBackingStore, RecordingConfigListener


@pytest.mark.parametrize(
    "name",
    ["", "a/b", ".", "..", "\ud800", "a\nb", "nul\x00", "del\x7f", "c1\x85", "sep\u2028", "rtl\u202e",
     "iso\u2066", "x" * (MAX_NAME_BYTES + 1), "é" * (MAX_NAME_BYTES // 2 + 1)],
)  # fmt: skip
def test_bad_names(name: str) -> None:
    assert name_error(name) is not None


@pytest.mark.parametrize(
    "name", ["a", "inventory-connector", "..a", "a.b", " x ", "日本語", "x" * MAX_NAME_BYTES, "emoji\u200d"]
)
def test_good_names(name: str) -> None:
    assert name_error(name) is None


def test_messages_keep_connects_wording() -> None:
    assert name_error("") == "String must be non-empty"
    assert name_error("a\tb\nc") == (
        "String may not contain control sequences but had the following ASCII chars: 9, 10"
    )


def test_alias_and_printable() -> None:
    assert alias("\ud800") == alias("\ud800") != alias("\udc00")
    assert alias("x" * 200_000).startswith("invalid-connector-name-")
    assert name_error(alias("x" * 200_000)) is None
    shown = printable("a\nb" + "x" * 200)
    assert "\n" not in shown and shown.endswith("(203 characters)")


def test_config_log_sets_bad_stored_names_aside() -> None:
    log = ConfigLog()
    huge = "x" * 200_000
    config = r.encode_config({"connector.class": "FileStreamSource"})
    log.apply(r.connector_key(huge), config, 0)
    log.apply(r.connector_key("good"), config, 1)
    state = log.snapshot()
    assert state.connectors() == ["good"]
    assert state.rejected_name(alias(huge)) == huge
    assert state.rejected_name(huge) == huge
    assert state.rejected_name("good") is None
    log.apply(r.connector_key(huge), None, 2)
    assert log.snapshot().rejected == {}


def test_cluster_logger_records_reach_listeners_after_start_only() -> None:
    log = ConfigLog()
    assert log.apply("logger-cluster-org.apache", r.encode_logger_level("DEBUG"), 0) == []
    log.started = True
    listener = RecordingConfigListener()
    for call in log.apply("logger-cluster-org.apache", r.encode_logger_level("WARN"), 1):
        call(listener)
    assert listener.calls == [("logger", ("org.apache", "WARN"))]
    store = MemoryConfigBackingStore()
    store.set_update_listener(listener)
    store.put_logger_level("cdc", "ERROR")
    assert listener.calls[-1] == ("logger", ("cdc", "ERROR"))


@pytest.mark.parametrize(
    ("props", "mode", "offered"),
    [
        ({}, "standalone", True),
        ({"filestream.connectors.enable": "false"}, "standalone", False),
        ({}, "distributed", False),
        ({"plugin.path": "/tmp/,/usr/local/share/kafka/plugins"}, "distributed", False),
        ({"plugin.path": "/opt/kafka/libs/connect-file-3.9.0.jar"}, "distributed", True),
        ({"plugin.path": "/opt/x, /opt/connect-file/"}, "distributed", True),
        ({"filestream.connectors.enable": "TRUE"}, "distributed", True),
    ],
)
def test_which_workers_offer_filestream(props: dict[str, str], mode: str, offered: bool) -> None:
    settings = PluginSettings.from_properties(props, mode)
    assert settings.filestream is offered
    registry = Registry()
    apply_plugin_settings(settings, registry)
    assert ("FileStreamSource" in registry.names()) is offered
    if not offered:
        with pytest.raises(Exception, match="Failed to find any class that implements FileStreamSink"):
            registry.load("FileStreamSink")


def test_filestream_switch_must_be_boolean() -> None:
    with pytest.raises(ConfigError, match=r"filestream\.connectors\.enable"):
        PluginSettings.from_properties({"filestream.connectors.enable": "yes"}, "distributed")
