"""``openlineage.integration.config.file.path``: a file a REST user names and the worker opens, and a file
that names more files (the file transport's log, which the worker writes; a Kafka transport's key store).

Against a real distributed worker confined by ``connector.file.allowed.paths``:

* a config naming an OpenLineage file outside the allowed directory (directly, through ``..``, through a
  symlink, or the default ``./openlineage.yml`` in the worker's directory) is refused with 400 naming the
  key, and nothing is read;
* an OpenLineage file inside the allowed directory whose file transport writes outside it fails the task
  with the reason before anything is written: the victim file keeps its content, no event reaches it;
* inside the allowed directory, the integration works: the events land in the allowed log.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from attack import call, distributed_worker
from faultkit import mysql_connector
from worker_process import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

CANARY = "operator-secret-canary-ol"


def _config(mysql_db: Any, kafka: Any, prefix: str, path: str | None) -> dict[str, str]:
    extra = {"snapshot.mode": "no_data", "openlineage.integration.enabled": "true"}
    if path is not None:
        extra["openlineage.integration.config.file.path"] = path
    return mysql_connector(mysql_db, prefix, kafka.bootstrap_servers, **extra)


def _task(worker: WorkerProcess, name: str) -> dict[str, Any] | None:
    status = call(worker, "GET", f"/connectors/{name}/status")
    tasks = status.json().get("tasks") if status.ok else None
    return tasks[0] if tasks else None


@pytest.mark.honours("openlineage.integration.config.file.path", "openlineage.integration.enabled")
def test_the_openlineage_file_and_the_files_it_names_are_confined(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], mysql_db: Any
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.yml"
    secret.write_text(f"transport:\n  type: console\n# {CANARY}\n", encoding="utf-8")
    (allowed / "link.yml").symlink_to(secret)
    victim = outside / "victim.log"
    victim.write_text(CANARY + "\n", encoding="utf-8")
    worker = distributed_worker(
        tmp_path, kafka, workers, "lineage", {"connector.file.allowed.paths": str(allowed)}
    )
    key = "openlineage.integration.config.file.path"
    for i, path in enumerate(
        [str(secret), f"{allowed}/../outside/secret.yml", str(allowed / "link.yml"), None]
    ):
        config = _config(mysql_db, kafka, f"olr{i}", path)
        response = call(worker, "POST", "/connectors", json={"name": f"lineage-{i}", "config": config})
        assert response.status_code == 400, response.text
        assert f"{key}: The path " in response.json()["message"], response.text
        assert "not allowed to be accessed" in response.json()["message"]

    # inside the allowed directory, but its file transport writes outside it: the task fails first
    bad = allowed / "bad.yml"
    bad.write_text(f"transport:\n  type: file\n  location: {victim}\n", encoding="utf-8")
    response = call(
        worker,
        "POST",
        "/connectors",
        json={"name": "bad", "config": _config(mysql_db, kafka, "olb", str(bad))},
    )
    assert response.status_code == 201, response.text

    def failed() -> bool:
        task = _task(worker, "bad")
        return task is not None and task["state"] == "FAILED"

    wait_for(failed, 90, "the task FAILED")
    task = _task(worker, "bad")
    assert task is not None
    assert "The file transport's location: The path" in task["trace"]
    assert "not allowed to be accessed" in task["trace"]

    # inside it, the same integration works, the worker's transform chain adding the output datasets
    good = allowed / "good.yml"
    log = allowed / "events.jsonl"
    good.write_text(f"transport:\n  type: file\n  location: {log}\n", encoding="utf-8")
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT PRIMARY KEY)")
    prefix = kafka.topic("olg")
    config = {
        **_config(mysql_db, kafka, prefix, str(good)),
        "transforms": "lineage",
        "transforms.lineage.type": "io.debezium.transforms.openlineage.OpenLineage",
    }
    response = call(worker, "POST", "/connectors", json={"name": "good", "config": config})
    assert response.status_code == 201, response.text

    def events() -> list[dict[str, Any]]:
        text = log.read_text(encoding="utf-8") if log.exists() else ""
        return [json.loads(line) for line in text.splitlines()]

    wait_for(lambda: any(e["inputs"] for e in events()), 90, "the table's input dataset")
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO items VALUES (1)")
    wait_for(lambda: any(e["outputs"] for e in events()), 90, "the topic's output dataset")
    assert events()[0]["eventType"] == "START"
    outputs = [d["name"] for e in events() for d in e["outputs"]]
    assert outputs == [f"{prefix}.{mysql_db.name}.items"]

    time.sleep(1)
    assert victim.read_text(encoding="utf-8") == CANARY + "\n"
    assert CANARY not in worker.log_path.read_text(encoding="utf-8", errors="replace")
