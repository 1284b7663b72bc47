"""`make demo-replicate`'s second half: MariaDB ops.customers → Kafka → PostgreSQL ops.customers.

Run by scripts/demo-replicate.sh once the stack, the registry and a worker are up: registers the users'
seed Debezium config as it is (Avro, topics ``mysqlavro-ops-<table>``, flat rows, tombstones kept) and
Confluent's JDBC sink reading ``mysqlavro-ops-customers`` into PostgreSQL (upsert by the record key,
deletes on tombstones, tables created and evolved). Then it changes rows upstream (inserts, an update,
a primary-key change, a delete, a column added) and shows both tables equal, row by row.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
import uuid
from typing import Any

import psycopg
import requests

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from run import db, ensure_tables, register, say  # the demo helpers beside this file

PG = {"host": "127.0.0.1", "port": 5432, "user": "cdc", "password": "cdc", "dbname": "cdc"}
SINK = "ops_customers_to_postgresql"


def sink_config(registry: str) -> dict[str, str]:
    return {
        "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
        "tasks.max": "1",
        "topics": "mysqlavro-ops-customers",
        "connection.url": "jdbc:postgresql://127.0.0.1:5432/cdc",
        "connection.user": "cdc",
        "connection.password": "cdc",
        "key.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "key.converter.schema.registry.url": registry,
        "value.converter.schema.registry.url": registry,
        "transforms": "table",
        "transforms.table.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.table.regex": "mysqlavro-ops-(.*)",
        "transforms.table.replacement": "$1",
        "table.name.format": "ops.${topic}",
        "insert.mode": "upsert",
        "pk.mode": "record_key",
        "delete.enabled": "true",
        "auto.create": "true",
        "auto.evolve": "true",
    }


def source_rows() -> tuple[list[str], list[tuple[Any, ...]]]:
    with db() as conn, conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SELECT * FROM customers ORDER BY id")
        names = [d[0] for d in cur.description]
        return names, [tuple(_normal(v) for v in row) for row in cur.fetchall()]


def target_rows(names: list[str]) -> list[tuple[Any, ...]] | None:
    with psycopg.connect(**PG, autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass('ops.customers')").fetchone()
        if found is None or found[0] is None:
            return None
        present = {
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = 'ops' AND table_name = 'customers'"
            )
        }
        if not set(names) <= present:
            return None
        columns = ",".join(f'"{n}"' for n in names)
        rows = conn.execute(f"SELECT {columns} FROM ops.customers ORDER BY id").fetchall()
        return [tuple(_normal(v) for v in row) for row in rows]


def _normal(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def wait_equal(step: str, timeout: float = 120) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + timeout
    names, expected = source_rows()
    while time.monotonic() < deadline:
        names, expected = source_rows()
        if target_rows(names) == expected:
            say(f"after {step}: PostgreSQL ops.customers equals MariaDB ops.customers ({len(expected)} rows)")
            return expected
        time.sleep(0.5)
    say(f"after {step}: the tables still differ after {timeout:g} s")
    say(f"  MariaDB:    {expected[-5:]}")
    say(f"  PostgreSQL: {(target_rows(names) or [])[-5:]}")
    sys.exit(1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="http://127.0.0.1:8083")
    parser.add_argument("--seed", required=True)
    parser.add_argument("--registry", default="http://localhost:8081")
    args = parser.parse_args()
    ensure_tables()
    with psycopg.connect(**PG, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS ops")
    with db() as conn, conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM customers")
        if cur.fetchone()[0] == 0:
            cur.execute("INSERT INTO customers (name, email) VALUES ('first customer', 'first@example.com')")
    register(args.url, args.seed)
    answer = requests.put(f"{args.url}/connectors/{SINK}/config", json=sink_config(args.registry), timeout=90)
    say(f"PUT /connectors/{SINK}/config → {answer.status_code}")
    if answer.status_code not in (200, 201):
        say(answer.text)
        return 1
    wait_equal("the snapshot")
    run = uuid.uuid4().hex[:6]
    with db() as conn, conn.cursor() as cur:
        say("now: 2 inserts, 1 update, 1 primary-key change, 1 delete on ops.customers")
        cur.execute(
            "INSERT INTO customers (name, email, balance) VALUES (%s, %s, 10.50), (%s, %s, 99.99)",
            (f"ann {run}", "ann@example.com", f"bob {run}", "bob@example.com"),
        )
        cur.execute(
            "SELECT id FROM customers WHERE name IN (%s, %s) ORDER BY id", (f"ann {run}", f"bob {run}")
        )
        ann, bob = (r[0] for r in cur.fetchall())
        cur.execute("UPDATE customers SET balance = balance + 1 WHERE id = %s", (ann,))
        cur.execute("SELECT COALESCE(MAX(id), 0) + 1000 FROM customers")
        moved = cur.fetchone()[0]
        cur.execute("UPDATE customers SET id = %s WHERE id = %s", (moved, ann))
        cur.execute("DELETE FROM customers WHERE id = %s", (bob,))
    wait_equal("the changes")
    with db() as conn, conn.cursor() as cur:
        say("now: ALTER TABLE customers ADD COLUMN note (nullable), and a row that sets it")
        cur.execute("ALTER TABLE customers ADD COLUMN IF NOT EXISTS note VARCHAR(40)")
        cur.execute("UPDATE customers SET note = %s WHERE id = %s", (f"moved {run}", moved))
    rows = wait_equal("the new column")
    for row in rows[-3:]:
        say(f"  {row}")
    say(f"status: curl -s {args.url}/connectors/{SINK}/status ; psql: SELECT * FROM ops.customers")
    say("stop: scripts/demo-replicate.sh stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
