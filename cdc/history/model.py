"""The relational model the MySQL source keeps in memory: tables and their columns.

It is what DDL updates, what the schema history topic records (``tableChanges`` of Debezium's history
records), and what describes every change event with the schema valid at its position. Immutable: a DDL
produces new :class:`Table` objects, so an event being converted never sees a half-applied change.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Column", "Table", "TableId", "Tables"]


@dataclass(frozen=True, order=True)
class TableId:
    """``db.table`` (MySQL has catalogs = databases and no schemas)."""

    database: str
    table: str

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"

    def quoted(self) -> str:
        """The id as Debezium's history writes it: ``"db"."table"``."""
        return f'"{self.database}"."{self.table}"'

    def sql(self) -> str:
        """Backtick-quoted for MySQL statements."""
        db = self.database.replace("`", "``")
        tb = self.table.replace("`", "``")
        return f"`{db}`.`{tb}`"

    @classmethod
    def parse(cls, text: str) -> TableId:
        """From ``db.table`` or ``"db"."table"``."""
        if text.startswith('"'):
            db, _, tb = text.partition('"."')
            return cls(db.strip('"'), tb.strip('"'))
        db, _, tb = text.partition(".")
        return cls(db, tb)


@dataclass(frozen=True)
class Column:
    """One column, with the attributes Debezium's history records carry.

    ``type_name`` is the upper-case base type as MySQL reports it, with ``UNSIGNED`` appended for unsigned
    numeric types (``INT UNSIGNED``); ``length``/``scale`` are the declared size and fraction digits
    (DECIMAL(10,2) → 10, 2; DATETIME(6) → length 6 … as Debezium records them); ``enum_values`` holds the
    ENUM/SET labels in order.
    """

    name: str
    position: int
    type_name: str
    type_expression: str
    jdbc_type: int
    length: int | None = None
    scale: int | None = None
    optional: bool = True
    auto_incremented: bool = False
    generated: bool = False
    charset_name: str | None = None
    has_default: bool = False
    default_expression: str | None = None
    enum_values: tuple[str, ...] = ()
    comment: str | None = None
    native_type: int | None = None

    @property
    def unsigned(self) -> bool:
        return self.type_name.endswith(" UNSIGNED")

    @property
    def base_type(self) -> str:
        """``type_name`` without ``UNSIGNED``/``ZEROFILL``."""
        return self.type_name.replace(" UNSIGNED", "").replace(" ZEROFILL", "")


@dataclass(frozen=True)
class Table:
    id: TableId
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    default_charset: str | None = None
    comment: str | None = None
    attributes: tuple[tuple[str, str], ...] = ()

    def column(self, name: str) -> Column | None:
        lname = name.lower()
        for c in self.columns:
            if c.name.lower() == lname:
                return c
        return None

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def with_columns(self, columns: list[Column]) -> Table:
        """A copy with ``columns`` renumbered 1..n and the primary key kept to columns that remain."""
        renumbered = tuple(replace(c, position=i + 1) for i, c in enumerate(columns))
        names = {c.name.lower() for c in renumbered}
        pk = tuple(p for p in self.primary_key if p.lower() in names)
        return replace(self, columns=renumbered, primary_key=pk)


@dataclass
class Tables:
    """The set of known tables; copy-on-write per table."""

    tables: dict[TableId, Table] = field(default_factory=dict)
    databases: set[str] = field(default_factory=set)

    def get(self, table_id: TableId) -> Table | None:
        return self.tables.get(table_id)

    def put(self, table: Table) -> None:
        self.tables[table.id] = table
        self.databases.add(table.id.database)

    def remove(self, table_id: TableId) -> Table | None:
        return self.tables.pop(table_id, None)

    def ids(self) -> list[TableId]:
        return sorted(self.tables)

    def drop_database(self, database: str) -> list[TableId]:
        gone = [t for t in self.tables if t.database == database]
        for t in gone:
            del self.tables[t]
        self.databases.discard(database)
        return gone

    def copy(self) -> Tables:
        return Tables(dict(self.tables), set(self.databases))

    def __len__(self) -> int:
        return len(self.tables)

    def describe(self) -> dict[str, Any]:
        return {str(t): [c.name for c in tb.columns] for t, tb in self.tables.items()}
