"""Column definitions: data types and column options, as Debezium's MySQL DDL parser records them.

The facts, from Debezium's ``MySqlAntlrDdlParser`` (data type resolver) and its column-definition and
default-value listeners:

* ``jdbcType`` per ``java.sql.Types``: TINYINT and SMALLINT 5, MEDIUMINT/INT 4, BIGINT/SERIAL -5, REAL 7,
  FLOAT 6, DOUBLE 8, DECIMAL 3, NUMERIC 2, BIT -7, BOOL/BOOLEAN 16, DATE 91, TIME 92, DATETIME 93,
  TIMESTAMP 2014 (TIMESTAMP_WITH_TIMEZONE), YEAR 4, CHAR 1, VARCHAR and every TEXT 12, NCHAR -15,
  NVARCHAR -9, BINARY -2, VARBINARY -3, every BLOB 2004, ENUM/SET 1, JSON and spatial types 1111.
* ``typeName`` = ``typeExpression`` = the type's words upper-cased, then the ``SIGNED``/``UNSIGNED``/
  ``ZEROFILL`` (numbers) or ``BINARY`` (strings) suffixes that were written; SERIAL becomes
  ``BIGINT UNSIGNED``.
* ``length``/``scale``: the declared dimensions (DECIMAL defaults to 10,0; BIT to 1; a one-argument
  DECIMAL gets scale 0); ENUM has length 1 and SET ``2n-1`` (its labels plus commas); unset otherwise.
* Defaults: a quoted literal keeps its text without the quotes (escapes stay as written), numbers keep
  their sign, ``b'101'`` gives ``101``, CURRENT_TIMESTAMP/NOW give ``1970-01-01 00:00:00``, an expression
  gives "has a default" without an expression, ``DEFAULT NULL`` sets nothing. A column declared with
  an explicit ``NULL`` (and no default) has a default (NULL); primary-key columns lose that.
* AUTO_INCREMENT sets both ``autoIncremented`` and ``generated``; generated columns (``AS (…)``) are
  not marked (Debezium's parser doesn't).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cdc.history.model import Column
from cdc.mysql.ddl._tokens import Cursor, Kind

__all__ = [
    "DATA_TYPES",
    "ColumnDef",
    "charset_of_collation",
    "parse_column_definition",
    "parse_default",
    "uses_charset",
]

# base word -> (jdbc type, dimension kind)
_INT, _DEC, _FLT, _BIT, _TIME, _STR, _BIN, _SIMPLE, _ENUM = (
    "int",
    "dec",
    "flt",
    "bit",
    "time",
    "str",
    "bin",
    "simple",
    "enum",
)
_TYPES: dict[str, tuple[int, str]] = {
    "TINYINT": (5, _INT),
    "INT1": (5, _INT),
    "SMALLINT": (5, _INT),
    "INT2": (5, _INT),
    "MEDIUMINT": (4, _INT),
    "INT3": (4, _INT),
    "MIDDLEINT": (4, _INT),
    "INT": (4, _INT),
    "INTEGER": (4, _INT),
    "INT4": (4, _INT),
    "BIGINT": (-5, _INT),
    "INT8": (-5, _INT),
    "REAL": (7, _FLT),
    "DOUBLE": (8, _FLT),
    "FLOAT8": (8, _FLT),
    "FLOAT": (6, _FLT),
    "FLOAT4": (6, _FLT),
    "DECIMAL": (3, _DEC),
    "DEC": (3, _DEC),
    "FIXED": (3, _DEC),
    "NUMERIC": (2, _DEC),
    "BIT": (-7, _BIT),
    "TIME": (92, _TIME),
    "TIMESTAMP": (2014, _TIME),
    "DATETIME": (93, _TIME),
    "YEAR": (4, _TIME),
    "DATE": (91, _SIMPLE),
    "BOOL": (16, _SIMPLE),
    "BOOLEAN": (16, _SIMPLE),
    "SERIAL": (-5, _SIMPLE),
    "CHAR": (1, _STR),
    "CHARACTER": (1, _STR),
    "VARCHAR": (12, _STR),
    "VARCHAR2": (12, _STR),
    "TINYTEXT": (12, _STR),
    "TEXT": (12, _STR),
    "MEDIUMTEXT": (12, _STR),
    "LONGTEXT": (12, _STR),
    "NCHAR": (-15, _STR),
    "NVARCHAR": (-9, _STR),
    "BINARY": (-2, _BIN),
    "VARBINARY": (-3, _BIN),
    "BLOB": (2004, _BIN),
    "TINYBLOB": (2004, _SIMPLE),
    "MEDIUMBLOB": (2004, _SIMPLE),
    "LONGBLOB": (2004, _SIMPLE),
    "ENUM": (1, _ENUM),
    "SET": (1, _ENUM),
    "JSON": (1111, _SIMPLE),
    "GEOMETRY": (1111, _SIMPLE),
    "POINT": (1111, _SIMPLE),
    "LINESTRING": (1111, _SIMPLE),
    "POLYGON": (1111, _SIMPLE),
    "MULTIPOINT": (1111, _SIMPLE),
    "MULTILINESTRING": (1111, _SIMPLE),
    "MULTIPOLYGON": (1111, _SIMPLE),
    "GEOMETRYCOLLECTION": (1111, _SIMPLE),
    "GEOMCOLLECTION": (1111, _SIMPLE),
    # MariaDB-only types (Debezium's MySQL grammar has none of them): OTHER
    "UUID": (1111, _SIMPLE),
    "INET4": (1111, _SIMPLE),
    "INET6": (1111, _SIMPLE),
    "VECTOR": (1111, _BIN),
}

DATA_TYPES = frozenset(_TYPES) | {"NATIONAL", "LONG"}

_CHARSET_JDBC = frozenset({1, 12, -1, 2005, -15, -9, -16, 2011, 70, 2009})
"""java.sql.Types that carry a character set (Debezium's ``Column.typeUsesCharset``)."""

EPOCH_DEFAULT = "1970-01-01 00:00:00"


def uses_charset(jdbc_type: int) -> bool:
    return jdbc_type in _CHARSET_JDBC


def charset_of_collation(collation: str) -> str:
    """``utf8mb4_0900_ai_ci`` → ``utf8mb4``; ``binary`` → ``binary``."""
    return collation.split("_", 1)[0].lower()


@dataclass
class ColumnDef:
    """A parsed column definition before it is placed in a table."""

    name: str
    type_name: str
    jdbc_type: int
    length: int | None = None
    scale: int | None = None
    charset: str | None = None
    enum_values: tuple[str, ...] = ()
    optional: bool | None = None  # None: not said
    has_default: bool = False
    default_expression: str | None = None
    auto_incremented: bool = False
    comment: str | None = None
    primary: bool = False
    unique: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    def to_column(self, position: int, table_charset: str | None) -> Column:
        optional = True if self.optional is None else self.optional
        has_default, expression = self.has_default, self.default_expression
        if self.optional is True and not has_default:
            has_default = True  # an explicit NULL: the default is NULL
        if self.primary:
            optional = False
            if has_default and expression is None:
                has_default = False
        charset = self.charset
        if self.jdbc_type in (-15, -9):
            charset = "utf8"
        elif uses_charset(self.jdbc_type) and (charset is None or charset.upper() == "DEFAULT"):
            charset = table_charset
        return Column(
            name=self.name,
            position=position,
            type_name=self.type_name,
            type_expression=self.type_name,
            jdbc_type=self.jdbc_type,
            length=self.length,
            scale=self.scale,
            optional=optional,
            auto_incremented=self.auto_incremented,
            generated=self.auto_incremented,
            charset_name=charset if uses_charset(self.jdbc_type) or self.charset else None,
            has_default=has_default,
            default_expression=expression,
            enum_values=self.enum_values,
            comment=self.comment,
        )


def _int(cur: Cursor) -> int:
    t = cur.next()
    if t.kind is not Kind.NUMBER:
        cur.fail("expected a number", t)
    text = t.text.split(".")[0] or "0"
    return min(int(text), 2**31 - 1)


def _dimensions(cur: Cursor) -> tuple[int | None, int | None]:
    if not cur.peek_punct("("):
        return None, None
    cur.expect_punct("(")
    length = _int(cur)
    scale = None
    if cur.accept_punct(","):
        scale = _int(cur)
    cur.expect_punct(")")
    return length, scale


def _charset_name(cur: Cursor) -> str:
    t = cur.next()
    if t.kind is Kind.WORD:
        return t.text
    return t.value


def _enum_labels(cur: Cursor) -> tuple[str, ...]:
    cur.expect_punct("(")
    labels: list[str] = []
    while True:
        t = cur.next()
        if t.kind is Kind.WORD and t.value.startswith("_") and cur.peek() is not None:
            t = cur.next()  # charset introducer
        if t.kind is not Kind.STRING:
            cur.fail("expected a quoted ENUM/SET label", t)
        value = t.value
        while cur.peek() is not None and cur.peek().kind is Kind.STRING:  # type: ignore[union-attr]
            value += cur.next().value  # 'a' 'b' concatenates
        labels.append(value)
        if cur.accept_punct(")"):
            return tuple(labels)
        cur.expect_punct(",")


def _string_modifiers(cur: Cursor, spec: ColumnDef) -> bool:
    """CHARACTER SET / CHARSET / COLLATE / BINARY / ASCII / UNICODE / BYTE after a string type."""
    binary = False
    while True:
        if cur.accept_words("CHARACTER", "SET") or cur.accept_word("CHARSET"):
            cur.accept_punct("=")
            spec.charset = _charset_name(cur)
        elif cur.accept_word("COLLATE"):
            cur.accept_punct("=")
            collation = _charset_name(cur)
            if spec.charset is None:
                spec.charset = charset_of_collation(collation)
        elif cur.accept_word("BINARY"):
            binary = True
        elif cur.accept_word("ASCII"):
            spec.charset = spec.charset or "latin1"
        elif cur.accept_word("UNICODE"):
            spec.charset = spec.charset or "ucs2"
        elif cur.accept_word("BYTE"):
            spec.charset = spec.charset or "binary"
        else:
            return binary


def parse_data_type(cur: Cursor, name: str) -> ColumnDef:
    """The data type at the cursor, for a column called ``name``."""
    t = cur.next()
    if t.kind is not Kind.WORD:
        cur.fail("expected a data type", t)
    word = t.value
    words = [word]
    # multi-word spellings
    if word == "NATIONAL":
        nxt = cur.expect_word("CHAR", "CHARACTER", "VARCHAR")
        words.append(nxt.value)
        word = "NVARCHAR" if nxt.value == "VARCHAR" else "NCHAR"
        if cur.accept_word("VARYING"):
            words.append("VARYING")
            word = "NVARCHAR"
    elif word == "LONG":
        long_of = cur.accept_word("VARCHAR", "VARBINARY")
        if long_of is not None:
            words.append(long_of.value)
        word = "LONGBLOB" if long_of is not None and long_of.value == "VARBINARY" else "MEDIUMTEXT"
    elif word in ("CHAR", "CHARACTER", "NCHAR") and cur.peek_word("VARYING"):
        cur.next()
        words.append("VARYING")
        word = "NVARCHAR" if word == "NCHAR" else "VARCHAR"
    elif word == "NCHAR" and cur.peek_word("VARCHAR"):
        cur.next()
        words.append("VARCHAR")
        word = "NVARCHAR"
    elif word == "DOUBLE" and cur.peek_word("PRECISION"):
        cur.next()
        words.append("PRECISION")
    if word not in _TYPES:
        cur.fail(f"unknown data type {t.text}", t)
    jdbc, kind = _TYPES[word]
    spec = ColumnDef(name=name, type_name=" ".join(words), jdbc_type=jdbc)
    if kind == _ENUM:
        spec.enum_values = _enum_labels(cur)
        spec.length = 1 if word == "ENUM" else max(0, 2 * len(spec.enum_values) - 1)
        if _string_modifiers(cur, spec):
            spec.type_name += " BINARY"
        return spec
    length, scale = _dimensions(cur)
    if kind == _STR:
        spec.length = length
        if _string_modifiers(cur, spec):
            spec.type_name += " BINARY"
        return spec
    if kind in (_INT, _DEC, _FLT):
        spec.length, spec.scale = length, scale
        if kind == _DEC:
            spec.length = 10 if length is None else length
            spec.scale = 0 if scale is None else scale
        flags: set[str] = set()
        while (flag := cur.accept_word("SIGNED", "UNSIGNED", "ZEROFILL")) is not None:
            flags.add(flag.value)
        for f in ("SIGNED", "UNSIGNED", "ZEROFILL"):
            if f in flags:
                spec.type_name += " " + f
        return spec
    if kind == _BIT:
        spec.length = 1 if length is None else length
        return spec
    if word == "SERIAL":
        spec.type_name = "BIGINT UNSIGNED"
        _serial(spec)
        return spec
    spec.length = length
    if kind == _BIN and word == "VECTOR" and length is None:
        spec.length = 2048
    if word == "BINARY" or kind == _SIMPLE:
        # BINARY(n) may be followed by nothing else; spatial types may carry SRID later (a column option)
        pass
    return spec


def _serial(spec: ColumnDef) -> None:
    if spec.optional is None:
        spec.optional = False
    spec.unique = True
    spec.auto_incremented = True


def parse_default(cur: Cursor) -> tuple[bool, str | None]:
    """The value after DEFAULT: (has_default, expression) as Debezium records it; (False, None) for NULL."""
    sign = ""
    while cur.peek_punct("-") or cur.peek_punct("+"):
        s = cur.next().text
        sign = "-" if (s == "-") != (sign == "-") else ""
    t = cur.next()
    if t.is_word("NULL"):
        return False, None
    following = cur.peek()
    if (
        t.kind is Kind.WORD
        and (t.value.startswith("_") or t.value == "N")
        and following is not None
        and following.kind is Kind.STRING
    ):
        t = cur.next()  # charset introducer
    if t.kind is Kind.STRING:
        raw = t.text[1:-1]
        while cur.peek() is not None and cur.peek().kind is Kind.STRING:  # type: ignore[union-attr]
            raw += cur.next().text[1:-1]
        if cur.accept_word("COLLATE"):
            cur.next()
        return True, sign + raw
    if t.kind is Kind.NUMBER:
        return True, sign + t.text
    if t.kind is Kind.BITS:
        return True, t.value
    if t.kind is Kind.HEX:
        return False, None
    if t.is_word("TRUE", "FALSE"):
        return True, t.text
    if t.is_word("CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"):
        if cur.peek_punct("("):
            cur.skip_parens()
        return True, EPOCH_DEFAULT if t.value in ("CURRENT_TIMESTAMP", "NOW") else t.text
    # an expression: (expr), func(args), or a bare word
    if t.is_punct("("):
        cur.i -= 1
        cur.skip_parens()
    elif cur.peek_punct("("):
        cur.skip_parens()
    return True, None


def _skip_reference(cur: Cursor) -> None:
    """REFERENCES t (cols) [MATCH …] [ON DELETE|UPDATE action]…"""
    cur.qualified_name()
    if cur.peek_punct("("):
        cur.skip_parens()
    while True:
        if cur.accept_word("MATCH"):
            cur.next()
        elif cur.accept_word("ON"):
            cur.expect_word("DELETE", "UPDATE")
            if cur.accept_word("SET") or cur.accept_word("NO"):
                cur.next()
            else:
                cur.next()
        else:
            return


def parse_column_options(cur: Cursor, spec: ColumnDef, stop_words: tuple[str, ...] = ()) -> None:
    """Column attributes up to ``,``/``)``/the end, or one of ``stop_words`` (FIRST/AFTER in ALTER)."""
    while not cur.at_end() and not cur.peek_punct(",") and not cur.peek_punct(")"):
        if stop_words and cur.peek_word(*stop_words):
            return
        if cur.accept_words("NOT", "NULL"):
            spec.optional = False
        elif cur.accept_word("NULL"):
            spec.optional = True
        elif cur.accept_word("DEFAULT"):
            has, expr = parse_default(cur)
            if has:
                spec.has_default, spec.default_expression = True, expr
        elif cur.accept_word("AUTO_INCREMENT"):
            spec.auto_incremented = True
        elif cur.accept_words("SERIAL", "DEFAULT", "VALUE"):
            _serial(spec)
        elif cur.accept_word("UNIQUE"):
            cur.accept_word("KEY", "INDEX")
            spec.unique = True
        elif cur.accept_words("PRIMARY", "KEY") or cur.accept_word("KEY"):
            spec.primary = True
        elif cur.accept_word("COMMENT"):
            t = cur.next()
            spec.comment = t.text[1:-1] if t.kind is Kind.STRING else t.text
        elif cur.accept_word("COLLATE"):
            cur.accept_punct("=")
            collation = _charset_name(cur)
            if spec.charset is None and uses_charset(spec.jdbc_type):
                spec.charset = charset_of_collation(collation)
        elif cur.accept_words("CHARACTER", "SET") or cur.accept_word("CHARSET"):
            spec.charset = _charset_name(cur)
        elif cur.accept_words("GENERATED", "ALWAYS") or cur.peek_word("AS"):
            if cur.accept_word("AS"):
                if cur.peek_punct("("):
                    spec.extra["generation_expression"] = cur.text_of_parens()
                elif cur.accept_word("ROW"):  # MariaDB system versioning: AS ROW START|END
                    cur.next()
            # GENERATED ALWAYS AS IDENTITY etc. fall through to the next options
        elif cur.accept_word("VIRTUAL", "STORED", "PERSISTENT"):
            spec.extra["generated_kind"] = "STORED" if cur.tokens[cur.i - 1].value != "VIRTUAL" else "VIRTUAL"
        elif cur.accept_words("ON", "UPDATE"):
            cur.next()
            if cur.peek_punct("("):
                cur.skip_parens()
        elif cur.accept_word(
            "COLUMN_FORMAT", "STORAGE", "SRID", "ENGINE_ATTRIBUTE", "SECONDARY_ENGINE_ATTRIBUTE"
        ):
            cur.accept_punct("=")
            cur.next()
        elif cur.accept_word("COMPRESSED"):
            if cur.accept_punct("="):
                cur.next()
        elif cur.accept_word("CONSTRAINT"):
            if not cur.peek_word("CHECK"):
                cur.identifier()
        elif cur.accept_word("CHECK"):
            cur.skip_parens()
            cur.accept_word("ENFORCED")
            cur.accept_words("NOT", "ENFORCED")
        elif cur.accept_word("REFERENCES"):
            _skip_reference(cur)
        elif (
            cur.accept_word("VISIBLE", "INVISIBLE", "ENFORCED", "BINARY")
            or cur.accept_words("WITH", "SYSTEM", "VERSIONING")
            or cur.accept_words("WITHOUT", "SYSTEM", "VERSIONING")
        ):
            pass
        else:
            unknown = cur.peek()
            assert unknown is not None
            # an unknown attribute: a word optionally followed by = value or (…)
            if unknown.kind is Kind.WORD:
                cur.next()
                if cur.accept_punct("="):
                    cur.next()
                elif cur.peek_punct("("):
                    cur.skip_parens()
            else:
                cur.fail("unexpected token in column definition", unknown)


def parse_column_definition(cur: Cursor, name: str, stop_words: tuple[str, ...] = ()) -> ColumnDef:
    spec = parse_data_type(cur, name)
    parse_column_options(cur, spec, stop_words)
    return spec
