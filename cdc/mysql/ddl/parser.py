"""DDL → table model: what the MySQL source does with every DDL it reads from the binlog or a snapshot.

:class:`DdlParser` applies MySQL/MariaDB DDL to a :class:`Tables` model and returns the
:class:`TableChange` list Debezium would record. Supported: CREATE TABLE (column lists, ``LIKE``,
``IF NOT EXISTS``, MariaDB's ``OR REPLACE``), ALTER TABLE (ADD/DROP/MODIFY/CHANGE/RENAME COLUMN with
FIRST/AFTER, ADD/DROP PRIMARY KEY, ADD UNIQUE, RENAME TO, ALTER COLUMN SET/DROP DEFAULT, CONVERT TO
CHARACTER SET, table charset/comment, any number of clauses), DROP TABLE, RENAME TABLE, TRUNCATE,
CREATE/ALTER/DROP DATABASE|SCHEMA, CREATE UNIQUE INDEX (a key for a table without one), USE, and
``SET character_set_server|character_set_database``; statements that don't shape tables (views,
routines, triggers, events, users, grants, indexes, FLUSH, ANALYZE, DML …) are accepted and ignored.
Anything else raises :class:`UnparseableDdlError`; the caller honours ``skip.unparseable.ddl``.

Like Debezium: CREATE TABLE of a table that exists changes nothing (unless ``OR REPLACE``); ALTER,
DROP and RENAME of unknown tables are ignored; a UNIQUE key stands in for a missing primary key.

The parser is hand-written (see ``_tokens``): sqlglot 30 parses CREATE/ALTER but normalises away the
token text Debezium records and leaves RENAME TABLE unparsed; a small recursive-descent reader over our
own tokens gives exact results for both MySQL 8 and MariaDB ``SHOW CREATE TABLE`` output.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from cdc.history.errors import UnparseableDdlError
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
from cdc.mysql.ddl._tokens import Cursor, Kind, Token, split_statements, tokenize

__all__ = ["DdlParser"]

log = logging.getLogger(__name__)

_IGNORED_STARTS = frozenset(
    {
        "GRANT",
        "REVOKE",
        "FLUSH",
        "ANALYZE",
        "OPTIMIZE",
        "REPAIR",
        "CHECK",
        "CHECKSUM",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "SELECT",
        "BEGIN",
        "START",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
        "XA",
        "CALL",
        "DO",
        "LOCK",
        "UNLOCK",
        "INSTALL",
        "UNINSTALL",
        "RESET",
        "PURGE",
        "CHANGE",
        "STOP",
        "SHOW",
        "EXPLAIN",
        "DESCRIBE",
        "DESC",
        "HANDLER",
        "LOAD",
        "KILL",
        "PREPARE",
        "EXECUTE",
        "DEALLOCATE",
        "SIGNAL",
        "RESIGNAL",
        "BINLOG",
        "CACHE",
        "HELP",
        "SHUTDOWN",
        "RESTART",
        "CLONE",
        "IMPORT",
        "WITH",
        "VALUES",
        "TABLE",
        "BACKUP",
    }
)
_IGNORED_OBJECTS = frozenset(
    {
        "VIEW",
        "TRIGGER",
        "PROCEDURE",
        "FUNCTION",
        "EVENT",
        "USER",
        "ROLE",
        "SERVER",
        "TABLESPACE",
        "LOGFILE",
        "SEQUENCE",
        "SPATIAL",
        "RESOURCE",
        "PACKAGE",
        "SYNONYM",
        "INDEX",
        "UNDO",
        "INSTANCE",
        "FULLTEXT",
    }
)
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


@dataclass
class _TableBuild:
    """A table being created: column definitions in order, then key constraints."""

    columns: list[ColumnDef] = field(default_factory=list)
    primary_key: list[str] | None = None
    charset: str | None = None
    collation_charset: str | None = None
    comment: str | None = None

    def find(self, name: str) -> ColumnDef | None:
        lname = name.lower()
        return next((c for c in self.columns if c.name.lower() == lname), None)


class DdlParser:
    """Applies DDL to a :class:`Tables` model, keeping the session state DDL depends on.

    ``default_database`` is used for unqualified names when a call gives no database; ``USE`` changes
    it. Character sets follow MySQL: column, else table, else database, else ``character_set_server``.
    """

    def __init__(
        self,
        default_database: str | None = None,
        server_charset: str | None = None,
        include_comments: bool = True,
    ) -> None:
        self.current_database = default_database
        # include.schema.comments: Debezium's parser skips COMMENT clauses unless it is on, so neither the
        # model, the history nor the schemas carry them
        self.include_comments = include_comments
        self.server_charset = server_charset
        self.database_charset: str | None = None  # character_set_database
        self.database_charsets: dict[str, str] = {}

    # -- entry point ---------------------------------------------------------------------------
    def apply(self, tables: Tables, ddl: str, database: str | None = None) -> list[TableChange]:
        """Apply every statement of ``ddl`` (run in ``database``) and return the table changes."""
        if database:
            self.current_database = database
        statements = split_statements(tokenize(ddl))
        changes: list[TableChange] = []
        for stmt in statements:
            sql = ddl[stmt[0].start : stmt[-1].end]
            cur = Cursor(stmt, ddl)
            try:
                made = self._statement(tables, cur)
                changes.extend(made if self.include_comments else [_uncommented(tables, c) for c in made])
            except UnparseableDdlError:
                raise
            except (IndexError, ValueError, AssertionError) as e:
                raise UnparseableDdlError(f"Cannot parse DDL ({e})", sql) from e
        return changes

    # -- dispatch ------------------------------------------------------------------------------
    def _statement(self, tables: Tables, cur: Cursor) -> list[TableChange]:
        first = cur.peek()
        assert first is not None
        if first.is_punct("("):
            return []  # ( SELECT … )
        if first.kind is not Kind.WORD:
            cur.fail("not a statement")
        word = first.value
        cur.next()
        if word == "CREATE":
            return self._create(tables, cur)
        if word == "ALTER":
            return self._alter(tables, cur)
        if word == "DROP":
            return self._drop(tables, cur)
        if word == "RENAME":
            if cur.accept_word("TABLE", "TABLES"):
                return self._rename_tables(tables, cur)
            return []  # RENAME USER
        if word == "TRUNCATE":
            return []
        if word == "USE":
            self.current_database = cur.identifier()
            return []
        if word == "SET":
            self._set(cur)
            return []
        if word in _IGNORED_STARTS:
            return []
        cur.fail(f"unsupported statement {first.text}", first)

    def _skip_create_prefix(self, cur: Cursor) -> bool:
        """OR REPLACE, DEFINER=…, ALGORITHM=…, SQL SECURITY …, TEMPORARY …; True on OR REPLACE."""
        replace_ = False
        while True:
            if cur.accept_words("OR", "REPLACE"):
                replace_ = True
            elif cur.accept_word("DEFINER"):
                cur.expect_punct("=")
                self._skip_user(cur)
            elif cur.accept_word("ALGORITHM"):
                cur.expect_punct("=")
                cur.next()
            elif cur.accept_words("SQL", "SECURITY"):
                cur.next()
            elif cur.accept_word("TEMPORARY", "AGGREGATE", "ONLINE", "OFFLINE", "IGNORE", "EXTERNAL"):
                pass
            else:
                return replace_

    @staticmethod
    def _skip_user(cur: Cursor) -> None:
        t = cur.next()
        if t.is_word("CURRENT_USER"):
            if cur.peek_punct("("):
                cur.skip_parens()
            return
        at = cur.peek()
        if at is not None and at.kind is Kind.VARIABLE:
            cur.next()  # user@host, or 'user'@'host' which lexes as STRING, VARIABLE "@", STRING
            if at.text == "@":
                cur.next()

    # -- names ---------------------------------------------------------------------------------
    def _table_id(self, cur: Cursor) -> TableId:
        db, name = cur.qualified_name()
        db = db or self.current_database
        if not db:
            cur.fail(f"no database selected for table {name}")
        return TableId(db, name)

    def _table_charset(self, database: str) -> str | None:
        return self.database_charsets.get(database) or self.database_charset or self.server_charset

    # -- CREATE --------------------------------------------------------------------------------
    def _create(self, tables: Tables, cur: Cursor) -> list[TableChange]:
        or_replace = self._skip_create_prefix(cur)
        unique = cur.accept_word("UNIQUE") is not None
        if cur.accept_word("TABLE"):
            return self._create_table(tables, cur, or_replace)
        if cur.accept_word("DATABASE", "SCHEMA"):
            cur.accept_words("IF", "NOT", "EXISTS")
            name = cur.identifier()
            tables.databases.add(name)
            self._database_options(cur, name)
            return []
        if cur.accept_word("INDEX"):
            return self._create_index(tables, cur, unique)
        t = cur.peek()
        if t is not None and t.is_word(*_IGNORED_OBJECTS):
            return []
        if t is not None and t.is_word("DEFINER"):
            return []
        cur.fail("unsupported CREATE")

    def _database_options(self, cur: Cursor, name: str) -> None:
        while not cur.at_end():
            cur.accept_word("DEFAULT")
            if cur.accept_words("CHARACTER", "SET") or cur.accept_word("CHARSET"):
                cur.accept_punct("=")
                self.database_charsets[name] = _name_text(cur.next())
            elif cur.accept_word("COLLATE"):
                cur.accept_punct("=")
                collation = _name_text(cur.next())
                self.database_charsets.setdefault(name, charset_of_collation(collation))
            else:
                cur.next()

    def _create_table(self, tables: Tables, cur: Cursor, or_replace: bool) -> list[TableChange]:
        if_not_exists = cur.accept_words("IF", "NOT", "EXISTS")
        table_id = self._table_id(cur)
        existing = tables.get(table_id)
        # CREATE TABLE t LIKE s / CREATE TABLE t (LIKE s)
        if cur.peek_word("LIKE") or (cur.peek_punct("(") and cur.peek_word("LIKE", k=1)):
            paren = cur.accept_punct("(")
            cur.expect_word("LIKE")
            source = tables.get(self._table_id(cur))
            if paren:
                cur.accept_punct(")")
            if source is None or (existing is not None and if_not_exists):
                return []
            copy = Table(table_id, source.columns, source.primary_key, source.default_charset)
            tables.put(copy)
            return [TableChange(TableChangeType.CREATE, table_id, copy)]
        if existing is not None and not or_replace:
            log.debug("CREATE TABLE of existing table %s ignored", table_id)
            return []
        if not cur.peek_punct("("):
            return []  # CREATE TABLE … AS SELECT: row-based binlogs log the columns separately
        build = _TableBuild()
        cur.expect_punct("(")
        while True:
            self._create_definition(cur, build)
            if cur.accept_punct(")"):
                break
            cur.expect_punct(",")
        self._table_options(cur, build)
        table = self._finish(table_id, build)
        tables.put(table)
        return [TableChange(TableChangeType.CREATE, table_id, table)]

    def _create_definition(self, cur: Cursor, build: _TableBuild) -> None:
        if cur.accept_word("CONSTRAINT") and not cur.peek_word("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            cur.identifier()
        if cur.accept_words("PRIMARY", "KEY"):
            self._set_primary(build, _index_columns(cur))
            cur.skip_to_clause_end()
            return
        if cur.accept_word("UNIQUE"):
            cur.accept_word("KEY", "INDEX")
            if build.primary_key is None:
                self._set_primary(build, _index_columns(cur))
            cur.skip_to_clause_end()
            return
        if cur.peek_word("INDEX", "KEY", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "PERIOD") and not (
            cur.peek(1) is not None and _starts_data_type(cur, 1)
        ):
            cur.skip_to_clause_end()
            return
        name = cur.identifier()
        spec = parse_column_definition(cur, name)
        build.columns.append(spec)
        if spec.primary or (spec.unique and build.primary_key is None):
            build.primary_key = [spec.name]

    @staticmethod
    def _set_primary(build: _TableBuild, names: list[str]) -> None:
        pk: list[str] = []
        for n in names:
            spec = build.find(n)
            if spec is not None:
                spec.primary = True
                pk.append(spec.name)
            else:
                pk.append(n)
        build.primary_key = pk

    def _table_options(self, cur: Cursor, build: _TableBuild) -> None:
        while not cur.at_end():
            if cur.accept_punct(","):
                continue
            if cur.peek_word("PARTITION", "AS", "SELECT", "IGNORE", "REPLACE", "WITH") or cur.peek_punct("("):
                cur.skip_rest()
                return
            cur.accept_word("DEFAULT")
            if cur.accept_words("CHARACTER", "SET") or cur.accept_word("CHARSET"):
                cur.accept_punct("=")
                build.charset = _name_text(cur.next())
            elif cur.accept_word("COLLATE"):
                cur.accept_punct("=")
                build.collation_charset = charset_of_collation(_name_text(cur.next()))
            elif cur.accept_word("COMMENT"):
                cur.accept_punct("=")
                t = cur.next()
                build.comment = t.text[1:-1] if t.kind is Kind.STRING else t.text
            else:
                _skip_option(cur)

    def _finish(self, table_id: TableId, build: _TableBuild) -> Table:
        charset = build.charset or build.collation_charset or self._table_charset(table_id.database)
        columns = tuple(spec.to_column(i + 1, charset) for i, spec in enumerate(build.columns))
        return Table(table_id, columns, tuple(build.primary_key or ()), charset, build.comment)

    def _create_index(self, tables: Tables, cur: Cursor, unique: bool) -> list[TableChange]:
        cur.identifier()
        if cur.accept_word("USING"):
            cur.next()
        cur.expect_word("ON")
        table_id = self._table_id(cur)
        table = tables.get(table_id)
        if not unique or table is None or table.primary_key:
            return []
        names = _index_columns(cur)
        new = _unique_as_key(table, names)
        if new is None:
            return []
        tables.put(new)
        return [TableChange(TableChangeType.ALTER, table_id, new)]

    # -- ALTER ---------------------------------------------------------------------------------
    def _alter(self, tables: Tables, cur: Cursor) -> list[TableChange]:
        self._skip_create_prefix(cur)
        if cur.accept_word("TABLE"):
            return self._alter_table(tables, cur)
        if cur.accept_word("DATABASE", "SCHEMA"):
            name = self.current_database
            if not cur.peek_word(
                "DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "UPGRADE", "READ", "COMMENT", "ENCRYPTION"
            ):
                name = cur.identifier()
            if name:
                self._database_options(cur, name)
            return []
        return []  # ALTER VIEW/USER/EVENT/…: no table shape

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
    def _drop(self, tables: Tables, cur: Cursor) -> list[TableChange]:
        cur.accept_word("TEMPORARY")
        if cur.accept_word("TABLE", "TABLES"):
            cur.accept_words("IF", "EXISTS")
            changes: list[TableChange] = []
            while True:
                table_id = self._table_id(cur)
                old = tables.remove(table_id)
                # a DROP change even for a table not known (the snapshot's DROP TABLE IF EXISTS), as Debezium
                changes.append(TableChange(TableChangeType.DROP, table_id, old or Table(table_id, ())))
                if not cur.accept_punct(","):
                    break
            return changes
        if cur.accept_word("DATABASE", "SCHEMA"):
            cur.accept_words("IF", "EXISTS")
            name = cur.identifier()
            tables.drop_database(name)
            self.database_charsets.pop(name, None)
            return []  # Debezium records DROP DATABASE without table changes
        return []

    def _rename_tables(self, tables: Tables, cur: Cursor) -> list[TableChange]:
        changes: list[TableChange] = []
        while True:
            old_id = self._table_id(cur)
            cur.expect_word("TO")
            new_id = self._table_id(cur)
            old = tables.remove(old_id)
            if old is not None:
                new = replace(old, id=new_id)
                tables.put(new)
                changes.append(TableChange(TableChangeType.ALTER, new_id, new, old_id))
            if not cur.accept_punct(","):
                return changes

    # -- SET -----------------------------------------------------------------------------------
    def _set(self, cur: Cursor) -> None:
        toks = cur.tokens
        for i, t in enumerate(toks[:-2]):
            name = t.text.lower() if t.kind is Kind.WORD else t.value if t.kind is Kind.VARIABLE else ""
            for prefix in ("@@session.", "@@global.", "@@local.", "@@persist.", "@@"):
                if name.startswith(prefix):
                    name = name[len(prefix) :]
                    break
            if name in ("character_set_server", "character_set_database") and (
                toks[i + 1].is_punct("=") or toks[i + 1].is_punct(":=")
            ):
                value = _name_text(toks[i + 2])
                if name == "character_set_server":
                    self.server_charset = value
                else:
                    self.database_charset = None if value.upper() == "DEFAULT" else value
        cur.skip_rest()


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


def _uncommented(tables: Tables, change: TableChange) -> TableChange:
    """``change`` with the table and column comments left out, in the model too (a DROP is kept)."""
    table = change.table
    if table.comment is None and all(c.comment is None for c in table.columns):
        return change
    bare = replace(table, comment=None, columns=tuple(replace(c, comment=None) for c in table.columns))
    if tables.get(table.id) is table:
        tables.put(bare)
    return replace(change, table=bare)
