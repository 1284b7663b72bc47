"""Debezium's column rules and converters side by side with cdc's, on the same cases.

``python -m bench.debezium_columns`` compiles ``bench/debezium_columns/DebeziumColumns.java`` against the
Debezium MariaDB connector's jars and Kafka Connect's (fetched from Maven Central by :mod:`bench.jars`),
runs Debezium's own ``ColumnMappers`` (``column.mask.with.N.chars``, ``column.mask.hash.*``,
``column.truncate.to.N.chars``, ``column.propagate.source.type``, ``datatype.propagate.source.type``) and
``TinyIntOneToBooleanConverter`` on every case below, runs cdc's :mod:`cdc.mysql.columns` and
:mod:`cdc.mysql.converters` on the same, prints both and exits non-zero on a difference. ``--record``
writes Debezium's answers to ``tests/fixtures/mysql/debezium-column-rules.tsv``, which
``tests/unit/test_mysql_column_rules.py`` checks cdc against without Java.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.jars import connect_libs, connect_version_for, debezium_plugin_path

__all__ = ["CASES", "cdc_answer", "debezium_answers"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "mysql" / "debezium-column-rules.tsv"
KEYS_FIXTURE = ROOT / "tests" / "fixtures" / "mysql" / "debezium-mariadb-keys.tsv"
MYSQL_KEYS_FIXTURE = ROOT / "tests" / "fixtures" / "mysql" / "debezium-mysql-keys.tsv"
TINYINT = "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter"
HASH = "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K"


def _case(
    kind: str, config: str, type_name: str, jdbc: str, length: str, value: str, **more: str
) -> tuple[str, ...]:
    """One line for DebeziumColumns.java: column ``c`` of ``db.t``; a value of ``\\N`` is NULL."""
    scale, optional = more.get("scale", "-1"), more.get("optional", "true")
    return (kind, config, "db.t", "c", type_name, jdbc, length, scale, optional, value)


def _m(*args: str, **more: str) -> tuple[str, ...]:
    return _case("mapper", *args, **more)


def _c(*args: str, **more: str) -> tuple[str, ...]:
    return _case("converter", *args, **more)


TYPE = f"type={TINYINT}"
CASES: list[tuple[str, ...]] = [
    _m(f"{HASH}=db.t.c", "VARCHAR", "12", "255", "hello"),
    _m(f"{HASH}=db.t.c", "VARCHAR", "12", "255", "héllo wörld ✓ 😀"),
    _m(f"{HASH}=db.t.c", "VARCHAR", "12", "255", ""),
    _m(f"{HASH}=db.t.c", "VARCHAR", "12", "255", "\\N"),
    _m(f"{HASH}=db.t.c", "CHAR", "1", "10", "truncated to ten", optional="false"),
    _m(f"{HASH}=DB.T.C", "TEXT", "12", "-1", "case-insensitive"),
    _m("column.mask.hash.v2.SHA-256.with.salt.salty=db.t.c", "VARCHAR", "12", "64", "version two ✓"),
    _m("column.mask.hash.MD5.with.salt.s=db.t.c", "VARCHAR", "12", "100", "md5"),
    _m("column.mask.hash.SHA-512.with.salt.s=db.t.c", "LONGTEXT", "12", "-1", "five twelve"),
    _m("column.mask.hash.SHA-256.with.salt.s=db.t.c", "ENUM", "1", "1", "a"),
    _m("column.mask.with.5.chars=db.t.c", "VARCHAR", "12", "255", "secret"),
    _m("column.mask.with.5.chars=db.t.c", "VARCHAR", "12", "255", "\\N"),
    _m("column.mask.with.3.chars=db.t.other", "VARCHAR", "12", "255", "kept"),
    _m("column.truncate.to.3.chars=db.t.c", "VARCHAR", "12", "255", "abcdef"),
    _m("column.truncate.to.3.chars=db.t.c", "VARCHAR", "12", "255", "ab"),
    _m("column.truncate.to.3.chars=db.t.c", "VARCHAR", "12", "2", "ab"),
    _m("column.truncate.to.3.chars=db.t.c", "TEXT", "12", "-1", "a text"),
    _m(
        "column.truncate.to.3.chars=db.t.c;column.mask.with.4.chars=db.t.c",
        "VARCHAR",
        "12",
        "255",
        "both rules",
    ),
    _m("column.propagate.source.type=db.t.c", "VARCHAR", "12", "255", "x"),
    _m("column.propagate.source.type=db.t.c", "DECIMAL", "3", "10", "1.50", scale="2"),
    _m("column.propagate.source.type=db.t.c", "INT UNSIGNED", "4", "-1", "7"),
    _m("datatype.propagate.source.type=.+\\.VARCHAR", "VARCHAR", "12", "20", "x"),
    _m("datatype.propagate.source.type=db\\.t\\.INT", "VARCHAR", "12", "20", "x"),
    _c(f"{TYPE}", "TINYINT", "-6", "1", "1"),
    _c(f"{TYPE}", "TINYINT", "-6", "1", "0"),
    _c(f"{TYPE}", "TINYINT", "-6", "1", "-1"),
    _c(f"{TYPE}", "TINYINT", "-6", "1", "5"),
    _c(f"{TYPE}", "TINYINT", "-6", "1", "\\N"),
    _c(f"{TYPE}", "TINYINT", "-6", "1", "\\N", optional="false"),
    _c(f"{TYPE}", "TINYINT UNSIGNED", "-6", "1", "200"),
    _c(f"{TYPE}", "TINYINT", "-6", "4", "1"),
    _c(f"{TYPE}", "TINYINT", "-6", "-1", "1"),
    _c(f"{TYPE};length.checker=false", "TINYINT", "-6", "-1", "1"),
    _c(f"{TYPE};selector=db.t.c", "TINYINT", "-6", "1", "1"),
    _c(f"{TYPE};selector=db.t.other", "TINYINT", "-6", "1", "1"),
    _c(f"{TYPE}", "SMALLINT", "5", "1", "1"),
]


def _classpath(cache: Path, artifact: str = "debezium-connector-mariadb") -> str:
    root = debezium_plugin_path(cache, artifact)
    libs = connect_libs(cache, connect_version_for(root))
    jars = sorted((root / artifact).glob("*.jar")) + sorted(libs.glob("*.jar"))
    return os.pathsep.join(str(j) for j in jars)


def _java(
    program: str, cache: Path, args: list[str], stdin: str = "", artifact: str = "debezium-connector-mariadb"
) -> list[str]:
    """Compile and run one of ``bench/debezium_columns/*.java`` on Debezium's classpath; its stdout lines."""
    classpath = _classpath(cache, artifact)
    with tempfile.TemporaryDirectory() as out:
        source = Path(__file__).resolve().parent / "debezium_columns" / f"{program}.java"
        subprocess.run(
            ["javac", "-nowarn", "-d", out, "-cp", classpath, str(source)], check=True, capture_output=True
        )
        done = subprocess.run(
            ["java", "-cp", classpath + os.pathsep + out, program, *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
        )
    return [line for line in done.stdout.splitlines() if not line.startswith("SLF4J")]


def debezium_answers(cases: list[tuple[str, ...]], cache: Path) -> list[str]:
    """Debezium's answer per case (``value<TAB>schema type<TAB>parameters``)."""
    return _java("DebeziumColumns", cache, [], "".join("\t".join(c) + "\n" for c in cases))


def cdc_answer(case: tuple[str, ...]) -> str:
    """cdc's answer for one case, in the Java program's format."""
    from cdc.api.schema import SchemaBuilder
    from cdc.history.model import Column, TableId
    from cdc.mysql.columns import ColumnRules
    from cdc.mysql.converters import CustomConverters
    from cdc.mysql.types import ColumnMapping

    kind, config, table, name, type_name, jdbc, length, scale, optional, raw = case
    props = dict(kv.split("=", 1) for kv in config.split(";") if "=" in kv)
    column = Column(
        name=name,
        position=1,
        type_name=type_name,
        type_expression=type_name,
        jdbc_type=int(jdbc),
        length=None if length == "-1" else int(length),
        scale=None if scale == "-1" else int(scale),
        optional=optional == "true",
    )
    table_id = TableId(*table.split("."))
    value: Any = None if raw == "\\N" else raw
    mapping = ColumnMapping(column, SchemaBuilder.string().build(), None)
    if kind == "mapper":
        by_column = [p for p in props.pop("column.propagate.source.type", "").split(",") if p]
        by_type = [p for p in props.pop("datatype.propagate.source.type", "").split(",") if p]
        mapping = ColumnRules(props, by_column, by_type).apply(table_id, mapping)
    else:
        options = {f"x.{k}": v for k, v in props.items()}
        mapping = CustomConverters(options, ["x"]).apply(table_id, mapping, None)
        if not mapping.custom:
            return "\\N\tnone\t"
        value = None if value is None else int(value)
    out = mapping.null if value is None else (mapping.convert(value) if mapping.convert else value)
    text = "\\N" if out is None else ("true" if out is True else "false" if out is False else str(out))
    params = ";".join(f"{k}={v}" for k, v in sorted((mapping.schema.parameters or {}).items()))
    return f"{text}\t{mapping.schema.type.name}\t{params}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=Path(os.environ.get("CDC_CACHE", "~/.cache/cdc")).expanduser()
    )
    parser.add_argument("--record", action="store_true", help=f"write Debezium's answers to {FIXTURE}")
    parser.add_argument("--keys", action="store_true", help=f"write Debezium's key list to {KEYS_FIXTURE}")
    args = parser.parse_args(argv)
    if args.keys:
        from bench.jars import DEBEZIUM_VERSION

        # Maven Central serves debezium-connector-mysql 3.6.1.Final but no MariaDB connector newer than
        # 3.5.0.Final: each list is written from the newest jar there is (BENCH_DEBEZIUM_VERSION).
        for artifact, cls, fixture in (
            ("debezium-connector-mysql", "io.debezium.connector.mysql.MySqlConnector", MYSQL_KEYS_FIXTURE),
            ("debezium-connector-mariadb", "io.debezium.connector.mariadb.MariaDbConnector", KEYS_FIXTURE),
        ):
            lines = _java("DebeziumKeys", args.cache, [cls], artifact=artifact)
            fixture.write_text(
                f"# Every key Debezium {DEBEZIUM_VERSION}'s {cls.rsplit('.', 1)[1]}.config() declares: name, "
                "type, default, group (python -m bench.debezium_columns --keys)\n"
                + "".join(line + "\n" for line in lines)
            )
            print(f"{len(lines)} keys written to {fixture}")
    theirs = debezium_answers(CASES, args.cache)
    if len(theirs) != len(CASES):
        print(f"Debezium answered {len(theirs)} lines for {len(CASES)} cases", file=sys.stderr)
        return 2
    differences = 0
    for case, answer in zip(CASES, theirs, strict=True):
        ours = cdc_answer(case)
        same = ours == answer
        differences += not same
        print(
            ("same " if same else "DIFF ")
            + " | ".join((case[1], case[4], case[9], answer, *(() if same else (ours,))))
        )
    print(f"{len(CASES)} cases, {differences} differences")
    if args.record:
        FIXTURE.write_text(
            "# Debezium 3.5's answers to bench/debezium_columns.py's cases (python -m bench.debezium_columns "
            "--record)\n"
            + "".join("\t".join(c) + "\t" + a + "\n" for c, a in zip(CASES, theirs, strict=True))
        )
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
