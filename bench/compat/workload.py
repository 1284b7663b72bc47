"""The workload both connectors capture: every column type with its edge values, then streaming DML and DDL.

:func:`snapshot_sql` builds the tables and rows that exist before the connectors start (what their
snapshots read); :func:`streaming_sql` is what runs once both snapshots ended. ``{db}`` and ``{other}`` are
the run's two database names. The statements run as root through the ``mariadb`` client with an empty
``sql_mode`` (zero dates and out-of-range values are what users' old tables hold).
"""

from __future__ import annotations

__all__ = [
    "END_TABLE",
    "EXCLUDED_TABLE",
    "INCREMENTAL_TABLES",
    "SIGNAL_TABLES",
    "bystander_sql",
    "incremental_sql",
    "snapshot_sql",
    "streaming_sql",
]

END_TABLE = "zz_end"  # the streaming phase's last insert: when both sides have it, they have everything
SIGNAL_TABLES = {"debezium": "sig_dbz", "cdc": "sig_cdc"}
"""Each side's ``signal.data.collection`` in the run's database (the other side's is excluded)."""
EXCLUDED_TABLE = "t_excl"
"""In ``table.exclude.list`` on both sides: its DDL (snapshot and streaming) and rows are written."""
INCREMENTAL_TABLES = ("t_types", "t_composite", "t_many")
"""What the incremental phase's ``execute-snapshot`` signal names (``t_many``: enough chunks of two rows that
each worker commits offsets in the middle of the incremental snapshot)."""
MANY_ROWS = 1000
"""500 chunks of two rows: several seconds on an idle machine, so each worker commits offsets (every second)
in the middle; 3 000 made the incremental snapshot most of a row's time (5 minutes under load)."""
SIGNAL_ID = "compat-incremental"

_TYPES_COLUMNS = """
  id INT NOT NULL PRIMARY KEY,
  c_tinyint TINYINT, c_tinyint_u TINYINT UNSIGNED, c_smallint SMALLINT, c_smallint_u SMALLINT UNSIGNED,
  c_mediumint MEDIUMINT, c_mediumint_u MEDIUMINT UNSIGNED, c_int INT, c_int_u INT UNSIGNED,
  c_bigint BIGINT, c_bigint_u BIGINT UNSIGNED, c_bool BOOLEAN, c_tinyint1 TINYINT(1),
  c_decimal DECIMAL(20,6), c_decimal_u DECIMAL(10,2) UNSIGNED, c_numeric NUMERIC(5,0),
  c_float FLOAT, c_float_p FLOAT(7,3), c_double DOUBLE, c_real REAL,
  c_bit1 BIT(1), c_bit5 BIT(5), c_bit16 BIT(16), c_bit64 BIT(64),
  c_date DATE, c_time TIME, c_time3 TIME(3), c_time6 TIME(6),
  c_datetime DATETIME, c_datetime3 DATETIME(3), c_datetime6 DATETIME(6),
  c_timestamp TIMESTAMP NULL, c_timestamp3 TIMESTAMP(3) NULL, c_timestamp6 TIMESTAMP(6) NULL,
  c_year YEAR,
  c_char CHAR(10), c_varchar VARCHAR(100), c_latin1 VARCHAR(20) CHARACTER SET latin1,
  c_utf8mb3 VARCHAR(20) CHARACTER SET utf8mb3, c_binary BINARY(4), c_varbinary VARBINARY(20),
  c_tinytext TINYTEXT, c_text TEXT, c_mediumtext MEDIUMTEXT, c_longtext LONGTEXT,
  c_tinyblob TINYBLOB, c_blob BLOB, c_mediumblob MEDIUMBLOB, c_longblob LONGBLOB,
  c_enum ENUM('a','b','c'), c_set SET('x','y','z'), c_json JSON,
  c_gen_virtual BIGINT AS (c_int * 2) VIRTUAL,
  c_gen_stored VARCHAR(120) AS (CONCAT(c_varchar, '!')) STORED
"""

