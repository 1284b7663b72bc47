"""Files named by connector configs (issue #24, files): what a REST user can make the worker read, write,
truncate or create with ``signal.file``, a file-based schema history and a ``jdbc:sqlite:`` URL.

Against real worker processes with basic authentication:

* a distributed worker confines them to ``connector.file.allowed.paths``: outside it (directly, through
  ``..``, through a symlink, percent-encoded in an SQLite URI) create and validate answer 400 naming the
  key, nothing is created, the victim files keep their content and never show in the log;
* inside it they work: a signal appended to an operator's existing signal file is acted on once (a
  restarted task does not act on it again) and the file keeps its content; the history file is written in
  a directory the worker creates inside the allowed one;
* a standalone worker (no such key: the operator's own files) still never truncates nor logs a file
  that is not a signal file, and its file history refuses a file that is not a schema history.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from attack import call, credentials, distributed_worker, standalone_worker
from faultkit import mysql_connector
from worker_process import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

KEY_LINES = [
    "-----BEGIN PRIVATE KEY-----",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7sec-files-canary",
    "-----END PRIVATE KEY-----",
]
FILE_HISTORY = "io.debezium.storage.file.history.FileSchemaHistory"


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim" / "tls.key"
    victim.parent.mkdir()
    victim.write_text("\n".join(KEY_LINES) + "\n", encoding="utf-8")
    return victim


def _mysql(mysql_db: Any, kafka: Any, prefix: str, **extra: str) -> dict[str, str]:
    return mysql_connector(mysql_db, prefix, kafka.bootstrap_servers, **{"snapshot.mode": "no_data", **extra})


def _create_items(mysql_db: Any, rows: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT PRIMARY KEY, payload VARCHAR(40))")
        cur.executemany("INSERT INTO items VALUES (%s, %s)", [(i, f"p{i}") for i in range(1, rows + 1)])


def _refused(worker: WorkerProcess, name: str, config: dict[str, str], key: str) -> None:
    """POST and PUT answer 400 naming ``key``; validate puts the error on ``key``."""
    response = call(worker, "POST", "/connectors", json={"name": name, "config": config})
    assert response.status_code == 400, response.text
    assert f"{key}: The path " in response.json()["message"], response.text
    assert "not allowed to be accessed" in response.json()["message"]
    response = call(worker, "PUT", f"/connectors/{name}/config", json=config)
    assert response.status_code == 400, response.text
    plugin = config["connector.class"].rsplit(".", 1)[-1]
    infos = call(worker, "PUT", f"/connector-plugins/{plugin}/config/validate", json=config).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"]}
    assert any("not allowed to be accessed" in e for e in errors.get(key, [])), errors.get(key)


def _log(worker: WorkerProcess) -> str:
    """The whole log (``WorkerProcess.log`` keeps its end only)."""
    return worker.log_path.read_text(encoding="utf-8", errors="replace")


def _task_state(worker: WorkerProcess, name: str) -> dict[str, Any] | None:
    status = call(worker, "GET", f"/connectors/{name}/status")
    tasks = status.json().get("tasks") if status.ok else None
    return tasks[0] if tasks else None


def _running(worker: WorkerProcess, name: str) -> None:
    def state() -> bool:
        task = _task_state(worker, name)
        assert task is None or task["state"] != "FAILED", task
        return task is not None and task["state"] == "RUNNING"

    wait_for(state, 90, f"{name}'s task RUNNING")


def test_a_distributed_worker_refuses_connector_files_outside_its_allowed_paths(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], mysql_db: Any
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    victim = _victim(tmp_path)
    (allowed / "link.key").symlink_to(victim)
    users = credentials(tmp_path)
    users_before = users.read_bytes()
    worker = distributed_worker(
        tmp_path, kafka, workers, "files", {"connector.file.allowed.paths": str(allowed)}
    )
    signals = {"signal.enabled.channels": "source,file"}
    for i, path in enumerate([victim, allowed / ".." / "victim" / "tls.key", allowed / "link.key"]):
        config = _mysql(mysql_db, kafka, f"sig{i}", **signals, **{"signal.file": str(path)})
        _refused(worker, f"signal-{i}", config, "signal.file")

    # the file history: the REST credentials file, a directory tree outside, the 1.x keys
    history = {"schema.history.internal": FILE_HISTORY}
    config = _mysql(mysql_db, kafka, "h0", **history, **{"schema.history.internal.file.filename": str(users)})
    _refused(worker, "history-0", config, "schema.history.internal.file.filename")
    tree = tmp_path / "made" / "by" / "history.dat"
    config = _mysql(mysql_db, kafka, "h1", **history, **{"schema.history.internal.file.filename": str(tree)})
    _refused(worker, "history-1", config, "schema.history.internal.file.filename")
    legacy = {
        "database.history": "io.debezium.relational.history.FileDatabaseHistory",
        "database.history.file.filename": str(users),
    }
    _refused(worker, "history-2", _mysql(mysql_db, kafka, "h2", **legacy), "database.history.file.filename")

    # SQLite databases, plain and as a percent-encoded URI; the Spark snapshot's state directory
    outside = tmp_path / "outside"
    outside.mkdir()
    for i, url in enumerate([f"jdbc:sqlite:{outside}/new.db", f"jdbc:sqlite:file:{allowed}/%2e%2e/new.db"]):
        config = {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": url,
            "mode": "bulk",
            "topic.prefix": kafka.topic("jdbc-"),
        }
        _refused(worker, f"sqlite-{i}", config, "connection.url")
        sink = {  # the JDBC sink's validate must not open (so create) the file before the check either
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "connection.url": url,
            "topics": kafka.topic("jdbc-sink"),
        }
        _refused(worker, f"sqlite-sink-{i}", sink, "connection.url")
    config = _mysql(mysql_db, kafka, "sp", **{"snapshot.spark.state.dir": str(tmp_path / "spark-state")})
    _refused(worker, "spark-state", config, "snapshot.spark.state.dir")

    time.sleep(2)  # anything a wrongly accepted connector would do has had time to happen
    assert call(worker, "GET", "/connectors").json() == []
    assert victim.read_text(encoding="utf-8") == "\n".join(KEY_LINES) + "\n"
    assert users.read_bytes() == users_before
    assert not (tmp_path / "made").exists() and not (tmp_path / "spark-state").exists()
    assert sorted(p.name for p in outside.iterdir()) == [] and not (tmp_path / "new.db").exists()
    log = _log(worker)
    assert KEY_LINES[1] not in log and "s3cret-pa55" not in log


def test_inside_the_allowed_paths_a_file_signal_is_acted_on_once(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], mysql_db: Any
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    worker = distributed_worker(
        tmp_path, kafka, workers, "files-ok", {"connector.file.allowed.paths": str(allowed)}
    )
    _create_items(mysql_db, 20)
    prefix = kafka.topic("ok")
    # the operator's signal file, there before the connector: read, never emptied
    signal_file = allowed / "signals.jsonl"
    header = "# signals for the orders connector, one JSON object a line\n"
    signal_file.write_text(header, encoding="utf-8")
    history = allowed / "history" / "orders.dat"
    config = _mysql(
        mysql_db,
        kafka,
        prefix,
        **{
            "read.only": "true",
            "signal.enabled.channels": "file",
            "signal.file": str(signal_file),
            "signal.poll.interval.ms": "200",
            "schema.history.internal": FILE_HISTORY,
            "schema.history.internal.file.filename": str(history),
        },
    )
    del config["schema.history.internal.kafka.topic"]
    response = call(worker, "POST", "/connectors", json={"name": "orders", "config": config})
    assert response.status_code == 201, response.text
    _running(worker, "orders")
    signal = {
        "id": "once-1",
        "type": "execute-snapshot",
        "data": {"data-collections": [f"{mysql_db.name}.items"], "type": "incremental"},
    }
    with signal_file.open("a", encoding="utf-8") as f:
        f.write(json.dumps(signal) + "\n")
    topic = f"{prefix}.{mysql_db.name}.items"

    def reads() -> int:
        return sum(1 for m in kafka.read_to_end(topic) if m.value() and b'"op":"r"' in m.value())

    wait_for(lambda: reads() >= 20, 90, "the incremental snapshot's 20 reads")
    time.sleep(3)  # the position is saved once the signal was acted on
    response = call(worker, "POST", "/connectors/orders/restart?includeTasks=true")
    assert response.status_code in (200, 202, 204), response.text
    time.sleep(2)
    _running(worker, "orders")
    time.sleep(6)  # many polls of the file by the restarted task
    assert reads() == 20, "the signal was acted on again after the restart"
    assert signal_file.read_text(encoding="utf-8") == header + json.dumps(signal) + "\n"
    records = [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines()]
    assert records and all("position" in r and "source" in r for r in records)
    assert "Skipped line 1 of the signal file" in _log(worker)


def test_a_standalone_worker_never_truncates_logs_or_appends_to_a_victim_file(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], mysql_db: Any
) -> None:
    victim = _victim(tmp_path)
    worker = standalone_worker(tmp_path, kafka, workers)
    config = _mysql(
        mysql_db,
        kafka,
        kafka.topic("standalone"),
        **{"signal.enabled.channels": "file", "signal.file": str(victim), "signal.poll.interval.ms": "200"},
    )
    response = call(worker, "POST", "/connectors", json={"name": "reader", "config": config})
    assert response.status_code == 201, response.text
    _running(worker, "reader")
    time.sleep(3)  # 15 polls
    assert victim.read_text(encoding="utf-8") == "\n".join(KEY_LINES) + "\n"
    log = _log(worker)
    assert "Skipped line 2 of the signal file" in log
    assert not any(line in log for line in KEY_LINES)

    # the file history on a file that is not one: the task fails saying so, the file is untouched
    users = tmp_path / "users.properties"
    before = users.read_bytes()
    config = _mysql(
        mysql_db,
        kafka,
        kafka.topic("standalone-h"),
        **{"schema.history.internal": FILE_HISTORY, "schema.history.internal.file.filename": str(users)},
    )
    response = call(worker, "POST", "/connectors", json={"name": "appender", "config": config})
    assert response.status_code == 201, response.text

    def failed() -> dict[str, Any] | None:
        task = _task_state(worker, "appender")
        return task if task is not None and task["state"] == "FAILED" else None

    task = wait_for(failed, 90, "the task FAILED on a file that is not a schema history")
    assert "is not a schema history" in task["trace"], task["trace"]
    assert users.read_bytes() == before
    assert "s3cret-pa55" not in _log(worker)


def test_key_and_trust_stores_named_by_a_config_are_confined_to_the_allowed_paths(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], mysql_db: Any, stack_tls: Any
) -> None:
    """A client key is the worker's identity to a server: a REST user who could name the operator's key
    store (or any file the worker can read) would connect as the worker. Every key and trust store a
    connector config names (the MySQL connector's ``database.ssl.*``, a JDBC URL's store properties, the
    schema registry and Kafka clients' ``*.location`` and keytab) is confined like the other files, refused
    before anything reads it; inside the allowed directory the same stores work (the connection's TLS is
    checked by validate)."""
    import shutil

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    operator = tmp_path / "operator"  # the worker's own TLS material, outside the allowed directory
    operator.mkdir()
    for name in ("keystore.jks", "truststore.jks", "client.key", "ca.pem"):
        shutil.copy(stack_tls.path(name), operator / name)
        shutil.copy(stack_tls.path(name), allowed / name)
    (allowed / "link.jks").symlink_to(operator / "keystore.jks")
    worker = distributed_worker(
        tmp_path, kafka, workers, "stores", {"connector.file.allowed.paths": str(allowed)}
    )
    tls = {
        "database.user": stack_tls.x509_user,
        "database.password": stack_tls.x509_password,
        "database.ssl.mode": "verify_ca",
        "database.ssl.truststore.password": "changeit",
        "database.ssl.keystore.password": "changeit",
    }
    for i, (key, path) in enumerate(
        [
            ("database.ssl.keystore", operator / "keystore.jks"),
            ("database.ssl.keystore", allowed / "link.jks"),
            ("database.ssl.truststore", operator / "truststore.jks"),
        ]
    ):
        stores = {
            "database.ssl.keystore": str(allowed / "keystore.jks"),
            "database.ssl.truststore": str(allowed / "truststore.jks"),
            key: str(path),
        }
        config = _mysql(mysql_db, kafka, f"st{i}", **tls, **stores)
        _refused(worker, f"mysql-store-{i}", config, key)

    mysql_url = (
        f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}?sslMode=VERIFY_CA"
        f"&trustCertificateKeyStoreUrl=file:{operator}/truststore.jks&trustCertificateKeyStorePassword=changeit"
    )
    pg_url = f"jdbc:postgresql://127.0.0.1:5432/cdc?sslmode=require&sslkey={operator}/client.key"
    for i, url in enumerate([mysql_url, pg_url]):
        source = {
            "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": url,
            "connection.user": "cdc",
            "connection.password": "cdc",
            "mode": "bulk",
            "topic.prefix": kafka.topic("jdbc-"),
        }
        _refused(worker, f"jdbc-store-{i}", source, "connection.url")
        sink = {
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "connection.url": url,
            "connection.user": "cdc",
            "connection.password": "cdc",
            "topics": kafka.topic("jdbc-sink"),
        }
        _refused(worker, f"jdbc-sink-store-{i}", sink, "connection.url")

    # the clients' stores: the schema registry's and a keytab in sasl.jaas.config
    registry_key = "value.converter.schema.registry.ssl.keystore.location"
    config = _mysql(
        mysql_db,
        kafka,
        "reg",
        **{
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": "https://127.0.0.1:8081",
            registry_key: str(operator / "keystore.jks"),
            "value.converter.schema.registry.ssl.keystore.password": "changeit",
        },
    )
    _refused(worker, "registry-store", config, registry_key)
    assert call(worker, "GET", "/connectors").json() == []

    # inside the allowed directory: the same stores, and validate's TLS connection succeeds
    config = _mysql(
        mysql_db,
        kafka,
        "ok",
        **tls,
        **{
            "database.ssl.keystore": str(allowed / "keystore.jks"),
            "database.ssl.truststore": str(allowed / "truststore.jks"),
        },
    )
    config["name"] = "stores-ok"
    infos = call(worker, "PUT", "/connector-plugins/MySqlConnector/config/validate", json=config).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert infos["error_count"] == 0, errors
    log = _log(worker)
    assert "changeit" not in log
