"""The schema history against the real stack: the Kafka topic, and SHOW CREATE TABLE from MariaDB."""

from __future__ import annotations

import logging

import pytest
from confluent_kafka.admin import ConfigResource

from cdc.history import (
    HistoryRecord,
    HistorySettings,
    SchemaHistoryError,
    TableId,
    Tables,
    history_from_config,
)
from cdc.history.kafka_store import LONG_MAX, KafkaSchemaHistory
from cdc.mysql.ddl import DdlParser
from cdc.mysql.positions import BinlogPositionComparator

pytestmark = pytest.mark.integration

SOURCE = {"server": "itest"}


def _history(kafka, name: str, **extra: str) -> KafkaSchemaHistory:
    props = {
        "schema.history.internal.kafka.topic": kafka.topic(name),
        "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
        "schema.history.internal.kafka.recovery.attempts": "20",
        **extra,
    }
    history = history_from_config(props)
    assert isinstance(history, KafkaSchemaHistory)
    return history


def _topic_config(kafka, topic: str) -> dict[str, str]:
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = kafka.admin.describe_configs([res])[res].result(timeout=30)
    return {k: v.value for k, v in configs.items()}


def test_topic_created_with_debeziums_settings(kafka):
    history = _history(kafka, "history")
    assert not history.storage_exists() and not history.exists()
    history.initialize_storage()
    history.initialize_storage()  # idempotent
    assert history.storage_exists() and not history.exists()
    md = kafka.admin.list_topics(topic=history.topic, timeout=10).topics[history.topic]
    assert len(md.partitions) == 1
    config = _topic_config(kafka, history.topic)
    assert config["cleanup.policy"] == "delete"
    assert config["retention.ms"] == str(LONG_MAX)
    assert config["retention.bytes"] == "-1"
    history.start()  # the checks pass on our own topic
    history.stop()


def test_start_checks_an_existing_topic(kafka, caplog):
    compacted = kafka.create_topic("compacted", config={"cleanup.policy": "compact"})
    with pytest.raises(SchemaHistoryError, match=r"cleanup\.policy=compact"):
        _history(kafka, compacted).start()
    short = kafka.create_topic("short", config={"retention.ms": str(7 * 24 * 3600 * 1000)})
    with pytest.raises(SchemaHistoryError, match=r"retention\.ms=604800000"):
        _history(kafka, short).start()
    forever = kafka.create_topic("forever", config={"retention.ms": "-1"})
    _history(kafka, forever).start()
    wide = kafka.create_topic("wide", partitions=3, config={"retention.ms": "-1"})
    with caplog.at_level(logging.WARNING, logger="cdc.history.kafka_store"):
        _history(kafka, wide).start()
    assert "3 partitions" in caplog.text


def test_write_then_recover(kafka):
    history = _history(kafka, "history")
    history.initialize_storage()
    tables = Tables()
    parser = DdlParser("db", server_charset="utf8mb4")
    statements = [
        (100, "CREATE TABLE a (id INT PRIMARY KEY, x INT)"),
        (200, "ALTER TABLE a ADD COLUMN y TEXT FIRST"),
        (300, "SET character_set_server=latin1"),
        (400, "CREATE TABLE b (s VARCHAR(3))"),
        (500, "RENAME TABLE a TO a2"),
    ]
    for pos, ddl in statements:
        changes = parser.apply(tables, ddl, "db")
        history.record(
            HistoryRecord(
                SOURCE,
                {"file": "bin.000002", "pos": pos},
                ts_ms=pos,
                database_name="db",
                ddl=ddl,
                table_changes=changes,
            )
        )
    history.stop()
    # records are Debezium's: null key, partition 0
    messages = kafka.read_to_end(history.topic)
    assert len(messages) == 5 and all(m.key() is None and m.partition() == 0 for m in messages)
    assert HistoryRecord.from_text(messages[0].value()).ddl == statements[0][1]

    fresh = _history(kafka, "history")
    assert fresh.exists()

    def recover(pos: int) -> Tables:
        return fresh.recover(
            {"file": "bin.000002", "pos": pos},
            Tables(),
            DdlParser("db"),
            BinlogPositionComparator(),
            source=SOURCE,
        )

    assert recover(150).get(TableId("db", "a")).column_names() == ["id", "x"]  # type: ignore[union-attr]
    at_450 = recover(450)
    assert at_450.get(TableId("db", "a")).column_names() == ["y", "id", "x"]  # type: ignore[union-attr]
    assert at_450.get(TableId("db", "b")).default_charset == "latin1"  # type: ignore[union-attr]
    assert [str(t) for t in recover(10_000).ids()] == ["db.a2", "db.b"]
    assert recover(10_000) == recover(10_000)  # recovery reads the topic again each time
    fresh.stop()