_TYPES_NAMES = (
    "id, c_tinyint, c_tinyint_u, c_smallint, c_smallint_u, c_mediumint, c_mediumint_u, c_int, c_int_u,"
    " c_bigint, c_bigint_u, c_bool, c_tinyint1, c_decimal, c_decimal_u, c_numeric, c_float, c_float_p,"
    " c_double, c_real, c_bit1, c_bit5, c_bit16, c_bit64, c_date, c_time, c_time3, c_time6, c_datetime,"
    " c_datetime3, c_datetime6, c_timestamp, c_timestamp3, c_timestamp6, c_year, c_char, c_varchar,"
    " c_latin1, c_utf8mb3, c_binary, c_varbinary, c_tinytext, c_text, c_mediumtext, c_longtext,"
    " c_tinyblob, c_blob, c_mediumblob, c_longblob, c_enum, c_set, c_json"
)


def _types_rows(base: int) -> str:
    """Eight rows of edge values with ids ``base+1 .. base+8``: minima, maxima, NULLs, text, fractions, and
    FLOATs whose Java spelling is not the shortest."""
    rows = [
        # minima, negative and zero temporals
        f"({base + 1}, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, FALSE, 0,"
        " -99999999999999.999999, 0.00, -99999, -3.40282e38, -9999.999, -1.7976931348623157e308, -0.0,"
        " b'0', b'00000', b'0000000000000000', b'0',"
        " '0000-00-00', '-838:59:59', '-00:00:00.001', '-00:00:00.000001',"
        " '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', '0000-00-00 00:00:00.000000',"
        " '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', '0000-00-00 00:00:00.000000', 1901,"
        " '', '', '', '', x'00000000', x'', '', '', '', '', x'', x'', x'', x'', 'a', '', '{}')",
        # maxima, > 24 h TIME
        f"({base + 2}, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,"
        " 9223372036854775807, 18446744073709551615, TRUE, 1,"
        " 99999999999999.999999, 99999999.99, 99999, 3.40282e38, 9999.999, 1.7976931348623157e308, 1e-300,"
        f" b'1', b'11111', b'1111111111111111', b'{'1' * 64}',"
        " '9999-12-31', '838:59:59', '25:00:00.5', '838:59:59.000000',"
        " '9999-12-31 23:59:59', '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999',"
        " '2038-01-19 03:14:07', '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.999999', 2155,"
        " 'zzzzzzzzzz', REPEAT('v', 100), 'ÿÿÿ', 'ééé', x'ffffffff', x'00ff00ff',"
        " REPEAT('t', 255), REPEAT('x', 1000), 'mt', 'lt', x'ff', x'0102', x'03', x'04', 'c', 'x,y,z',"
        ' \'{"a": [1, 2.5, "s", null, true], "b": {"c": -1}}\')',
        # NULLs
        f"({base + 3}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        " NULL, NULL, NULL, NULL, NULL)",
        # ordinary values and charsets
        f"({base + 4}, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, TRUE, 1, 1234.5, 12.34, 42,"
        " 1.1, 3.142, 2.718281828459045, 0.1,"
        " b'1', b'10101', b'0000000100000010', b'101',"
        " '2024-02-29', '12:34:56', '01:02:03.456', '23:59:59.999999',"
        " '2024-02-29 12:34:56', '1970-01-01 00:00:00.001', '1969-12-31 23:59:59.999999',"
        " '2024-02-29 12:34:56', '2001-02-03 04:05:06.780', '1970-01-01 00:00:01.100000', 2024,"
        " 'ab', '日本語 ✓ 😀', 'Grüße', 'naïve', x'61620000', 'bin', 'tiny', 'text', 'medium', 'long',"
        " 'b1', 'b2', 'b3', 'b4', 'b', 'x,z', '[1, \"two\", {\"3\": 4.0}]')",
        # negative TIME with fractions, one second and less
        f"({base + 5}, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, FALSE, 0, -0.000001, 0.01, -1,"
        " -1.5, -0.001, -1e-10, 5e-324,"
        f" b'0', b'00001', b'1000000000000000', b'1{'0' * 63}',"
        " '1000-01-01', '-12:34:56', '-12:34:56.789', '-00:00:01.500000',"
        " '1000-01-01 00:00:00', '2000-01-01 00:00:00.5', '2000-01-01 00:00:00.000001',"
        " '1970-01-01 00:00:01', '1999-12-31 23:59:59.9', '2030-06-15 12:00:00.000000', 1970,"
        " 'x ', ' y ', 'a\\\\b', 'c\"d', x'01', x'7f80', '', '', '', '',"
        " x'', x'', x'', x'', 'a', 'y', 'null')",
    ]
    # FLOATs JDK 17's Float.toString spells with more digits than the shortest (Float.MIN_NORMAL is
    # 1.17549435E-38, not 1.1754944E-38): ids base+6 .. base+8
    floats = ", ".join(
        f"({base + 6 + i}, {v})" for i, v in enumerate(("1.17549435e-38", "2.2856919e9", "4.18937487e18"))
    )
    return (
        f"INSERT INTO t_types ({_TYPES_NAMES}) VALUES\n"
        + ",\n".join(rows)
        + f";\nINSERT INTO t_types (id, c_float) VALUES {floats};\n"
    )


