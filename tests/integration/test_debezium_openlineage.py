"""OpenLineage side by side with the real Debezium: the MariaDB connector 3.5.0 (the newest on Maven Central)
with ``debezium-openlineage-core`` 3.5.0 and ``openlineage-java`` in its plugin directory, as Debezium's docs
install them, and cdc's task, each with the file transport and the OpenLineage transform, on the same
tables. Compared: the event types in order, the job (namespace, name, facets), the run facets' names,
and each input and output dataset (namespace, name, schema fields, dataset type), with prefixes, database
names and producers normalised. Slow: a JVM worker."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from bench import jars
from bench.compat.run import CONNECTOR, Side, connector_config
from bench.stack import Stack, unique
from bench.workers import WorkerProcess, connect_worker, free_port, worker_properties
from cdc.api.records import SourceRecord
from cdc.mysql.task import MariaDbSourceTask
from cdc.transforms.openlineage import OpenLineage
from tests.integration.inprocess import NoOffsetsContext

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
# the plugin's own Jackson (2.19) serves openlineage-java too; the rest of the OpenLineage libraries join it
SHARED = re.compile(
    r"(jackson-(annotations|core|databind|datatype-jsr310)|slf4j-api|debezium-openlineage-api)-"
)


def _plugin_path(cache: Path, root: Path) -> Path:
    """Debezium's MariaDB plugin with the OpenLineage libraries added (the docs' install); named like the
    plugin's own root so that the worker runs the Connect it needs."""
    mariadb = jars.debezium_plugin_path(cache, "debezium-connector-mariadb")
    lineage = jars.debezium_plugin_path(cache, "debezium-openlineage-core", jars.MARIADB_VERSION)
    plugin = root / mariadb.name / "debezium-connector-mariadb"
    shutil.copytree(mariadb / "debezium-connector-mariadb", plugin)
    for jar in (lineage / "debezium-openlineage-core").glob("*.jar"):
        if not SHARED.match(jar.name):
            shutil.copy(jar, plugin / jar.name)
    return root / mariadb.name


def _events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _done(events: list[dict[str, Any]]) -> bool:
    return any(e["outputs"] for e in events) and sum(bool(e["inputs"]) for e in events) >= 2


def test_openlineage_events_as_debezium_emits_them(stack: object, tmp_path: Path) -> None:
    bench_stack = Stack(REPO)
    cache = Path("~/.cache/cdc").expanduser()
    tag = unique("x").split("-", 1)[1].replace("-", "_")
    db = f"ol_{tag}"
    bench_stack.sql(
        f"CREATE DATABASE `{db}`; CREATE TABLE `{db}`.orders (id INT PRIMARY KEY, total DECIMAL(10,2), "
        f"note VARCHAR(20)); INSERT INTO `{db}`.orders VALUES (1, 9.50, 'a');"
    )
    server_id = int(tag[-4:], 16) % 500
    sides = {
        "debezium": Side("debezium", f"dbz_{tag}", f"ol-dbz-{tag}", 5400 + server_id),
        "cdc": Side("cdc", f"cdc_{tag}", f"ol-cdc-{tag}", 6000 + server_id),
    }
    logs = {}
    for name, side in sides.items():
        logs[name] = tmp_path / f"{name}-events.jsonl"
        yml = tmp_path / f"{name}.yml"
        yml.write_text(f"transport:\n  type: file\n  location: {logs[name]}\n", encoding="utf-8")
        side.extra_config.update(
            {
                "openlineage.integration.enabled": "true",
                "openlineage.integration.config.file.path": str(yml),
                "openlineage.integration.job.namespace": "lineage-tests",
                "openlineage.integration.job.tags": "env=prod,team=data",
                "openlineage.integration.job.owners": "Alice Smith=maintainer",
                "table.include.list": f"{db}.orders",
                "transforms": "openlineage",
                "transforms.openlineage.type": "io.debezium.transforms.openlineage.OpenLineage",
            }
        )
    dbz, ours = sides["debezium"], sides["cdc"]
    jars.connect_libs(cache, jars.MARIADB_CONNECT_VERSION)
    plugin = _plugin_path(cache, tmp_path / "plugins")
    task = MariaDbSourceTask()
    transform = OpenLineage[SourceRecord]()
    transform.configure({})
    try:
        props = worker_properties(
            bench_stack.bootstrap,
            dbz.group,
            free_port(),
            {
                "key.converter.schemas.enable": "true",
                "value.converter.schemas.enable": "true",
                "offset.storage.topic": dbz.offsets_topic,
            },
        )
        dbz.spec = connect_worker(tmp_path, cache, props, plugin_path=plugin)
        dbz.worker = WorkerProcess(dbz.spec)
        dbz.worker.wait_ready()
        dbz.worker.create_connector(CONNECTOR, connector_config(dbz, bench_stack, [db]))
        config = connector_config(ours, bench_stack, [db])
        config["schema.history.internal"] = "io.debezium.relational.history.MemorySchemaHistory"
        task.initialize(NoOffsetsContext())
        task.start(config)
        deadline = time.monotonic() + 240
        altered = False
        while not (_done(_events(logs["cdc"])) and _done(_events(logs["debezium"]))):
            for record in task.poll() or []:
                transform.apply(record)
            if not altered and all(any(e["outputs"] for e in _events(log)) for log in logs.values()):
                bench_stack.sql(f"ALTER TABLE `{db}`.orders ADD COLUMN shipped BOOLEAN;")
                altered = True
            assert time.monotonic() < deadline, (_events(logs["cdc"])[-1:], _events(logs["debezium"])[-1:])
            status = json.dumps(dbz.worker.status(CONNECTOR)) if time.monotonic() % 5 < 0.3 else ""
            assert "FAILED" not in status, f"Debezium's task failed: {status[:3000]}"
    finally:
        task.stop()
        if dbz.worker is not None:
            dbz.worker.stop()

    def shape(side: Side, events: list[dict[str, Any]]) -> list[Any]:
        text = json.dumps(events).replace(side.prefix, "<prefix>").replace(db, "<db>")
        out = []
        for event in json.loads(text):
            job = event["job"]
            out.append(
                (
                    event["eventType"],
                    job["namespace"],
                    job["name"],
                    {k: _facet(v) for k, v in job["facets"].items()},
                    sorted(event["run"]["facets"]),
                    [_dataset(d) for d in event["inputs"]],
                    [_dataset(d) for d in event["outputs"]],
                )
            )
        return out

    theirs, mine = shape(dbz, _events(logs["debezium"])), shape(ours, _events(logs["cdc"]))
    assert mine == theirs
    # the configuration facet: the same keys in the same (HashMap) order, but for what Connect adds to a
    # task's config (name, task.class) and the in-memory history this side's in-process task uses
    aside = {"name", "task.class", "schema.history.internal"}

    def config_keys(log: Path) -> list[str]:
        lines = _events(log)[0]["run"]["facets"]["debezium_config"]["configs"]
        return [k for k in (line.split("=", 1)[0] for line in lines) if k not in aside]

    assert config_keys(logs["cdc"]) == config_keys(logs["debezium"])


def _facet(facet: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in facet.items() if not k.startswith("_")}


def _dataset(dataset: dict[str, Any]) -> Any:
    facets = dataset["facets"]
    return (
        dataset["namespace"],
        dataset["name"],
        _facet(facets["datasetType"]),
        json.dumps(facets["schema"]["fields"], sort_keys=True),
    )
