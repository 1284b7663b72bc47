"""Datasets A and B of ../shared/BENCHMARKS.md and the B3 binlog workloads, reproducible from a seed.

* **Dataset A** (sysbench's shape): ``id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT, c CHAR(120),
  pad CHAR(60), updated_at DATETIME(6) ... ON UPDATE CURRENT_TIMESTAMP(6), INDEX(updated_at)``; ``c`` and
  ``pad`` are groups of 11 random digits joined by ``-``, as sysbench fills them.
* **Dataset B**: ``id`` and 49 columns cycling through INT, BIGINT UNSIGNED, DECIMAL(12,2), VARCHAR,
  DATETIME(6), TIMESTAMP, JSON, ENUM and BLOB, with the edge values B4 checks (BIGINT UNSIGNED maximum,
  negative decimals, microseconds, zero dates in 1 % of the first DATETIME column, JSON nesting).

Rows are written to a tab-separated file and loaded with ``LOAD DATA LOCAL INFILE`` as root over the
socket, **without binlogging** (``sql_log_bin = 0``): a load is set-up, not a workload. The same seed and
size give the same bytes. The binlog workloads (:func:`write_updates`, :func:`write_inserts` of B3 and B4,
:func:`write_bulk_update` of B8) are SQL files piped into the ``mariadb`` client, binlogged as any
application's writes are. Both the loads and the workloads run with :data:`SQL_MODE`, strict but without
``NO_ZERO_DATE``, so dataset B's zero dates are stored as they are (the server's own mode may forbid them).
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.stack import Stack

__all__ = [
    "DATASET_A_DDL",
    "PRELOADED",
    "SQL_MODE",
    "WORKLOADS",
    "dataset_b_ddl",
    "load",
    "rows_a",
    "rows_b",
    "write_bulk_update",
    "write_inserts",
    "write_updates",
]

# strict, as MariaDB's default, but without NO_ZERO_DATE / NO_ZERO_IN_DATE: zero dates are allowed
SQL_MODE = "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
_SET_MODE = f"SET SESSION sql_mode = '{SQL_MODE}';\n"

DATASET_A_DDL = """CREATE TABLE {table} (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  k INT NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '',
  pad CHAR(60) NOT NULL DEFAULT '',
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  INDEX (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"""

_BASE = dt.datetime(2026, 1, 1)
_B_TYPES = (
    "INT",
    "BIGINT UNSIGNED",
    "DECIMAL(12,2)",
    "VARCHAR(64)",
    "DATETIME(6)",
    "TIMESTAMP(6) NULL",
    "JSON",
    "ENUM('new','paid','shipped','returned')",
    "BLOB",
)
_ENUM = ("new", "paid", "shipped", "returned")


def _digits(rng: random.Random, groups: int) -> str:
    return "-".join(f"{rng.randrange(10**11):011d}" for _ in range(groups))


def rows_a(n: int, seed: int, first_id: int = 1) -> Iterator[tuple[int, int, str, str, str]]:
    """(id, k, c, pad, updated_at) for ``n`` rows of dataset A."""
    rng = random.Random(seed)
    for i in range(first_id, first_id + n):
        stamp = _BASE + dt.timedelta(microseconds=rng.randrange(86_400_000_000 * 300))
        yield i, rng.randrange(1, max(n, 2)), _digits(rng, 10), _digits(rng, 5), stamp.isoformat(" ")


def _b_columns() -> list[tuple[str, str]]:
    return [
        (
            f"c{i:02d}_{_B_TYPES[(i - 1) % len(_B_TYPES)].split('(')[0].split()[0].lower()}",
            _B_TYPES[(i - 1) % len(_B_TYPES)],
        )
        for i in range(1, 50)
    ]


def dataset_b_ddl(table: str) -> str:
    cols = ",\n  ".join(f"{name} {typ}" for name, typ in _b_columns())
    return (
        f"CREATE TABLE {table} (\n  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,\n  {cols}\n) "
        "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    )


def _b_value(rng: random.Random, typ: str, first_datetime: bool) -> str:
    if typ == "INT":
        return str(rng.randrange(-(2**31), 2**31))
    if typ.startswith("BIGINT"):
        return str(2**64 - 1 if rng.random() < 0.01 else rng.randrange(2**64))
    if typ.startswith("DECIMAL"):
        return f"{rng.randrange(-(10**12) + 1, 10**12) / 100:.2f}"
    if typ.startswith("VARCHAR"):
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzäöü é") for _ in range(rng.randrange(0, 64)))
    if typ.startswith("DATETIME"):
        if first_datetime and rng.random() < 0.01:
            return "0000-00-00 00:00:00"
        return (_BASE + dt.timedelta(microseconds=rng.randrange(86_400_000_000 * 3650))).isoformat(" ")
    if typ.startswith("TIMESTAMP"):
        return (_BASE + dt.timedelta(microseconds=rng.randrange(86_400_000_000 * 300))).isoformat(" ")
    if typ == "JSON":
        n, x, ok = rng.randrange(10**6), rng.random(), "true" if rng.random() < 0.5 else "false"
        return f'{{"n": {n}, "tags": ["a", "b"], "nested": {{"x": {x:.3f}, "ok": {ok}}}}}'
    if typ.startswith("ENUM"):
        return rng.choice(_ENUM)
    return rng.randbytes(rng.randrange(0, 200)).hex()  # BLOB: hex, UNHEX()-ed by LOAD DATA


def rows_b(n: int, seed: int, first_id: int = 1) -> Iterator[tuple[str, ...]]:
    rng = random.Random(seed)
    cols = _b_columns()
    first_dt = next(name for name, typ in cols if typ.startswith("DATETIME"))
    for i in range(first_id, first_id + n):
        yield (str(i), *(_b_value(rng, typ, name == first_dt) for name, typ in cols))


def _write_tsv(path: Path, rows: Iterator[tuple[object, ...]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        write = fh.write
        for row in rows:
            write("\t".join(map(str, row)) + "\n")


def load(
    stack: Stack, dataset: str, table: str, n: int, seed: int, workdir: Path, *, drop: bool = True
) -> float:
    """Create ``table`` (db.table) and fill it with ``n`` rows of ``dataset``; seconds taken."""
    started = time.monotonic()
    database = table.split(".")[0]
    stack.sql(f"CREATE DATABASE IF NOT EXISTS {database} CHARACTER SET utf8mb4;")
    ddl = DATASET_A_DDL.format(table=table) if dataset == "A" else dataset_b_ddl(table)
    stack.sql((f"DROP TABLE IF EXISTS {table};\n" if drop else "") + ddl + ";")
    if n <= 0:
        return time.monotonic() - started
    tsv = workdir / f"{table}.tsv"
    if dataset == "A":
        _write_tsv(tsv, rows_a(n, seed))
        columns, sets = "(id, k, c, pad, updated_at)", ""
    else:
        cols = _b_columns()
        names = ["id", *(f"@{name}" if typ == "BLOB" else name for name, typ in cols)]
        columns = "(" + ", ".join(names) + ")"
        sets = " SET " + ", ".join(f"{name} = UNHEX(@{name})" for name, typ in cols if typ == "BLOB")
        _write_tsv(tsv, rows_b(n, seed))
    stack.sql(
        _SET_MODE + f"LOAD DATA LOCAL INFILE '{tsv}' INTO TABLE {table} CHARACTER SET utf8mb4 "
        f"FIELDS TERMINATED BY '\\t' ESCAPED BY '' LINES TERMINATED BY '\\n' {columns}{sets};",
        binlog=False,
    )
    tsv.unlink()
    return time.monotonic() - started


def _write_sql(path: Path, lines: Iterator[str]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(_SET_MODE)
        for line in lines:
            fh.write(line)
    return path


def _b_literal(value: str, typ: str) -> str:
    """A dataset B value (as :func:`rows_b` writes it for LOAD DATA) as an SQL literal."""
    if typ == "BLOB":
        return f"X'{value}'"
    if typ in ("INT", "BIGINT UNSIGNED") or typ.startswith("DECIMAL"):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _a_row_sql(row: tuple[int, int, str, str, str]) -> str:
    ident, k, c, pad, stamp = row
    return f"({ident},{k},'{c}','{pad}','{stamp}')"


def _b_row_sql(types: tuple[str, ...], row: tuple[str, ...]) -> str:
    return f"({row[0]}," + ",".join(_b_literal(v, t) for v, t in zip(row[1:], types, strict=True)) + ")"


def _first_b_column(prefix: str) -> str:
    return next(name for name, typ in _b_columns() if typ.startswith(prefix))


def _update_set(dataset: str) -> str:
    """What a workload UPDATE sets: dataset A's ``k = k + 1``; in dataset B, its first INT and DECIMAL
    columns one unit towards zero (or away from it at zero), which always changes the row and never
    overflows."""
    if dataset == "A":
        return "k = k + 1"
    i, d = _first_b_column("INT"), _first_b_column("DECIMAL")
    return f"{i} = IF({i} > 0, {i} - 1, {i} + 1), {d} = IF({d} > 0, {d} - 0.01, {d} + 0.01)"


def write_updates(path: Path, table: str, n: int, seed: int, dataset: str = "A") -> Path:
    """``n`` single-row UPDATEs (one autocommit transaction each) over ids 1..n in a seeded random order."""
    ids = list(range(1, n + 1))
    random.Random(seed).shuffle(ids)
    sets = _update_set(dataset)
    return _write_sql(path, (f"UPDATE {table} SET {sets} WHERE id = {i};\n" for i in ids))


def write_bulk_update(path: Path, table: str, n: int, seed: int, dataset: str = "A") -> Path:
    """One UPDATE (one transaction) of every row of ``table``: ``n`` row events in a single statement."""
    return _write_sql(path, iter([f"UPDATE {table} SET {_update_set(dataset)};\n"]))


def write_inserts(
    path: Path, table: str, n: int, seed: int, dataset: str = "A", per_statement: int = 100
) -> Path:
    """``n`` rows of ``dataset`` (ids 1..n) inserted ``per_statement`` rows per INSERT (autocommit each)."""
    rows: Iterator[Any]
    if dataset == "A":
        names, rows = ["id", "k", "c", "pad", "updated_at"], rows_a(n, seed)
        literal: Callable[[Any], str] = _a_row_sql
    else:
        cols = _b_columns()
        names, rows = ["id", *(name for name, _typ in cols)], rows_b(n, seed)
        literal = functools.partial(_b_row_sql, tuple(typ for _name, typ in cols))
    head = f"INSERT INTO {table} ({', '.join(names)}) VALUES "

    def statements() -> Iterator[str]:
        batch: list[str] = []
        for row in rows:
            batch.append(literal(row))
            if len(batch) == per_statement:
                yield head + ",".join(batch) + ";\n"
                batch = []
        if batch:
            yield head + ",".join(batch) + ";\n"

    return _write_sql(path, statements())


# name -> writer(path, table, rows, seed, dataset=...) of a binlog workload; "preloaded": whether the table
# holds the rows before the workload runs (the inserts start from an empty table)
WORKLOADS: dict[str, Callable[..., Path]] = {
    "updates": write_updates,
    "inserts": write_inserts,
    "bulk-update": write_bulk_update,
}
PRELOADED = {"updates": True, "inserts": False, "bulk-update": True}
