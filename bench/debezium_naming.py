"""Debezium's topic naming strategies and Avro name adjusters side by side with cdc's, on the same cases.

``python -m bench.debezium_naming`` compiles ``bench/debezium_columns/DebeziumNaming.java`` against the
Debezium MySQL connector's jars (3.6.1, fetched from Maven Central by :mod:`bench.jars`), runs
``DefaultTopicNamingStrategy``, ``DefaultUnicodeTopicNamingStrategy`` and ``SchemaTopicNamingStrategy``
(data change, record schema prefix, schema change, heartbeat and transaction topics) and
``SchemaNameAdjuster.validFullname`` with the schema and field replacement functions of
``schema.name.adjustment.mode`` / ``field.name.adjustment.mode`` on every case below, runs
:mod:`cdc.mysql.naming` on the same, prints both and exits non-zero on a difference. ``--record`` writes
Debezium's answers to ``tests/fixtures/mysql/debezium-naming.tsv``, which ``tests/unit/test_mysql_naming.py``
checks cdc against without Java.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bench.debezium_columns import _java

__all__ = ["CASES", "cdc_answer"]

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mysql" / "debezium-naming.tsv"
ARTIFACT = "debezium-connector-mysql"
_S = "io.debezium.schema."
STRATEGIES = ("DefaultTopicNamingStrategy", "DefaultUnicodeTopicNamingStrategy", "SchemaTopicNamingStrategy")
TABLES = [
    ("inventory", "customers"),
    ("my-db", "t$x"),
    ("db_1", "order_items"),
    ("shop", "tâble ✓"),
    ("d", "emoji😀"),
    ("d", "x" * 260),
    ("", "."),
]
NAMES = [
    "p.db.table.Value",
    "my-prefix.db-1.t$x.Value",
    "1abc.2def.Key",
    "p.db.tâble.Envelope",
    "a..b",
    ".x",
    "_ok.__9",
    "col-name",
    "first name",
    "9lives",
    "\u0661digit",  # ARABIC-INDIC DIGIT ONE: a digit to Java's Character.isDigit
    "ctl\x01char",
    "ā101",
    "emoji😀",
    "a.b",
    "_",
    "Ünïcödé",
]


def _cases() -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for s in STRATEGIES:
        for db, table in TABLES:
            out.append(("topic", _S + s, "server1", ".", "__debezium-heartbeat", "transaction", db, table))
        out.append(("topic", _S + s, "server1", "_", "hb", "tx", "inventory", "customers"))
        out.append(("topic", _S + s, "my-server", "-", "__debezium-heartbeat", "transaction", "a_b", "c.d"))
    for kind in ("schema", "field"):
        for mode in ("avro", "avro_unicode"):
            out += [(kind, mode, n) for n in NAMES]
    return out


CASES = _cases()

COMMENT_DDL = [
    "CREATE TABLE t (id INT PRIMARY KEY COMMENT 'the key', name VARCHAR(10) COMMENT 'it''s \\\\n \"q\"', "
    "x INT) COMMENT='a table'",
    "CREATE TABLE u (a INT COMMENT \"dq\") COMMENT 'no equals'",
    "CREATE TABLE v (a INT COMMENT 'héllo ✓', b TEXT) ENGINE=InnoDB COMMENT = 'spaced'",
]
COMMENTS_FIXTURE = FIXTURE.with_name("debezium-comments.tsv")


def cdc_comments(ddl: str, include: bool) -> str:
    """cdc's parser on ``ddl`` in DebeziumComments.java's format."""
    from cdc.history.model import Tables
    from cdc.mysql.ddl.parser import DdlParser

    tables = Tables()
    DdlParser(include_comments=include).apply(tables, ddl, "db")
    out = []
    for table_id in tables.ids():
        t = tables.get(table_id)
        assert t is not None
        out.append(t.comment if t.comment is not None else "\\N")
        out += [f"{c.name}={c.comment if c.comment is not None else chr(92) + 'N'}" for c in t.columns]
    return "\t".join(out)


def cdc_answer(case: tuple[str, ...]) -> str:
    from cdc.history.model import TableId
    from cdc.mysql.naming import TopicNaming, adjust_name

    if case[0] == "topic":
        _, strategy, prefix, delimiter, heartbeat, transaction, db, table = case
        naming = TopicNaming(strategy, prefix, delimiter, heartbeat, transaction)
        topic = naming.data_change_topic(TableId(db, table))
        return "\t".join(
            (topic, topic, naming.schema_change_topic(), naming.heartbeat_topic(), naming.transaction_topic())
        )
    kind, mode, name = case
    return adjust_name(name, mode, field_name=kind == "field")


def _line(case: tuple[str, ...]) -> str:
    return "\t".join(case).replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=Path(os.environ.get("CDC_CACHE", "~/.cache/cdc")).expanduser()
    )
    parser.add_argument("--record", action="store_true", help=f"write Debezium's answers to {FIXTURE}")
    args = parser.parse_args(argv)
    stdin = "".join(_line(c) + "\n" for c in CASES)
    theirs = _java("DebeziumNaming", args.cache, [], stdin, artifact=ARTIFACT)
    if len(theirs) != len(CASES):
        print(f"Debezium answered {len(theirs)} lines for {len(CASES)} cases", file=sys.stderr)
        return 2
    differences = 0
    for case, answer in zip(CASES, theirs, strict=True):
        ours = cdc_answer(case)
        same = ours == answer
        differences += not same
        print(("same " if same else "DIFF ") + " | ".join((_line(case), answer, *(() if same else (ours,)))))
    comments: list[str] = []
    for include in (True, False):
        stdin = "".join(d + "\n" for d in COMMENT_DDL)
        answers = _java("DebeziumComments", args.cache, [str(include).lower()], stdin, artifact=ARTIFACT)
        for ddl, answer in zip(COMMENT_DDL, answers, strict=True):
            ours = cdc_comments(ddl, include)
            differences += ours != answer
            print(("same " if ours == answer else "DIFF ") + f"comments={include} | {ddl} | {answer}")
            comments.append(f"{str(include).lower()}\t{ddl}\t|\t{answer}\n")
    print(f"{len(CASES) + len(comments)} cases, {differences} differences")
    if args.record:
        COMMENTS_FIXTURE.write_text(
            "# Debezium 3.6.1's MySQL DDL parser on COMMENT clauses "
            "(python -m bench.debezium_naming --record): "
            "include.schema.comments, the DDL, then the table's comment and each column's\n"
            + "".join(comments)
        )
    if args.record:
        FIXTURE.write_text(
            "# Debezium 3.6.1's answers to bench/debezium_naming.py's cases (python -m bench.debezium_naming "
            "--record): the case's fields, then the answer's\n"
            + "".join(_line(c) + "\t|\t" + a + "\n" for c, a in zip(CASES, theirs, strict=True))
        )
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