def test_recovery_of_an_empty_or_missing_topic(kafka):
    history = _history(kafka, "empty")
    assert recover_ids(history) == []
    history.initialize_storage()
    assert not history.exists() and recover_ids(history) == []


def recover_ids(history: KafkaSchemaHistory) -> list[str]:
    if not history.storage_exists():
        return []
    tables = history.recover(
        {"file": "bin.000001", "pos": 4}, Tables(), DdlParser("db"), BinlogPositionComparator(), source=SOURCE
    )
    return [str(t) for t in tables.ids()]


def test_settings_of_the_1x_names(kafka):
    history = history_from_config(
        {
            "database.history": "io.debezium.relational.history.KafkaDatabaseHistory",
            "database.history.kafka.topic": kafka.topic("legacy"),
            "database.history.kafka.bootstrap.servers": kafka.bootstrap_servers,
            "database.history.producer.acks": "all",
        }
    )
    assert isinstance(history, KafkaSchemaHistory)
    assert isinstance(history.settings, HistorySettings) and history.settings.producer == {"acks": "all"}
    history.initialize_storage()
    history.record(HistoryRecord(SOURCE, {"file": "bin.000001", "pos": 4}, ddl="CREATE DATABASE x"))
    assert history.exists()
    history.stop()


# -- SHOW CREATE TABLE from the real server ---------------------------------------------------------
EVERY_TYPE = """
CREATE TABLE every_type (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  c_tinyint TINYINT, c_bool BOOLEAN NOT NULL DEFAULT TRUE, c_smallint SMALLINT UNSIGNED DEFAULT 7,
  c_mediumint MEDIUMINT, c_int INT ZEROFILL, c_bigint BIGINT DEFAULT -1,
  c_decimal DECIMAL(10,2) DEFAULT '12.50', c_numeric NUMERIC(5), c_float FLOAT, c_float_p FLOAT(7,3),
  c_double DOUBLE, c_real REAL, c_bit1 BIT(1), c_bit BIT(10) DEFAULT b'101',
  c_date DATE DEFAULT '2020-01-01', c_time TIME(3), c_datetime DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6),
  c_timestamp TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, c_year YEAR,
  c_char CHAR(3) CHARACTER SET latin1, c_varchar VARCHAR(255) NOT NULL DEFAULT 'it''s',
  c_binary BINARY(16), c_varbinary VARBINARY(64),
  c_tinytext TINYTEXT, c_text TEXT, c_mediumtext MEDIUMTEXT, c_longtext LONGTEXT COLLATE utf8mb4_bin,
  c_tinyblob TINYBLOB, c_blob BLOB, c_mediumblob MEDIUMBLOB, c_longblob LONGBLOB,
  c_enum ENUM('small','medium','it''s') NOT NULL DEFAULT 'medium', c_set SET('a','b','c''d'),
  c_json JSON, c_geometry GEOMETRY, c_point POINT, c_linestring LINESTRING, c_polygon POLYGON,
  c_uuid UUID, c_inet6 INET6, c_gen INT AS (c_int + 1) VIRTUAL, c_stored INT AS (c_int * 2) PERSISTENT,
  c_comment INT COMMENT 'a ''quoted'' note',
  PRIMARY KEY (id), UNIQUE KEY uk (c_varchar), KEY ix (c_int, c_bigint), FULLTEXT KEY ft (c_text)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='every type'
"""

