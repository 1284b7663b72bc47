"""The demo's second half: register the seed Debezium config over REST, change rows, print the events.

Run by scripts/demo.sh after the stack, the registry and a worker are up. Exits once every change it
made has arrived in Kafka, leaving everything running.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from typing import Any

import pymysql
import requests
from confluent_kafka import Consumer, TopicPartition

from cdc.converters import AvroConverter

TOPIC = "mysqlavro-ops-customers"
OPS_TABLES = {
    "customers": "id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL, email VARCHAR(255), "
    "balance DECIMAL(10,2) NOT NULL DEFAULT 0, updated_at TIMESTAMP(3) NOT NULL "
    "DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)",
    "products": "id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(255) NOT NULL, price DECIMAL(10,2)",
    "orders": "id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL, created DATETIME(3) NOT NULL "
    "DEFAULT CURRENT_TIMESTAMP(3)",
    "order_items": "order_id INT NOT NULL, line INT NOT NULL, product_id INT NOT NULL, qty INT NOT NULL, "
    "PRIMARY KEY (order_id, line)",
    "boards": "id BIGINT AUTO_INCREMENT PRIMARY KEY, title VARCHAR(200), body TEXT",
}


def say(text: str) -> None:
    print(f"[demo] {text}", flush=True)


def db() -> Any:
    return pymysql.connect(
        host="127.0.0.1", port=3306, user="cdc", password="cdc", database="ops", autocommit=True
    )


# Columns the demo writes that an ops.customers made by an older stack or by the tests may lack.
CUSTOMERS_ADDED = (
    "balance DECIMAL(10,2) NOT NULL DEFAULT 0",
    "updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)",
)


def ensure_tables() -> None:
    with db() as conn, conn.cursor() as cur:
        for name, columns in OPS_TABLES.items():
            cur.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")
        added = ", ".join(f"ADD COLUMN IF NOT EXISTS {column}" for column in CUSTOMERS_ADDED)
        cur.execute(f"ALTER TABLE customers {added}")


def register(url: str, seed_path: str) -> str:
    with open(seed_path, encoding="utf-8") as fh:
        body = json.load(fh)
    name = body["name"]
    existing = requests.get(f"{url}/connectors", timeout=30).json()
    if name in existing:
        say(f"connector {name} is registered already")
    else:
        answer = requests.post(f"{url}/connectors", json=body, timeout=90)
        say(f"POST /connectors → {answer.status_code}")
        if answer.status_code != 201:
            say(answer.text)
            sys.exit(1)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = requests.get(f"{url}/connectors/{name}/status", timeout=30)
        if status.ok:
            data = status.json()
            tasks = data.get("tasks", [])
            if any(t["state"] == "FAILED" for t in tasks) or data["connector"]["state"] == "FAILED":
                say("the connector failed:\n" + json.dumps(data, indent=1))
                sys.exit(1)
            if (
                data["connector"]["state"] == "RUNNING"
                and tasks
                and all(t["state"] == "RUNNING" for t in tasks)
            ):
                say(f"{name} is RUNNING on {data['connector']['worker_id']}")
                return name
        time.sleep(0.5)
    say("the connector did not reach RUNNING in 120 s")
    sys.exit(1)


class Reader:
    def __init__(self) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": "127.0.0.1:9092",
                "group.id": f"cdc-demo-{uuid.uuid4()}",
                "enable.auto.commit": False,
            }
        )
        self.key = AvroConverter()
        self.key.configure({"schema.registry.url": "http://localhost:8081"}, True)
        self.value = AvroConverter()
        self.value.configure({"schema.registry.url": "http://localhost:8081"}, False)
        deadline = time.monotonic() + 60
        while TOPIC not in self.consumer.list_topics(timeout=10).topics and time.monotonic() < deadline:
            time.sleep(0.5)
        _, high = self.consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
        self.consumer.assign([TopicPartition(TOPIC, 0, max(high, 0))])

    def until(self, wanted: int, timeout: float = 60) -> list[tuple[Any, Any]]:
        got: list[tuple[Any, Any]] = []
        deadline = time.monotonic() + timeout
        while len(got) < wanted and time.monotonic() < deadline:
            msg = self.consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            key = self.key.to_connect_data(TOPIC, msg.key()).value
            value = self.value.to_connect_data(TOPIC, msg.value()).value
            key_text = key.as_dict() if hasattr(key, "as_dict") else key
            value_text = value.as_dict() if hasattr(value, "as_dict") else value
            print(f"  {TOPIC}@{msg.offset()}  key={key_text}  value={value_text}", flush=True)
            got.append((key_text, value_text))
        return got


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="http://127.0.0.1:8083")
    parser.add_argument("--seed", required=True)
    args = parser.parse_args()
    ensure_tables()
    # The topic exists once the snapshot wrote its first row; make sure there is one.
    with db() as conn, conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM customers")
        if cur.fetchone()[0] == 0:
            cur.execute("INSERT INTO customers (name, email) VALUES ('first customer', 'first@example.com')")
    name = register(args.url, args.seed)
    reader = Reader()
    run = uuid.uuid4().hex[:6]
    say("waiting until the connector streams (a probe row must arrive)")
    with db() as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO customers (name, email) VALUES (%s, %s)", (f"probe {run}", "probe@example.com")
        )
        if len(reader.until(1, timeout=120)) < 1:
            say("the probe row did not arrive in 120 s; see .stack/demo/worker.log")
            return 1
        say("streaming; now: 2 inserts, 1 update, 1 delete on ops.customers")
        cur.execute(
            "INSERT INTO customers (name, email, balance) VALUES (%s, %s, 10.50), (%s, %s, 99.99)",
            (f"ann {run}", "ann@example.com", f"bob {run}", "bob@example.com"),
        )
        cur.execute(
            "SELECT id FROM customers WHERE name IN (%s, %s) ORDER BY id", (f"ann {run}", f"bob {run}")
        )
        ann, bob = (r[0] for r in cur.fetchall())
        cur.execute("UPDATE customers SET balance = balance + 1 WHERE id = %s", (ann,))
        cur.execute("DELETE FROM customers WHERE id = %s", (bob,))
    # 2 inserts + 1 update + the delete's tombstone (ExtractNewRecordState drops the delete event itself
    # and keeps its tombstone, as the seed's drop.tombstones=false says).
    events = reader.until(4)
    if len(events) < 4:
        say(f"only {len(events)} of 4 change records arrived in 60 s")
        return 1
    say(f"all {len(events)} changes arrived. The worker and the stack keep running:")
    say(f"  status:          curl -s {args.url}/connectors/{name}/status")
    say(
        "  more changes:    mariadb -h127.0.0.1 -ucdc -pcdc ops "
        "-e \"INSERT INTO customers(name) VALUES ('x')\""
    )
    say(f"  watch the topic: .venv/bin/python scripts/demo/watch.py   (topic {TOPIC})")
    say("  stop everything: scripts/demo.sh stop && make down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