_DEFAULTS = """
CREATE TABLE t_defaults (
  id INT NOT NULL PRIMARY KEY,
  d_tinyint TINYINT DEFAULT -5, d_smallint_u SMALLINT UNSIGNED DEFAULT 65535,
  d_int INT NOT NULL DEFAULT 0, d_int_u INT UNSIGNED DEFAULT 4294967295,
  d_bigint BIGINT DEFAULT -9223372036854775808, d_bigint_u BIGINT UNSIGNED DEFAULT 18446744073709551615,
  d_decimal DECIMAL(10,3) DEFAULT 3.140, d_float FLOAT DEFAULT 1.5, d_double DOUBLE DEFAULT -2.25,
  d_bool BOOLEAN DEFAULT TRUE, d_bit1 BIT(1) DEFAULT b'1', d_bit10 BIT(10) DEFAULT b'1000000001',
  d_bit64 BIT(64) DEFAULT b'1',
  d_date DATE DEFAULT '2024-02-29', d_date_zero DATE NOT NULL DEFAULT '0000-00-00',
  d_time TIME DEFAULT '-01:02:03', d_time6 TIME(6) DEFAULT '12:00:00.5', d_time_long TIME DEFAULT '100:00:00',
  d_datetime DATETIME DEFAULT '2020-01-01 10:00:00',
  d_datetime3 DATETIME(3) DEFAULT '2020-01-01 10:00:00.123',
  d_datetime_zero DATETIME NOT NULL DEFAULT '0000-00-00 00:00:00',
  d_timestamp TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  d_timestamp_c TIMESTAMP NULL DEFAULT '2021-06-01 00:00:00',
  d_timestamp_zero TIMESTAMP NOT NULL DEFAULT '0000-00-00 00:00:00',
  d_year YEAR DEFAULT 2024, d_char CHAR(3) DEFAULT 'abc', d_varchar VARCHAR(10) DEFAULT 'x''y',
  d_text_null TEXT DEFAULT NULL, d_binary BINARY(2) DEFAULT 'ab', d_varbinary VARBINARY(8) DEFAULT 'xyz',
  d_enum ENUM('p','q') DEFAULT 'q', d_set SET('a','b') DEFAULT 'a,b', d_null_varchar VARCHAR(5) DEFAULT NULL,
  d_json JSON DEFAULT NULL
);
INSERT INTO t_defaults (id) VALUES (1);
"""

_MANY = (
    "CREATE TABLE t_many (id INT PRIMARY KEY, v VARCHAR(10));\n"
    + "INSERT INTO t_many VALUES "
    + ", ".join(f"({i}, 'v{i}')" for i in range(1, MANY_ROWS + 1))
    + ";\n"
)

