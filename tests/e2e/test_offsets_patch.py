"""``PATCH /connectors/{name}/offsets`` with offsets a connector could not resume from: 400 naming the field,
nothing written, and the connector runs on when resumed; a good offset is written and used."""

from __future__ import annotations

from typing import Any

import requests
from worker_process import WorkerProcess, items_sources, standalone_worker, wait_for


def state(worker: WorkerProcess, name: str) -> tuple[str, str] | None:
    status = worker.get(f"/connectors/{name}/status").json()
    tasks = status.get("tasks") or []
    return (status["connector"]["state"], tasks[0]["state"]) if tasks else None


def test_bad_offsets_are_refused_naming_the_field(
    tmp_path: Any, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers, **{"offset.flush.interval.ms": "500"})
    prefix, configs = items_sources(worker, kafka, mysql_db, "op", 23458)
    wait_for(lambda: len(kafka.read_to_end(f"{prefix}-items")) >= 20, 60, "the JDBC rows")
    wait_for(lambda: len(kafka.read_to_end(f"{prefix}.{mysql_db.name}.items")) >= 20, 60, "the snapshot")
    for name in configs:
        assert requests.put(f"{worker.url}/connectors/{name}/stop", timeout=30).status_code == 204
    for name in configs:
        wait_for(
            lambda n=name: worker.get(f"/connectors/{n}/status").json()["connector"]["state"] == "STOPPED",
            30,
            f"{name} stopped",
        )

    table = f"{mysql_db.name}.items"
    jdbc_partition = {"protocol": "1", "table": table}
    bad = [
        ("op-jdbc", jdbc_partition, {"incrementing": "ten"}, "'incrementing' must be an integer"),
        ("op-jdbc", jdbc_partition, {"timestamp": 5}, "'incrementing' is missing"),
        (
            "op-mysql",
            {"server": prefix},
            {"file": "mysql-bin.000001", "pos": "abc"},
            "'pos' must be an integer",
        ),
        ("op-mysql", {"server": prefix}, {"pos": 4}, "'file' is missing"),
        (
            "op-mysql",
            {"server": prefix},
            {"file": "b.1", "pos": 4, "gtids": "garbage"},
            "'gtids' is not a GTID set",
        ),
    ]
    before = {name: worker.get(f"/connectors/{name}/offsets").json() for name in configs}
    for name, partition, offset, message in bad:
        r = requests.patch(
            f"{worker.url}/connectors/{name}/offsets",
            json={"offsets": [{"partition": partition, "offset": offset}]},
            timeout=30,
        )
        assert r.status_code == 400, (name, offset, r.text)
        body = r.json()
        assert body["error_code"] == 400 and message in body["message"], body
    assert {name: worker.get(f"/connectors/{name}/offsets").json() for name in configs} == before

    # a good one is written, and the JDBC source resumes from it: ids above 15 again
    r = requests.patch(
        f"{worker.url}/connectors/op-jdbc/offsets",
        json={"offsets": [{"partition": jdbc_partition, "offset": {"incrementing": 15}}]},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    seen = len(kafka.read_to_end(f"{prefix}-items"))
    for name in configs:
        assert requests.put(f"{worker.url}/connectors/{name}/resume", timeout=30).status_code == 202
    for name in configs:
        wait_for(lambda n=name: state(worker, n) == ("RUNNING", "RUNNING"), 60, f"{name} running again")
    wait_for(lambda: len(kafka.read_to_end(f"{prefix}-items")) == seen + 5, 60, "ids 16-20 polled again")
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO items (name) VALUES ('after')")
    wait_for(
        lambda: len(kafka.read_to_end(f"{prefix}.{mysql_db.name}.items")) >= 21, 60, "the streamed insert"
    )
    assert state(worker, "op-mysql") == ("RUNNING", "RUNNING")
