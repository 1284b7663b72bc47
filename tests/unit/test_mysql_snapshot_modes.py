"""snapshot.mode=configuration_based: the five switches of Debezium's ConfigurationBasedSnapshotter mapped
onto the task's start plans."""

from __future__ import annotations

from typing import Any

import pytest

from cdc.api.errors import ConnectError
from cdc.history.store import MemorySchemaHistory
from cdc.mysql.config import MySqlSettings
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.snapshot_modes import ConfigurationBased, configuration_based_plan
from cdc.mysql.validation import validate_mysql

BASE = {
    "database.hostname": "localhost",
    "database.user": "u",
    "database.password": "p",
    "topic.prefix": "p",
    "schema.history.internal.kafka.topic": "h",
    "snapshot.mode": "configuration_based",
}
KEYS = [
    "snapshot.mode.configuration.based.snapshot.data",
    "snapshot.mode.configuration.based.snapshot.schema",
    "snapshot.mode.configuration.based.start.stream",
]
ERRORS = [
    "snapshot.mode.configuration.based.snapshot.on.schema.error",
    "snapshot.mode.configuration.based.snapshot.on.data.error",
]


def _plan(switches: dict[str, str], offset: bool, binlog: bool = True, history: bool = True) -> str:
    settings = MySqlSettings.parse({**BASE, **switches})
    assert not [v.errors for v in validate_mysql({**BASE, **switches}) if v.errors]
    return configuration_based_plan(ConfigurationBased.of(settings), offset, lambda: binlog, lambda: history)


def _on(*keys: str) -> dict[str, str]:
    return {k: "true" for k in keys}


@pytest.mark.honours(
    "snapshot.mode.configuration.based.snapshot.data",
    "snapshot.mode.configuration.based.snapshot.schema",
    "snapshot.mode.configuration.based.start.stream",
)
def test_the_switches_decide_what_each_start_does() -> None:
    data, schema, stream = KEYS
    assert _plan(_on(data, schema, stream), offset=True) == "snapshot"  # every start, as Debezium
    assert _plan(_on(data, schema), offset=False) == "snapshot_only"
    assert _plan(_on(schema, stream), offset=False) == "schema"
    assert _plan(_on(schema, stream), offset=True) == "recover_schema"
    assert _plan(_on(stream), offset=False) == "stream_from_start"
    assert _plan(_on(stream), offset=True) == "stream"
    assert _plan({}, offset=True) == "idle"


@pytest.mark.honours(
    "snapshot.mode.configuration.based.snapshot.on.schema.error",
    "snapshot.mode.configuration.based.snapshot.on.data.error",
)
def test_a_missing_history_or_binlog_is_snapshotted_only_when_asked() -> None:
    stream = KEYS[2]
    on_schema, on_data = ERRORS
    with pytest.raises(ConnectError, match=r"snapshot\.on\.schema\.error=true"):
        _plan(_on(stream), offset=True, history=False)
    assert _plan(_on(stream, on_schema), offset=True, history=False) == "recover_schema"
    with pytest.raises(ConnectError, match=r"snapshot\.on\.data\.error=true"):
        _plan(_on(stream), offset=True, binlog=False)
    assert _plan(_on(stream, on_data), offset=True, binlog=False) == "snapshot"


def test_the_task_plans_with_the_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    from cdc.mysql import start_plan

    monkeypatch.setattr(start_plan, "binlog_available", lambda *a: False)
    settings = MySqlSettings.parse({**BASE, **_on(KEYS[2], ERRORS[1])})
    server: Any = None
    offset = BinlogOffset("binlog.000001", 4)
    assert start_plan.start_plan(settings, offset, None, server, MemorySchemaHistory()) == "snapshot"  # type: ignore[arg-type]