_OTHER_TABLES = (
    _MANY
    + """
CREATE TABLE t_excl (id INT PRIMARY KEY, v INT);
INSERT INTO t_excl VALUES (1, 1);
CREATE TABLE t_composite (a INT NOT NULL, b VARCHAR(10) NOT NULL, c DATE NOT NULL, v INT,
  PRIMARY KEY (a, b, c));
INSERT INTO t_composite VALUES (1, 'x', '2020-01-01', 1), (1, 'y', '2020-01-02', 2),
  (2, 'x', '2020-01-03', 3);
CREATE TABLE t_nokey (a INT, b VARCHAR(10));
INSERT INTO t_nokey VALUES (1, 'one'), (1, 'one'), (NULL, NULL);
CREATE TABLE t_single (id INT PRIMARY KEY, v VARCHAR(10));
INSERT INTO t_single VALUES (1, 'only');
CREATE TABLE t_ddl (id INT PRIMARY KEY, c1 INT DEFAULT 1);
INSERT INTO t_ddl VALUES (1, 1);
CREATE TABLE t_keys (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO t_keys VALUES (1, 'a'), (2, 'b'), (3, 'c');
CREATE TABLE t_ucs (id INT PRIMARY KEY, u VARCHAR(10) CHARACTER SET ucs2, u16 VARCHAR(10) CHARACTER SET utf16,
  l2 VARCHAR(10) CHARACTER SET latin2, cp CHAR(4) CHARACTER SET cp1251) DEFAULT CHARSET=utf8mb4;
INSERT INTO t_ucs VALUES (1, 'ÄÖÜ', '😀x', 'ŁĄ', 'Жж');
"""
)


def snapshot_sql(db: str) -> str:
    """Create ``db`` with its tables and rows (what both snapshots read)."""
    return (
        "SET SESSION sql_mode = '';\n"
        f"DROP DATABASE IF EXISTS `{db}`;\n"
        f"CREATE DATABASE `{db}` CHARACTER SET utf8mb4;\n"
        f"USE `{db}`;\n"
        f"CREATE TABLE t_types ({_TYPES_COLUMNS});\n"
        + _types_rows(0)
        + _DEFAULTS
        + _OTHER_TABLES
        + "".join(
            f"CREATE TABLE {t} (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
            "data VARCHAR(2048) NULL);\n"
            for t in SIGNAL_TABLES.values()
        )
    )


def bystander_sql(bystander: str) -> str:
    """A database outside ``database.include.list``: under Debezium's default
    ``schema.history.internal.store.only.captured.databases.ddl=false`` its schema is in both snapshots'
    DDL, and its streamed DDL in the history and the schema change topic (its rows are captured by none)."""
    return (
        f"DROP DATABASE IF EXISTS `{bystander}`;\n"
        f"CREATE DATABASE `{bystander}` CHARACTER SET latin1;\n"
        f"CREATE TABLE `{bystander}`.b_one (id INT PRIMARY KEY, v VARCHAR(10) DEFAULT 'b');\n"
        f"CREATE TABLE `{bystander}`.a_two (id BIGINT UNSIGNED PRIMARY KEY, t TIME(3));\n"
        f"INSERT INTO `{bystander}`.b_one VALUES (1, 'x');\n"
    )


def incremental_sql(db: str) -> str:
    """The signal a Debezium user sends, the same row into each side's signal table: an incremental
    snapshot of :data:`INCREMENTAL_TABLES` (after the streaming phase, nothing else written meanwhile)."""
    collections = ", ".join(f'"{db}.{t}"' for t in INCREMENTAL_TABLES)
    data = f'{{"data-collections": [{collections}], "type": "incremental"}}'
    return f"USE `{db}`;\n" + "".join(
        f"INSERT INTO {t} VALUES ('{SIGNAL_ID}', 'execute-snapshot', '{data}');\n"
        for t in SIGNAL_TABLES.values()
    )


