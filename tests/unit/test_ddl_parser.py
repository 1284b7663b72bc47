"""DDL → table model, statement by statement, with MySQL 8 and MariaDB spellings."""

from __future__ import annotations

import pytest

from cdc.history import TableChangeType, TableId, Tables, UnparseableDdlError
from cdc.mysql.ddl import DdlParser


def parse(ddl: str, tables: Tables | None = None, db: str = "db") -> tuple[Tables, list]:
    tables = tables if tables is not None else Tables()
    parser = DdlParser(db, server_charset="utf8mb4")
    return tables, parser.apply(tables, ddl, db)


def table(tables: Tables, name: str, db: str = "db"):
    t = tables.get(TableId(db, name))
    assert t is not None, f"{db}.{name} missing: {tables.describe()}"
    return t


def col(tables: Tables, tname: str, cname: str):
    c = table(tables, tname).column(cname)
    assert c is not None
    return c


# -- types: (declaration, typeName, jdbcType, length, scale) --------------------------------------
TYPES = [
    ("TINYINT", "TINYINT", 5, None, None),
    ("TINYINT(1)", "TINYINT", 5, 1, None),
    ("tinyint(3) unsigned", "TINYINT UNSIGNED", 5, 3, None),
    ("SMALLINT", "SMALLINT", 5, None, None),
    ("MEDIUMINT UNSIGNED", "MEDIUMINT UNSIGNED", 4, None, None),
    ("INT", "INT", 4, None, None),
    ("int(11)", "INT", 4, 11, None),
    ("INTEGER ZEROFILL UNSIGNED", "INTEGER UNSIGNED ZEROFILL", 4, None, None),
    ("BIGINT", "BIGINT", -5, None, None),
    ("bigint(20) unsigned", "BIGINT UNSIGNED", -5, 20, None),
    ("DECIMAL(10,2)", "DECIMAL", 3, 10, 2),
    ("DECIMAL", "DECIMAL", 3, 10, 0),
    ("DECIMAL(5)", "DECIMAL", 3, 5, 0),
    ("NUMERIC(8,3)", "NUMERIC", 2, 8, 3),
    ("FLOAT", "FLOAT", 6, None, None),
    ("FLOAT(7,4)", "FLOAT", 6, 7, 4),
    ("REAL", "REAL", 7, None, None),
    ("DOUBLE", "DOUBLE", 8, None, None),
    ("DOUBLE PRECISION(10,3)", "DOUBLE PRECISION", 8, 10, 3),
    ("BIT", "BIT", -7, 1, None),
    ("BIT(12)", "BIT", -7, 12, None),
    ("BOOLEAN", "BOOLEAN", 16, None, None),
    ("BOOL", "BOOL", 16, None, None),
    ("DATE", "DATE", 91, None, None),
    ("TIME", "TIME", 92, None, None),
    ("TIME(3)", "TIME", 92, 3, None),
    ("DATETIME", "DATETIME", 93, None, None),
    ("DATETIME(6)", "DATETIME", 93, 6, None),
    ("TIMESTAMP(3)", "TIMESTAMP", 2014, 3, None),
    ("YEAR", "YEAR", 4, None, None),
    ("YEAR(4)", "YEAR", 4, 4, None),
    ("CHAR(3)", "CHAR", 1, 3, None),
    ("CHAR", "CHAR", 1, None, None),
    ("VARCHAR(255)", "VARCHAR", 12, 255, None),
    ("varchar(10) binary", "VARCHAR BINARY", 12, 10, None),
    ("NATIONAL VARCHAR(20)", "NATIONAL VARCHAR", -9, 20, None),
    ("NCHAR(5)", "NCHAR", -15, 5, None),
    ("TINYTEXT", "TINYTEXT", 12, None, None),
    ("TEXT", "TEXT", 12, None, None),
    ("MEDIUMTEXT", "MEDIUMTEXT", 12, None, None),
    ("LONGTEXT", "LONGTEXT", 12, None, None),
    ("BINARY(16)", "BINARY", -2, 16, None),
    ("VARBINARY(100)", "VARBINARY", -3, 100, None),
    ("TINYBLOB", "TINYBLOB", 2004, None, None),
    ("BLOB", "BLOB", 2004, None, None),
    ("MEDIUMBLOB", "MEDIUMBLOB", 2004, None, None),
    ("LONGBLOB", "LONGBLOB", 2004, None, None),
    ("JSON", "JSON", 1111, None, None),
    ("GEOMETRY", "GEOMETRY", 1111, None, None),
    ("POINT SRID 4326", "POINT", 1111, None, None),
    ("ENUM('a','bb','ccc')", "ENUM", 1, 1, None),
    ("SET('a','b','c')", "SET", 1, 5, None),
    ("SERIAL", "BIGINT UNSIGNED", -5, None, None),
]


