"""Two tables written by two JDBC sinks from the same topic, compared column type by column type and row by
row: cdc's ``io.debezium.connector.jdbc.JdbcSinkConnector`` against Debezium's own (``peer``), in one
PostgreSQL schema or one MariaDB database.

* **Column types** come from the catalog: PostgreSQL's ``format_type`` of each column (``numeric(10,2)``,
  ``timestamp(6) without time zone``: information_schema splits that over five columns) and its
  ``information_schema.columns.is_nullable``; MariaDB's ``information_schema.columns.column_type`` and
  ``is_nullable``.
* **Rows** are read as the database prints them (``col::text`` on PostgreSQL, ``CAST(col AS CHAR)`` and
  ``HEX()`` for binary columns on MariaDB), so two values are equal when the database holds the same
  thing, whatever the driver would make of it. Rows are matched by ``id`` when the table has a key, as
  sorted multisets otherwise (insert mode without a key keeps every event).

:func:`compare` returns the :class:`Difference` list; ``KNOWN`` (in ``bench/sink_known.py``) gives each
difference we keep its reason, and docs/jdbc-sink.md lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import pymysql

__all__ = ["Difference", "TableImage", "compare", "read_table"]

PG: dict[str, Any] = {"host": "127.0.0.1", "port": 5432, "user": "cdc", "password": "cdc", "dbname": "cdc"}
MY: dict[str, Any] = {"host": "127.0.0.1", "port": 3306, "user": "cdc", "password": "cdc"}

_BINARY_MY = ("binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob", "bit", "geometry", "point")


@dataclass(frozen=True)
class TableImage:
    """What a reader of the database sees of one table."""

    columns: dict[str, str]
    """column name → its type as the catalog prints it, `` NOT NULL`` appended when not nullable"""
    rows: list[tuple[str | None, ...]]
    """every row, values as text in ``columns``' order, sorted"""

    def by_id(self) -> dict[str | None, dict[str, str | None]]:
        names = list(self.columns)
        index = names.index("id")
        return {row[index]: dict(zip(names, row, strict=True)) for row in self.rows}


@dataclass(frozen=True, order=True)
class Difference:
    column: str
    what: str
    """``type``, ``value`` (``row`` then names the id) or ``missing``"""
    cdc: str | None
    peer: str | None
    row: str | None = None

    def __str__(self) -> str:
        where = f" (id {self.row})" if self.row is not None else ""
        return f"{self.column}: {self.what}{where}: cdc {self.cdc!r}, Debezium {self.peer!r}"


def read_table(family: str, namespace: str, table: str) -> TableImage | None:
    """The table ``namespace.table`` (a PostgreSQL schema or a MariaDB database); None when missing."""
    if family == "postgresql":
        return _read_pg(namespace, table)
    return _read_my(namespace, table)


def _read_pg(schema: str, table: str) -> TableImage | None:
    with psycopg.connect(**PG, autocommit=True) as conn:
        cols = conn.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), c.is_nullable"
            " FROM pg_attribute a JOIN pg_class t ON t.oid = a.attrelid"
            " JOIN pg_namespace n ON n.oid = t.relnamespace"
            " JOIN information_schema.columns c ON c.table_schema = n.nspname"
            "  AND c.table_name = t.relname AND c.column_name = a.attname"
            " WHERE n.nspname = %s AND t.relname = %s AND a.attnum > 0 AND NOT a.attisdropped"
            " ORDER BY a.attnum",
            (schema, table),
        ).fetchall()
        if not cols:
            return None
        columns = {str(n): str(t) + ("" if nullable == "YES" else " NOT NULL") for n, t, nullable in cols}
        select = ", ".join(f'"{n}"::text' for n in columns)
        rows = conn.execute(f'SELECT {select} FROM "{schema}"."{table}"').fetchall()
    return TableImage(columns, sorted((tuple(r) for r in rows), key=_sort_key))


def _read_my(database: str, table: str) -> TableImage | None:
    conn = pymysql.connect(**MY, database=database, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT column_name, column_type, is_nullable FROM information_schema.columns"
                " WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
                (database, table),
            )
            cols = cur.fetchall()
            if not cols:
                return None
            columns = {str(n): str(t) + ("" if nl == "YES" else " NOT NULL") for n, t, nl in cols}
            select = ", ".join(
                f"HEX(`{n}`)" if t.split("(")[0].split()[0].lower() in _BINARY_MY else f"CAST(`{n}` AS CHAR)"
                for n, t in columns.items()
            )
            cur.execute(f"SELECT {select} FROM `{database}`.`{table}`")
            rows = [tuple(None if v is None else str(v) for v in r) for r in cur.fetchall()]
    finally:
        conn.close()
    return TableImage(columns, sorted(rows, key=_sort_key))


def _sort_key(row: Sequence[str | None]) -> tuple[tuple[int, int, str], ...]:
    # ids sort as numbers (the first column is the key in every table compared here)
    return tuple(
        (
            0 if v is None else 1,
            int(v) if i == 0 and v is not None and v.lstrip("-").isdigit() else 0,
            v or "",
        )
        for i, v in enumerate(row)
    )


def compare(cdc: TableImage, peer: TableImage, keyed: bool) -> list[Difference]:
    """The differences between cdc's table and the peer's: types of the columns both have, columns only
    one has, then values (matched by ``id`` when ``keyed``, else the n-th row of each sorted table)."""
    out: list[Difference] = []
    for name in sorted(set(cdc.columns) | set(peer.columns)):
        a, b = cdc.columns.get(name), peer.columns.get(name)
        if a is None or b is None:
            out.append(Difference(name, "missing", a, b))
        elif a != b:
            out.append(Difference(name, "type", a, b))
    shared = [n for n in cdc.columns if n in peer.columns]
    if keyed:
        left, right = cdc.by_id(), peer.by_id()
        for key in sorted(set(left) | set(right), key=lambda k: int(k or 0)):
            if key not in left or key not in right:
                out.append(
                    Difference("id", "row", key if key in left else None, key if key in right else None)
                )
                continue
            out.extend(
                Difference(n, "value", left[key][n], right[key][n], key)
                for n in shared
                if left[key][n] != right[key][n]
            )
        return out
    if len(cdc.rows) != len(peer.rows):
        out.append(Difference("*", "rows", str(len(cdc.rows)), str(len(peer.rows))))
    # the two tables may order their columns differently: project both on the shared columns first
    shared = ["id", *sorted(n for n in shared if n != "id")] if "id" in shared else sorted(shared)
    ci = [list(cdc.columns).index(n) for n in shared]
    pi = [list(peer.columns).index(n) for n in shared]
    left_rows = sorted((tuple(r[i] for i in ci) for r in cdc.rows), key=_sort_key)
    right_rows = sorted((tuple(r[j] for j in pi) for r in peer.rows), key=_sort_key)
    for a_row, b_row in zip(left_rows, right_rows, strict=False):
        out.extend(
            Difference(n, "value", a, b, a_row[0])
            for n, a, b in zip(shared, a_row, b_row, strict=True)
            if a != b
        )
    return out


def render(differences: Sequence[Difference]) -> str:
    return "\n".join(str(d) for d in differences) or "(none)"


def as_rows(image: TableImage) -> list[dict[str, Any]]:
    names = list(image.columns)
    return [dict(zip(names, r, strict=True)) for r in image.rows]
