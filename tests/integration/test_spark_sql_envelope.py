"""The JVM path of the Spark snapshot (:mod:`cdc.mysql.spark.jvm`) against the Python path, byte for byte.

The same tables are snapshotted twice, at the same start position and the same clock: once with the
Python path (PyMySQL and our converters, on threads) and once on Spark with the JVM path (Spark's JDBC
reader, the envelope built by Spark SQL expressions). A RegexRouter sends each run to its own topics
(``….py`` / ``….jvm``, three partitions each); every record's key, value, partition and headers must be
the same. The ``types`` table has a column of every type the JVM path maps, with NULLs, defaults,
extremes, negative decimals, zero and fractional dates and times, unicode and escapes, binary data; a
table with a POINT column has no SQL mapping and takes the Python path within the same run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc.mysql.spark import engine
from cdc.mysql.spark.engine import SnapshotOptions, SnapshotRun
from cdc.mysql.spark.runners import MySqlThreadRunner as ThreadRunner

pytestmark = pytest.mark.slow

TYPES = """
CREATE TABLE types (
  id INT NOT NULL, k2 VARCHAR(20) NOT NULL,
  ti TINYINT, tiu TINYINT UNSIGNED, t1 TINYINT(1), si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  nd INT DEFAULT 42,
  dec_a DECIMAL(10,2), dec_b DECIMAL(30,5), dec_c DECIMAL(38,0) NOT NULL DEFAULT 0, dec_d DECIMAL(5,5),
  dec_e DECIMAL(18,4),
  f FLOAT, f2 FLOAT(10,3), d DOUBLE, r REAL,
  c CHAR(10), vc VARCHAR(200) NOT NULL DEFAULT 'dflt', tx TEXT, en ENUM('a','b','c d'),
  st SET('x','y','z'), j JSON,
  dt DATE, dt_nn DATE NOT NULL DEFAULT '2000-01-01',
  dtm0 DATETIME, dtm3 DATETIME(3), dtm6 DATETIME(6),
  ts0 TIMESTAMP NULL, ts3 TIMESTAMP(3) NULL, ts6 TIMESTAMP(6) NULL,
  tm TIME, tm3 TIME(3), tm6 TIME(6), y YEAR,
  bo BOOLEAN, b1 BIT(1), b10 BIT(10), b64 BIT(64),
  bn BINARY(4), vb VARBINARY(20), bl BLOB,
  PRIMARY KEY (id, k2)
) DEFAULT CHARSET utf8mb4
"""

COLUMNS = (
    "id, k2, ti, tiu, t1, si, siu, mi, miu, i, iu, bi, biu, nd, dec_a, dec_b, dec_c, dec_d, dec_e, "
    "f, f2, d, r, c, vc, tx, en, st, j, dt, dt_nn, dtm0, dtm3, dtm6, ts0, ts3, ts6, tm, tm3, tm6, y, "
    "bo, b1, b10, b64, bn, vb, bl"
)

ROWS = [
    # all NULL but the NOT NULL columns (nd, with DEFAULT 42, is written as 42: replace.null.with.default)
    "("
    + ", ".join(
        {"id": "1", "k2": "'a'", "dec_c": "0", "vc": "'dflt'", "dt_nn": "'2000-01-01'"}.get(c.strip(), "NULL")
        for c in COLUMNS.split(",")
    )
    + ")",
    # maxima
    "(2, 'b', 127, 255, 1, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, "
    "18446744073709551615, 7, 99999999.99, 9999999999999999999999999.99999, "
    "99999999999999999999999999999999999999, 0.99999, 99999999999999.9999, 3.4028235e38, 9999999.999, "
    "1.7976931348623157e308, 1e-300, 'cccccccccc', 'max', 'text', 'c d', 'x,y,z', "
    "'{\"k\": [1, 2.50, null]}', "
    "'9999-12-31', '9999-12-31', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999', "
    "'9999-12-31 23:59:59.999999', '2038-01-19 03:14:07', '2038-01-19 03:14:07.999', "
    "'2038-01-19 03:14:07.999999', '838:59:59', '838:59:59.999', '838:59:59.999999', 2155, TRUE, b'1', "
    "b'1111111111', b'1111111111111111111111111111111111111111111111111111111111111111', "
    "x'FFFFFFFF', x'FF00FF', REPEAT(x'FF', 200))",
    # minima and negatives
    "(3, 'c', -128, 0, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, -1, "
    "-99999999.99, -9999999999999999999999999.99999, -99999999999999999999999999999999999999, -0.99999, "
    "-0.0001, -3.4028235e38, -0.001, -2.2250738585072014e-308, -0.0, '', '', '', 'a', '', '[]', "
    "'0001-01-01', '0001-01-01', '1000-01-01 00:00:00', '1000-01-01 00:00:00.001', "
    "'1000-01-01 00:00:00.000001', '1970-01-01 00:00:01', '1970-01-01 00:00:01.001', "
    "'1970-01-01 00:00:01.000001', '-838:59:59', '-838:59:59.999', '-838:59:59.999999', 1901, FALSE, b'0', "
    "b'0', b'0', x'00', x'', x'')",
    # zero dates (sql_mode without NO_ZERO_DATE), the epoch, boundaries of the two's complement
    "(4, 'd', 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 9223372036854775808, NULL, -1.28, -1.29, 128, -0.00128, "
    "-12.7999, 0.1, 0.001, 0.1, 1e7, 'x', '\\\"quoted\\\" \\\\back\\\\slash', "
    "'tab\\there\\nnew\\rline', 'b', 'y', "
    "'{\"a\":\"\\\\u00e9\"}', '0000-00-00', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', "
    "'0000-00-00 00:00:00.000000', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', "
    "'0000-00-00 00:00:00.000000', '00:00:00', '-00:00:00.5', '-00:00:00.000001', 0, TRUE, b'1', b'1', "
    "b'10000000', x'00000001', x'80', x'7F')",
    # unicode, control characters, fractions, pre-1970
    "(5, 'é€😀', 12, 200, 1, -300, 40000, -5000000, 9000000, -123456789, 3000000000, -1, 1, 0, 0.01, "
    "0.00001, 1, 0.00001, 0.0001, 1.17549435e-38, 12345.678, 1e-3, 9.999999e6, 'ünï', "
    "CONCAT('ctl', CHAR(1), CHAR(31), CHAR(127), '/', _utf8mb4 x'E280A8', '😀'), 'ß∂ƒ', 'c d', 'x,z', "
    "'{\"emoji\": \"😀\", \"n\": -0.5e-3}', '1969-12-31', '1582-10-10', '1969-12-31 23:59:59', "
    "'1969-12-31 23:59:59.999', '1969-12-31 23:59:59.999999', '1970-01-01 00:00:00.5', "
    "'1999-12-31 23:59:59.5', '2000-02-29 12:00:00.000001', '-00:00:01', '12:34:56.7', '-12:34:56.000007', "
    "69, FALSE, b'0', b'101', b'1000000000000000000000000000000000000000000000000000000000000000', "
    "x'61', x'00FF00FF', CONCAT(REPEAT(x'00', 60), x'0102'))",
]


def _more_rows(n: int) -> list[str]:
    out = []
    for i in range(n):
        v = (i * 7919) % 100_003
        out.append(
            f"({100 + i}, 'k{i % 7}', {v % 256 - 128}, {v % 256}, {v % 2}, {v % 65536 - 32768}, {v % 65536}, "
            f"{v * 83 - 4_000_000}, {v * 97}, {v * 21_001 - 1_000_000_000}, {v * 40_000}, "
            f"{v * 92_233_720_368 - 4_611_686_018_427_387_904}, {v * 184_000_000_000_000}, "
            f"{'NULL' if i % 5 == 0 else i}, {v / 100 - 500:.2f}, {-v * 1234567.89123:.5f}, {v * 10**30}, "
            f"{(v % 99999) / 100000:.5f}, {v * 3.14159:.4f}, {v / 7:.6g}, {v / 13:.3f}, {v / 3.0!r}, "
            f"{v * 1e-5!r}, 'c{v % 1000}', 'row {i} {chr(0x430 + i % 32)}', REPEAT('t', {i}), "
            f"'{['a', 'b', 'c d'][i % 3]}', '{['x', 'y', 'x,y', 'y,z', ''][i % 5]}', '{{\"i\": {i}}}', "
            f"DATE_ADD('1960-01-01', INTERVAL {v} DAY), DATE_ADD('2000-01-01', INTERVAL {i} DAY), "
            f"DATE_ADD('1950-01-01', INTERVAL {v * 1000} SECOND), "
            f"DATE_ADD('1990-06-15 12:00:00.123', INTERVAL {v * 1_000_003} MICROSECOND), "
            f"DATE_ADD('1960-01-01', INTERVAL {v * 999_983} MICROSECOND), "
            f"FROM_UNIXTIME({1_000_000 + v * 9000}), FROM_UNIXTIME({1_000_000 + v * 9000}.25), "
            f"FROM_UNIXTIME({1_000_000 + v * 9000}.123456), SEC_TO_TIME({v * 7 - 300_000}), "
            f"SEC_TO_TIME({v}.5), SEC_TO_TIME({-v}.000123), {1901 + v % 255}, {i % 2}, b'{i % 2}', "
            f"{v % 1024}, {v * 1_000_000_007}, x'{v:08x}', x'{v:06x}', REPEAT(CHAR({v % 256}), {i * 3}))"
        )
    return out


PLAIN = "CREATE TABLE plain (id BIGINT PRIMARY KEY, name VARCHAR(40) NOT NULL)"
GEO = "CREATE TABLE geo (id INT PRIMARY KEY, p POINT, name VARCHAR(10))"


def _load(mysql_db: Any) -> dict[str, int]:
    rows = ROWS + _more_rows(36)
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")
        cur.execute("SET SESSION time_zone = '+00:00'")
        cur.execute(TYPES)
        cur.execute(f"INSERT INTO types ({COLUMNS}) VALUES " + ", ".join(rows))
        cur.execute(PLAIN)
        cur.execute(
            "INSERT INTO plain VALUES " + ", ".join(f"({i * 11}, 'name {i} \\u00e9')" for i in range(1, 31))
        )
        cur.execute(GEO)
        cur.execute(
            "INSERT INTO geo VALUES " + ", ".join(f"({i}, POINT({i}, {-i}), 'g{i}')" for i in range(1, 9))
        )
        cur.execute("SELECT COUNT(*) FROM types")
        count = int(cur.fetchone()[0])
    assert count == len(rows)
    return {"types": count, "plain": 30, "geo": 8}


class _Clock:
    """``time`` with a fixed now (the rest delegated): both paths stamp their records with it."""

    def __init__(self, module: Any, now_ns: int) -> None:
        self._m, self._ns = module, now_ns

    def time(self) -> float:
        return (self._ns // 1_000_000 + 0.5) / 1000

    def time_ns(self) -> int:
        return self._ns

    def __getattr__(self, name: str) -> Any:
        return getattr(self._m, name)


def _configs(tmp: Path, kafka: Any, mysql_db: Any, suffix: str, extra: dict[str, str]) -> tuple[dict, dict]:
    prefix = kafka.prefix + "srv"
    worker = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.file.filename": str(tmp / "offsets"),
        **{k: v for k, v in extra.items() if k.startswith(("key.converter.", "value.converter."))},
    }
    config = {
        "name": "sql-envelope",
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(30_000 + int(time.time()) % 10_000),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal.kafka.topic": prefix + ".history",
        "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
        "include.schema.changes": "false",
        "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1." + suffix,
        **{
            k: v.replace("{db}", mysql_db.name)
            for k, v in extra.items()
            if not k.startswith(("key.converter.", "value.converter."))
        },
    }
    return config, worker


def _diff(a: tuple[Any, ...], b: tuple[Any, ...]) -> str:
    """What differs between two records (key, partition, headers or the value's fields), readably."""
    import json

    if a[:2] != b[:2] or a[3] != b[3]:
        return f"{a[:2]} {a[3]} != {b[:2]} {b[3]}"
    pa, pb = json.loads(a[2]), json.loads(b[2])
    pa, pb = pa.get("payload", pa), pb.get("payload", pb)
    fields = [
        f"{block}.{k}: python {pa[block][k]!r} jvm {pb[block][k]!r}"
        for block in ("after", "source")
        for k in pa[block]
        if pa[block][k] != pb[block].get(k)
    ]
    return "; ".join(fields) or f"same JSON, other bytes:\n{a[2]!r}\n{b[2]!r}"


def _without_clock(record: tuple[Any, ...]) -> tuple[Any, ...]:
    import json

    partition, key, value, headers = record
    payload = json.loads(value)
    body = payload.get("payload") or payload
    for block in (body, body["source"]):
        for name in ("ts_ms", "ts_us", "ts_ns"):
            block.pop(name)
    return partition, key, json.dumps(payload), headers


@pytest.fixture(scope="module")
def spark_runner() -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    from cdc.mysql.spark.runners import MySqlSparkRunner as SparkRunner

    runner = SparkRunner("local[2]", 2, app_name="test-sql-envelope")
    try:
        yield runner
    finally:
        runner.close()


MODES = {
    "defaults": {"key.converter.schemas.enable": "false", "value.converter.schemas.enable": "true"},
    "other-modes": {
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "false",
        "decimal.handling.mode": "string",
        "binary.handling.mode": "hex",
        "bigint.unsigned.handling.mode": "precise",
        "time.precision.mode": "adaptive_time_microseconds",
        "enable.time.adjuster": "false",
    },
    "doubles-base64url": {
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        "value.converter.replace.null.with.default": "false",
        "decimal.handling.mode": "double",
        "binary.handling.mode": "base64-url-safe",
        # a key that is not the primary key, and a column left out
        "message.key.columns": "{db}.plain:name",
        "column.exclude.list": "{db}.types.tx",
    },
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_jvm_records_are_byte_identical(
    mode: str,
    spark_runner: Any,
    tmp_path: Path,
    kafka: Any,
    mysql_db: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import cdc.mysql.events as events_mod
    import cdc.mysql.spark.executor as executor_mod
    import cdc.mysql.spark.jvm as jvm_mod

    counts = _load(mysql_db)
    extra = MODES[mode]
    now_ns = time.time_ns()
    for module in (events_mod, executor_mod, jvm_mod):
        monkeypatch.setattr(module, "time", _Clock(time, now_ns))
    starts: list[Any] = []
    real_start = engine.capture_start

    def same_start(*args: Any, **kwargs: Any) -> Any:
        start, tables = real_start(*args, **kwargs)
        starts.append(start)
        return starts[0], tables

    monkeypatch.setattr(engine, "capture_start", same_start)
    topics = {
        t: {
            s: kafka.create_topic(f"{kafka.prefix}srv.{mysql_db.name}.{t}.{s}", partitions=3)
            for s in ("py", "jvm")
        }
        for t in counts
    }

    def run(suffix: str, runner: Any) -> Any:
        config, worker = _configs(tmp_path, kafka, mysql_db, suffix, extra)
        options = SnapshotOptions(
            chunk_rows=20, state_dir=tmp_path / f"state-{suffix}", progress=False, restart=True
        )
        return SnapshotRun(config, worker, options, runner=runner).run()

    python = run("py", ThreadRunner(2))
    spark_runner.paths.clear()
    jvm = run("jvm", spark_runner)
    assert python.rows == jvm.rows == sum(counts.values())
    assert python.reread_rows == jvm.reread_rows == 0

    paths = dict(spark_runner.paths)
    assert {p for c, p in paths.items() if ".geo#" in c} == {"python"}  # POINT: no SQL mapping
    assert {p for c, p in paths.items() if ".geo#" not in c} == {"sql"}
    assert len(paths) == jvm.chunks

    markers: list[str] = []
    for table, pair in topics.items():
        records = {}
        for suffix, topic in pair.items():
            messages = kafka.read_to_end(topic, timeout=60)
            records[suffix] = sorted(
                (m.partition(), m.key(), m.value(), tuple(m.headers() or ())) for m in messages
            )
        assert len(records["py"]) == counts[table]
        if table == "geo":
            # the Python path inside Spark's Python workers: their clock is not the test's
            records = {k: sorted(_without_clock(r) for r in v) for k, v in records.items()}
        for a, b in zip(records["py"], records["jvm"], strict=True):
            assert a == b, f"{table}: the JVM record differs from the Python one: {_diff(a, b)}"
        if table != "geo":
            assert len({p for p, *_ in records["jvm"]}) > 1  # keys spread over the partitions
        if table == "plain" and "message.key.columns" in extra:
            assert all(key.startswith(b'{"name":') for _p, key, _v, _h in records["jvm"])
        import json

        for _p, _k, value, _h in records["jvm"]:
            payload = json.loads(value)
            markers.append((payload.get("payload") or payload)["source"]["snapshot"])
    # three tables: first … last_in_data_collection, first_in_data_collection … last_in_data_collection,
    # first_in_data_collection … last
    assert markers.count("first") == 1 and markers.count("last") == 1
    assert markers.count("first_in_data_collection") == 2 and markers.count("last_in_data_collection") == 2


def test_unsupported_converters_and_transforms_fall_back(
    spark_runner: Any, tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    """Avro converters, or a transform that is not a topic rename: no table is encoded in SQL."""
    from cdc.history.model import TableId
    from cdc.mysql.spark.jvm import Unsupported, table_encoding

    _load(mysql_db)
    base_config, worker = _configs(tmp_path, kafka, mysql_db, "x", MODES["defaults"])
    job = SnapshotRun(base_config, worker, SnapshotOptions(state_dir=tmp_path / "s", progress=False))
    schema = job._schema(engine._NullHistory())
    server = job._server()
    engine.capture_start(job.settings, schema, job.connector, server.mariadb, job.stopping)
    types = schema.table(TableId(mysql_db.name, "types"))
    assert types is not None

    from cdc.mysql.spark.executor import RunContext
    from cdc.snapshot.writer import WriterSpec

    def ctx(config: dict[str, str], worker_props: dict[str, str]) -> RunContext:
        return RunContext(config, "mariadb", WriterSpec.resolve(config, worker_props, "t"), "f.000001", 4)

    assert table_encoding(types, ctx(base_config, worker)).topic.endswith(".types.x")
    unwrap = {
        **base_config,
        "transforms": "route,unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    }
    with pytest.raises(Unsupported, match="only RegexRouter"):
        table_encoding(types, ctx(unwrap, worker))
    string_conv = {**worker, "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    with pytest.raises(Unsupported, match="only the JsonConverter"):
        table_encoding(types, ctx(base_config, string_conv))
    geo = schema.table(TableId(mysql_db.name, "geo"))
    assert geo is not None
    with pytest.raises(Unsupported, match="POINT"):
        table_encoding(geo, ctx(base_config, worker))

    # snapshot.spark.encoder=sql refuses a table it cannot encode instead of falling back
    from cdc.api.errors import ConfigError

    strict = SnapshotRun(
        {**base_config, "snapshot.spark.encoder": "sql", "table.include.list": f"{mysql_db.name}.geo"},
        worker,
        SnapshotOptions(chunk_rows=4, state_dir=tmp_path / "strict", progress=False, restart=True),
        runner=spark_runner,
    )
    with pytest.raises(ConfigError, match="cannot be encoded in SQL"):
        strict.run()