@pytest.mark.parametrize(("decl", "type_name", "jdbc", "length", "scale"), TYPES)
def test_data_types(decl, type_name, jdbc, length, scale):
    tables, _ = parse(f"CREATE TABLE t (c {decl})")
    c = col(tables, "t", "c")
    assert (c.type_name, c.type_expression, c.jdbc_type, c.length, c.scale) == (
        type_name,
        type_name,
        jdbc,
        length,
        scale,
    )


def test_charsets_follow_column_table_database_server():
    tables, _ = parse(
        "CREATE DATABASE other CHARACTER SET latin1;"
        "CREATE TABLE other.a (s VARCHAR(5), n INT, e ENUM('x'), j JSON, c CHAR(2) CHARACTER SET ascii,"
        " d VARCHAR(3) COLLATE utf8mb4_bin, nv NVARCHAR(3));"
        "CREATE TABLE b (s TEXT) DEFAULT CHARSET=cp1251;"
        "CREATE TABLE c (s TEXT);"
        "CREATE TABLE d (s TEXT) COLLATE=utf16_general_ci"
    )
    a = tables.get(TableId("other", "a"))
    assert a is not None and a.default_charset == "latin1"
    assert [c.charset_name for c in a.columns] == ["latin1", None, "latin1", None, "ascii", "utf8mb4", "utf8"]
    assert table(tables, "b").default_charset == "cp1251" and col(tables, "b", "s").charset_name == "cp1251"
    assert table(tables, "c").default_charset == "utf8mb4"
    assert table(tables, "d").default_charset == "utf16"


def test_set_character_set_server_changes_the_fallback():
    parser = DdlParser("db")
    tables = Tables()
    parser.apply(tables, "SET character_set_server=latin2, collation_server=latin2_general_ci")
    parser.apply(tables, "CREATE TABLE t (s TEXT)")
    assert table(tables, "t").default_charset == "latin2"


def test_column_options_nullability_defaults_keys_comments():
    tables, changes = parse("""
        CREATE TABLE IF NOT EXISTS `db`.`t1` (
          `id` int(11) NOT NULL AUTO_INCREMENT COMMENT 'the key',
          `a` varchar(20) DEFAULT 'it''s' ,
          `b` int DEFAULT -5,
          `c` int NULL,
          `d` int DEFAULT NULL,
          `e` datetime(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
          `f` timestamp NOT NULL DEFAULT current_timestamp(),
          `g` bit(4) DEFAULT b'1010',
          `h` varchar(36) DEFAULT (uuid()),
          `i` date DEFAULT curdate(),
          `j` tinyint(1) NOT NULL DEFAULT 1,
          `k` decimal(6,2) DEFAULT '1.50',
          `l` int GENERATED ALWAYS AS ((`b` + 1)) VIRTUAL,
          `m` int AS (b * 2) STORED,
          `n` enum('on','off') CHARACTER SET latin1 DEFAULT 'on',
          `o` bool DEFAULT TRUE,
          PRIMARY KEY (`id`),
          UNIQUE KEY `ua` (`a`),
          KEY `ib` (`b`),
          CONSTRAINT `fk` FOREIGN KEY (`b`) REFERENCES `other` (`id`) ON DELETE CASCADE,
          CONSTRAINT `chk` CHECK (`b` > -10)
        ) ENGINE=InnoDB AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COMMENT='table one'
    """)
    assert [c.type for c in changes] == [TableChangeType.CREATE]
    t = table(tables, "t1")
    assert t.primary_key == ("id",)
    assert t.comment == "table one"
    by = {c.name: c for c in t.columns}
    assert [c.position for c in t.columns] == list(range(1, 17))
    assert by["id"].optional is False and by["id"].auto_incremented and by["id"].generated
    assert by["id"].comment == "the key" and by["id"].has_default is False
    assert (by["a"].has_default, by["a"].default_expression) == (True, "it''s")
    assert by["b"].default_expression == "-5"
    assert (by["c"].optional, by["c"].has_default, by["c"].default_expression) == (True, True, None)
    assert (by["d"].optional, by["d"].has_default) == (True, False)
    assert by["e"].default_expression == "1970-01-01 00:00:00"
    assert by["f"].default_expression == "1970-01-01 00:00:00" and by["f"].optional is False
    assert by["g"].default_expression == "1010"
    assert (by["h"].has_default, by["h"].default_expression) == (True, None)
    assert (by["i"].has_default, by["i"].default_expression) == (True, None)
    assert by["j"].default_expression == "1"
    assert by["k"].default_expression == "1.50"
    assert by["l"].generated is False and by["m"].type_name == "INT"
    assert by["n"].enum_values == ("on", "off") and by["n"].charset_name == "latin1"
    assert by["o"].default_expression == "TRUE"


