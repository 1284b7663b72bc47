"""The declarative config: parsing, validation, REST shapes and secret masking."""

from __future__ import annotations

import re

import pytest

from cdc.api.errors import ConfigError
from cdc.config import ConfigDef, ConfigType, Importance, Password, mask_secrets
from cdc.config import validators as v


def make_def() -> ConfigDef:
    d = ConfigDef()
    d.define("host", ConfigType.STRING, documentation="Host", group="Connection")
    d.define("port", ConfigType.INT, 3306, v.between(1, 65535), Importance.HIGH, "Port", group="Connection")
    d.define("password", ConfigType.PASSWORD, None, None, Importance.HIGH, "Secret")
    d.define("tables", ConfigType.LIST, "", None, Importance.LOW, "Tables")
    d.define("enabled", ConfigType.BOOLEAN, True)
    d.define("mode", ConfigType.STRING, "bulk", v.one_of("bulk", "incrementing"))
    return d


def test_parse_types_and_defaults() -> None:
    parsed = make_def().parse(
        {"host": "db", "port": " 3307 ", "password": "s3cret", "tables": "a, b ,c", "enabled": "FALSE"}
    )
    assert parsed["host"] == "db"
    assert parsed["port"] == 3307
    assert isinstance(parsed["password"], Password)
    assert parsed["password"].value() == "s3cret"
    assert str(parsed["password"]) == "[hidden]"
    assert parsed["tables"] == ["a", "b", "c"]
    assert parsed["enabled"] is False
    assert parsed["mode"] == "bulk"


def test_missing_required_key_message() -> None:
    with pytest.raises(
        ConfigError, match=re.escape('Missing required configuration "host" which has no default value.')
    ):
        make_def().parse({})


def test_validate_collects_every_error() -> None:
    values = {cv.name: cv for cv in make_def().validate({"port": "99999", "enabled": "yes", "mode": "x"})}
    assert values["host"].errors == ['Missing required configuration "host" which has no default value.']
    assert values["port"].errors == [
        "Invalid value 99999 for configuration port: Value must be no more than 65535"
    ]
    assert "Expected value to be either true or false" in values["enabled"].errors[0]
    assert "String must be one of: bulk, incrementing" in values["mode"].errors[0]
    assert values["tables"].errors == []


def test_key_info_shape() -> None:
    info = make_def()["port"].to_info()
    assert info == {
        "name": "port",
        "type": "INT",
        "required": False,
        "default_value": "3306",
        "importance": "HIGH",
        "documentation": "Port",
        "group": "Connection",
        "width": "NONE",
        "display_name": "port",
        "dependents": [],
        "order": 2,
    }
    assert make_def()["host"].to_info()["required"] is True
    assert make_def()["host"].to_info()["default_value"] is None


def test_value_info_hides_passwords() -> None:
    values = {cv.name: cv for cv in make_def().validate({"host": "h", "password": "pw"})}
    assert values["password"].to_info(ConfigType.PASSWORD)["value"] == "[hidden]"


def test_masking_declared_and_secret_looking_keys() -> None:
    masked = mask_secrets(
        {
            "password": "a",
            "producer.override.sasl.jaas.config": "b",
            "host": "h",
            "database.password": "c",
            "ssl.key.password": "d",
        },
        make_def(),
    )
    assert masked == {
        "password": "[hidden]",
        "producer.override.sasl.jaas.config": "[hidden]",
        "host": "h",
        "database.password": "[hidden]",
        "ssl.key.password": "[hidden]",
    }


def test_aliases_take_old_names() -> None:
    d = ConfigDef()
    d.define("topic.prefix", ConfigType.STRING, aliases=("database.server.name",))
    assert d.parse({"database.server.name": "appdb"})["topic.prefix"] == "appdb"
    assert d.parse({"database.server.name": "old", "topic.prefix": "new"})["topic.prefix"] == "new"


def test_duplicate_definition_rejected() -> None:
    d = ConfigDef()
    d.define("a", ConfigType.INT, 1)
    with pytest.raises(ConfigError):
        d.define("a", ConfigType.INT, 1)


def test_markdown_lists_keys() -> None:
    md = make_def().to_markdown()
    assert "| `port` | INT | `3306` | HIGH | Port |" in md
    assert "(required)" in md
