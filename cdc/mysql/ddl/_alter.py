"""ALTER TABLE, clause by clause, and the clause readers CREATE TABLE shares (a part of :mod:`.parser`).

:class:`AlterTable` is the :class:`~cdc.mysql.ddl.parser.DdlParser`'s ALTER TABLE: each clause (ADD,
DROP, MODIFY, CHANGE, RENAME, ALTER COLUMN, keys, CONVERT TO CHARACTER SET, table options) changes an
:class:`_AlterState`, whose result replaces the table in the model.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from cdc.history.model import Column, Table, TableId, Tables
from cdc.history.records import TableChange, TableChangeType
from cdc.mysql.ddl._columns import (
    DATA_TYPES,
    ColumnDef,
    charset_of_collation,
    parse_column_definition,
    parse_default,
    uses_charset,
)
from cdc.mysql.ddl._tokens import Cursor, Kind, Token

__all__ = ["AlterTable"]

log = logging.getLogger("cdc.mysql.ddl.parser")  # one logger for the parser's messages

_KEY_STARTS = (
    "PRIMARY",
    "UNIQUE",
    "INDEX",
    "KEY",
    "FULLTEXT",
    "SPATIAL",
    "FOREIGN",
    "CONSTRAINT",
    "CHECK",
    "PERIOD",
    "SYSTEM",
)


class AlterTable:
    """The parser's ALTER TABLE (a mixin of :class:`~cdc.mysql.ddl.parser.DdlParser`)."""

    current_database: str | None

    def _table_id(self, cur: Cursor) -> TableId:
        raise NotImplementedError

    def _table_charset(self, database: str) -> str | None:
        raise NotImplementedError

    def _alter_table(self, tables: Tables, cur: Cursor) -> list[TableChange]:
        cur.accept_words("IF", "EXISTS")
        table_id = self._table_id(cur)
        table = tables.get(table_id)
        if table is None:
            log.debug("ALTER TABLE of unknown table %s ignored", table_id)
            return []
        state = _AlterState(table)
        while not cur.at_end():
            self._alter_spec(cur, state)
            if cur.at_end() or cur.accept_punct(","):
                continue
            cur.skip_to_clause_end()
            if not cur.accept_punct(",") and not cur.at_end():
                cur.fail("unexpected text in ALTER TABLE")
        new = state.result()
        if state.new_id is not None and state.new_id != table_id:
            tables.remove(table_id)
            tables.put(new)
            return [TableChange(TableChangeType.ALTER, new.id, new, table_id)]
        tables.put(new)
        return [TableChange(TableChangeType.ALTER, table_id, new)]

    def _alter_spec(self, cur: Cursor, st: _AlterState) -> None:
        if cur.accept_word("ADD"):
            column_kw = cur.accept_word("COLUMN") is not None
            cur.accept_words("IF", "NOT", "EXISTS")
            if not column_kw and cur.peek_word(*_KEY_STARTS) and not _starts_data_type(cur, 1):
                self._alter_add_key(cur, st)
                return
            if not column_kw and cur.peek_word("PARTITION"):
                cur.skip_to_clause_end()
                return
            if cur.accept_punct("("):
                while True:
                    name = cur.identifier()
                    spec = parse_column_definition(cur, name)
                    st.add(spec, None)
                    if cur.accept_punct(")"):
                        return
                    cur.expect_punct(",")
            name = cur.identifier()
            spec = parse_column_definition(cur, name, ("FIRST", "AFTER"))
            st.add(spec, _position(cur))
            return
        if cur.accept_word("DROP"):
            if cur.accept_words("PRIMARY", "KEY"):
                st.primary_key = []
                return
            if cur.peek_word(
                "INDEX", "KEY", "FOREIGN", "CHECK", "CONSTRAINT", "PARTITION", "SYSTEM", "PERIOD", "DEFAULT"
            ):
                cur.skip_to_clause_end()
                return
            cur.accept_word("COLUMN")
            if_exists = cur.accept_words("IF", "EXISTS")
            st.drop(cur.identifier(), if_exists)
            cur.accept_word("RESTRICT", "CASCADE")
            return
        if cur.accept_word("MODIFY"):
            cur.accept_word("COLUMN")
            cur.accept_words("IF", "EXISTS")
            name = cur.identifier()
            spec = parse_column_definition(cur, name, ("FIRST", "AFTER"))
            st.replace_column(name, spec, _position(cur))
            return
        if cur.accept_word("CHANGE"):
            cur.accept_word("COLUMN")
            cur.accept_words("IF", "EXISTS")
            old = cur.identifier()
            new = cur.identifier()
            spec = parse_column_definition(cur, new, ("FIRST", "AFTER"))
            st.replace_column(old, spec, _position(cur))
            return
        if cur.accept_word("RENAME"):
            if cur.accept_word("COLUMN"):
                old = cur.identifier()
                cur.expect_word("TO")
                st.rename_column(old, cur.identifier())
            elif cur.accept_word("INDEX", "KEY"):
                cur.skip_to_clause_end()
            else:
                cur.accept_word("TO", "AS")
                st.new_id = self._table_id(cur)
            return
        if cur.accept_word("ALTER"):
            if cur.peek_word("INDEX", "CHECK", "CONSTRAINT"):
                cur.skip_to_clause_end()
                return
            cur.accept_word("COLUMN")
            cur.accept_words("IF", "EXISTS")
            name = cur.identifier()
            if cur.accept_words("SET", "DEFAULT"):
                has, expr = parse_default(cur)
                st.set_default(name, has, expr)
            elif cur.accept_words("DROP", "DEFAULT"):
                st.set_default(name, False, None)
            else:
                cur.skip_to_clause_end()
            return
        if cur.accept_words("CONVERT", "TO"):
            if cur.accept_words("CHARACTER", "SET") or cur.accept_word("CHARSET"):
                charset = _name_text(cur.next())
                if charset.upper() == "DEFAULT":
                    charset = self._table_charset(st.table.id.database) or charset
                st.convert_charset(charset)
            cur.skip_to_clause_end()
            return
        save = cur.i
        cur.accept_word("DEFAULT")
        if cur.accept_words("CHARACTER", "SET") or cur.accept_word("CHARSET"):
            cur.accept_punct("=")
            st.charset = _name_text(cur.next())
            cur.skip_to_clause_end()
            return
        if cur.accept_word("COLLATE"):
            cur.accept_punct("=")
            st.collation_charset = charset_of_collation(_name_text(cur.next()))
            cur.skip_to_clause_end()
            return
        cur.i = save
        if cur.accept_word("COMMENT"):
            cur.accept_punct("=")
            t = cur.next()
            st.comment = t.text[1:-1] if t.kind is Kind.STRING else t.text
            return
        cur.skip_to_clause_end()  # ENGINE=…, ALGORITHM=…, LOCK=…, FORCE, ORDER BY …, partitioning …

    def _alter_add_key(self, cur: Cursor, st: _AlterState) -> None:
        if cur.accept_word("CONSTRAINT") and not cur.peek_word("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            cur.identifier()
        if cur.accept_words("PRIMARY", "KEY"):
            st.set_primary(_index_columns(cur))
        elif cur.accept_word("UNIQUE"):
            cur.accept_word("KEY", "INDEX")
            names = _index_columns(cur)
            if not st.primary_key and all((c := st.find(n)) is not None and not c.optional for n in names):
                st.primary_key = [st.find(n).name for n in names]  # type: ignore[union-attr]
        cur.skip_to_clause_end()

    # -- DROP / RENAME -------------------------------------------------------------------------


class _AlterState:
    """A table being altered clause by clause."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.columns: list[Column] = list(table.columns)
        self.primary_key: list[str] = list(table.primary_key)
        self.charset = table.default_charset
        self.collation_charset: str | None = None
        self.comment = table.comment
        self.new_id: TableId | None = None

    def find(self, name: str) -> Column | None:
        lname = name.lower()
        return next((c for c in self.columns if c.name.lower() == lname), None)

    def _index(self, name: str) -> int:
        lname = name.lower()
        for i, c in enumerate(self.columns):
            if c.name.lower() == lname:
                return i
        return -1

    def _place(self, column: Column, position: tuple[str, str | None] | None, default_index: int) -> None:
        if position is None:
            index = default_index if default_index >= 0 else len(self.columns)
        elif position[0] == "FIRST":
            index = 0
        else:
            after = self._index(position[1] or "")
            index = after + 1 if after >= 0 else len(self.columns)
        self.columns.insert(index, column)

    def _column(self, spec: ColumnDef, keep_key: bool) -> Column:
        if keep_key:
            spec.primary = True  # MySQL keeps primary-key columns NOT NULL
        return spec.to_column(0, self.charset)

    def add(self, spec: ColumnDef, position: tuple[str, str | None] | None) -> None:
        existing = self._index(spec.name)
        if existing >= 0:
            del self.columns[existing]
        self._place(self._column(spec, False), position, -1)
        if spec.primary or (spec.unique and not self.primary_key):
            self.primary_key = [spec.name]

    def drop(self, name: str, if_exists: bool) -> None:
        i = self._index(name)
        if i >= 0:
            del self.columns[i]
            self.primary_key = [p for p in self.primary_key if p.lower() != name.lower()]

    def replace_column(self, old: str, spec: ColumnDef, position: tuple[str, str | None] | None) -> None:
        i = self._index(old)
        if i < 0:
            return
        in_key = any(p.lower() == old.lower() for p in self.primary_key)
        del self.columns[i]
        self._place(self._column(spec, in_key), position, i)
        if in_key:
            self.primary_key = [spec.name if p.lower() == old.lower() else p for p in self.primary_key]
        elif spec.primary:
            self.primary_key = [spec.name]

    def rename_column(self, old: str, new: str) -> None:
        i = self._index(old)
        if i < 0:
            return
        self.columns[i] = replace(self.columns[i], name=new)
        self.primary_key = [new if p.lower() == old.lower() else p for p in self.primary_key]

    def set_default(self, name: str, has: bool, expression: str | None) -> None:
        i = self._index(name)
        if i >= 0:
            self.columns[i] = replace(self.columns[i], has_default=has, default_expression=expression)

    def set_primary(self, names: list[str]) -> None:
        pk: list[str] = []
        for n in names:
            i = self._index(n)
            if i < 0:
                pk.append(n)
                continue
            c = self.columns[i]
            unset = c.has_default and c.default_expression is None
            self.columns[i] = replace(c, optional=False, has_default=False if unset else c.has_default)
            pk.append(c.name)
        self.primary_key = pk

    def convert_charset(self, charset: str) -> None:
        self.charset = charset
        self.columns = [
            replace(c, charset_name=charset) if _converts(c.jdbc_type) else c for c in self.columns
        ]

    def result(self) -> Table:
        base = replace(
            self.table,
            id=self.new_id or self.table.id,
            primary_key=tuple(self.primary_key),
            default_charset=self.charset or self.collation_charset,
            comment=self.comment,
        )
        return base.with_columns(self.columns)


# -- helpers ---------------------------------------------------------------------------------------
def _converts(jdbc_type: int) -> bool:
    """CONVERT TO CHARACTER SET changes every character column but NCHAR/NVARCHAR (always utf8)."""
    return uses_charset(jdbc_type) and jdbc_type not in (-15, -9)


def _name_text(t: Token) -> str:
    return t.value if t.kind in (Kind.STRING, Kind.QUOTED) else t.text


def _skip_option(cur: Cursor) -> None:
    """A table option: ``NAME [=] value`` where value is a word, literal or ``( … )``."""
    t = cur.next()
    if t.kind is not Kind.WORD:
        cur.fail("unexpected token in table options", t)
    if t.value in ("STORAGE", "DATA", "INDEX") and cur.peek_word("DISK", "MEMORY", "DIRECTORY"):
        cur.next()
    if t.value == "WITH" or t.value == "WITHOUT":
        cur.accept_words("SYSTEM", "VERSIONING")
        return
    cur.accept_punct("=")
    if cur.peek_punct("("):
        cur.skip_parens()
    elif not cur.at_end() and not cur.peek_punct(","):
        nxt = cur.peek()
        assert nxt is not None
        if nxt.kind is not Kind.WORD or not _is_table_option_start(nxt):
            cur.next()


def _is_table_option_start(t: Token) -> bool:
    return t.value in {
        "ENGINE",
        "AUTO_INCREMENT",
        "AVG_ROW_LENGTH",
        "DEFAULT",
        "CHARACTER",
        "CHARSET",
        "CHECKSUM",
        "COLLATE",
        "COMMENT",
        "COMPRESSION",
        "CONNECTION",
        "DATA",
        "INDEX",
        "DELAY_KEY_WRITE",
        "ENCRYPTION",
        "INSERT_METHOD",
        "KEY_BLOCK_SIZE",
        "MAX_ROWS",
        "MIN_ROWS",
        "PACK_KEYS",
        "PASSWORD",
        "ROW_FORMAT",
        "STATS_AUTO_RECALC",
        "STATS_PERSISTENT",
        "STATS_SAMPLE_PAGES",
        "TABLESPACE",
        "UNION",
        "PARTITION",
        "PAGE_CHECKSUM",
        "TRANSACTIONAL",
        "SEQUENCE",
        "WITH",
        "IETF_QUOTES",
        "PAGE_COMPRESSED",
        "PAGE_COMPRESSION_LEVEL",
        "ENCRYPTION_KEY_ID",
        "ENCRYPTED",
    }


def _index_columns(cur: Cursor) -> list[str]:
    """``[name] [USING x] (col[(n)] [ASC|DESC], …)``: the plain column names."""
    while not cur.peek_punct("("):
        cur.next()  # index name, USING BTREE
    cur.expect_punct("(")
    names: list[str] = []
    while True:
        if cur.peek_punct("("):
            cur.skip_parens()  # functional key part
        else:
            names.append(cur.identifier())
            if cur.peek_punct("("):
                cur.skip_parens()
        cur.accept_word("ASC", "DESC")
        if cur.accept_punct(")"):
            return names
        cur.expect_punct(",")


def _position(cur: Cursor) -> tuple[str, str | None] | None:
    if cur.accept_word("FIRST"):
        return "FIRST", None
    if cur.accept_word("AFTER"):
        return "AFTER", cur.identifier()
    return None


def _starts_data_type(cur: Cursor, k: int) -> bool:
    """Whether the token after a would-be keyword looks like a data type (a column called ``key``…)."""
    t = cur.peek(k)
    return t is not None and t.kind is Kind.WORD and t.value in DATA_TYPES


def _unique_as_key(table: Table, names: list[str]) -> Table | None:
    cols = [table.column(n) for n in names]
    if any(c is None or c.optional for c in cols):
        return None
    return replace(table, primary_key=tuple(c.name for c in cols if c is not None))