def test_unique_key_stands_in_for_a_missing_primary_key():
    tables, _ = parse("CREATE TABLE u (a INT, b INT NOT NULL, UNIQUE KEY (b, a))")
    t = table(tables, "u")
    assert t.primary_key == ("b", "a")
    assert col(tables, "u", "a").optional is False  # made NOT NULL like a primary key
    tables, _ = parse("CREATE TABLE v (a INT UNIQUE, b INT)")
    assert table(tables, "v").primary_key == ("a",)
    tables, _ = parse("CREATE TABLE w (a INT PRIMARY KEY, b INT UNIQUE)")
    assert table(tables, "w").primary_key == ("a",)


def test_primary_key_drops_the_implicit_null_default():
    tables, _ = parse("CREATE TABLE p (a INT NULL, b INT, PRIMARY KEY (a))")
    a = col(tables, "p", "a")
    assert (a.optional, a.has_default) == (False, False)


def test_enum_labels_with_quotes_and_escapes():
    tables, _ = parse(r"""CREATE TABLE e (x ENUM('a,b', 'it''s', 'back\\slash', "dq", 'c\'d'))""")
    assert col(tables, "e", "x").enum_values == ("a,b", "it's", "back\\slash", "dq", "c'd")


def test_create_table_like_and_existing_tables():
    tables, _ = parse("CREATE TABLE a (id INT PRIMARY KEY, s TEXT)")
    _, changes = parse("CREATE TABLE b LIKE a", tables)
    assert changes[0].type is TableChangeType.CREATE
    assert table(tables, "b").column_names() == ["id", "s"] and table(tables, "b").primary_key == ("id",)
    _, changes = parse("CREATE TABLE c (LIKE a)", tables)
    assert table(tables, "c").column_names() == ["id", "s"]
    # CREATE of an existing table changes nothing (Debezium), OR REPLACE (MariaDB) overwrites
    _, changes = parse("CREATE TABLE IF NOT EXISTS a (x INT)", tables)
    assert changes == [] and table(tables, "a").column_names() == ["id", "s"]
    _, changes = parse("CREATE OR REPLACE TABLE a (x INT)", tables)
    assert table(tables, "a").column_names() == ["x"]
    _, changes = parse("CREATE TABLE z AS SELECT * FROM a", tables)
    assert changes == [] and tables.get(TableId("db", "z")) is None


ALTERS = [
    ("ALTER TABLE t ADD COLUMN d INT", ["a", "b", "c", "d"]),
    ("ALTER TABLE t ADD d INT FIRST", ["d", "a", "b", "c"]),
    ("ALTER TABLE t ADD COLUMN d INT AFTER a", ["a", "d", "b", "c"]),
    ("ALTER TABLE t ADD COLUMN (d INT, e INT)", ["a", "b", "c", "d", "e"]),
    ("ALTER TABLE t ADD COLUMN IF NOT EXISTS d INT", ["a", "b", "c", "d"]),
    ("ALTER TABLE t DROP COLUMN b", ["a", "c"]),
    ("ALTER TABLE t DROP b, DROP COLUMN IF EXISTS zz", ["a", "c"]),
    ("ALTER TABLE t MODIFY c BIGINT FIRST", ["c", "a", "b"]),
    ("ALTER TABLE t MODIFY COLUMN a VARCHAR(9) AFTER c", ["b", "c", "a"]),
    ("ALTER TABLE t CHANGE b bb TEXT", ["a", "bb", "c"]),
    ("ALTER TABLE t CHANGE COLUMN `B` `b2` TEXT AFTER c", ["a", "c", "b2"]),
    ("ALTER TABLE t RENAME COLUMN c TO c2", ["a", "b", "c2"]),
    ("ALTER TABLE t ADD d INT, DROP c, MODIFY b INT FIRST, ALGORITHM=INPLACE, LOCK=NONE", ["b", "a", "d"]),
    (
        "ALTER TABLE t ENGINE=InnoDB, ADD INDEX ix (b), ADD CONSTRAINT fk FOREIGN KEY (b) REFERENCES x(id)",
        ["a", "b", "c"],
    ),
]


