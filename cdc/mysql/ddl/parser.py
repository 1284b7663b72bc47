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
own tokens gives exact results for both MySQL 8 and MariaDB ``SHOW CREATE TABLE`` output. ALTER TABLE's
clauses are read in ``_alter`` (with the clause readers CREATE TABLE shares), column definitions in
``_columns``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from cdc.history.errors import UnparseableDdlError
from cdc.history.model import Table, TableId, Tables
from cdc.history.records import TableChange, TableChangeType
from cdc.mysql.ddl._alter import (
    AlterTable,
    _index_columns,
    _name_text,
    _skip_option,
    _starts_data_type,
    _unique_as_key,
)
from cdc.mysql.ddl._columns import (
    ColumnDef,
    charset_of_collation,
    parse_column_definition,
)
from cdc.mysql.ddl._tokens import Cursor, Kind, split_statements, tokenize

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


class DdlParser(AlterTable):
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


def _uncommented(tables: Tables, change: TableChange) -> TableChange:
    """``change`` with the table and column comments left out, in the model too (a DROP is kept)."""
    table = change.table
    if table.comment is None and all(c.comment is None for c in table.columns):
        return change
    bare = replace(table, comment=None, columns=tuple(replace(c, comment=None) for c in table.columns))
    if tables.get(table.id) is table:
        tables.put(bare)
    return replace(change, table=bare)
