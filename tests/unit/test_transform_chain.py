"""Predicates, TransformationChain, build_chain and enrich_config_def."""

from __future__ import annotations

import pytest

from cdc.api import ConfigError, Headers, SourceRecord
from cdc.config import ConfigDef, ConfigType
from cdc.plugins import registry
from cdc.transforms import PLUGINS, TransformationChain, build_chain, enrich_config_def
from cdc.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from cdc.transforms.routing import Filter, RegexRouter


def rec(topic="db.ops.t", value=1, headers=None) -> SourceRecord:
    return SourceRecord(topic, 0, None, None, None, value, headers=headers or Headers())


def test_predicates() -> None:
    p = TopicNameMatches()
    p.configure({"pattern": r"db\..*"})
    assert p.test(rec()) and not p.test(rec("xdb.ops"))
    h = HasHeaderKey()
    h.configure({"name": "k"})
    assert h.test(rec(headers=Headers().add("k", None))) and not h.test(rec())
    assert RecordIsTombstone().test(rec(value=None)) and not RecordIsTombstone().test(rec())
    with pytest.raises(ConfigError, match="String may not be empty"):
        TopicNameMatches().configure({"pattern": ""})


def test_chain_applies_in_order_with_predicates_and_stops_at_none() -> None:
    router = RegexRouter()
    router.configure({"regex": r"(.*)\.(.*)\.(.*)", "replacement": "$3"})
    tomb = RecordIsTombstone()
    chain = TransformationChain([(Filter(), tomb, False), (router, None, False)])
    assert chain.apply(rec(value=None)) is None
    assert chain.apply(rec()).topic == "t"
    negated = TransformationChain([(Filter(), tomb, True)])
    assert negated.apply(rec()) is None and negated.apply(rec(value=None)) is not None


BASE = {
    "transforms": "route, drop",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": r"db\.(.*)",
    "transforms.route.replacement": "$1",
    "transforms.drop.type": "Filter",
    "transforms.drop.predicate": "tomb",
    "predicates": "tomb",
    "predicates.tomb.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
}


def test_build_chain_from_flat_config() -> None:
    chain = build_chain(BASE)
    assert [s.alias for s in chain] == ["route", "drop"]
    assert chain.apply(rec()).topic == "ops.t"
    assert chain.apply(rec(value=None)) is None
    assert len(build_chain({})) == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"transforms.route.type": "com.example.Nope"},
            "Invalid value com.example.Nope for configuration transforms.route.type: "
            "Class com.example.Nope could not be found.",
        ),
        (
            {"transforms.route.type": "org.apache.kafka.connect.transforms.InsertField"},
            "Transformation is abstract and cannot be created. Did you mean "
            "org.apache.kafka.connect.transforms.InsertField$Key, "
            "org.apache.kafka.connect.transforms.InsertField$Value?",
        ),
        ({"transforms.route.type": None}, 'Missing required configuration "transforms.route.type"'),
        ({"predicates": ""}, "Unknown configuration 'predicates.tomb.type'"),
        (
            {"transforms.route.negate": "true"},
            "Config 'transforms.route.negate' was provided but there is no config "
            "'transforms.route.predicate'",
        ),
        ({"transforms": "route,route"}, "Duplicate alias provided."),
        (
            {"transforms.route.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"},
            "Not a Transformation",
        ),
        ({"transforms.route.regex": None}, 'Missing required configuration "regex"'),
    ],
)
def test_build_chain_errors(change, message) -> None:
    props = {k: v for k, v in {**BASE, **change}.items() if v is not None}
    with pytest.raises(ConfigError) as exc:
        build_chain(props)
    assert message in str(exc.value)


def test_enrich_config_def_reports_per_transform_keys() -> None:
    base = ConfigDef().define("transforms", ConfigType.LIST, "").define("predicates", ConfigType.LIST, "")
    props = {
        **BASE,
        "transforms.route.regex": "(",
        "transforms": "route,drop,bad",
        "transforms.bad.type": "X",
    }
    enriched = enrich_config_def(base, props)
    names = enriched.names()
    assert {
        "transforms.route.type",
        "transforms.route.regex",
        "transforms.route.replacement",
        "transforms.route.predicate",
        "transforms.route.negate",
        "transforms.bad.type",
        "predicates.tomb.type",
    } <= set(names)
    assert enriched["transforms.route.regex"].group == "Transforms: route"
    errors = {v.name: v.errors for v in enriched.validate(props)}
    assert errors["transforms.route.regex"] and "Invalid regex" in errors["transforms.route.regex"][0]
    assert errors["transforms.bad.type"] == [
        "Invalid value X for configuration transforms.bad.type: Class X could not be found."
    ]
    assert errors["transforms.route.type"] == [] and errors["predicates.tomb.type"] == []


def test_every_plugin_name_loads_through_the_registry() -> None:
    for name in PLUGINS:
        cls = registry.load(name)
        instance = cls()
        assert instance.config() is not None
    assert "org.apache.kafka.connect.transforms.InsertField$Value" in PLUGINS
    assert "io.debezium.transforms.ExtractNewRecordState" in PLUGINS
    assert "org.apache.kafka.connect.transforms.predicates.TopicNameMatches" in PLUGINS
