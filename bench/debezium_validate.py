"""``PUT …/config/validate`` side by side: Kafka Connect + Debezium's MariaDB connector, and a cdc worker.

``python -m bench.debezium_validate`` starts Apache Kafka Connect (distributed, the Debezium MariaDB plugin
from Maven Central, :mod:`bench.jars`) and a cdc worker on the local stack's Kafka, sends both the same
connector configs — right, wrong password, unreachable port, misspelt include list, a key cdc refuses — and
prints, per config, each side's errors by key. It changes nothing on the server (a failed login is all).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench.jars import debezium_plugin_path
from bench.workers import WorkerProcess, cdc_worker, connect_worker, free_port, worker_properties

__all__ = ["CASES", "main"]

CLASS = "io.debezium.connector.mariadb.MariaDbConnector"
BASE = {
    "connector.class": CLASS,
    "database.hostname": "127.0.0.1",
    "database.port": "3306",
    "database.user": "cdc",
    "database.password": "cdc",
    "database.server.id": "6123",
    "topic.prefix": "validate",
    "schema.history.internal.kafka.bootstrap.servers": "127.0.0.1:9092",
    "schema.history.internal.kafka.topic": "validate-history",
    "database.ssl.mode": "disable",
}
CASES: dict[str, dict[str, str]] = {
    "right": {},
    "wrong password": {"database.password": "wrong"},
    "unreachable port": {"database.port": "1"},
    "misspelt include list": {"table.include.lsit": "inventory.orders"},
    "post.processors": {"post.processors": "reselector"},
}


def _errors(worker: WorkerProcess, config: dict[str, str]) -> dict[str, list[str]]:
    body: Any = worker.request("PUT", f"/connector-plugins/{CLASS}/config/validate", {"name": "v", **config})
    return {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=Path(os.environ.get("CDC_CACHE", "~/.cache/cdc")).expanduser()
    )
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run = uuid.uuid4().hex[:8]
        specs = {
            "debezium": connect_worker(
                work,
                args.cache,
                worker_properties(args.bootstrap, f"validate-connect-{run}", free_port()),
                plugin_path=debezium_plugin_path(args.cache),
            ),
            "cdc": cdc_worker(
                work, sys.executable, worker_properties(args.bootstrap, f"validate-cdc-{run}", free_port())
            ),
        }
        workers = {name: WorkerProcess(spec) for name, spec in specs.items()}
        try:
            for worker in workers.values():
                worker.wait_ready()
            for case, overrides in CASES.items():
                config = {**BASE, **overrides}
                print(f"== {case}")
                for name, worker in workers.items():
                    errors = _errors(worker, config)
                    print(f"  {name:8} {errors or 'no errors'}")
        finally:
            for worker in workers.values():
                worker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
