"""A MySQL/MariaDB lexer for DDL, and a cursor over one statement's tokens.

Why hand-written: Debezium's history records keep token text as written (ENUM labels with their quotes,
default literals without their quotes but with their escapes, type names as spelt), which a normalising
SQL parser loses; and MySQL's executable comments (``/*!50001 … */``, MariaDB's ``/*M!100101 … */``)
must be *executed*, i.e. their content lexed as SQL, while ordinary comments are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NoReturn

from cdc.history.errors import UnparseableDdlError

__all__ = ["Cursor", "Kind", "Token", "split_statements", "tokenize"]


class Kind(StrEnum):
    WORD = "word"  # bare word: keyword or unquoted identifier
    QUOTED = "quoted"  # `backtick identifier` (value unescaped)
    STRING = "string"  # 'single' or "double" quoted (text raw, value unescaped)
    NUMBER = "number"
    BITS = "bits"  # b'0101' / 0b0101
    HEX = "hex"  # x'ff' / 0xff
    VARIABLE = "variable"  # @x, @@session.x
    PUNCT = "punct"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    text: str  # as written
    value: str  # unquoted/unescaped for QUOTED and STRING, upper-case for WORD, text otherwise
    start: int
    end: int

    def is_word(self, *words: str) -> bool:
        return self.kind is Kind.WORD and (not words or self.value in words)

    def is_punct(self, p: str) -> bool:
        return self.kind is Kind.PUNCT and self.text == p


_ESCAPES = {
    "0": "\0",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "\\": "\\",
    "'": "'",
    '"': '"',
}
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_MULTI_PUNCT = (":=", "<=>", "<=", ">=", "<>", "!=", "||", "&&", "<<", ">>", "->>", "->")


def _unescape(body: str, quote: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            # MySQL keeps \% and \_ as two characters (they matter only to LIKE)
            out.append(_ESCAPES.get(nxt, "\\" + nxt if nxt in "%_" else nxt))
            i += 2
        elif c == quote and i + 1 < len(body) and body[i + 1] == quote:
            out.append(quote)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokenize(sql: str) -> list[Token]:
    """All tokens of ``sql``; comments dropped, executable comments' content kept."""
    tokens: list[Token] = []
    i, n = 0, len(sql)
    in_exec_comment = 0
    while i < n:
        c = sql[i]
        if c.isspace():
            i += 1
            continue
        if c == "#" or (sql.startswith("--", i) and (i + 2 >= n or sql[i + 2].isspace())):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if sql.startswith("/*", i):
            if sql.startswith("/*!", i) or sql.startswith("/*M!", i):
                # executable comment: the server runs its content, so we lex it
                i += 4 if sql[i + 2] == "M" else 3
                while i < n and sql[i].isdigit():
                    i += 1
                in_exec_comment += 1
                continue
            j = sql.find("*/", i + 2)
            if j < 0:
                raise UnparseableDdlError("Unterminated comment", sql)
            i = j + 2
            continue
        if in_exec_comment and sql.startswith("*/", i):
            in_exec_comment -= 1
            i += 2
            continue
        start = i
        if c in "'\"`":
            j = i + 1
            while True:
                if j >= n:
                    raise UnparseableDdlError("Unterminated quoted text", sql)
                ch = sql[j]
                if ch == "\\" and c != "`":
                    j += 2
                    continue
                if ch == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            body = sql[i + 1 : j]
            i = j + 1
            if c == "`":
                tokens.append(Token(Kind.QUOTED, sql[start:i], body.replace("``", "`"), start, i))
            else:
                tokens.append(Token(Kind.STRING, sql[start:i], _unescape(body, c), start, i))
            continue
        if c in "xXbB" and i + 1 < n and sql[i + 1] == "'":
            j = sql.find("'", i + 2)
            if j < 0:
                raise UnparseableDdlError("Unterminated literal", sql)
            kind = Kind.HEX if c in "xX" else Kind.BITS
            tokens.append(Token(kind, sql[i : j + 1], sql[i + 2 : j], start, j + 1))
            i = j + 1
            continue
        if c == "0" and i + 1 < n and sql[i + 1] in "xb" and i + 2 < n and sql[i + 2].isalnum():
            j = i + 2
            while j < n and sql[j] in _WORD_CHARS:
                j += 1
            kind = Kind.HEX if sql[i + 1] == "x" else Kind.BITS
            tokens.append(Token(kind, sql[i:j], sql[i + 2 : j], start, j))
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and sql[i + 1].isdigit()):
            j = i
            while j < n and (sql[j].isdigit() or sql[j] == "."):
                j += 1
            if j < n and sql[j] in "eE" and j + 1 < n and (sql[j + 1].isdigit() or sql[j + 1] in "+-"):
                j += 2
                while j < n and sql[j].isdigit():
                    j += 1
            if j < n and sql[j] in _WORD_CHARS and "." not in sql[i:j]:
                # identifiers may start with digits (e.g. 1abc)
                k = j
                while k < n and sql[k] in _WORD_CHARS:
                    k += 1
                tokens.append(Token(Kind.WORD, sql[i:k], sql[i:k].upper(), start, k))
                i = k
                continue
            tokens.append(Token(Kind.NUMBER, sql[i:j], sql[i:j], start, j))
            i = j
            continue
        if c in _WORD_CHARS or ord(c) > 127:
            j = i
            while j < n and (sql[j] in _WORD_CHARS or ord(sql[j]) > 127):
                j += 1
            tokens.append(Token(Kind.WORD, sql[i:j], sql[i:j].upper(), start, j))
            i = j
            continue
        if c == "@":
            j = i + 1
            while j < n and (sql[j] in _WORD_CHARS or sql[j] in "@."):
                j += 1
            tokens.append(Token(Kind.VARIABLE, sql[i:j], sql[i:j].lower(), start, j))
            i = j
            continue
        for p in _MULTI_PUNCT:
            if sql.startswith(p, i):
                tokens.append(Token(Kind.PUNCT, p, p, start, i + len(p)))
                i += len(p)
                break
        else:
            tokens.append(Token(Kind.PUNCT, c, c, start, i + 1))
            i += 1
    return tokens


