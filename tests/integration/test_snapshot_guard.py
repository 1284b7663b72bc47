"""``cdc snapshot`` refuses to run beside the connector it snapshots (issue 26, item 2).

Real worker processes run the MySQL connector (it has snapshotted the table and streams); ``cdc snapshot``
with the same connector file and the workers' own worker file then exits with status 3 and the command
that stops the connector, and writes nothing: the table's topic and the offsets store keep their ends.

- a distributed worker (the status topic says RUNNING, then PAUSED after ``PUT …/pause``): refused both
  times; after ``PUT …/stop`` the check lets it through;
- a standalone worker (asked over its REST API at the worker file's ``listeners``): refused;
- ``--force`` (needs pyspark; Spark ``local[1]``) runs beside the RUNNING connector: it says up front that
  the connector's own snapshot would be faster for 200 rows and that Spark is starting, and writes its
  200 ``op=r`` records.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from test_spark_snapshot import REPO, _configs, _dataset_a

from cdc.cli.snapshot_guard import running_connector
from tests.e2e import worker_process
from tests.e2e.worker_process import WorkerProcess, free_port, wait_for

pytestmark = pytest.mark.integration

workers = worker_process.workers  # the fixture: worker processes killed after the test

ROWS = 200


def _distributed_worker_file(tmp: Path, kafka: Any, worker: dict[str, str]) -> tuple[Path, int]:
    port = free_port()
    props = {
        **{k: v for k, v in worker.items() if k not in ("offset.storage.file.filename", "listeners")},
        "group.id": kafka.topic("snap-guard"),
        "offset.storage.topic": kafka.topic("offsets"),
        "config.storage.topic": kafka.topic("configs"),
        "status.storage.topic": kafka.topic("status"),
        "offset.storage.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "listeners": f"http://127.0.0.1:{port}",
    }
    path = tmp / "distributed.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path, port


def _snapshot(connector_file: Path, worker_file: Path, *extra: str, timeout: float = 120) -> Any:
    argv = [
        sys.executable, "-m", "cdc.cli", "snapshot", str(connector_file), "--worker-config", str(worker_file),
        *extra,
    ]  # fmt: skip
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def _ends(kafka: Any, *topics: str) -> dict[str, int]:
    return {t: len(kafka.read_to_end(t, timeout=60)) for t in topics}


def _state(worker: WorkerProcess, name: str) -> tuple[str, list[str]]:
    response = worker.get(f"/connectors/{name}/status")
    if response.status_code != 200:
        return "", []
    body = response.json()
    return body["connector"]["state"], [t["state"] for t in body["tasks"]]


def _snapshotted(kafka: Any, topic: str) -> bool:
    return len(kafka.read_to_end(topic, timeout=30)) >= ROWS


def test_refused_while_the_connector_runs_in_a_distributed_group(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    _dataset_a(mysql_db, ROWS)
    config, worker_props, _standalone_file, connector_file = _configs(tmp_path, kafka, mysql_db)
    worker_file, port = _distributed_worker_file(tmp_path, kafka, worker_props)
    worker = WorkerProcess(["distributed", str(worker_file)], port, tmp_path / "worker.log")
    workers.append(worker)
    worker.start()
    name = config["name"]
    body = json.loads(connector_file.read_text())
    response = requests.post(f"{worker.url}/connectors", json=body, timeout=60)
    assert response.status_code == 201, response.text
    table_topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    wait_for(lambda: _state(worker, name) == ("RUNNING", ["RUNNING"]), 60, "the connector RUNNING")
    wait_for(lambda: _snapshotted(kafka, table_topic), 90, "the connector's own snapshot")
    offsets_topic = kafka.topic("offsets")
    wait_for(lambda: _ends(kafka, offsets_topic)[offsets_topic] > 0, 30, "a committed offset")
    before = _ends(kafka, table_topic, offsets_topic)

    run = _snapshot(connector_file, worker_file)
    assert run.returncode == 3, run.stdout + run.stderr
    assert f"The connector '{name}' is RUNNING" in run.stderr, run.stderr
    assert f"curl -X PUT http://127.0.0.1:{port}/connectors/{name}/stop" in run.stderr, run.stderr
    assert "--force" in run.stderr and "Traceback" not in run.stderr
    assert run.stdout == ""

    response = requests.put(f"{worker.url}/connectors/{name}/pause", timeout=30)
    assert response.status_code == 202, response.text
    wait_for(lambda: _state(worker, name) == ("PAUSED", ["PAUSED"]), 60, "the connector PAUSED")
    run = _snapshot(connector_file, worker_file)
    assert run.returncode == 3, run.stdout + run.stderr
    assert f"The connector '{name}' is PAUSED" in run.stderr, run.stderr
    time.sleep(2)  # anything written by the refused runs would be there by now
    assert _ends(kafka, table_topic, offsets_topic) == before

    response = requests.put(f"{worker.url}/connectors/{name}/stop", timeout=30)
    assert response.status_code == 204, response.text
    wait_for(lambda: _state(worker, name)[0] == "STOPPED", 60, "the connector STOPPED")
    assert running_connector(_props(worker_file), name) is None


def _props(path: Path) -> dict[str, str]:
    from cdc.worker.properties import load_properties

    return dict(load_properties(str(path)))


def test_refused_while_a_standalone_worker_runs_it(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    _dataset_a(mysql_db, ROWS)
    config, worker_props, worker_file, connector_file = _configs(tmp_path, kafka, mysql_db)
    port = int(worker_props["listeners"].rsplit(":", 1)[1])
    worker = WorkerProcess(
        ["standalone", str(worker_file), str(connector_file)], port, tmp_path / "worker.log"
    )
    workers.append(worker)
    worker.start()
    name = config["name"]
    table_topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    wait_for(lambda: _state(worker, name) == ("RUNNING", ["RUNNING"]), 60, "the connector RUNNING")
    wait_for(lambda: _snapshotted(kafka, table_topic), 90, "the connector's own snapshot")
    offsets_file = Path(worker_props["offset.storage.file.filename"])
    wait_for(offsets_file.exists, 30, "the offsets file")
    offsets_before = offsets_file.read_bytes()
    before = _ends(kafka, table_topic)

    run = _snapshot(connector_file, worker_file)
    assert run.returncode == 3, run.stdout + run.stderr
    assert f"The connector '{name}' is RUNNING" in run.stderr, run.stderr
    assert f"the standalone worker at http://127.0.0.1:{port}" in run.stderr, run.stderr
    assert f"curl -X PUT http://127.0.0.1:{port}/connectors/{name}/stop" in run.stderr, run.stderr
    time.sleep(2)
    assert _ends(kafka, table_topic) == before
    assert offsets_file.read_bytes() == offsets_before


@pytest.mark.slow  # Spark's start-up, about a minute on a busy machine
def test_force_runs_beside_the_running_connector(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    pytest.importorskip("pyspark")
    _dataset_a(mysql_db, ROWS)
    config, worker_props, worker_file, connector_file = _configs(tmp_path, kafka, mysql_db)
    port = int(worker_props["listeners"].rsplit(":", 1)[1])
    worker = WorkerProcess(
        ["standalone", str(worker_file), str(connector_file)], port, tmp_path / "worker.log"
    )
    workers.append(worker)
    worker.start()
    name = config["name"]
    table_topic = f"{config['topic.prefix']}.{mysql_db.name}.a"
    wait_for(lambda: _state(worker, name) == ("RUNNING", ["RUNNING"]), 60, "the connector RUNNING")
    wait_for(lambda: _snapshotted(kafka, table_topic), 90, "the connector's own snapshot")
    run = _snapshot(
        connector_file, worker_file, "--force", "--master", "local[1]", "--partitions", "1",
        "--state-dir", str(tmp_path / "state"), timeout=280,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "would be faster" in run.stderr and "docs/benchmarks.md, B1" in run.stderr, run.stderr
    assert "[snapshot] starting Spark" in run.stderr, run.stderr
    assert "is RUNNING" not in run.stderr
    reads = [m for m in kafka.read_to_end(table_topic, timeout=60) if json.loads(m.value())["op"] == "r"]
    assert len(reads) == 2 * ROWS  # the connector's own and the forced run's
