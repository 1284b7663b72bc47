"""Single message transforms and predicates: Connect's own and Debezium's ``ExtractNewRecordState``.

Every class answers to the names users write (the Java FQCN, e.g.
``org.apache.kafka.connect.transforms.InsertField$Value``, and the simple name ``InsertField$Value``)
through :data:`PLUGINS`, which :mod:`cdc.plugins` reads. :mod:`cdc.transforms.chain` builds a
connector's chain from its flat config.

Modules: ``fields`` (InsertField, ReplaceField, MaskField, ExtractField, ValueToKey, HoistField),
``cast``, ``routing`` (RegexRouter, TimestampRouter, Filter, SetSchemaMetadata), ``timestamps``
(TimestampConverter), ``headers`` (HeaderFrom, InsertHeader, DropHeaders), ``flatten``, ``predicates``,
``debezium`` (ExtractNewRecordState), ``openlineage`` (Debezium's OpenLineage transform), ``chain``.
"""

from __future__ import annotations

from cdc.transforms.chain import TransformationChain, TransformationStage, build_chain, enrich_config_def

__all__ = ["PLUGINS", "TransformationChain", "TransformationStage", "build_chain", "enrich_config_def"]

_CONNECT = "org.apache.kafka.connect.transforms."

# Java class name (without package) -> our "module:attribute".
_TRANSFORMS: dict[str, str] = {}
for _java, _module, _attr in (
    ("InsertField", "fields", "InsertField"),
    ("ReplaceField", "fields", "ReplaceField"),
    ("MaskField", "fields", "MaskField"),
    ("ExtractField", "fields", "ExtractField"),
    ("HoistField", "fields", "HoistField"),
    ("Cast", "cast", "Cast"),
    ("SetSchemaMetadata", "routing", "SetSchemaMetadata"),
    ("TimestampConverter", "timestamps", "TimestampConverter"),
    ("HeaderFrom", "headers", "HeaderFrom"),
    ("Flatten", "flatten", "Flatten"),
):
    for _side in ("Key", "Value"):
        _TRANSFORMS[f"{_java}${_side}"] = f"cdc.transforms.{_module}:{_attr}{_side}"
_TRANSFORMS.update(
    {
        "ValueToKey": "cdc.transforms.fields:ValueToKey",
        "RegexRouter": "cdc.transforms.routing:RegexRouter",
        "TimestampRouter": "cdc.transforms.routing:TimestampRouter",
        "Filter": "cdc.transforms.routing:Filter",
        "InsertHeader": "cdc.transforms.headers:InsertHeader",
        "DropHeaders": "cdc.transforms.headers:DropHeaders",
    }
)
_PREDICATES = {
    "TopicNameMatches": "cdc.transforms.predicates:TopicNameMatches",
    "HasHeaderKey": "cdc.transforms.predicates:HasHeaderKey",
    "RecordIsTombstone": "cdc.transforms.predicates:RecordIsTombstone",
}
_DEBEZIUM = {
    "ExtractNewRecordState": "cdc.transforms.debezium:ExtractNewRecordState",
    "openlineage.OpenLineage": "cdc.transforms.openlineage:OpenLineage",
}

PLUGINS: dict[str, str] = {}
"""Every name users may write → ``module:attribute``."""
for _prefix, _table in (
    (_CONNECT, _TRANSFORMS),
    (_CONNECT + "predicates.", _PREDICATES),
    ("io.debezium.transforms.", _DEBEZIUM),
):
    for _name, _target in _table.items():
        PLUGINS[_prefix + _name] = _target
        PLUGINS.setdefault(_name, _target)
