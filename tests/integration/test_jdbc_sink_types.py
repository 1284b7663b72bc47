"""Every type of the MySQL connector's type table, end to end: MariaDB → cdc's MySQL source → Kafka → the JDBC
sinks → PostgreSQL and MariaDB, with the JSON converter and with Avro + the schema registry (and two more
source settings: propagated source column types, and Kafka Connect's own temporal types).

The source table is ``tests/fixtures/mysql/all_types.sql`` (every column type Debezium's MySQL connector
maps) with its four rows, plus a fifth of limits PostgreSQL can hold (``LIMITS`` below); the rows are
snapshotted (ids 1-5), inserted again while streaming (101-105), then one is updated and one deleted. Four
sinks read the topic: Debezium's class (change events as they are) and Confluent's class behind
``ExtractNewRecordState``, each into PostgreSQL (JSON: a schema of the stack's ``cdc`` database, no
PostGIS; Avro: a database of the test's own with PostGIS) and a MariaDB database of the test's own, with
``insert.mode=upsert``, the record key as primary key and deletes on.

Every column's type (``format_type`` on PostgreSQL, ``column_type`` on MariaDB) is compared with
``EXPECTED_TYPES`` (and the variants' overrides) and every value with the source's (read back over
MariaDB's own connection, in UTC), through the normalisations ``_value`` and ``_milliseconds`` apply (a
zero date is NULL, as the source connector emits it). PostgreSQL cannot hold the fixture's rows 2 and 4
(negative TIME, TIME beyond 24 h): they are refused naming the column and land in the dead letter queue
(``errors.tolerance=all``), nothing else does. About 10 s a variant.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import random
import re
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import pytest
import requests

from tests.integration.inprocess import standalone
from tests.integration.jdbc_sink_targets import Target, mariadb_target, postgis_target, postgres_target

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mysql"
SQL = (FIXTURES / "all_types.sql").read_text()
REGISTRY = "http://127.0.0.1:8081"

# a row of limits every target holds (after the fixture's rows, in their -07:00 session)
LIMITS = """INSERT INTO all_types VALUES (@base + 5,
  -128, 255, 0, FALSE, -32768, 65535, 8388607, 16777215, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615,
  -0.25, 99999.99, 1e308, -99999999.99, 99999999999999999999999999999999999.999999999999999999999999999999,
  b'0', b'1111111111',
  'ab ', 'trail  ', '', 'quote '' and \\\\ backslash', '😀', '',
  x'00', x'', x'', x'00', x'ff00', x'',
  '1000-01-01', '9999-12-31', '00:00:00', '23:59:59.999999',
  '1000-01-01 00:00:00', '1969-12-31 23:59:59.999', '9999-12-31 23:59:59.999999',
  '1969-12-31 17:00:01', '2038-01-18 20:14:07.999999', DEFAULT,
  1901, '{"k": "v\\\\u00e9", "n": [1.5, null]}', 'a', 'x,y,z',
  ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))', 4326), ST_GeomFromText('POINT(0 0)'),
  -1, '')"""


def _statements(text: str) -> list[str]:
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*\n", body) if s.strip()]


CREATE = _statements(SQL.split("-- @@ROWS")[0])
ROWS = [*_statements(SQL.split("-- @@ROWS")[1]), LIMITS]
REFUSED_BY_POSTGRESQL = {2, 4, 102, 104}

# column → (PostgreSQL's format_type, MariaDB's column_type) of the column both sinks create. Why: the
# source's schema of the column (int16 for TINYINT, int32 for SMALLINT UNSIGNED, …, Decimal with its
# precision for DECIMAL and for BIGINT UNSIGNED in precise mode, boolean for BIT(1), Bits for BIT(n),
# MicroTime for TIME, Timestamp/MicroTimestamp for DATETIME, ZonedTimestamp for TIMESTAMP, Year,
# Enum/EnumSet with their values, geometry structs) and docs/jdbc-sink.md's type mapping. MariaDB's JSON is
# a LONGTEXT (its binlog says so): a string.
EXPECTED_TYPES: dict[str, tuple[str, str]] = {
    "id": ("integer", "int(11)"),
    "c_tinyint": ("smallint", "smallint(6)"),
    "c_tinyint_u": ("smallint", "smallint(6)"),
    "c_tinyint1": ("smallint", "smallint(6)"),
    "c_boolean": ("smallint", "smallint(6)"),
    "c_smallint": ("smallint", "smallint(6)"),
    "c_smallint_u": ("integer", "int(11)"),
    "c_mediumint": ("integer", "int(11)"),
    "c_mediumint_u": ("integer", "int(11)"),
    "c_int": ("integer", "int(11)"),
    "c_int_u": ("bigint", "bigint(20)"),
    "c_bigint": ("bigint", "bigint(20)"),
    "c_bigint_u": ("numeric(20,0)", "decimal(20,0)"),
    "c_float": ("real", "float"),
    "c_float_md": ("double precision", "double"),
    "c_double": ("double precision", "double"),
    "c_decimal": ("numeric(10,2)", "decimal(10,2)"),
    "c_decimal_big": ("numeric(65,30)", "decimal(65,30)"),
    "c_bit1": ("boolean", "tinyint(1)"),
    "c_bit10": ("bit(10)", "bit(10)"),
    "c_char": ("text", "longtext"),
    "c_varchar": ("text", "longtext"),
    "c_tinytext": ("text", "longtext"),
    "c_text": ("text", "longtext"),
    "c_mediumtext": ("text", "longtext"),
    "c_longtext": ("text", "longtext"),
    "c_binary": ("bytea", "longblob"),
    "c_varbinary": ("bytea", "longblob"),
    "c_tinyblob": ("bytea", "longblob"),
    "c_blob": ("bytea", "longblob"),
    "c_mediumblob": ("bytea", "longblob"),
    "c_longblob": ("bytea", "longblob"),
    "c_date": ("date", "date"),
    "c_date_nn": ("date", "date"),
    "c_time0": ("time(6) without time zone", "time(6)"),
    "c_time6": ("time(6) without time zone", "time(6)"),
    "c_datetime0": ("timestamp(6) without time zone", "datetime(6)"),
    "c_datetime3": ("timestamp(6) without time zone", "datetime(6)"),
    "c_datetime6": ("timestamp(6) without time zone", "datetime(6)"),
    "c_timestamp0": ("timestamp(6) with time zone", "datetime(6)"),
    "c_timestamp6": ("timestamp(6) with time zone", "datetime(6)"),
    "c_ts_default": ("timestamp(6) with time zone", "datetime(6)"),
    "c_year": ("integer", "year(4)"),
    "c_json": ("text", "longtext"),
    "c_enum": ("text", "enum('a','b','c')"),
    "c_set": ("text", "set('x','y','z')"),
    "c_geometry": ("bytea", "geometry"),
    "c_point": ("bytea", "point"),
    "c_default_int": ("integer", "int(11)"),
    "c_default_str": ("text", "longtext"),
}
# PostgreSQL with PostGIS: a geometry column for both shapes (the SRID kept)
POSTGIS_TYPES = {"c_geometry": ("geometry", "geometry"), "c_point": ("geometry", "point")}
# with the source's time.precision.mode=connect: Connect's Time and Timestamp (milliseconds); DATE is the
# same, TIMESTAMP stays Debezium's ZonedTimestamp
CONNECT_TYPES: dict[str, tuple[str, str]] = {
    "c_time0": ("time(3) without time zone", "time(3)"),
    "c_time6": ("time(3) without time zone", "time(3)"),
    "c_datetime0": ("timestamp(3) without time zone", "datetime(3)"),
    "c_datetime3": ("timestamp(3) without time zone", "datetime(3)"),
    "c_datetime6": ("timestamp(3) without time zone", "datetime(3)"),
}
# with the source's column.propagate.source.type: strings and bytes sized as the source's columns
PROPAGATED_TYPES: dict[str, tuple[str, str]] = {
    "c_char": ("character(5)", "char(5)"),
    "c_varchar": ("character varying(50)", "varchar(50)"),
    "c_binary": ("bytea", "binary(4)"),
    "c_varbinary": ("bytea", "varbinary(10)"),
    "c_default_str": ("character varying(10)", "varchar(10)"),
}


@pytest.fixture
def pg(request: pytest.FixtureRequest) -> Iterator[Target]:
    # JSON into a schema of the stack's database (no PostGIS: geometry as WKB bytes), Avro into a database
    # of the test's own with PostGIS (geometry columns)
    postgis = request.node.callspec.params["converter"] == "avro"
    yield from postgis_target() if postgis else postgres_target()


@pytest.fixture
def my() -> Iterator[Target]:
    yield from mariadb_target()


def _converters(kind: str) -> dict[str, str]:
    if kind == "json":
        return {
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
            # Kafka's JsonConverter writes (and reads) a NULL whose column has a DEFAULT as that default
            # unless told not to: with its default (true) c_default_str's NULL lands as 'abc', in every sink
            "value.converter.replace.null.with.default": "false",
        }
    return {
        "key.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "key.converter.schema.registry.url": REGISTRY,
        "value.converter.schema.registry.url": REGISTRY,
        # Confluent's AvroConverter likewise (its AvroData), unless told to ignore defaults for nullables
        "value.converter.ignore.default.for.nullables": "true",
    }


def _sinks(topic: str, pg: Target, my: Target, dlq: str) -> dict[str, dict[str, str]]:
    tolerant = {
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
    }
    out: dict[str, dict[str, str]] = {}
    for target in (pg, my):
        extra = tolerant if target is pg else {}
        out[f"dbz-{target.family}"] = {
            "connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector",
            "topics": topic,
            "connection.url": target.url,
            "connection.username": target.user,
            "connection.password": target.password,
            "insert.mode": "upsert",
            "primary.key.mode": "record_key",
            "delete.enabled": "true",
            "schema.evolution": "basic",
            "collection.name.format": target.table_format("dbz"),
            **extra,
        }
        out[f"cfl-{target.family}"] = {
            "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
            "topics": topic,
            "connection.url": target.url,
            "connection.user": target.user,
            "connection.password": target.password,
            "insert.mode": "upsert",
            "pk.mode": "record_key",
            "delete.enabled": "true",
            "auto.create": "true",
            "table.name.format": target.table_format("cfl"),
            "transforms": "unwrap",
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "transforms.unwrap.drop.tombstones": "false",
            # Confluent's default (true) writes a NULL of a column with a DEFAULT as that default
            "replace.null.with.default": "false",
            **extra,
        }
    return out


def _post(url: str, name: str, config: dict[str, str]) -> None:
    response = requests.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=60)
    assert response.status_code in (200, 201), response.text


def _state(url: str, name: str) -> tuple[str | None, str]:
    response = requests.get(f"{url}/connectors/{name}/status", timeout=10)
    tasks = (response.json().get("tasks") or []) if response.ok else []
    return (tasks[0]["state"], tasks[0].get("trace") or "") if tasks else (None, "")


def _run(db: Any, statements: list[str], base: int) -> None:
    with db.connect() as conn, conn.cursor() as cur:
        cur.execute("SET @base = %s", (base,))
        for statement in statements:
            cur.execute(statement)


# -- reading the tables back --------------------------------------------------------------------------------
def _read_source(db: Any) -> tuple[dict[str, str], dict[int, dict[str, Any]]]:
    conn = pymysql.connect(
        host=db.host, port=db.port, user=db.user, password=db.password, database=db.name, autocommit=True
    )
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")
            return _read_my(cur, db.name, "all_types")
    finally:
        conn.close()


def _read_my(cur: Any, database: str, table: str) -> tuple[dict[str, str], dict[int, dict[str, Any]]]:
    cur.execute(
        "SELECT column_name, column_type FROM information_schema.columns"
        " WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
        (database, table),
    )
    types = {str(n): str(t) for n, t in cur.fetchall()}
    # geometry as the server's bytes; everything else as pymysql gives it
    cur.execute(f"SELECT * FROM `{database}`.`{table}`")
    names = [d[0] for d in cur.description]
    rows = {int(r[0]): dict(zip(names, r, strict=True)) for r in cur.fetchall()}
    return types, rows


def _read_target(target: Target, table: str) -> tuple[dict[str, str], dict[int, dict[str, Any]]]:
    if target.family == "mysql":
        conn = pymysql.connect(
            host="127.0.0.1",
            port=3306,
            user="cdc",
            password="cdc",
            database=target.namespace,
            autocommit=True,
        )
        try:
            with conn.cursor() as cur:
                cur.execute("SET time_zone = '+00:00'")
                return _read_my(cur, target.namespace, table)
        finally:
            conn.close()
    with psycopg.connect(
        host="127.0.0.1", port=5432, user="cdc", password="cdc", dbname=target.database, autocommit=True
    ) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        types = {
            str(n): str(t)
            for n, t in conn.execute(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a"
                " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped"
                " ORDER BY a.attnum",
                (target.namespace, table),
            ).fetchall()
        }
        # PostGIS geometry as (SRID, WKB), everything else as psycopg gives it
        select = ", ".join(
            f'ST_SRID("{c}"), ST_AsBinary("{c}")' if t == "geometry" else f'"{c}"' for c, t in types.items()
        )
        cur = conn.execute(f'SELECT {select} FROM "{target.namespace}"."{table}"')
        rows = {}
        for raw in cur.fetchall():
            values = iter(raw)
            row = {
                c: (next(values), next(values)) if t == "geometry" else next(values) for c, t in types.items()
            }
            for c, t in types.items():
                if t == "geometry":
                    srid, wkb = row[c]
                    row[c] = None if wkb is None else (srid, bytes(wkb))
            rows[int(row["id"])] = row
    return types, rows


# -- what each column must hold -----------------------------------------------------------------------------
def _timedelta(value: Any) -> Any:
    if isinstance(value, dt.time):
        return dt.timedelta(
            hours=value.hour, minutes=value.minute, seconds=value.second, microseconds=value.microsecond
        )
    return value


def _bits(value: Any) -> Any:
    if value is None or isinstance(value, bool | int):  # BIT(1) is a boolean column
        return None if value is None else int(value)
    if isinstance(value, str):  # PostgreSQL's BIT(n) as text
        return int(value, 2)
    return int.from_bytes(bytes(value), "big")


def _float32(value: Any) -> Any:
    return None if value is None else struct.unpack("f", struct.pack("f", float(value)))[0]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def _wkb(value: Any) -> Any:
    # MariaDB's spatial values are the SRID (4 bytes, little-endian) then the WKB
    return value if value is None or isinstance(value, tuple) else bytes(value)


def _zero_date(value: Any) -> Any:
    # a zero date/datetime is NULL in a nullable column (what the source connector emits)
    return None if isinstance(value, str) and value.startswith("0000-00-00") else value


def _text(value: Any) -> Any:
    # CHAR(n) pads on PostgreSQL and MariaDB drops trailing spaces of a CHAR when it reads it
    return value.rstrip(" ") if isinstance(value, str) else value


def _set(value: Any) -> Any:
    if isinstance(value, set):
        return ",".join(sorted(value))
    return value


NORMALISE: dict[str, Callable[[Any], Any]] = {
    "c_float": _float32,
    "c_float_md": _float32,  # a FLOAT(M,D) is a 4-byte float; the server prints it rounded to D digits
    "c_bit1": _bits,
    "c_bit10": _bits,
    "c_char": _text,
    "c_time0": _timedelta,
    "c_time6": _timedelta,
    "c_date": _zero_date,
    "c_datetime0": _zero_date,
    "c_timestamp0": _zero_date,
    "c_json": _json,
    "c_set": _set,
    "c_geometry": _wkb,
    "c_point": _wkb,
}


def _value(column: str, value: Any, family: str, source: bool, streamed: bool = False) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(value, memoryview):
        value = bytes(value)
    if column == "c_date_nn" and source and isinstance(value, str):
        return dt.date(1970, 1, 1)  # a zero date in a NOT NULL column: the epoch, as Debezium emits it
    if column == "c_timestamp0" and source and streamed and isinstance(value, str):
        # a zero TIMESTAMP read from the binlog is its epoch second 0, as Debezium streams it (its snapshot
        # gives NULL: tests/integration/test_mysql_events.py)
        return dt.datetime(1970, 1, 1)
    if column in ("c_geometry", "c_point") and source and value is not None and family == "postgis":
        return int.from_bytes(bytes(value)[:4], "little"), bytes(value)[4:]  # PostGIS keeps the SRID
    if column in ("c_geometry", "c_point") and source and value is not None and family == "postgresql":
        return bytes(value)[4:]  # PostgreSQL without PostGIS: the WKB alone
    return NORMALISE.get(column, lambda v: v)(value)


def _milliseconds(column: str, value: Any) -> Any:
    """What Connect's Time and Timestamp carry of a source value: milliseconds (the rest dropped, as
    ``Instant.toEpochMilli`` does), and no TIME outside 00:00-24:00 (the source emits NULL)."""
    if column in ("c_time0", "c_time6") and isinstance(value, dt.timedelta):
        if not dt.timedelta(0) <= value < dt.timedelta(days=1):
            return None
        return value - dt.timedelta(microseconds=value.microseconds % 1000)
    if column.startswith("c_datetime") and isinstance(value, dt.datetime):
        return value.replace(microsecond=value.microsecond // 1000 * 1000)
    return value


def _differences(
    source: dict[int, dict[str, Any]],
    target: dict[int, dict[str, Any]],
    family: str,
    ids: set[int],
    connect: bool = False,
) -> list[str]:
    out = []
    if set(target) != ids:
        out.append(f"ids: {sorted(target)} (expected {sorted(ids)})")
    for i in sorted(ids & set(target)):
        for column, raw in source[i].items():
            want = _value(column, raw, family, True, i > 100)
            if connect:
                want = _milliseconds(column, want)
            got = _value(column, target[i].get(column, "<missing>"), family, False)
            if isinstance(want, decimal.Decimal) and isinstance(got, decimal.Decimal):
                same = str(want) == str(got)  # the scale too
            else:
                same = want == got
            if not same:
                out.append(f"id {i} {column}: {got!r} (source {raw!r}, expected {want!r})")
    return out


@pytest.mark.parametrize(
    ("converter", "variant"),
    [("json", ""), ("avro", ""), ("json", "propagated"), ("avro", "connect")],
    ids=["json", "avro", "json-propagated", "avro-connect"],
)
def test_every_type_lands_as_in_the_source(
    converter: str, variant: str, tmp_path: Path, kafka: Any, mysql_db: Any, pg: Target, my: Target
) -> None:
    propagate, connect = variant == "propagated", variant == "connect"
    with mysql_db.connect() as conn, conn.cursor() as cur:
        for statement in CREATE:
            cur.execute(statement)
    _run(mysql_db, ROWS, 0)
    prefix = kafka.topic("types")
    topic = f"{prefix}.{mysql_db.name}.all_types"
    dlq = kafka.topic("dlq")
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            **_converters(converter),
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
        }
    ) as runtime:
        url = runtime.url.rstrip("/")
        _post(
            url,
            "source",
            {
                "connector.class": "io.debezium.connector.mysql.MySqlConnector",
                "database.hostname": mysql_db.host,
                "database.port": str(mysql_db.port),
                "database.user": mysql_db.user,
                "database.password": mysql_db.password,
                "database.server.id": str(random.randint(100_000, 4_000_000)),
                "topic.prefix": prefix,
                "database.include.list": mysql_db.name,
                "table.include.list": f"{mysql_db.name}.all_types",
                "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
                # values above 2^63-1 exactly (the default, long, wraps them as Debezium's does)
                "bigint.unsigned.handling.mode": "precise",
                # Avro names allow no '-' (the test's topic prefix has some): as Debezium's users on Avro do
                **({"schema.name.adjustment.mode": "avro"} if converter == "avro" else {}),
                # the source column's type and size as schema parameters (__debezium.source.column.*)
                **({"column.propagate.source.type": ".*"} if propagate else {}),
                # Kafka Connect's own Date, Time and Timestamp (milliseconds) rather than Debezium's types
                **({"time.precision.mode": "connect"} if connect else {}),
            },
        )
        deadline = time.monotonic() + 60
        while len(kafka.read_to_end(topic)) < sum(s.startswith("INSERT") for s in ROWS):
            assert _state(url, "source")[0] != "FAILED", _state(url, "source")[1]
            assert time.monotonic() < deadline, "no snapshot events"
            time.sleep(0.5)
        _run(mysql_db, ROWS, 100)
        _run(
            mysql_db,
            [
                "UPDATE all_types SET c_varchar = 'updated ✓', c_int = c_int + 1,"
                " c_datetime6 = '2021-02-03 04:05:06.070809', c_enum = 'c', c_set = 'y' WHERE id IN (1, 101)",
                "DELETE FROM all_types WHERE id = 103",
            ],
            0,
        )
        sinks = _sinks(topic, pg, my, dlq)
        for name, config in sinks.items():
            _post(url, name, config)
        source_types, source = _read_source(mysql_db)
        # with Connect's Time a TIME outside a day is NULL (the source cannot carry it): nothing refused
        refused_ids = set() if connect else REFUSED_BY_POSTGRESQL
        expected_ids = {"postgresql": set(source) - refused_ids, "mysql": set(source)}
        deadline = time.monotonic() + 90
        while True:
            failed = {n: t for n in sinks for s, t in [_state(url, n)] if s == "FAILED"}
            assert not failed, "\n".join(f"{n}: {t[:3000]}" for n, t in failed.items())
            done = all(
                set(_read_target(t, table)[1]) == expected_ids[t.family]
                for t in (pg, my)
                for table in ("dbz", "cfl")
                if _exists(t, table)
            ) and all(_exists(t, table) for t in (pg, my) for table in ("dbz", "cfl"))
            if done or time.monotonic() > deadline:
                break
            time.sleep(1)
        # the dead letter queue's records are sent beside the batch's commit, not before it: wait for them
        deadline = time.monotonic() + 30
        while len(dead := kafka.read_to_end(dlq)) < 2 * len(refused_ids) and time.monotonic() < deadline:
            time.sleep(0.5)

    problems = []
    for target in (pg, my):
        column = 0 if target.family == "postgresql" else 1
        for table in ("dbz", "cfl"):
            types, rows = _read_target(target, table)
            where = f"{target.family} {table}"
            postgis = target.database != "cdc"
            expected = {
                **EXPECTED_TYPES,
                **(POSTGIS_TYPES if postgis else {}),
                **(PROPAGATED_TYPES if propagate else {}),
                **(CONNECT_TYPES if connect else {}),
            }
            problems += [
                f"{where} {c}: column type {types.get(c)!r}, expected {want[column]!r}"
                for c, want in expected.items()
                if types.get(c) != want[column]
            ]
            problems += [
                f"{where} {c}: a column the test does not expect" for c in set(types) - set(EXPECTED_TYPES)
            ]
            problems += [
                f"{where} {d}"
                for d in _differences(
                    source,
                    rows,
                    "postgis" if postgis else target.family,
                    expected_ids[target.family],
                    connect,
                )
            ]
    assert set(EXPECTED_TYPES) == set(source_types)
    # the rows PostgreSQL cannot hold, refused by each of its two sinks naming the column; nothing else
    refused = sorted(
        (
            (json.loads(m.key())["payload"]["id"] if converter == "json" else 0, dict(m.headers() or []))
            for m in dead
        ),
        key=lambda r: r[0],
    )
    if converter == "json":
        assert sorted(i for i, _ in refused) == sorted([*refused_ids] * 2), refused
    else:
        assert len(refused) == 2 * len(refused_ids), refused
    for _, headers in refused:
        message = headers["__connect.errors.exception.message"].decode()
        assert "c_time0" in message or "c_time6" in message, message
    assert not problems, "\n".join(problems)


def _exists(target: Target, table: str) -> bool:
    try:
        target.query(f"SELECT 1 FROM {target.table(table)} LIMIT 1")
        return True
    except Exception:
        return False
