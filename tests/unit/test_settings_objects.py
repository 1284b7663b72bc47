"""The connectors' settings objects: one typed, frozen field per declared key, filled from the definition."""

from __future__ import annotations

import dataclasses

import pytest

from cdc.config import ConfigDef, ConfigType
from cdc.config.settings import setting, settings_from, unbound_keys
from cdc.jdbc.config import JDBC_SOURCE_DEF, JdbcSourceSettings
from cdc.mysql.config import MYSQL_DEF, MySqlSettings

MYSQL = {
    "database.hostname": "db",
    "database.user": "u",
    "database.password": "secret",
    "database.server.id": "7",
    "topic.prefix": "p",
    "schema.history.internal.kafka.topic": "h",
}


@pytest.mark.parametrize(
    ("cls", "definition"), [(MySqlSettings, MYSQL_DEF), (JdbcSourceSettings, JDBC_SOURCE_DEF)]
)
def test_every_declared_key_has_its_field(cls: type, definition: ConfigDef) -> None:
    assert unbound_keys(cls, definition) == []


def test_mysql_settings_are_typed_and_frozen() -> None:
    s = MySqlSettings.parse(
        {**MYSQL, "database.port": "3307", "max.queue.size": "10", "database.whitelist": "a, b"}
    )
    assert s.database_port == 3307 and s.max_queue_size == 10 and s.database_server_id == 7
    assert s.database_include_list == ("a", "b")  # the 1.x alias, a LIST as a tuple
    assert s.prefix == "p" and s.password == "secret" and s.history_kafka_topic == "h"
    assert s.snapshot_mode == "initial" and s.tombstones_on_delete is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.database_port = 1  # type: ignore[misc]


def test_select_overrides_by_table() -> None:
    s = MySqlSettings.parse(
        {
            **MYSQL,
            "snapshot.select.statement.overrides": "db.a, db.b",
            "snapshot.select.statement.overrides.db.a": "SELECT * FROM db.a WHERE x",
        }
    )
    assert s.override_tables == {"db.a", "db.b"}
    assert s.select_override("db.a") == "SELECT * FROM db.a WHERE x"
    assert s.select_override("db.b") is None and s.select_override("db.c") is None


def test_settings_from_binds_fields_to_keys() -> None:
    d = ConfigDef()
    d.define("a.b", ConfigType.INT, 1)
    d.define("c", ConfigType.LIST, "x,y")

    @dataclasses.dataclass(frozen=True)
    class Small:
        origin: str
        a_b: int = setting("a.b")
        c: tuple[str, ...] = setting("c")

    small = settings_from(Small, d.parse({"a.b": "5"}), origin="test")
    assert small == Small("test", 5, ("x", "y"))
    assert unbound_keys(Small, d) == []
