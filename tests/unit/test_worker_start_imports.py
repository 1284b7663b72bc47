"""A bare worker's start loads no module it does not need yet (issue #30, B10: start-up and idle RSS).

Every module a worker imports costs start-up time and resident memory for its whole life; the heavy
ones below serve features a connector or a request may use (TLS key stores, Avro and the schema registry,
``/metrics``, forwarding to a peer, ``custom.sanitize.pattern``, snapshots, the MySQL and JDBC
connectors), so they are imported when first used. Each check runs in a fresh interpreter, as a worker
starts, and names the chain that brought a heavy module in when one does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = (
    "cryptography",
    "jks",
    "requests",
    "urllib3",
    "fastavro",
    "prometheus_client",
    "regex",
    "pyspark",
    "sqlalchemy",
    "openlineage",
    "pymysql",
    "MySQLdb",
    "psycopg",
    "psycopg2",
    "cdc.converters.avro_converter",
    "cdc.converters.registry_client",
    "cdc.snapshot.chunks",
    "cdc.history",
    "cdc.mysql.connector",
    "cdc.jdbc.connector",
    "cdc.openlineage",
    "kafka",
)
"""Modules (and their sub-modules) a worker must not import until a connector or a request uses them.
``kafka`` (kafka-python, the group membership's client) is needed at once, but on the membership's thread
while the herder reads its stores (``GroupMembership.connect``), not on the main thread's way to REST."""

# What ``cdc distributed`` imports before it talks to Kafka, plus a standalone runtime assembled in full
# (herder, worker, REST app and server: build_distributed differs only in its stores and membership, which
# need a cluster), then what creating a FileStreamSource with JSON converters loads.
_PROBE = textwrap.dedent(
    """
    import json, os, sys, tempfile

    from cdc.cli import _parser
    _parser()
    import cdc.logs, cdc.worker.properties
    from cdc.worker.runtime import build_standalone
    import cdc.worker.distributed.membership, cdc.worker.stores.kafka
    workdir = tempfile.mkdtemp()
    build_standalone({
        "bootstrap.servers": "127.0.0.1:1",
        "offset.storage.file.filename": os.path.join(workdir, "offsets"),
        "listeners": "http://127.0.0.1:0",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    })
    import cdc.file.source, cdc.converters.json_converter, cdc.converters.header, cdc.transforms.chain
    heavy = json.loads(sys.argv[1])
    print(json.dumps(sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))))
    """
)


def _loaded(heavy: tuple[str, ...]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(heavy)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def _importers(module: str) -> str:
    """``python -X importtime``'s chain of importers of ``module`` in the same probe, for the message."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _PROBE, json.dumps([module])],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    rows = []
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1]
            rows.append((len(name) - len(name.lstrip()), name.strip()))
    for i, (depth, name) in enumerate(rows):
        if name == module or name.startswith(module + "."):
            chain, level = [name], depth
            for later_depth, later in rows[i + 1 :]:  # importtime prints a module before its importer
                if later_depth < level:
                    chain.append(later)
                    level = later_depth
            return " <- ".join(chain)
    return "(not found by -X importtime)"


def test_a_bare_worker_imports_no_heavy_module() -> None:
    loaded = _loaded(HEAVY)
    heavy = sorted({h for h in HEAVY for m in loaded if m == h or m.startswith(h + ".")})
    chains = "\n".join(_importers(h) for h in heavy)
    assert not heavy, f"a bare worker's start imported {heavy}:\n{chains}"


@pytest.mark.parametrize("name", ["AvroConverter", "JsonConverter", "SchemaRegistryClient"])
def test_lazy_package_names_still_resolve(name: str) -> None:
    import cdc.converters

    value = getattr(cdc.converters, name)
    assert value.__name__ == name
    assert name in cdc.converters.__all__


def test_lazy_snapshot_names_still_resolve() -> None:
    import cdc.snapshot
    from cdc.snapshot.chunks import plan_table

    assert cdc.snapshot.plan_table is plan_table
    with pytest.raises(AttributeError):
        cdc.snapshot.no_such_name  # noqa: B018
