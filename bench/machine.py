"""The header of every result: the machine, its load, and every tool's version."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from bench import jars
from bench.stack import Stack

__all__ = ["describe"]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _nproc() -> int:
    try:
        return int(subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip())
    except (OSError, ValueError):
        return os.cpu_count() or 0


def _mem_gib() -> float:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    return 0.0


def _cdc_version() -> str:
    """cdc's version and commit; "+ uncommitted changes" when the worker ran code not yet committed."""
    try:
        from cdc import __version__
    except ImportError:
        return "?"
    git = ["git", "-C", str(Path(__file__).resolve().parent.parent)]
    rev = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--", "cdc"], capture_output=True, text=True
    ).stdout
    if not rev:
        return __version__
    return f"{__version__} ({rev}{' + uncommitted changes in cdc/' if dirty.strip() else ''})"


def _confluent_kafka() -> str:
    try:
        import confluent_kafka

        found: Any = confluent_kafka.version()
        version = found[0] if isinstance(found, tuple) else found
        return f"{version} (librdkafka {confluent_kafka.libversion()[0]})"
    except ImportError:
        return "?"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def describe(stack: Stack) -> dict[str, Any]:
    """Machine, load and versions, for the JSON and the header of the markdown."""
    try:
        variables = stack.variables(
            [
                "version",
                "binlog_format",
                "binlog_row_image",
                "binlog_row_metadata",
                "sync_binlog",
                "innodb_flush_log_at_trx_commit",
                "gtid_strict_mode",
                "max_binlog_size",
            ]
        )
    except Exception as exc:
        variables = {"error": str(exc)}
    return {
        "cpu_model": _cpu_model(),
        "nproc": _nproc(),
        "memory_gib": _mem_gib(),
        "kernel": platform.release(),
        "load_at_start": load(),
        "versions": {
            "cdc": _cdc_version(),
            "python": platform.python_version(),
            "confluent-kafka": _confluent_kafka(),
            "kafka (broker)": stack.kafka_version(),
            "kafka connect": jars.CONNECT_VERSION,
            "debezium": jars.DEBEZIUM_VERSION,
            "debezium-connector-mariadb": jars.MARIADB_VERSION,
            "mariadb": variables.get("version", "?"),
            "jdk": jars.java_version(),
        },
        "jvm": {"heap": " ".join(jars.jvm_heap()), "opts": " ".join(jars.JVM_OPTS)},
        "binlog": {k: v for k, v in variables.items() if k != "version"},
    }