@pytest.mark.parametrize(("ddl", "names"), ALTERS)
def test_alter_columns(ddl, names):
    tables, _ = parse("CREATE TABLE t (a INT NOT NULL, b VARCHAR(10), c INT, PRIMARY KEY (a))")
    _, changes = parse(ddl, tables)
    assert [c.type for c in changes] == [TableChangeType.ALTER]
    t = table(tables, "t")
    assert t.column_names() == names
    assert [c.position for c in t.columns] == list(range(1, len(names) + 1))
    assert changes[0].table == t


def test_alter_types_keys_defaults_charsets():
    tables, _ = parse("CREATE TABLE t (a INT NOT NULL, b VARCHAR(10), c INT, PRIMARY KEY (a)) CHARSET=latin1")
    parse("ALTER TABLE t MODIFY b VARCHAR(50) NOT NULL DEFAULT 'x'", tables)
    b = col(tables, "t", "b")
    assert (b.length, b.optional, b.default_expression, b.charset_name) == (50, False, "x", "latin1")
    parse("ALTER TABLE t ALTER COLUMN c SET DEFAULT 42", tables)
    assert col(tables, "t", "c").default_expression == "42"
    parse("ALTER TABLE t ALTER c DROP DEFAULT", tables)
    assert (col(tables, "t", "c").has_default, col(tables, "t", "c").default_expression) == (False, None)
    parse("ALTER TABLE t CHANGE a id BIGINT", tables)
    assert table(tables, "t").primary_key == ("id",) and col(tables, "t", "id").optional is False
    parse("ALTER TABLE t DROP PRIMARY KEY", tables)
    assert table(tables, "t").primary_key == ()
    parse("ALTER TABLE t ADD PRIMARY KEY (id, c)", tables)
    assert table(tables, "t").primary_key == ("id", "c") and col(tables, "t", "c").optional is False
    parse("ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", tables)
    assert table(tables, "t").default_charset == "utf8mb4" and col(tables, "t", "b").charset_name == "utf8mb4"
    parse("ALTER TABLE t DEFAULT CHARACTER SET = latin2, COMMENT = 'note'", tables)
    t = table(tables, "t")
    assert t.default_charset == "latin2" and t.comment == "note"
    assert col(tables, "t", "b").charset_name == "utf8mb4"
    parse("ALTER TABLE t DROP id", tables)
    assert table(tables, "t").primary_key == ("c",)


def test_alter_add_unique_sets_a_key_only_for_not_null_columns():
    tables, _ = parse("CREATE TABLE t (a INT, b INT NOT NULL)")
    parse("ALTER TABLE t ADD UNIQUE KEY ua (a)", tables)
    assert table(tables, "t").primary_key == ()
    parse("ALTER TABLE t ADD CONSTRAINT ub UNIQUE (b)", tables)
    assert table(tables, "t").primary_key == ("b",)
    tables, _ = parse("CREATE TABLE s (a INT NOT NULL)")
    _, changes = parse("CREATE UNIQUE INDEX ux ON s (a)", tables)
    assert table(tables, "s").primary_key == ("a",) and changes[0].type is TableChangeType.ALTER
    _, changes = parse("CREATE INDEX iy ON s (a)", tables)
    assert changes == []


