"""The peers' jars: fetched from Maven Central by Maven into ``${CDC_CACHE:-~/.cache/cdc}/peers``.

Nothing of theirs is in the repository: the poms in ``bench/peers/`` only name the
artifacts, and ``mvn dependency:copy-dependencies`` copies them with their dependencies:

* ``peers/connect-<v>/libs``: Apache Kafka Connect (connect-runtime, -json, -file, -transforms), kafka-tools
  (``ProducerPerformance``, i.e. ``kafka-producer-perf-test``) and a log4j2 binding for slf4j, run as
  ``java -cp 'libs/*' org.apache.kafka.connect.cli.ConnectDistributed worker.properties``, the way
  Kafka's ``bin/connect-distributed.sh`` runs it from a distribution's ``libs/``.
* ``peers/mirror-<v>/libs``: Kafka's MirrorMaker 2 (connect-mirror, connect-mirror-client, with the
  connect-runtime of the same version), run in dedicated mode as ``bin/connect-mirror-maker.sh`` runs it:
  ``java -cp 'libs/*' org.apache.kafka.connect.mirror.MirrorMaker mm2.properties``.
* ``peers/<artifact>-<v>/<artifact>/``: a Debezium connector and its dependencies (Kafka's own jars left
  out, as a plugin directory must), given to Connect as ``plugin.path=peers/<artifact>-<v>``.

Versions: Kafka Connect 4.4.0, the broker's (its ``connect-file`` plugin is not published for 4.4.0, and
4.3.1's does not load in 4.4.0: workers running FileStream connectors are Connect 4.3.1,
:data:`FILESTREAM_CONNECT_VERSION`) and Debezium 3.6.1.Final (``debezium-connector-mysql``), the newest
Maven Central serves. Its newest ``debezium-connector-mariadb`` is 3.5.0.Final (:data:`MARIADB_VERSION`),
which runs in Kafka Connect 4.3.1 (:data:`MARIADB_CONNECT_VERSION`); its JDBC sink 3.6.0.Final (no 3.6.1
there). connect-mirror 4.4.0 is not on Maven Central either (4.3.1 is its newest; ``MIRROR_VERSION``), and
dedicated mode builds Connect's ``Worker`` and ``DistributedHerder`` itself, so MM2 runs on the
connect-runtime of its own version rather than a mix.
``io.confluent:kafka-connect-jdbc`` is not on Maven Central (only on Confluent's own repository, which we
cannot reach).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

__all__ = [
    "APICURIO_VERSION",
    "CONNECT_VERSION",
    "DEBEZIUM_JDBC_VERSION",
    "DEBEZIUM_VERSION",
    "FILESTREAM_CONNECT_VERSION",
    "JVM_OPTS",
    "MARIADB_CONNECT_VERSION",
    "MARIADB_VERSION",
    "MIRROR_VERSION",
    "apicurio_converter_plugin_path",
    "connect_libs",
    "connect_version_for",
    "debezium_jdbc_sink_plugin_path",
    "debezium_plugin_path",
    "debezium_version",
    "java_version",
    "jvm_heap",
    "mirror_libs",
]

CONNECT_VERSION = os.environ.get("BENCH_CONNECT_VERSION", "4.4.0")
DEBEZIUM_VERSION = os.environ.get("BENCH_DEBEZIUM_VERSION", "3.6.1.Final")
MIRROR_VERSION = os.environ.get("BENCH_MIRROR_VERSION", "4.3.1")
# Maven Central serves no debezium-connector-mariadb newer than 3.5.0.Final (its maven-metadata.xml lists
# 3.5.0.Final last on 28 November 2026, and 3.6.1.Final's jar and pom answer 404, while the MySQL
# connector's 3.6.1.Final is there): the MariaDB connector is pinned on its own.
MARIADB_VERSION = os.environ.get("BENCH_DEBEZIUM_MARIADB_VERSION", "3.5.0.Final")
# ... and it does not run in Kafka Connect 4.4.0 (its metrics call org.apache.kafka.common.utils.Sanitizer,
# which 4.4.0 removed: the task fails with NoClassDefFoundError), so a worker that loads it is the Kafka
# Connect it was built against.
MARIADB_CONNECT_VERSION = os.environ.get("BENCH_CONNECT_MARIADB_VERSION", "4.3.1")


def debezium_version(artifact: str) -> str:
    """The version of a Debezium artifact the bench fetches."""
    return MARIADB_VERSION if artifact == "debezium-connector-mariadb" else DEBEZIUM_VERSION


# Debezium's JDBC sink: 3.6.1.Final is not on Maven Central (its maven-metadata.xml lists 3.6.0.Final as
# the latest release and the 3.6.1.Final pom answers 404, 2026-11-28), so the sink has its own version.
DEBEZIUM_JDBC_VERSION = os.environ.get("BENCH_DEBEZIUM_JDBC_VERSION", "3.6.0.Final")


# What bin/connect-distributed.sh and kafka-run-class.sh pass to the JVM (heap: connect-distributed.sh's
# default; BENCH_CONNECT_HEAP overrides it).
JVM_OPTS = [
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
]

_POMS = Path(__file__).resolve().parent / "peers"


def jvm_heap() -> list[str]:
    return os.environ.get("BENCH_CONNECT_HEAP", "-Xms256M -Xmx2G").split()


def _peers_dir(cache: Path) -> Path:
    path = cache / "peers"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _fetch(cache: Path, pom: str, target: Path, extra: list[str], log: Path) -> None:
    """Copy a pom's runtime dependencies into ``target`` (atomically, once, under a lock)."""
    if target.is_dir() and any(target.iterdir()):
        return
    if shutil.which("mvn") is None:
        raise RuntimeError("Maven (mvn) is needed to fetch the peers: apt-get install maven")
    with (_peers_dir(cache) / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_dir() and any(target.iterdir()):
            return
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = [
            "mvn",
            "-q",
            "-B",
            "-f",
            str(_POMS / pom),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={tmp}",
            *extra,
        ]
        with log.open("w") as out:
            done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
            raise RuntimeError(f"maven could not fetch {target.name} (log {log}):\n{tail}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)


def connect_libs(cache: Path, version: str | None = None) -> Path:
    """``libs/`` of Apache Kafka Connect (and kafka-tools), fetched on first use."""
    version = version or CONNECT_VERSION
    home = _peers_dir(cache) / f"connect-{version}"
    libs = home / "libs"
    _fetch(
        cache,
        "connect-pom.xml",
        libs,
        [f"-Dconnect.version={version}"],
        _peers_dir(cache) / f"connect-{version}.maven.log",
    )
    return libs


FILESTREAM_CONNECT_VERSION = "4.3.1"
"""The Kafka Connect a worker running Kafka's FileStream connectors runs: ``connect-file`` 4.4.0 is not on
Maven Central, and 4.3.1's fails in Connect 4.4.0 (``NoClassDefFoundError: org/apache/kafka/common/utils/
AppInfoParser``, seen 28 Nov 2026), so such a worker is Connect 4.3.1 with its own connect-file."""


def connect_version_for(plugin_path: Path | None) -> str:
    """The Kafka Connect a worker with this ``plugin.path`` (:func:`debezium_plugin_path`) runs."""
    if plugin_path is not None and plugin_path.name == f"debezium-connector-mariadb-{MARIADB_VERSION}":
        return MARIADB_CONNECT_VERSION
    return CONNECT_VERSION


def mirror_libs(cache: Path) -> Path:
    """``libs/`` of Kafka's MirrorMaker 2 (connect-mirror and its Connect runtime), fetched on first use."""
    home = _peers_dir(cache) / f"mirror-{MIRROR_VERSION}"
    libs = home / "libs"
    _fetch(
        cache,
        "mirror-pom.xml",
        libs,
        [f"-Dconnect.version={MIRROR_VERSION}"],
        _peers_dir(cache) / f"mirror-{MIRROR_VERSION}.maven.log",
    )
    return libs


def debezium_plugin_path(
    cache: Path,
    artifact: str = "debezium-connector-mariadb",
    version: str | None = None,
    pom: str = "debezium-pom.xml",
    exclude_groups: str = "org.apache.kafka",
) -> Path:
    """A ``plugin.path`` holding one Debezium connector's plugin directory, fetched on first use."""
    version = version or debezium_version(artifact)
    root = _peers_dir(cache) / f"{artifact}-{version}"
    _fetch(
        cache,
        pom,
        root / artifact,
        [
            f"-Ddebezium.artifact={artifact}",
            f"-Ddebezium.version={version}",
            f"-DexcludeGroupIds={exclude_groups}",
        ],
        _peers_dir(cache) / f"{artifact}-{version}.maven.log",
    )
    return root


def debezium_jdbc_sink_plugin_path(cache: Path) -> Path:
    """``plugin.path`` for Debezium's JDBC sink (``io.debezium:debezium-connector-jdbc``: Hibernate, c3p0 and
    the PostgreSQL, MySQL and MariaDB JDBC drivers come with it), fetched on first use (its own pom:
    ``peers/debezium-jdbc-pom.xml`` says why). Jackson's core jars are left out too, as Debezium's own
    plugin archive leaves them out: a second jackson-databind in the plugin makes Hibernate's
    ``ServiceLoader`` find Connect's ``BlackbirdModule`` "not a subtype" of the plugin's ``Module`` and the
    task fails to start."""
    return debezium_plugin_path(
        cache,
        "debezium-connector-jdbc",
        DEBEZIUM_JDBC_VERSION,
        "debezium-jdbc-pom.xml",
        "org.apache.kafka,com.fasterxml.jackson.core",
    )


APICURIO_VERSION = os.environ.get("BENCH_APICURIO_VERSION", "2.6.13.Final")
"""Apicurio Registry's converters: the version of the stack's registry (scripts/registry.sh)."""


def apicurio_converter_plugin_path(cache: Path) -> Path:
    """A ``plugin.path`` root holding Apicurio Registry's Kafka Connect converters
    (``io.apicurio.registry.utils.converter.AvroConverter``), fetched on first use
    (``peers/apicurio-converter-pom.xml`` says why)."""
    root = _peers_dir(cache) / f"apicurio-converter-{APICURIO_VERSION}"
    _fetch(
        cache,
        "apicurio-converter-pom.xml",
        root / "apicurio-converter",
        [f"-Dapicurio.version={APICURIO_VERSION}", "-DexcludeGroupIds=org.apache.kafka"],
        _peers_dir(cache) / f"apicurio-converter-{APICURIO_VERSION}.maven.log",
    )
    return root


def java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    except FileNotFoundError:
        return "none"
    lines = out.splitlines()
    runtime = next((ln for ln in lines if "Runtime Environment" in ln), lines[0] if lines else "?")
    return runtime.split("(build ")[-1].rstrip(")") if "(build " in runtime else runtime
