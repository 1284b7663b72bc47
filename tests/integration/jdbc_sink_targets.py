"""The databases the JDBC sink tests write into, each a place of the test's own on the real stack.

* PostgreSQL 127.0.0.1:5432 (cdc/cdc, database cdc): a schema per test, dropped after; tables are named
  ``<schema>.<topic>`` through ``table.name.format``. With PostGIS (:func:`postgis_target`): a database
  of the test's own with the extension, dropped after (the stack's server is shared: the extension is
  created nowhere else).
* MariaDB 127.0.0.1:3306 (cdc/cdc): a database per test (the ``mysql_db`` fixture's way), dropped after.
* SQLite: a file under the test's ``tmp_path``.

:class:`Target` gives the sink's connection keys and reads rows back with its own connection, so what a
test sees is what another client of the database sees after the sink committed.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pymysql

__all__ = ["Target", "mariadb_target", "postgis_target", "postgres_target", "sqlite_target"]

PG = {"host": "127.0.0.1", "port": 5432, "user": "cdc", "password": "cdc", "dbname": "cdc"}
MY = {"host": "127.0.0.1", "port": 3306, "user": "cdc", "password": "cdc"}


@dataclass
class Target:
    family: str
    url: str
    user: str
    password: str
    namespace: str
    """Schema (PostgreSQL) or database (MariaDB) of the test; empty for SQLite."""
    path: Path | None = None
    database: str = "cdc"
    """PostgreSQL: the database (``cdc``, or the PostGIS target's own)."""

    def table_format(self, inner: str = "${topic}") -> str:
        return f"{self.namespace}.{inner}" if self.namespace else inner

    def table(self, name: str) -> str:
        return f"{self.namespace}.{name}" if self.namespace else name

    def connect(self) -> Any:
        if self.family == "postgresql":
            return psycopg.connect(**{**PG, "dbname": self.database}, autocommit=True)
        if self.family == "mysql":
            return pymysql.connect(**MY, database=self.namespace, autocommit=True)
        assert self.path is not None
        return sqlite3.connect(self.path)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]
        finally:
            conn.close()

    def execute(self, sql: str) -> None:
        conn = self.connect()
        try:
            conn.cursor().execute(sql)
            conn.commit()
        finally:
            conn.close()

    def rows(self, table: str, order: str = "1") -> list[tuple[Any, ...]]:
        return self.query(f"SELECT * FROM {self.table(table)} ORDER BY {order}")

    def column_types(self, table: str) -> dict[str, str]:
        if self.family == "postgresql":
            rows = self.query(
                "SELECT column_name, data_type FROM information_schema.columns "
                f"WHERE table_schema = '{self.namespace}' AND table_name = '{table}'"
            )
        elif self.family == "mysql":
            rows = self.query(
                "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                f"WHERE TABLE_SCHEMA = '{self.namespace}' AND TABLE_NAME = '{table}'"
            )
        else:
            rows = [(r[1], r[2]) for r in self.query(f"PRAGMA table_info({table})")]
        return {str(n): str(t).lower() for n, t in rows}


def postgres_target() -> Iterator[Target]:
    schema = "jdbcsink_" + uuid.uuid4().hex[:10]
    with psycopg.connect(**PG, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield Target("postgresql", "jdbc:postgresql://127.0.0.1:5432/cdc", "cdc", "cdc", schema)
    finally:
        with psycopg.connect(**PG, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def postgis_target() -> Iterator[Target]:
    """A database of its own with the PostGIS extension (Debian's ``postgresql-15-postgis-3``,
    scripts/install-deps.sh); tables in its ``public`` schema, where the extension's types are."""
    name = "jdbcsink_gis_" + uuid.uuid4().hex[:10]
    with psycopg.connect(**PG, autocommit=True) as conn:
        available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'").fetchone()
        if available is None:
            raise RuntimeError(
                "PostGIS is not installed for the stack's PostgreSQL: run scripts/install-deps.sh"
            )
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(**{**PG, "dbname": name}, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION postgis")
        yield Target(
            "postgresql", f"jdbc:postgresql://127.0.0.1:5432/{name}", "cdc", "cdc", "public", database=name
        )
    finally:
        with psycopg.connect(**PG, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def mariadb_target() -> Iterator[Target]:
    name = "jdbcsink_" + uuid.uuid4().hex[:10]
    with pymysql.connect(**MY, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    try:
        yield Target("mysql", f"jdbc:mariadb://127.0.0.1:3306/{name}", "cdc", "cdc", name)
    finally:
        with pymysql.connect(**MY, autocommit=True) as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")


def sqlite_target(tmp_path: Path) -> Iterator[Target]:
    path = tmp_path / "sink.db"
    yield Target("sqlite", f"jdbc:sqlite:{path}", "", "", "", path)