def test_renames():
    tables, _ = parse("CREATE TABLE a (x INT); CREATE TABLE c (y INT)")
    _, changes = parse("ALTER TABLE a RENAME TO b", tables)
    assert (changes[0].id, changes[0].previous_id) == (TableId("db", "b"), TableId("db", "a"))
    assert tables.get(TableId("db", "a")) is None and table(tables, "b").id == TableId("db", "b")
    _, changes = parse("RENAME TABLE b TO a2, c TO other.c2", tables)
    assert [(c.type, str(c.id), str(c.previous_id)) for c in changes] == [
        (TableChangeType.ALTER, "db.a2", "db.b"),
        (TableChangeType.ALTER, "other.c2", "db.c"),
    ]
    assert sorted(str(t) for t in tables.ids()) == ["db.a2", "other.c2"]
    _, changes = parse("ALTER TABLE a2 RENAME AS `a 3`, ADD z INT", tables)
    assert table(tables, "a 3").column_names() == ["x", "z"]


def test_drops_truncate_databases_use():
    tables, _ = parse("CREATE TABLE a (x INT); CREATE TABLE b (x INT); CREATE TABLE c (x INT)")
    _, changes = parse("TRUNCATE TABLE a", tables)
    assert changes == [] and len(tables) == 3
    _, changes = parse("DROP TABLE IF EXISTS `db`.`a`, b, missing /* generated by server */", tables)
    assert [(c.type, c.id.table) for c in changes] == [
        (TableChangeType.DROP, "a"),
        (TableChangeType.DROP, "b"),
    ]
    assert changes[0].table.column_names() == ["x"]
    parser = DdlParser("db")
    parser.apply(tables, "CREATE SCHEMA IF NOT EXISTS s2; USE s2; CREATE TABLE t (x INT)")
    assert tables.get(TableId("s2", "t")) is not None and "s2" in tables.databases
    changes = parser.apply(tables, "DROP DATABASE s2")
    assert [str(c.id) for c in changes] == ["s2.t"] and "s2" not in tables.databases


IGNORED = [
    "CREATE INDEX i ON t (a)",
    "DROP INDEX i ON t",
    "CREATE FULLTEXT INDEX f ON t (a)",
    "GRANT SELECT ON db.* TO 'u'@'%'",
    "CREATE USER 'u'@'localhost' IDENTIFIED BY 'p'",
    "DROP USER u",
    "SET NAMES utf8mb4",
    "SET @@session.time_zone = '+00:00'",
    "FLUSH PRIVILEGES",
    "FLUSH TABLES WITH READ LOCK",
    "ANALYZE TABLE t",
    "OPTIMIZE TABLE t",
    "CREATE VIEW v AS SELECT 1",
    "CREATE OR REPLACE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER"
    " VIEW v AS SELECT 1",
    "/*!50001 CREATE ALGORITHM=UNDEFINED */ /*!50013 DEFINER=`root`@`%` SQL SECURITY DEFINER */"
    " /*!50001 VIEW `v` AS select 1 AS `1` */",
    "DROP VIEW IF EXISTS v",
    "CREATE DEFINER=`root`@`localhost` TRIGGER trg BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END",
    "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END",
    "CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
    "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t",
    "DROP TRIGGER IF EXISTS trg",
    "DROP PROCEDURE p",
    "DROP FUNCTION IF EXISTS f",
    "DROP EVENT e",
    "# a comment line\n",
    "/* just a comment */",
    "BEGIN",
    "COMMIT",
    "INSERT INTO t VALUES (1)",
    "ALTER VIEW v AS SELECT 2",
    "ALTER USER u IDENTIFIED BY 'x'",
    "CREATE SEQUENCE s START WITH 1",
    "ALTER TABLE missing ADD COLUMN x INT",
    "DROP TABLE IF EXISTS missing",
    "RENAME TABLE missing TO other",
]


@pytest.mark.parametrize("ddl", IGNORED)
def test_statements_that_do_not_shape_tables(ddl):
    tables, _ = parse("CREATE TABLE t (a INT)")
    before = table(tables, "t")
    _, changes = parse(ddl, tables)
    assert changes == []
    assert table(tables, "t") == before and len(tables) == 1


def test_executable_comments_are_executed():
    tables, _ = parse(
        "CREATE TABLE t (a INT /*!80023 INVISIBLE */, b INT) ENGINE=InnoDB /*!50100 PARTITION BY HASH (a) "
        "PARTITIONS 4 */; /*!40101 SET character_set_server = latin1 */; /*M!100301 CREATE TABLE m (x INT) */"
    )
    assert table(tables, "t").column_names() == ["a", "b"]
    assert table(tables, "m").column_names() == ["x"]