def streaming_sql(db: str, other: str, bystander: str) -> str:
    """Changes of every kind once both snapshots ended; ends with the insert into :data:`END_TABLE`."""
    return (
        "SET SESSION sql_mode = '';\n"
        f"USE `{db}`;\n"
        + _types_rows(100)
        + """
UPDATE t_types SET c_int = c_int + 1, c_time6 = '-00:00:00.000001', c_bit5 = b'10000' WHERE id = 104;
DELETE FROM t_types WHERE id = 103;
INSERT INTO t_defaults (id) VALUES (2);
INSERT INTO t_defaults (id, d_bit1, d_time6, d_varbinary) VALUES (3, b'0', '-00:00:00.5', x'00');
UPDATE t_composite SET v = v + 10 WHERE a = 1;
UPDATE t_composite SET b = 'z' WHERE a = 2;
INSERT INTO t_nokey VALUES (2, 'two');
UPDATE t_nokey SET b = 'uno' WHERE a = 1;
DELETE FROM t_nokey WHERE a IS NULL;
UPDATE t_keys SET id = 10 WHERE id = 1;
UPDATE t_keys SET id = id + 100 WHERE id IN (2, 3);
BEGIN;
INSERT INTO t_keys VALUES (4, 'd'), (5, 'e');
UPDATE t_keys SET v = 'changed' WHERE id IN (4, 10);
DELETE FROM t_keys WHERE id = 5;
INSERT INTO t_single VALUES (2, 'tx');
COMMIT;
BEGIN;
INSERT INTO t_single VALUES (3, 'rolled back');
ROLLBACK;
ALTER TABLE t_ddl ADD COLUMN c2 VARCHAR(10) DEFAULT 'n';
INSERT INTO t_ddl (id) VALUES (2);
ALTER TABLE t_ddl MODIFY COLUMN c2 VARCHAR(20) NOT NULL DEFAULT 'm';
INSERT INTO t_ddl (id) VALUES (3);
ALTER TABLE t_ddl RENAME COLUMN c2 TO c3;
INSERT INTO t_ddl (id, c3) VALUES (4, 'r');
ALTER TABLE t_ddl DROP COLUMN c3;
INSERT INTO t_ddl (id) VALUES (5);
ALTER TABLE t_ddl ADD COLUMN t6 TIME(6) DEFAULT '-00:00:00.25', ADD COLUMN b3 BIT(3) DEFAULT b'101';
INSERT INTO t_ddl (id) VALUES (6);
ALTER TABLE t_excl ADD COLUMN w INT DEFAULT 3;
INSERT INTO t_excl VALUES (2, 2, 2);
CREATE TABLE t_new (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, s VARCHAR(10) DEFAULT 'd');
INSERT INTO t_new (s) VALUES ('one'), ('two');
RENAME TABLE t_new TO t_renamed;
INSERT INTO t_renamed (s) VALUES ('three');
TRUNCATE TABLE t_renamed;
INSERT INTO t_renamed (s) VALUES ('four');
DROP TABLE t_renamed;
"""
        # statements Debezium's default schema.history.internal.ddl.filter leaves out (other clients of a
        # shared server run them at any moment: a GRANT of theirs once showed on cdc's side only)
        + f"GRANT SELECT ON `{db}`.* TO 'cdc'@'%';\n"
        f"REVOKE SELECT ON `{db}`.* FROM 'cdc'@'%';\n"
        "CREATE VIEW v_keys AS SELECT id FROM t_keys;\n"
        "DROP VIEW v_keys;\n"
        f"CREATE DATABASE `{other}`;\n"
        f"CREATE TABLE `{other}`.t_o (id INT PRIMARY KEY, v INT);\n"
        f"INSERT INTO `{other}`.t_o VALUES (1, 1);\n"
        f"DROP DATABASE `{other}`;\n"
        # the bystander database (not captured): its DDL, run there and from the captured database
        f"ALTER TABLE `{bystander}`.b_one ADD COLUMN w INT DEFAULT 2;\n"
        f"INSERT INTO `{bystander}`.b_one VALUES (2, 'y', 3);\n"
        f"USE `{bystander}`;\n"
        "CREATE TABLE c_three (id INT PRIMARY KEY);\n"
        "DROP TABLE a_two;\n"
        f"USE `{db}`;\n"
        f"CREATE TABLE {END_TABLE} (id INT PRIMARY KEY);\n"
        f"INSERT INTO {END_TABLE} VALUES (1);\n"
    )
