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

Versions: Kafka Connect 4.4.0, the broker's (its ``connect-file`` plugin is not published for 4.4.0: 4.3.1's
runs); Debezium 3.6.1.Final (``debezium-connector-mysql``, the JDBC sink), except
``debezium-connector-mariadb``, whose newest on Maven Central is 3.5.0.Final. connect-mirror 4.4.0 is not on
Maven Central either (4.3.1 is its newest; ``MIRROR_VERSION``), and dedicated mode builds Connect's ``Worker``
and ``DistributedHerder`` itself, so MM2 runs on the connect-runtime of its own version rather than a mix.
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
    "CONNECT_VERSION",
    "DEBEZIUM_MARIADB_VERSION",
    "DEBEZIUM_VERSION",
    "JVM_OPTS",
    "MIRROR_VERSION",
    "connect_libs",
    "debezium_plugin_path",
    "debezium_version",
    "java_version",
    "jvm_heap",
    "mirror_libs",
]

CONNECT_VERSION = os.environ.get("BENCH_CONNECT_VERSION", "4.4.0")
DEBEZIUM_VERSION = os.environ.get("BENCH_DEBEZIUM_VERSION", "3.6.1.Final")
MIRROR_VERSION = os.environ.get("BENCH_MIRROR_VERSION", "4.3.1")
# debezium-connector-mariadb: Maven Central's newest is 3.5.0.Final (its metadata lists no 3.6), so the
# MariaDB connector stays there while the MySQL connector, the JDBC sink and the rest are 3.6.1.Final.
DEBEZIUM_MARIADB_VERSION = os.environ.get("BENCH_DEBEZIUM_MARIADB_VERSION", "3.5.0.Final")


def debezium_version(artifact: str) -> str:
    """The version of a Debezium artifact fetched here."""
    return DEBEZIUM_MARIADB_VERSION if artifact == "debezium-connector-mariadb" else DEBEZIUM_VERSION


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


def connect_libs(cache: Path) -> Path:
    """``libs/`` of Apache Kafka Connect (and kafka-tools), fetched on first use."""
    home = _peers_dir(cache) / f"connect-{CONNECT_VERSION}"
    libs = home / "libs"
    _fetch(
        cache,
        "connect-pom.xml",
        libs,
        [f"-Dconnect.version={CONNECT_VERSION}"],
        _peers_dir(cache) / f"connect-{CONNECT_VERSION}.maven.log",
    )
    return libs


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


def debezium_plugin_path(cache: Path, artifact: str = "debezium-connector-mariadb") -> Path:
    """A ``plugin.path`` holding one Debezium connector's plugin directory, fetched on first use."""
    version = debezium_version(artifact)
    root = _peers_dir(cache) / f"{artifact}-{version}"
    _fetch(
        cache,
        "debezium-pom.xml",
        root / artifact,
        [
            f"-Ddebezium.artifact={artifact}",
            f"-Ddebezium.version={version}",
            "-DexcludeGroupIds=org.apache.kafka",
        ],
        _peers_dir(cache) / f"{artifact}-{version}.maven.log",
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
