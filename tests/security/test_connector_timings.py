"""What a REST user can do with the MySQL connector's timing and masking keys (``define_tuning``):

* ``custom.sanitize.pattern``: the values of the keys it matches never reach the worker's log, where the
  same key's value under a connector without the pattern is logged; a pattern that
  backtracks without end is matched within a budget (and then masks every key) instead of holding the
  worker; one that is no regular expression is refused at validate;
* ``connection.validation.timeout.ms`` cannot make validate wait past its cap, whatever the value;
* ``executor.shutdown.timeout.ms`` cannot make a task's stop (on the herder's thread) wait past its cap;
* the net timeouts of the binlog session stay within what the server itself accepts;
* ``min.row.count.to.stream.results`` cannot make the snapshot hold a large table whole in memory.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from attack import call, mysql_config, standalone_worker
from worker_process import WorkerProcess, wait_for

from cdc.config.sanitize import SANITIZE_BUDGET_S, sanitized_keys
from cdc.mysql import connection as mysql_connection
from cdc.mysql.config import MySqlSettings
from cdc.mysql.validation import validate_mysql

pytestmark = pytest.mark.integration


@pytest.mark.e2e
@pytest.mark.honours("custom.sanitize.pattern")
def test_custom_sanitize_pattern_keeps_matching_values_out_of_the_log(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess]
) -> None:
    worker = standalone_worker(tmp_path, kafka, workers)
    hidden, shown = "SET @cdc_marker = 'tok-7f3a9c51'", "SET @cdc_marker = 'plain-51c9a3f7'"
    masked = mysql_config(
        mysql_db,
        "sanitized",
        **{"database.initial.statements": hidden, "custom.sanitize.pattern": r".*initial\.statements"},
    )
    control = mysql_config(mysql_db, "control", **{"database.initial.statements": shown})
    for config in (masked, control):
        name = config["name"]
        answer = call(worker, "PUT", f"/connectors/{name}/config", json=config)
        assert answer.status_code == 201, answer.text

    def running(name: str) -> bool:
        # no "tasks" yet (or a 404 before the connector's first status) on a busy machine: not yet
        tasks = call(worker, "GET", f"/connectors/{name}/status").json().get("tasks") or [{}]
        return bool(tasks[0].get("state") == "RUNNING")

    for name in ("sanitized", "control"):
        wait_for(lambda n=name: running(n), 60, f"{name} running")
    # Debezium's start line lists the configuration: the control connector's value shows there
    wait_for(lambda: shown in worker.log(), 30, "the control connector's configuration logged")
    log = worker.log()
    assert "Starting MySqlConnectorTask with configuration:" in log
    assert "database.initial.statements = [hidden]" in log
    assert hidden not in log and "tok-7f3a9c51" not in log


def test_an_evil_sanitize_pattern_is_bounded_and_masks_everything() -> None:
    props = {f"{'a' * 20}.{'b' * 25}{i}": "value-long-enough" for i in range(20)}
    props["custom.sanitize.pattern"] = r"(?:\w|\w\w|\w\w\w)*\.(?:\w|\w\w)*!"  # as test_signals'
    started = time.monotonic()
    keys = sanitized_keys(props)
    assert time.monotonic() - started < SANITIZE_BUDGET_S + 1.0
    assert keys == set(props)  # ran out of budget: every value masked, none let through


def test_an_invalid_sanitize_pattern_is_refused() -> None:
    props = {
        "database.hostname": "h",
        "database.user": "u",
        "topic.prefix": "p",
        "schema.history.internal.kafka.topic": "h",
        "custom.sanitize.pattern": "(unclosed",
    }
    errors = {v.name: v.errors for v in validate_mysql(props)}
    assert errors["custom.sanitize.pattern"], errors


@pytest.fixture
def silent_port() -> Iterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        listener.close()
        for s in held:
            s.close()


def test_a_huge_connection_validation_timeout_is_capped(
    silent_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap holds whatever the value (here lowered to 1 s so the test is quick; it is 60 s)."""
    monkeypatch.setattr(mysql_connection, "VALIDATION_WAIT_MAX_MS", 1000)
    settings = MySqlSettings.parse(
        {
            "database.hostname": "127.0.0.1",
            "database.port": str(silent_port),
            "database.user": "u",
            "topic.prefix": "p",
            "schema.history.internal.kafka.topic": "h",
            "connection.validation.timeout.ms": str(10**15),
        }
    )
    started = time.monotonic()
    problems = mysql_connection.validate_connection(settings)
    assert time.monotonic() - started < 3.0
    assert problems == {"database.hostname": ["Connection validation timed out after 1000 ms"]}


def test_timing_values_out_of_range_are_refused() -> None:
    base = {
        "database.hostname": "h",
        "database.user": "u",
        "topic.prefix": "p",
        "schema.history.internal.kafka.topic": "h",
    }
    for key, value in (
        ("binlog.net.write.timeout", "31536001"),  # above the server's own maximum
        ("binlog.net.read.timeout", "-1"),
        ("database.query.timeout.ms", "-5"),
        ("executor.shutdown.timeout.ms", "0"),
        ("connection.validation.timeout.ms", "0"),
        ("retriable.restart.connector.wait.ms", "0"),
        ("min.row.count.to.stream.results", "100001"),  # a large table held whole in the worker's memory
    ):
        errors = {v.name: v.errors for v in validate_mysql({**base, key: value})}
        assert errors[key], (key, value)


def test_a_huge_executor_shutdown_timeout_is_capped() -> None:
    from cdc.mysql.config_tuning import SHUTDOWN_WAIT_MAX_MS
    from cdc.mysql.task import MariaDbSourceTask

    task = MariaDbSourceTask()
    props = {
        "database.hostname": "127.0.0.1",
        "database.port": "1",  # nothing listens: start defers (a retriable error) after reading the keys
        "database.user": "u",
        "topic.prefix": "p",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        "executor.shutdown.timeout.ms": str(10**15),
    }
    task.start(props)
    try:
        assert task._shutdown_wait_s == SHUTDOWN_WAIT_MAX_MS / 1000
    finally:
        task.stop()