# name -> (typeName, jdbcType, length, scale, optional, charsetName)
EXPECTED = {
    "id": ("BIGINT UNSIGNED", -5, 20, None, False, None),
    "c_tinyint": ("TINYINT", 5, 4, None, True, None),
    "c_bool": ("TINYINT", 5, 1, None, False, None),
    "c_smallint": ("SMALLINT UNSIGNED", 5, 5, None, True, None),
    "c_mediumint": ("MEDIUMINT", 4, 9, None, True, None),
    "c_int": ("INT UNSIGNED ZEROFILL", 4, 10, None, True, None),
    "c_bigint": ("BIGINT", -5, 20, None, True, None),
    "c_decimal": ("DECIMAL", 3, 10, 2, True, None),
    "c_numeric": ("DECIMAL", 3, 5, 0, True, None),
    "c_float": ("FLOAT", 6, None, None, True, None),
    "c_float_p": ("FLOAT", 6, 7, 3, True, None),
    "c_double": ("DOUBLE", 8, None, None, True, None),
    "c_real": ("DOUBLE", 8, None, None, True, None),
    "c_bit1": ("BIT", -7, 1, None, True, None),
    "c_bit": ("BIT", -7, 10, None, True, None),
    "c_date": ("DATE", 91, None, None, True, None),
    "c_time": ("TIME", 92, 3, None, True, None),
    "c_datetime": ("DATETIME", 93, 6, None, True, None),
    "c_timestamp": ("TIMESTAMP", 2014, None, None, False, None),
    "c_year": ("YEAR", 4, 4, None, True, None),
    "c_char": ("CHAR", 1, 3, None, True, "latin1"),
    "c_varchar": ("VARCHAR", 12, 255, None, False, "utf8mb4"),
    "c_binary": ("BINARY", -2, 16, None, True, None),
    "c_varbinary": ("VARBINARY", -3, 64, None, True, None),
    "c_tinytext": ("TINYTEXT", 12, None, None, True, "utf8mb4"),
    "c_text": ("TEXT", 12, None, None, True, "utf8mb4"),
    "c_mediumtext": ("MEDIUMTEXT", 12, None, None, True, "utf8mb4"),
    "c_longtext": ("LONGTEXT", 12, None, None, True, "utf8mb4"),
    "c_tinyblob": ("TINYBLOB", 2004, None, None, True, None),
    "c_blob": ("BLOB", 2004, None, None, True, None),
    "c_mediumblob": ("MEDIUMBLOB", 2004, None, None, True, None),
    "c_longblob": ("LONGBLOB", 2004, None, None, True, None),
    "c_enum": ("ENUM", 1, 1, None, False, "utf8mb4"),
    "c_set": ("SET", 1, 5, None, True, "utf8mb4"),
    "c_json": ("LONGTEXT", 12, None, None, True, "utf8mb4"),  # MariaDB: JSON is LONGTEXT + CHECK
    "c_geometry": ("GEOMETRY", 1111, None, None, True, None),
    "c_point": ("POINT", 1111, None, None, True, None),
    "c_linestring": ("LINESTRING", 1111, None, None, True, None),
    "c_polygon": ("POLYGON", 1111, None, None, True, None),
    "c_uuid": ("UUID", 1111, None, None, True, None),
    "c_inet6": ("INET6", 1111, None, None, True, None),
    "c_gen": ("INT", 4, 11, None, True, None),
    "c_stored": ("INT", 4, 11, None, True, None),
    "c_comment": ("INT", 4, 11, None, True, None),
}


