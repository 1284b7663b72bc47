"""Table maps without full metadata: column names and types from the schema history, as Debezium does.

A TABLE_MAP event always carries the column *types* as the binlog stores them; what
``binlog_row_metadata`` adds is optional: MINIMAL (MySQL 8's and RDS's default) adds signedness and
character sets, FULL adds column names, ENUM/SET labels and the primary key, NO_LOG (MariaDB's default)
adds nothing. Debezium never reads that metadata: it describes rows with its own table model, built from
the DDL in the schema history. cdc does the same whenever the metadata lacks names: :class:`TableMaps`
fills the library's column objects in from the model — names, signedness, character sets (``binary`` for
binary columns), ENUM labels and SET values — before the first row of a table map is decoded, so the
precompiled decoder and mysql-replication's own decoding read them as if the server had sent FULL. With
FULL nothing is changed (the fast path); a table map whose column count differs from the model's means the
history does not describe the table, which the streamer treats as an inconsistent schema.
"""

from __future__ import annotations

from typing import Any

from pymysql.charset import charset_by_name
from pymysqlreplication.constants import FIELD_TYPE

from cdc.history.model import Column, Table

__all__ = ["TableMaps"]

_BINARY = frozenset({"BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})
_TEXT_FIELD_TYPES = frozenset({FIELD_TYPE.VARCHAR, FIELD_TYPE.STRING, FIELD_TYPE.VAR_STRING, FIELD_TYPE.BLOB})


def _encoding(column: Column) -> str | None:
    """What mysql-replication stores as ``character_set_name`` (a charset's Python encoding)."""
    if column.base_type in _BINARY:
        return "binary"
    if not column.charset_name:
        return None
    charset = charset_by_name(column.charset_name.lower())
    return charset.encoding if charset is not None else column.charset_name


class TableMaps:
    """Completes library table maps from the model; one per binlog reader's table map (not thread-safe)."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[Any, Table]] = {}  # table id → (library Table, model Table) completed
        self.completed = 0
        """Table maps filled in from the model (0 while the server sends FULL metadata)."""

    def prepare(self, table_id: int, library_table: Any, model: Table) -> bool:
        """Make ``library_table`` describe ``model``'s columns; False when they cannot be the same table."""
        done = self._done.get(table_id)
        if done is not None and done[0] is library_table and done[1] is model:
            return True
        columns = library_table.columns
        if len(columns) != len(model.columns):
            return False
        named = all(isinstance(c.name, str) and c.name for c in columns)
        if named and [c.name for c in columns] == [c.name for c in model.columns]:
            # FULL metadata: the server named the columns itself.
            self._done[table_id] = (library_table, model)
            return True
        for target, column in zip(columns, model.columns, strict=True):
            target.name = column.name
            target.unsigned = column.unsigned
            if target.type in _TEXT_FIELD_TYPES and target.character_set_name is None:
                target.character_set_name = _encoding(column)
            if target.type == FIELD_TYPE.ENUM:
                target.enum_values = ["", *column.enum_values]
            elif target.type == FIELD_TYPE.SET:
                target.set_values = list(column.enum_values)
        self._done[table_id] = (library_table, model)
        self.completed += 1
        return True
