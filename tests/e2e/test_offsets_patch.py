"""``PATCH /connectors/{name}/offsets`` with offsets a connector could not resume from: 400 naming the field,
nothing written, and the connector runs on when resumed; a good offset is written and used."""

from __future__ import annotations

from typing import Any

import requests
from worker_process import WorkerProcess, free_port, seed_properties, wait_for


def state(worker: WorkerProcess, name: str) -> tuple[str, str] | None:
    status = worker.get(f"/connectors/{name}/status").json()
    tasks = status.get("tasks") or []
    return (status["connector"]["state"], tasks[0]["state"]) if tasks else None


def test_bad_offsets_are_refused_naming_the_field(
    tmp_path: Any, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    port = free_port()
    props = seed_properties(
        "connect-standalone.properties",
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "offset.storage.file.filename": str(tmp_path / "offsets"),
        },
        {"listeners": f"http://127.0.0.1:{port}", "offset.flush.interval.ms": "500"},
    )
    worker = WorkerProcess(["standalone", str(props)], port, tmp_path / "worker.log")
    workers.append(worker)
    worker.start()
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40))")
        cur.executemany("INSERT INTO items (name) VALUES (%s)", [(f"n{i}",) for i in range(20)])
    prefix = kafka.topic("op")
    for topic in (f"{prefix}-items", f"{prefix}.history", f"{prefix}.{mysql_db.name}.items"):
        kafka.topic(topic)
    configs = {
        "op-jdbc": {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}",
            "connection.user": mysql_db.user,
            "connection.password": mysql_db.password,
            "mode": "incrementing",
            "incrementing.column.name": "id",
            "topic.prefix": f"{prefix}-",
            "poll.interval.ms": "200",
        },
        "op-mysql": {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "database.hostname": mysql_db.host,
            "database.port": str(mysql_db.port),
            "database.user": mysql_db.user,
            "database.password": mysql_db.password,
            "database.server.id": "23458",
            "topic.prefix": prefix,
            "database.include.list": mysql_db.name,
            "schema.history.internal.kafka.topic": prefix + ".history",
            "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
            "include.schema.changes": "false",
        },
    }
    for name, config in configs.items():
        assert (
            requests.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=30).status_code == 201
        )
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
