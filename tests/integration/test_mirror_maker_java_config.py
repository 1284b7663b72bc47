"""``cdc mirror-maker``'s reading of ``mm2.properties`` against Kafka's own ``MirrorMakerConfig``, live.

Each file below is handed to Java's ``MirrorMakerConfig`` (``bench/mirror/MirrorMakerConfigDump.java`` on the
connect-mirror jars ``bench.jars.mirror_libs`` fetches from Maven Central) and to
:class:`cdc.cli.mirror_maker_config.MirrorMakerSettings`: the herder pairs, each pair's worker config and
the three connectors' configs must be equal key for key, as must the key lists the mapping hard-codes
(Kafka's client keys and the connectors' keys). One JVM for all files (~30 s).
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bench import jars
from cdc.cli.mirror_maker_config import (
    CLIENT_CONFIG_NAMES,
    CONNECTOR_CLASSES,
    CONNECTOR_CONFIG_NAMES,
    MirrorMakerSettings,
)
from cdc.worker.properties import load_properties

pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parents[2]
CACHE = Path.home() / ".cache" / "cdc"

FILES = {
    "two clusters, one flow": """
clusters = a, b
a.bootstrap.servers = 127.0.0.1:9092
b.bootstrap.servers = 127.0.0.1:9192
a->b.enabled = true
a->b.topics = orders.*
replication.factor = 1
""",
    "inheritance: top level, cluster, client and flow keys": """
clusters = primary, backup
primary.bootstrap.servers = p1:9092,p2:9092
backup.bootstrap.servers = b1:9092
security.protocol = SASL_SSL
sasl.mechanism = PLAIN
backup.security.protocol = SSL
backup.ssl.truststore.location = /etc/kafka/trust.jks
primary.consumer.fetch.min.bytes = 100000
backup.producer.linger.ms = 20
backup.producer.compression.type = lz4
primary->backup.enabled = true
primary->backup.topics = .*
primary->backup.groups = app-.*
primary->backup.sync.group.offsets.enabled = true
primary->backup.producer.override.batch.size = 65536
backup->primary.enabled = TRUE
backup->primary.emit.heartbeats.enabled = false
tasks.max = 6
offset.storage.replication.factor = 1
config.storage.replication.factor = 1
status.storage.replication.factor = 1
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
replication.policy.separator = _
emit.checkpoints.interval.seconds = 5
sync.topic.acls.enabled = false
worker.unknown = kept
key.converter.schemas.enable = false
dedicated.mode.enable.internal.rest = true
listeners = http://127.0.0.1:18083
""",
    "three clusters, heartbeats off, top-level bootstrap": """
clusters = us, eu , ap
bootstrap.servers = shared:9092
eu.bootstrap.servers = eu:9092
emit.heartbeats.enabled = false
us->eu.enabled = true
eu->ap.enabled = true
ap->us.enabled = false
eu->ap.group.id = custom-group
us->eu.client.id = custom-client
""",
}


@dataclass
class JavaView:
    """What Java's MirrorMakerConfig made of one file."""

    names: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    pairs: list[str] = field(default_factory=list)
    worker: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    connector: dict[tuple[str, str], dict[str, str]] = field(default_factory=lambda: defaultdict(dict))


def _java_dump(files: list[Path]) -> dict[str, JavaView]:
    libs = jars.mirror_libs(CACHE)
    dumper = REPO / "bench" / "mirror" / "MirrorMakerConfigDump.java"
    done = subprocess.run(
        ["java", "-cp", f"{libs}/*", str(dumper), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, JavaView] = {}
    view = JavaView()
    for line in done.stdout.splitlines():
        kind, *rest = line.split("\t")
        if kind == "file":
            view = out[rest[0]] = JavaView()
        elif kind == "names":
            view.names[rest[0]].add(rest[1])
        elif kind == "pair":
            view.pairs.append(rest[0])
        elif kind == "worker":
            view.worker[rest[0]][rest[1]] = rest[2]
        elif kind == "connector":
            view.connector[(rest[0], rest[1])][rest[2]] = rest[3]
    return out


def test_mapping_equals_java_mirror_maker_config(tmp_path: Path) -> None:
    paths = []
    for i, text in enumerate(FILES.values()):
        path = tmp_path / f"mm2-{i}.properties"
        path.write_text(text.strip() + "\n", encoding="utf-8")
        paths.append(path)
    java = _java_dump(paths)
    for (title, _text), path in zip(FILES.items(), paths, strict=True):
        theirs = java[str(path)]
        ours = MirrorMakerSettings.parse(load_properties(path))
        assert theirs.names["client"] == set(CLIENT_CONFIG_NAMES), title
        assert theirs.names["connector"] == set(CONNECTOR_CONFIG_NAMES), title
        pairs = ours.pairs()
        assert sorted(str(p) for p in pairs) == sorted(theirs.pairs), title
        assert pairs, title
        for pair in pairs:
            assert ours.worker_config(pair) == theirs.worker[str(pair)], f"{title}: {pair} worker"
            for connector in CONNECTOR_CLASSES:
                simple = connector.rsplit(".", 1)[-1]
                expected = theirs.connector[(str(pair), simple)]
                assert ours.connector_config(pair, connector) == expected, f"{title}: {pair} {simple}"
