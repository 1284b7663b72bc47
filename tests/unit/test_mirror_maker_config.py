"""``mm2.properties`` refused, naming the key: the input Java's MirrorMakerConfig takes silently or fails on
late (its agreement on good input: tests/integration/test_mirror_maker_java_config.py, live against Java)."""

from __future__ import annotations

from pathlib import Path

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


def test_cli_refuses_a_bad_file_naming_the_key(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from cdc.cli import main

    path = tmp_path / "mm2.properties"
    path.write_text("clusters = a, b\na.bootstrap.servers = x:9092\na->b.enabled = true\n", encoding="utf-8")
    assert main(["mirror-maker", str(path)]) == 1
    assert 'Missing required configuration "b.bootstrap.servers"' in capfd.readouterr().err
    path.write_text("".join(f"{k} = {v}\n" for k, v in GOOD.items()), encoding="utf-8")
    assert main(["mirror-maker", str(path), "--clusters", "c"]) == 1
    assert "Invalid value c for configuration --clusters" in capfd.readouterr().err


def test_internal_rest_gives_each_pair_its_port() -> None:
    from cdc.cli.mirror_maker import rest_properties

    closed = MirrorMakerSettings.parse(GOOD)
    assert rest_properties(closed, 1) == {
        "listeners": "http://127.0.0.1:0",
        "rest.advertised.host.name": "127.0.0.1",
    }
    rest = MirrorMakerSettings.parse(
        {**GOOD, "dedicated.mode.enable.internal.rest": "true", "listeners": "http://0.0.0.0:9000"}
    )
    assert rest_properties(rest, 0) == {"listeners": "http://0.0.0.0:9000"}
    assert rest_properties(rest, 1) == {"listeners": "http://0.0.0.0:9001"}
    default = MirrorMakerSettings.parse({**GOOD, "dedicated.mode.enable.internal.rest": "TRUE"})
    assert rest_properties(default, 1)["listeners"] == "http://:8084"
