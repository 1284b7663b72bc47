"""mysqlclient and PyMySQL give the same records: a table of every MySQL type, read by each driver.

The MySQL connector's snapshot reads its rows the same way (``cdc/drivers.py``); the last test compares
its records under both drivers.

The JDBC source reads MySQL/MariaDB with mysqlclient (``MySQLdb``) when it is installed and with PyMySQL
otherwise (``CDC_JDBC_MYSQL_DRIVER`` forces one). Both must give identical schemas, values (DECIMAL exact,
DATETIME microseconds, TIMESTAMP read in ``db.timezone``, BIT, BLOB, JSON, zero dates …), offsets and
JSON bytes, in table mode (incrementing, timestamp, bulk) and in query mode.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from faultkit import mysql_connector
from inprocess import NoOffsetsContext

from cdc.converters.json_converter import JsonConverter
from cdc.jdbc.dialects import DRIVER_ENV
from cdc.jdbc.task import JdbcSourceTask
from cdc.mysql.task import MySqlSourceTask

pytestmark = pytest.mark.integration

pytest.importorskip("MySQLdb")

DDL = """CREATE TABLE everything (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  t_tiny TINYINT, t_tiny_u TINYINT UNSIGNED, t_small SMALLINT, t_small_u SMALLINT UNSIGNED,
  t_medium MEDIUMINT, t_int INT, t_int_u INT UNSIGNED, t_big BIGINT, t_big_u BIGINT UNSIGNED,
  t_bool BOOLEAN, t_bit1 BIT(1), t_bit12 BIT(12),
  t_float FLOAT, t_double DOUBLE, t_dec DECIMAL(12,2), t_dec0 DECIMAL(20,0), t_dec_wide DECIMAL(38,10),
  t_char CHAR(10), t_varchar VARCHAR(64), t_text TEXT, t_enum ENUM('a','b','c'), t_set SET('x','y','z'),
  t_json JSON, t_binary BINARY(4), t_varbinary VARBINARY(16), t_blob BLOB,
  t_date DATE, t_time TIME(3), t_datetime DATETIME, t_datetime6 DATETIME(6),
  t_ts TIMESTAMP(6) NULL DEFAULT NULL, t_year YEAR,
  modified DATETIME(3) NOT NULL
)"""

ROWS = [
    "(1, -128, 255, -32768, 65535, -8388608, -2147483648, 4294967295, -9223372036854775808, "
    "18446744073709551615, TRUE, b'1', b'101010101010', 1.5, -2.25e100, -1234567890.12, "
    "99999999999999999999, 1234567890123456789012345678.0123456789, 'abc', 'héllo wörld ✓', "
    "REPEAT('long text ', 50), 'b', 'x,z', '{\"n\": 1, \"a\": [1, 2.5, null], \"s\": \"é\"}', "
    "x'00ff10ab', x'deadbeef', x'000102030405', '2024-02-29', '-838:59:59.000', '2024-01-02 03:04:05', "
    "'2024-01-02 03:04:05.123456', '2024-06-30 23:59:59.999999', 2024, '2024-01-01 00:00:00.001')",
    "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "'2024-01-01 00:00:00.002')",
    "(3, 0, 0, 0, 0, 0, 0, 0, 0, 0, FALSE, b'0', b'0', 0, 0, 0.00, 0, -0.0000000001, '', '', '', 'a', '', "
    "'[]', x'00000000', x'', x'', '0000-00-00', '00:00:00', '0000-00-00 00:00:00', "
    "'1970-01-01 00:00:01.000001', '1970-01-01 00:00:01', 1901, '2024-01-01 00:00:00.003')",
    "(4, 127, 128, 32767, 32768, 8388607, 2147483647, 2147483648, 9223372036854775807, 9223372036854775808, "
    "TRUE, b'1', b'111111111111', 3.4e38, 1.7976931348623157e308, 9999999999.99, -1, 0.5, 'z', "
    "'\\\\ \\t quotes \" and '' ', 'line1\\nline2', 'c', 'x,y,z', '\"just a string\"', x'ffffffff', x'00', "
    "x'ff', '9999-12-31', '838:59:59.999', '9999-12-30 23:59:59', '2038-01-19 03:14:07.999999', "
    "'2038-01-19 03:14:07.999999', 2155, '2024-01-01 00:00:00.004')",
]


def _read(config: dict[str, str], driver: str, monkeypatch: pytest.MonkeyPatch, count: int) -> list[Any]:
    monkeypatch.setenv(DRIVER_ENV, driver)
    task = JdbcSourceTask(max_wait_s=0.2)
    task.initialize(NoOffsetsContext())
    task.start(config)
    try:
        assert task.dialect is not None and getattr(task.dialect, "driver", None) == driver
        records: list[Any] = []
        for _ in range(50):
            records += task.poll() or []
            if len(records) >= count:
                break
        return records
    finally:
        task.stop()


def _shape(records: list[Any]) -> list[Any]:
    json = JsonConverter()
    json.configure({"schemas.enable": "true"}, False)
    return [
        (
            r.topic,
            r.value_schema,
            r.value,
            dict(r.source_partition or {}),
            dict(r.source_offset or {}) if r.source_offset is not None else None,
            json.from_connect_data(r.topic, r.value_schema, r.value),
        )
        for r in records
    ]


@pytest.mark.parametrize(
    ("mode", "tz"),
    [("incrementing", "UTC"), ("timestamp", "America/New_York"), ("bulk", "Asia/Kolkata"), ("query", "UTC")],
)
def test_mysqlclient_and_pymysql_give_identical_records(
    mysql_db: Any, monkeypatch: pytest.MonkeyPatch, mode: str, tz: str
) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")  # zero dates allowed
        cur.execute(DDL)
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("INSERT INTO everything VALUES " + ",".join(ROWS))
    config = {
        "connection.url": f"jdbc:mariadb://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}",
        "connection.user": mysql_db.user,
        "connection.password": mysql_db.password,
        "topic.prefix": "drv-",
        "batch.max.rows": "3",
        "db.timezone": tz,
    }
    if mode == "query":
        config.update({"mode": "bulk", "query": "SELECT * FROM everything ORDER BY id"})
    else:
        config.update(
            {
                "mode": mode,
                "tables": f"`{mysql_db.name}`.`everything`",
                "timestamp.column.name": "modified",
            }
        )
        if mode == "timestamp":
            config["timestamp.initial"] = "0"
    ours = _shape(_read(config, "mysqlclient", monkeypatch, len(ROWS)))
    theirs = _shape(_read(config, "pymysql", monkeypatch, len(ROWS)))
    assert len(ours) == len(theirs) == len(ROWS)
    for mine, peer in zip(ours, theirs, strict=True):
        assert mine[1] == peer[1]  # schema
        assert repr(mine[2]) == repr(peer[2])  # values, with their Python types
        assert mine[2] == peer[2]
        assert mine[3:] == peer[3:]  # partition, offset, JSON bytes
    row1 = ours[0][2]
    assert row1.get("t_dec") is not None and str(row1.get("t_dec")) == "-1234567890.12"
    assert row1.get("t_datetime6").microsecond == 123456
    assert row1.get("t_bit12") == b"\x0a\xaa"
    assert ours[2][2].get("t_datetime") is None  # zero date


def _mysql_snapshot(mysql_db: Any, bootstrap: str, driver: str, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The MySQL connector's initial snapshot of ``everything``, in-process: its row records, in order."""
    monkeypatch.setenv(DRIVER_ENV, driver)
    prefix = "drv"  # the same for both drivers: it names the schemas
    config = mysql_connector(
        mysql_db,
        prefix,
        bootstrap,
        **{
            "table.include.list": f"{mysql_db.name}.everything",
            "snapshot.mode": "initial_only",
            "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        },
    )
    task = MySqlSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(config)
    records: list[Any] = []
    try:
        deadline = time.monotonic() + 60
        while len(records) < len(ROWS) and time.monotonic() < deadline:
            records += [r for r in task.poll() or [] if r.topic == f"{prefix}.{mysql_db.name}.everything"]
    finally:
        task.stop()
    return records


def test_mysql_connector_snapshot_reads_identical_rows_with_either_driver(
    mysql_db: Any, kafka: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connector's snapshot reads rows through mysqlclient when installed (cdc/drivers.py): its records'
    keys and ``after`` images (Python values, their types, and the JSON bytes) are PyMySQL's."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")  # zero dates allowed
        cur.execute(DDL)
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("INSERT INTO everything VALUES " + ",".join(ROWS))
    json = JsonConverter()
    json.configure({"schemas.enable": "true"}, False)

    def shape(record: Any) -> tuple[Any, ...]:
        after = record.value.get("after")
        return (
            repr(record.key),
            repr(after),
            json.from_connect_data("t", after.schema, after),
            record.value.get("op"),
        )

    ours = [shape(r) for r in _mysql_snapshot(mysql_db, kafka.bootstrap_servers, "mysqlclient", monkeypatch)]
    theirs = [shape(r) for r in _mysql_snapshot(mysql_db, kafka.bootstrap_servers, "pymysql", monkeypatch)]
    assert len(ours) == len(theirs) == len(ROWS)
    for mine, peer in zip(ours, theirs, strict=True):
        assert mine == peer
    assert all(s[3] == "r" for s in ours)
    assert b'"t_dec_wide"' in ours[0][2] and b'"t_datetime6":1704164645123456' in ours[0][2]
