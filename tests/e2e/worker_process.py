"""Helpers for the end-to-end tests (the ``workers`` fixture is in conftest.py): a worker *process*
started as users start it.

``WorkerProcess`` runs ``python -m cdc.cli standalone|distributed ...`` with its output in a log file of
the test's own, waits for its REST API, and ends it with SIGTERM (a clean stop) or SIGKILL (``kill -9``).
``seed_properties`` copies a seed file from ``tests/fixtures/seed-configs`` with chosen keys replaced
(hosts, ports, paths, topic names): everything else stays as the users wrote it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "tests" / "fixtures" / "seed-configs"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed_properties(name: str, target: Path, replace: Mapping[str, str], add: Mapping[str, str] = {}) -> Path:
    """Write seed file ``name`` to ``target`` with the values of the keys in ``replace`` substituted (each
    must be in the seed) and the keys of ``add`` appended."""
    lines = (SEEDS / name).read_text(encoding="utf-8").splitlines()
    missing = set(replace)
    out = []
    for line in lines:
        key = line.split("=", 1)[0].strip()
        if "=" in line and key in replace:
            line = f"{key}={replace[key]}"
            missing.discard(key)
        out.append(line)
    assert not missing, f"{name} has no keys {sorted(missing)}"
    out.extend(f"{k}={v}" for k, v in add.items())
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return target


class WorkerProcess:
    """One ``cdc`` worker process; ``url`` is its REST API."""

    def __init__(
        self, args: list[str], port: int, log_path: Path, auth: tuple[str, str] | None = None
    ) -> None:
        self.args = args
        self.auth = auth  # basic-auth credentials when the worker requires them
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> WorkerProcess:
        assert self.proc is None or self.proc.poll() is not None
        log = self.log_path.open("ab")
        log.write(f"\n===== start {' '.join(self.args)}\n".encode())
        log.flush()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cdc.cli", *self.args],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if requests.get(self.url + "/", timeout=2, auth=self.auth).status_code == 200:
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"worker REST API did not answer in {timeout} s:\n{self.log()}")

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM, as ``kill`` or Ctrl-C; returns the exit code."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"worker did not stop within {timeout} s of SIGTERM:\n{self.log()}"
            ) from None

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-20000:]

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("auth", self.auth)
        return requests.get(self.url + path, timeout=30, **kwargs)


@pytest.fixture
def workers() -> Iterator[list[WorkerProcess]]:
    """Worker processes a test starts; any still running are killed afterwards (a conftest imports it)."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        if worker.alive():
            assert worker.proc is not None
            worker.proc.kill()
            worker.proc.wait(30)


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")


def standalone_worker(tmp_path: Path, kafka: Any, workers: list[WorkerProcess], **add: str) -> WorkerProcess:
    """A standalone worker from the seed worker file (the stack's brokers, an offsets file of the test's
    own, a free port, and the keys of ``add``), started and registered for clean-up."""
    port = free_port()
    props = seed_properties(
        "connect-standalone.properties",
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "offset.storage.file.filename": str(tmp_path / "offsets"),
        },
        {"listeners": f"http://127.0.0.1:{port}", **add},
    )
    worker = WorkerProcess(["standalone", str(props)], port, tmp_path / "worker.log")
    workers.append(worker)
    return worker.start()


def mysql_source(mysql_db: Any, prefix: str, bootstrap: str, server_id: int, **extra: str) -> dict[str, str]:
    """A Debezium MySQL connector config capturing the test's database (history: ``<prefix>.history``)."""
    return {
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(server_id),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal.kafka.topic": prefix + ".history",
        "schema.history.internal.kafka.bootstrap.servers": bootstrap,
        "include.schema.changes": "false",
        **extra,
    }


def jdbc_source(mysql_db: Any, topic_prefix: str, **extra: str) -> dict[str, str]:
    """A Confluent JDBC source config polling the test's database by ``id`` (incrementing mode)."""
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}",
        "connection.user": mysql_db.user,
        "connection.password": mysql_db.password,
        "mode": "incrementing",
        "incrementing.column.name": "id",
        "topic.prefix": topic_prefix,
        **extra,
    }


def put_connectors(worker: WorkerProcess, configs: Mapping[str, Mapping[str, str]]) -> None:
    """``PUT /connectors/{name}/config`` for each; every one must be created (201)."""
    for name, config in configs.items():
        r = requests.put(f"{worker.url}/connectors/{name}/config", json=dict(config), timeout=30)
        assert r.status_code == 201, (name, r.status_code, r.text)


def items_sources(
    worker: WorkerProcess, kafka: Any, mysql_db: Any, name: str, server_id: int
) -> tuple[str, dict[str, dict[str, str]]]:
    """An ``items`` table of 20 rows read by a JDBC source (``<name>-jdbc``, topic ``<prefix>-items``) and
    a MySQL source (``<name>-mysql``, topics ``<prefix>.<db>.items``), both created on ``worker``; returns
    the topic prefix and the configs."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40))")
        cur.executemany("INSERT INTO items (name) VALUES (%s)", [(f"n{i}",) for i in range(20)])
    prefix = kafka.topic(name)
    for topic in (f"{prefix}-items", f"{prefix}.history", f"{prefix}.{mysql_db.name}.items"):
        kafka.topic(topic)
    configs = {
        f"{name}-jdbc": jdbc_source(mysql_db, f"{prefix}-", **{"poll.interval.ms": "200"}),
        f"{name}-mysql": mysql_source(mysql_db, prefix, kafka.bootstrap_servers, server_id),
    }
    put_connectors(worker, configs)
    return prefix, configs