_ROUTINES = ("PROCEDURE", "FUNCTION", "TRIGGER", "EVENT")


def _is_routine(stmt: list[Token]) -> bool:
    """CREATE [OR REPLACE] [DEFINER=…] [AGGREGATE] PROCEDURE|FUNCTION|TRIGGER|EVENT: bodies hold ';'."""
    if not stmt or not stmt[0].is_word("CREATE", "ALTER"):
        return False
    for t in stmt[1:40]:
        if t.is_word(*_ROUTINES):
            return True
        if t.is_word("TABLE", "VIEW", "DATABASE", "SCHEMA", "INDEX", "USER", "ROLE", "SERVER", "SEQUENCE"):
            return False
    return False


def split_statements(tokens: list[Token]) -> list[list[Token]]:
    """Statements separated by ``;``; a routine body (with its own ``;``) runs to the end."""
    out: list[list[Token]] = []
    cur: list[Token] = []
    for t in tokens:
        if t.is_punct(";") and not _is_routine(cur):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


class Cursor:
    """Reads one statement's tokens left to right."""

    def __init__(self, tokens: list[Token], sql: str) -> None:
        self.tokens = tokens
        self.sql = sql
        self.i = 0

    # -- looking -------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else None

    def at_end(self) -> bool:
        return self.i >= len(self.tokens)

    def peek_word(self, *words: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.is_word(*words)

    def peek_punct(self, p: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t.is_punct(p)

    # -- consuming -----------------------------------------------------------------------------
    def next(self) -> Token:
        t = self.peek()
        if t is None:
            self.fail("unexpected end of statement")
        self.i += 1
        return t

    def accept_word(self, *words: str) -> Token | None:
        t = self.peek()
        if t is not None and t.is_word(*words):
            self.i += 1
            return t
        return None

    def accept_words(self, *words: str) -> bool:
        """Consume the exact word sequence if present."""
        for k, w in enumerate(words):
            if not self.peek_word(w, k=k):
                return False
        self.i += len(words)
        return True

    def expect_word(self, *words: str) -> Token:
        t = self.accept_word(*words)
        if t is None:
            self.fail("expected " + "|".join(words))
        return t

    def accept_punct(self, p: str) -> bool:
        if self.peek_punct(p):
            self.i += 1
            return True
        return False

    def expect_punct(self, p: str) -> None:
        if not self.accept_punct(p):
            self.fail(f"expected '{p}'")

    def identifier(self) -> str:
        """An identifier: bare word, `backticked` or (ANSI_QUOTES) "double quoted"."""
        t = self.next()
        if t.kind is Kind.WORD:
            return t.text
        if t.kind in (Kind.QUOTED, Kind.STRING):
            return t.value
        self.fail(f"expected an identifier, found {t.text!r}", t)

    def qualified_name(self) -> tuple[str | None, str]:
        """``name`` or ``db.name`` (either part quoted)."""
        first = self.identifier()
        if self.peek_punct("."):
            self.i += 1
            return first, self.identifier()
        # a bare `db.t` written without quotes lexes as one word only if it had no dot, so nothing else
        return None, first

    def skip_parens(self) -> None:
        """Skip a balanced ``( … )`` starting at the current token."""
        self.expect_punct("(")
        depth = 1
        while depth:
            t = self.next()
            if t.is_punct("("):
                depth += 1
            elif t.is_punct(")"):
                depth -= 1

    def text_of_parens(self) -> str:
        """The source text inside a balanced ``( … )``, consumed."""
        open_tok = self.peek()
        self.skip_parens()
        close_tok = self.tokens[self.i - 1]
        assert open_tok is not None
        return self.sql[open_tok.end : close_tok.start]

    def skip_to_clause_end(self) -> None:
        """Skip tokens up to (not including) a ``,`` or ``)`` at depth 0, or the end."""
        depth = 0
        while not self.at_end():
            t = self.peek()
            assert t is not None
            if depth == 0 and (t.is_punct(",") or t.is_punct(")")):
                return
            if t.is_punct("("):
                depth += 1
            elif t.is_punct(")"):
                depth -= 1
            self.i += 1

    def skip_rest(self) -> None:
        self.i = len(self.tokens)

    def fail(self, message: str, token: Token | None = None) -> NoReturn:
        t = token or self.peek()
        where = f" at {t.text!r} (offset {t.start})" if t is not None else " at the end"
        raise UnparseableDdlError(message + where, self.sql)
