"""``mm2.properties`` refused, naming the key: the input Java's MirrorMakerConfig takes silently or fails on
late (its agreement on good input: tests/integration/test_mirror_maker_config.py, live against Java)."""

from __future__ import annotations

import pytest

from cdc.cli.mirror_maker_config import Flow, MirrorMakerSettings
from cdc.errors import ConfigError

GOOD = {
    "clusters": "a, b",
    "a.bootstrap.servers": "127.0.0.1:9092",
    "b.bootstrap.servers": "127.0.0.1:9192",
    "a->b.enabled": "true",
}


def _refused(props: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as caught:
        MirrorMakerSettings.parse(props)
    return str(caught.value)


def test_good_file_gives_the_flow_and_its_heartbeat_pair() -> None:
    settings = MirrorMakerSettings.parse(GOOD)
    assert settings.pairs() == [Flow("a", "b"), Flow("b", "a")]  # b->a emits heartbeats into a
    assert settings.enabled_flows() == [Flow("a", "b")]
    assert settings.pairs(("b",)) == [Flow("a", "b")]  # --clusters b
    worker = settings.worker_config(Flow("a", "b"))
    assert worker["group.id"] == "a-mm2" and worker["bootstrap.servers"] == "127.0.0.1:9192"
    assert worker["offset.storage.topic"] == "mm2-offsets.a.internal"


def test_alias_listed_twice() -> None:
    message = _refused({**GOOD, "clusters": "a, b, a"})
    assert "clusters" in message and "'a' is listed twice" in message


def test_flow_naming_an_unknown_cluster() -> None:
    message = _refused({**GOOD, "a->c.enabled": "true"})
    assert "a->c.enabled" in message and "'c' is not one of clusters" in message
    assert "x->b.topics" in _refused({**GOOD, "x->b.topics": "t"})


def test_missing_bootstrap() -> None:
    props = dict(GOOD)
    del props["b.bootstrap.servers"]
    message = _refused(props)
    assert "b.bootstrap.servers" in message
    # a top-level bootstrap.servers serves every cluster, as in Java
    MirrorMakerSettings.parse({**props, "bootstrap.servers": "127.0.0.1:9192"})


def test_missing_clusters_no_flow_and_bad_boolean() -> None:
    assert '"clusters"' in _refused({k: v for k, v in GOOD.items() if k != "clusters"})
    no_flow = {**GOOD, "a->b.enabled": "false", "emit.heartbeats.enabled": "false"}
    assert "No source->target replication flows." in _refused(no_flow)
    assert "dedicated.mode.enable.internal.rest" in _refused(
        {**GOOD, "dedicated.mode.enable.internal.rest": "yes"}
    )
    assert "a->a.enabled" in _refused({**GOOD, "a->a.enabled": "true"})
