"""MariaDB → the MySQL source → Kafka → the JDBC sinks → PostgreSQL, in one ``cdc standalone`` worker process
started from the seed worker file (JSON converters with schemas).

Debezium's sink class reads the change events as they are; Confluent's reads the same topic through
``ExtractNewRecordState`` (deletes as tombstones). The test inserts, updates, changes a primary key,
deletes and adds a column upstream, and compares each target table with the source row by row.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from worker_process import WorkerProcess, mysql_source, put_connectors, standalone_worker, wait_for

pytestmark = pytest.mark.integration

PG = {"host": "127.0.0.1", "port": 5432, "user": "cdc", "password": "cdc", "dbname": "cdc"}


@pytest.fixture
def pg_schema() -> Iterator[str]:
    schema = "replica_" + uuid.uuid4().hex[:10]
    with psycopg.connect(**PG, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with psycopg.connect(**PG, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _source_rows(mysql_db: Any) -> list[tuple[Any, ...]]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SELECT * FROM items ORDER BY id")
        return [_normal(row) for row in cur.fetchall()]


def _target_rows(schema: str, table: str) -> list[tuple[Any, ...]] | None:
    with psycopg.connect(**PG, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass(%s)", (f'"{schema}"."{table}"',)).fetchone()
        if exists is None or exists[0] is None:
            return None
        names = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = %s AND table_name = %s "
                "ORDER BY ordinal_position",
                (schema, table),
            )
        ]
        order = ["id", "name", "price", "created", "updated", "day", "doc", "state", "extra"]
        present = [n for n in order if n in names]
        rows = conn.execute(f'SELECT {",".join(present)} FROM "{schema}"."{table}" ORDER BY id').fetchall()
        return [_normal(row) for row in rows]


def _normal(row: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for value in row:
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        if isinstance(value, str) and value[:1] in "{[":
            value = json.loads(value)
        out.append(value)
    return tuple(out)


def test_mariadb_to_postgresql_through_both_sinks(
    tmp_path: Path, kafka: Any, mysql_db: Any, workers: list[WorkerProcess], pg_schema: str
) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2),"
            " created DATETIME(6),"
            " updated TIMESTAMP(3) NULL, day DATE, doc JSON, state ENUM('new','paid','sent'))"
        )
        cur.executemany(
            "INSERT INTO items VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [
                (
                    i,
                    f"n{i}",
                    decimal.Decimal(f"{i}.25"),
                    dt.datetime(2024, 1, i, 10, 0, 0, 123456),
                    dt.datetime(2024, 2, i, 11, 0, 0, 500000),
                    dt.date(2024, 3, i),
                    json.dumps({"i": i}),
                    "new",
                )
                for i in range(1, 11)
            ],
        )
    worker = standalone_worker(tmp_path, kafka, workers)
    prefix = kafka.topic("rep")
    topic = f"{prefix}.{mysql_db.name}.items"
    sink = {
        "connection.url": "jdbc:postgresql://127.0.0.1:5432/cdc",
        "connection.password": "cdc",
        "topics": topic,
        "insert.mode": "upsert",
        "delete.enabled": "true",
    }
    put_connectors(
        worker,
        {
            "rep-source": mysql_source(mysql_db, prefix, kafka.bootstrap_servers, 5701),
            "rep-debezium": {
                **sink,
                "connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector",
                "connection.username": "cdc",
                "primary.key.mode": "record_key",
                "schema.evolution": "basic",
                "collection.name.format": pg_schema + ".dbz_${source.table}",
            },
            "rep-confluent": {
                **sink,
                "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
                "connection.user": "cdc",
                "pk.mode": "record_key",
                "auto.create": "true",
                "auto.evolve": "true",
                "table.name.format": pg_schema + ".flat_items",
                "transforms": "unwrap",
                "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
                "transforms.unwrap.drop.tombstones": "false",
                "transforms.unwrap.delete.handling.mode": "none",
            },
        },
    )

    def equal(step: str) -> None:
        expected = _source_rows(mysql_db)
        for table in ("dbz_items", "flat_items"):
            wait_for(
                lambda t=table: _target_rows(pg_schema, t) == expected, 90, f"{table} equal after {step}"
            )

    equal("the snapshot")
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("UPDATE items SET name = 'renamed', price = 99.99, state = 'paid' WHERE id = 2")
        cur.execute("UPDATE items SET id = 100 WHERE id = 5")  # a key change: delete + create downstream
        cur.execute("DELETE FROM items WHERE id IN (7, 8)")
        cur.execute("INSERT INTO items (id, name, updated) VALUES (11, NULL, NULL)")
    equal("updates, a key change and deletes")
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("ALTER TABLE items ADD COLUMN extra VARCHAR(10)")
        cur.execute("UPDATE items SET extra = 'x' WHERE id <= 3")
        cur.execute("INSERT INTO items (id, name, extra) VALUES (12, 'new', 'y')")
    equal("a column added upstream")
    with psycopg.connect(**PG, autocommit=True) as conn:
        types = dict(
            conn.execute(
                "SELECT column_name, format_type(atttypid, atttypmod) FROM information_schema.columns c "
                "JOIN pg_attribute a ON a.attrelid = to_regclass(quote_ident(c.table_schema) || '.' || "
                "quote_ident(c.table_name)) AND a.attname = c.column_name "
                "WHERE table_schema = %s AND table_name = 'dbz_items'",
                (pg_schema,),
            ).fetchall()
        )
    assert types == {
        "id": "integer",
        "name": "text",  # no length without the source's column.propagate.source.type
        "price": "numeric(10,2)",
        "created": "timestamp(6) without time zone",
        "updated": "timestamp(6) with time zone",
        "day": "date",
        "doc": "text",  # MariaDB's JSON is LONGTEXT: the source sends a plain string
        "state": "text",
        "extra": "text",
    }
    for name in ("rep-debezium", "rep-confluent"):
        status = worker.get(f"/connectors/{name}/status").json()
        assert status["tasks"][0]["state"] == "RUNNING", status
