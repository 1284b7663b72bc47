"""An in-process MariaDB task on one test's database, streaming (``snapshot.mode=no_data``, an in-memory
schema history of that database only), and the waits the key tests share."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from typing import Any

from cdc.api.errors import ConnectError
from cdc.api.records import SourceRecord
from cdc.mysql.task import MariaDbSourceTask
from tests.integration.inprocess import NoOffsetsContext

__all__ = ["await_failure", "await_row", "config", "row_ids", "sql", "streaming_task"]


def config(mysql_db: Any, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(100_000, 4_000_000)),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "table.include.list": f"{mysql_db.name}.t",
        "snapshot.mode": "no_data",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        # only this database's DDL: the shared server holds many
        "schema.history.internal.store.only.captured.databases.ddl": "true",
        "include.schema.changes": "false",
        **extra,
    }


@contextlib.contextmanager
def streaming_task(props: dict[str, str]) -> Iterator[MariaDbSourceTask]:
    """A started task, streaming: a row written before the (schema-only) snapshot takes its position would
    be left out."""
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(props)
    try:
        deadline = time.monotonic() + 60
        while not (task.streamer is not None and task.streamer.metrics.connected):
            assert time.monotonic() < deadline, "the task did not start streaming"
            task.poll()
        yield task
    finally:
        task.stop()


def sql(mysql_db: Any, *statements: str) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)


def row_ids(records: list[SourceRecord]) -> list[int]:
    ids = []
    for record in records:
        after = (
            record.value.get("after") if record.topic.endswith(".t") and record.value is not None else None
        )
        if after is not None:
            ids.append(after.get("id"))
    return ids


def await_row(task: MariaDbSourceTask, row_id: int, timeout: float = 30) -> float:
    """Polls until the insert of ``row_id`` into t arrives; the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if row_id in row_ids(task.poll() or []):
            return time.monotonic() - started
    raise AssertionError(f"row {row_id} did not arrive in {timeout}s")


def await_failure(task: MariaDbSourceTask, timeout: float = 30) -> ConnectError:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            task.poll()
        except ConnectError as exc:
            return exc
    raise AssertionError(f"the task did not fail in {timeout}s")
