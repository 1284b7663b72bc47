"""Declarative configuration (the counterpart of Kafka's ``ConfigDef``)."""

from cdc.config.definition import (
    NO_DEFAULT,
    ConfigDef,
    ConfigKey,
    ConfigType,
    ConfigValue,
    Importance,
    Password,
    Recommender,
    Validator,
    Width,
    convert_to_string,
    describe,
    mask_secrets,
    parse_type,
)

__all__ = [
    "NO_DEFAULT",
    "ConfigDef",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "Importance",
    "Password",
    "Recommender",
    "Validator",
    "Width",
    "convert_to_string",
    "describe",
    "mask_secrets",
    "parse_type",
]
