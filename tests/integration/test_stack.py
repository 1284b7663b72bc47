"""The local stack is what the connectors need: a binlog with full row images and metadata, GTIDs, users
with Debezium's grants, and a broker that round-trips records and really compacts."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pymysql
import pytest

if TYPE_CHECKING:  # the fixtures' types; conftest is no module to import at run time
    from tests.conftest import KafkaHelper, MySqlDb, Stack, StackTls

# Debezium's grants; MariaDB 10.5+ shows REPLICATION CLIENT as BINLOG MONITOR, MySQL 8 may say REPLICA.
DEBEZIUM_GRANTS = {
    "SELECT": {"SELECT"},
    "RELOAD": {"RELOAD"},
    "SHOW DATABASES": {"SHOW DATABASES"},
    "REPLICATION SLAVE": {"REPLICATION SLAVE", "REPLICATION REPLICA"},
    "REPLICATION CLIENT": {"REPLICATION CLIENT", "BINLOG MONITOR"},
    "LOCK TABLES": {"LOCK TABLES"},
}
SEED_USERS = [("cdc", "cdc", None), ("kafka", "kafka123", "kafkadb"), ("connect_dev", "connect_dev", "ops")]


def _query(conn: pymysql.connections.Connection, sql: str) -> list[tuple[Any, ...]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return list(cur.fetchall())


def _is_mariadb(conn: pymysql.connections.Connection) -> bool:
    return "mariadb" in str(_query(conn, "SELECT VERSION()")[0][0]).lower()


def _gtid_position(conn: pymysql.connections.Connection) -> str:
    variable = "@@gtid_binlog_pos" if _is_mariadb(conn) else "@@gtid_executed"
    return str(_query(conn, f"SELECT {variable}")[0][0] or "")


def test_binlog_is_on_with_full_row_images_and_metadata(mysql_db: MySqlDb) -> None:
    with mysql_db.connect() as conn:
        status = _query(conn, "SHOW MASTER STATUS")
        assert status, "SHOW MASTER STATUS is empty: the binlog is off"
        assert str(status[0][0]).startswith("binlog.")
        settings = _query(
            conn, "SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@binlog_row_metadata, @@server_id"
        )[0]
        assert settings == (1, "ROW", "FULL", "FULL", 1)


def test_a_write_moves_the_gtid_position(mysql_db: MySqlDb) -> None:
    with mysql_db.connect() as conn:
        before = _gtid_position(conn)
        _query(conn, "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))")
        _query(conn, "INSERT INTO t VALUES (1, 'one')")
        after = _gtid_position(conn)
        assert after, "no GTID position after a write"
        assert after != before
        if _is_mariadb(conn):
            assert _query(conn, "SELECT @@gtid_strict_mode, @@log_slave_updates") == [(1, 1)]


@pytest.mark.parametrize(("user", "password", "database"), SEED_USERS)
def test_connector_users_have_debeziums_grants(
    stack: Stack, user: str, password: str, database: str | None
) -> None:
    with pymysql.connect(
        host=stack.mysql_host, port=stack.mysql_port, user=user, password=password, database=database
    ) as conn:
        grants = " ".join(row[0] for row in _query(conn, "SHOW GRANTS"))
        global_grants = next(
            g for g in (r[0] for r in _query(conn, "SHOW GRANTS")) if " ON *.* " in g
        ).upper()
        if "ALL PRIVILEGES" not in global_grants:
            missing = [
                name
                for name, spellings in DEBEZIUM_GRANTS.items()
                if not any(s in global_grants for s in spellings)
            ]
            assert not missing, f"{user} lacks {missing}: {grants}"
        # what a binlog reader runs first
        assert _query(conn, "SHOW MASTER STATUS")
        if database is not None:
            _query(conn, "CREATE TABLE IF NOT EXISTS grants_probe (id INT PRIMARY KEY)")
            _query(conn, "DROP TABLE grants_probe")


def test_seed_database_has_the_jdbc_tables(stack: Stack) -> None:
    with pymysql.connect(
        host=stack.mysql_host, port=stack.mysql_port, user="kafka", password="kafka123", database="kafkadb"
    ) as conn:
        tables = {row[0] for row in _query(conn, "SHOW TABLES")}
    assert {"customers", "products", "orders", "bulk_tab", "multitab1", "multitab2"} <= tables


def test_produce_and_consume_round_trip(kafka: KafkaHelper) -> None:
    topic = kafka.create_topic("round-trip", partitions=3)
    producer = kafka.producer()
    for i in range(30):
        producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode())
    assert producer.flush(30) == 0
    messages = kafka.read_to_end(topic)
    assert sorted((m.key(), m.value()) for m in messages) == sorted(
        (f"k{i}".encode(), f"v{i}".encode()) for i in range(30)
    )
    assert len({m.partition() for m in messages}) > 1


def test_auto_created_topics_have_one_partition(kafka: KafkaHelper) -> None:
    topic = kafka.topic("auto")
    producer = kafka.producer()
    producer.produce(topic, value=b"x")
    assert producer.flush(30) == 0
    assert len(kafka.admin.list_topics(topic=topic, timeout=10).topics[topic].partitions) == 1


def test_a_compacted_topic_compacts(kafka: KafkaHelper) -> None:
    topic = kafka.create_topic(
        "compacted",
        config={
            "cleanup.policy": "compact",
            "segment.ms": "100",
            "min.cleanable.dirty.ratio": "0.01",
            "delete.retention.ms": "100",
            "min.compaction.lag.ms": "0",
        },
    )
    producer = kafka.producer(**{"linger.ms": 0})
    filler = 0

    def write(key: bytes, value: bytes) -> None:
        producer.produce(topic, key=key, value=value)
        assert producer.flush(30) == 0

    for i in range(5):
        write(b"key", f"v{i}".encode())
        time.sleep(0.15)  # older than segment.ms: the next append rolls a new segment
        write(f"filler-{filler}".encode(), b"x")
        filler += 1

    deadline = time.monotonic() + 60
    while True:
        values = [m.value() for m in kafka.read_to_end(topic) if m.key() == b"key"]
        if values == [b"v4"]:
            break
        assert values[-1] == b"v4"
        assert time.monotonic() < deadline, f"not compacted after 60 s: key holds {values}"
        # keep rolling, so that the segment with the last write is no longer the active one
        time.sleep(0.5)
        write(f"filler-{filler}".encode(), b"x")
        filler += 1


def test_postgres_admits_cdc_tls_only_over_verified_tls(stack_tls: StackTls) -> None:
    """The stack's PostgreSQL serves TLS with the stack's CA, and pg_hba admits cdc_tls over hostssl only."""
    import os

    import psycopg

    port = int(os.environ.get("CDC_POSTGRES_PORT", "5432"))
    base = f"host=127.0.0.1 port={port} dbname=cdc user=cdc_tls password=cdc_tls"
    with psycopg.connect(f"{base} sslmode=verify-full sslrootcert={stack_tls.ca}") as conn:
        row = conn.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()
    assert row is not None and row[0] is True and str(row[1]).startswith("TLS"), row
    with pytest.raises(psycopg.OperationalError, match=r"pg_hba\.conf rejects connection"):
        psycopg.connect(f"{base} sslmode=disable")
