"""Column rules and custom converters in the snapshot and in streaming, on the real server.

The connector task runs in-process on a database of the test's own with a hash, a mask, a truncation, a
propagated source type, ``message.key.columns`` and ``TinyIntOneToBooleanConverter``; the snapshot's
rows (``op=r``) and the streamed ones (``op=c``) must carry the same transformed values and schemas.
The values themselves are Debezium's (its classes answered the same on these rules:
``bench/debezium_columns.py``).
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from cdc.mysql.columns import debezium_hash
from cdc.mysql.task import MySqlSourceTask
from tests.integration.faultkit import mysql_connector
from tests.integration.inprocess import NoOffsetsContext

pytestmark = pytest.mark.integration

DDL = """CREATE TABLE people (
  id INT PRIMARY KEY,
  active TINYINT(1) NOT NULL DEFAULT 1,
  email VARCHAR(120),
  card CHAR(16),
  bio VARCHAR(200),
  score DECIMAL(6,2)
)"""
SALT = "pepper"


def _insert(mysql_db: Any, ids: range) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for i in ids:
            cur.execute(
                "INSERT INTO people VALUES (%s, %s, %s, %s, %s, %s)",
                (i, i % 2, f"user{i}@example.com", "4111111111111111", "a long biography " * 3, "12.50"),
            )


@pytest.mark.honours(
    "table.include.list",
    "message.key.columns",
    "column.propagate.source.type",
    "converters",
    "include.query",
    "column.mask.with.4.chars",
    "column.truncate.to.8.chars",
    "column.mask.hash.SHA-256.with.salt.s",
)
def test_rules_and_converters_apply_to_snapshot_and_stream(mysql_db: Any, kafka: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(DDL)
    _insert(mysql_db, range(1, 3))
    db = mysql_db.name
    prefix = f"rules{random.randint(0, 10**6)}"
    config = mysql_connector(
        mysql_db,
        prefix,
        kafka.bootstrap_servers,
        **{
            "table.include.list": f"{db}.people",
            "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
            f"column.mask.hash.SHA-256.with.salt.{SALT}": f"{db}.people.email",
            "column.mask.with.4.chars": f"{db}.people.card",
            "column.truncate.to.8.chars": f"{db}.people.bio",
            "column.propagate.source.type": f"{db}.people.score",
            "message.key.columns": f"{db}.people:card,id",
            "include.query": "true",
            "converters": "boolean",
            "boolean.type": "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter",
        },
    )
    task = MySqlSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(config)
    records: list[Any] = []
    try:
        deadline = time.monotonic() + 60
        streamed = False
        while time.monotonic() < deadline and len(records) < 4:
            records += [r for r in task.poll() or [] if r.topic == f"{prefix}.{db}.people" and r.value]
            if len(records) >= 2 and not streamed:
                _insert(mysql_db, range(3, 5))
                streamed = True
    finally:
        task.stop()
    assert [r.value.get("op") for r in records] == ["r", "r", "c", "c"]
    for record in records:
        after = record.value.get("after")
        i = after.get("id")
        assert after.get("active") is (i % 2 == 1)
        assert after.get("email") == debezium_hash(f"user{i}@example.com", "SHA-256", SALT)[:120]
        assert after.get("card") == "****"
        assert after.get("bio") == "a long b"
        query = record.value.get("source").get("query")
        if record.value.get("op") == "r":
            assert query is None
        else:  # include.query: the statement that wrote the row (MariaDB's ANNOTATE_ROWS)
            assert query is not None and query.startswith(f"INSERT INTO people VALUES ({i}, "), query
            # its ANNOTATE_ROWS event is one of the transaction's events in Debezium's offset: GTID,
            # ANNOTATE_ROWS, TABLE_MAP, then the rows event (event=3), not 2 as without include.query
            assert record.source_offset.get("event") == 3, record.source_offset
        assert [f.name for f in record.key.schema.fields] == ["card", "id"]
        # card is nullable: Debezium's key field is optional (a row with a NULL card keys on null)
        assert [f.schema.optional for f in record.key.schema.fields] == [True, False]
        assert record.key.get("card") == "****" and record.key.get("id") == i
        schema = {f.name: f.schema for f in after.schema.fields}
        assert schema["active"].type.name == "BOOLEAN" and schema["active"].default is True
        assert schema["email"].parameters == {"masked": "true"}
        assert schema["card"].parameters == {"masked": "true"}
        assert schema["bio"].parameters == {"truncateLength": "8"}
        assert (schema["score"].parameters or {})["__debezium.source.column.type"] == "DECIMAL"
        assert (schema["score"].parameters or {})["__debezium.source.column.length"] == "6"


@pytest.mark.honours("include.query", "signal.data.collection")
def test_include_query_leaves_out_what_names_the_signal_table(mysql_db: Any, kafka: Any) -> None:
    """Debezium's MariaDB connector does not take an ANNOTATE_ROWS query naming its signal table as
    `db`.`table` (its incremental snapshot's watermark INSERTs, cdc's too): such rows keep the query before
    them in their transaction, null when there is none. Seen side by side (``make compat`` row
    include-query): Debezium's watermark rows carry ``source.query`` null."""
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(DDL)
        cur.execute("CREATE TABLE sig (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32), data TEXT)")
    prefix = f"sigq{random.randint(0, 10**6)}"
    config = mysql_connector(
        mysql_db,
        prefix,
        kafka.bootstrap_servers,
        **{
            "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
            "include.query": "true",
            "signal.data.collection": f"{db}.sig",
        },
    )
    task = MySqlSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(config)
    people = "INSERT INTO people (id) VALUES (1)"
    quoted = f"INSERT INTO `{db}`.`sig` VALUES ('%s', 'log', '{{\"message\": \"m\"}}')"
    records: list[Any] = []
    try:
        deadline = time.monotonic() + 60
        written = False
        while time.monotonic() < deadline and len(records) < 4:
            records += [r for r in task.poll() or [] if r.topic.startswith(f"{prefix}.{db}.") and r.value]
            if not written:
                with mysql_db.connect() as conn, conn.cursor() as cur:
                    cur.execute("BEGIN")
                    cur.execute(people)
                    cur.execute(quoted % "in-tx")
                    cur.execute("COMMIT")
                    cur.execute(quoted % "alone")
                    cur.execute("INSERT INTO sig VALUES ('unquoted', 'log', '{\"message\": \"m\"}')")
                written = True
    finally:
        task.stop()
    got = [(r.topic.rsplit(".", 1)[1], r.value.get("source").get("query")) for r in records]
    assert got == [
        ("people", people),
        ("sig", people),  # the transaction's query before it
        ("sig", None),
        ("sig", "INSERT INTO sig VALUES ('unquoted', 'log', '{\"message\": \"m\"}')"),
    ], got