def test_identifiers_case_and_quoting():
    tables, _ = parse('CREATE TABLE `My Table` (`Col``1` INT, "c2" INT, `select` INT)')
    t = table(tables, "My Table")
    assert t.column_names() == ["Col`1", "c2", "select"]
    parse("ALTER TABLE `My Table` DROP COLUMN COL`1".replace("COL`1", "`COL``1`"), tables)
    assert table(tables, "My Table").column_names() == ["c2", "select"]
    assert tables.get(TableId("db", "my table")) is None  # table names as given


def test_mariadb_syntax():
    tables, _ = parse("""
        CREATE TABLE `m` (
          `id` int(11) NOT NULL AUTO_INCREMENT,
          `u` uuid DEFAULT NULL,
          `v` int(11) GENERATED ALWAYS AS (`id` * 2) VIRTUAL,
          `p` int(11) AS (`id` + 1) PERSISTENT,
          `t` text COMPRESSED DEFAULT NULL,
          `ts` timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),
          PRIMARY KEY (`id`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci PAGE_CHECKSUM=1
          WITH SYSTEM VERSIONING
    """)
    assert table(tables, "m").column_names() == ["id", "u", "v", "p", "t", "ts"]
    parse("ALTER TABLE m ADD COLUMN IF NOT EXISTS z INT AFTER id, MODIFY COLUMN IF EXISTS u CHAR(36)", tables)
    assert table(tables, "m").column_names() == ["id", "z", "u", "v", "p", "t", "ts"]


def test_no_database_and_unparseable():
    with pytest.raises(UnparseableDdlError):
        DdlParser(None).apply(Tables(), "CREATE TABLE t (a INT)")
    for bad in [
        "CREATE TABLE t2 (a NOSUCHTYPE)",
        "FROBNICATE everything",
        "CREATE TABLE t2 (a INT",
        "ALTER TABLE t ADD COLUMN",
        "CREATE TABLE t2 (a ENUM(1,2))",
    ]:
        tables, _ = parse("CREATE TABLE t (a INT)")
        with pytest.raises(UnparseableDdlError):
            parse(bad, tables)


def test_multiple_statements_in_one_event():
    tables, changes = parse(
        "CREATE TABLE a (x INT); ALTER TABLE a ADD y INT; DROP TABLE a; CREATE TABLE b (z INT);"
    )
    assert [c.type.value for c in changes] == ["CREATE", "ALTER", "DROP", "CREATE"]
    assert tables.ids() == [TableId("db", "b")]


def test_mysql8_show_create_table_output():
    tables, _ = parse(
        "CREATE TABLE `orders` (\n"
        "  `id` bigint unsigned NOT NULL AUTO_INCREMENT,\n"
        "  `ref` binary(16) NOT NULL DEFAULT (uuid_to_bin(uuid())),\n"
        "  `note` varchar(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n"
        "  `secret` int DEFAULT NULL /*!80023 INVISIBLE */,\n"
        "  `loc` point NOT NULL /*!80003 SRID 4326 */,\n"
        "  `total` decimal(12,2) GENERATED ALWAYS AS ((`id` * 2)) STORED,\n"
        "  `created` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP,\n"
        "  `flag` tinyint(1) NOT NULL DEFAULT '0',\n"
        "  PRIMARY KEY (`id`),\n"
        "  SPATIAL KEY `sp` (`loc`),\n"
        "  KEY `fx` ((lower(`note`)))\n"
        ") ENGINE=InnoDB AUTO_INCREMENT=3 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci "
        "/*!80016 DEFAULT ENCRYPTION='N' */"
    )
    t = table(tables, "orders")
    assert t.column_names() == ["id", "ref", "note", "secret", "loc", "total", "created", "flag"]
    by = {c.name: c for c in t.columns}
    assert by["id"].type_name == "BIGINT UNSIGNED" and by["id"].length is None
    assert (by["ref"].has_default, by["ref"].default_expression) == (True, None)
    assert by["note"].charset_name == "utf8mb4" and by["flag"].default_expression == "0"
    assert by["created"].default_expression == "1970-01-01 00:00:00"
    assert t.default_charset == "utf8mb4"