def test_show_create_table_of_every_type(mysql_db):
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(EVERY_TYPE)
        cur.execute("SHOW CREATE DATABASE `%s`" % mysql_db.name)  # noqa: UP031
        create_db = cur.fetchone()[1]
        cur.execute("SHOW CREATE TABLE every_type")
        create_table = cur.fetchone()[1]
        cur.execute(
            "SELECT column_name, ordinal_position, is_nullable FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name = 'every_type' ORDER BY ordinal_position",
            (mysql_db.name,),
        )
        info = cur.fetchall()

    tables = Tables()
    parser = DdlParser()
    parser.apply(tables, create_db, mysql_db.name)
    changes = parser.apply(tables, create_table, mysql_db.name)
    assert len(changes) == 1
    t = tables.get(TableId(mysql_db.name, "every_type"))
    assert t is not None, create_table
    assert [(c.name, c.position, "YES" if c.optional else "NO") for c in t.columns] == [
        tuple(r) for r in info
    ]
    assert t.primary_key == ("id",) and t.default_charset == "utf8mb4" and t.comment == "every type"
    got = {
        c.name: (c.type_name, c.jdbc_type, c.length, c.scale, c.optional, c.charset_name) for c in t.columns
    }
    assert got == EXPECTED, create_table
    by = {c.name: c for c in t.columns}
    assert by["id"].auto_incremented and by["id"].generated
    assert by["c_bool"].default_expression == "1"
    assert by["c_bigint"].default_expression == "-1"
    assert by["c_decimal"].default_expression == "12.50"
    assert by["c_bit"].default_expression == "101"
    assert by["c_date"].default_expression == "2020-01-01"
    assert by["c_datetime"].default_expression == "1970-01-01 00:00:00"
    assert by["c_timestamp"].default_expression == "1970-01-01 00:00:00"
    assert by["c_varchar"].default_expression == "it''s"
    assert (
        by["c_enum"].enum_values == ("small", "medium", "it's")
        and by["c_enum"].default_expression == "medium"
    )
    assert by["c_set"].enum_values == ("a", "b", "c'd")
    assert by["c_comment"].comment == "a ''quoted'' note"

    # the record round-trips through Debezium's JSON unchanged
    record = HistoryRecord(
        SOURCE,
        {"file": "bin.000001", "pos": 4, "snapshot": True},
        ts_ms=0,
        database_name=mysql_db.name,
        ddl=create_table,
        table_changes=changes,
    )
    assert HistoryRecord.from_text(record.to_text()) == record


def test_ddl_as_the_binlog_carries_it_matches_show_create(mysql_db):
    """Apply DDL as streamed, then compare the model with a fresh parse of SHOW CREATE TABLE."""
    ddls = [
        "CREATE TABLE s (id INT NOT NULL, a VARCHAR(10), b INT, PRIMARY KEY (id))",
        "ALTER TABLE s ADD COLUMN c DATETIME(3) NOT NULL DEFAULT '2000-01-01 00:00:00' AFTER id",
        "ALTER TABLE s MODIFY a VARCHAR(40) NOT NULL, CHANGE b b2 BIGINT UNSIGNED",
        "ALTER TABLE s DROP COLUMN c, ADD d ENUM('x','y') DEFAULT 'y' FIRST",
        "RENAME TABLE s TO s2",
        "ALTER TABLE s2 ALTER COLUMN b2 SET DEFAULT 5",
    ]
    streamed = Tables()
    parser = DdlParser(mysql_db.name)
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for ddl in ddls:
            cur.execute(ddl)
            parser.apply(streamed, ddl, mysql_db.name)
        cur.execute("SHOW CREATE TABLE s2")
        create = cur.fetchone()[1]
    snap = Tables()
    DdlParser(mysql_db.name).apply(snap, create, mysql_db.name)
    tid = TableId(mysql_db.name, "s2")
    a, b = streamed.get(tid), snap.get(tid)
    assert a is not None and b is not None
    assert a.column_names() == b.column_names() == ["d", "id", "a", "b2"]
    assert a.primary_key == b.primary_key == ("id",)
    for ca, cb in zip(a.columns, b.columns, strict=True):
        # SHOW CREATE adds display widths (int(11)) the streamed DDL did not have
        assert (ca.type_name, ca.jdbc_type, ca.optional, ca.default_expression, ca.enum_values) == (
            cb.type_name,
            cb.jdbc_type,
            cb.optional,
            cb.default_expression,
            cb.enum_values,
        ), ca.name
