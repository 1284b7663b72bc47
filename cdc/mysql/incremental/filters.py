"""The ``additional-conditions`` filter of a snapshot signal, checked and put into a statement safely.

A signal's filter is SQL text that Debezium pastes after ``WHERE``; whoever can send a signal (a row in
the signal table, a record on the signal topic, a line in the signal file) writes it. Three things keep
it what Debezium lets it be, an expression that the connector's database user evaluates:

* :func:`check_filter` accepts one expression only: no ``;`` outside quotes, no comment (``--``, ``#``,
  ``/* */``, which includes MySQL's executable ``/*! */``), quotes closed and parentheses balanced, so the
  filter can neither end the statement nor close the ``( … )`` it is wrapped in. The text is read by a
  small tokenizer that knows MySQL's three quote styles (``'…'``, ``"…"``, `````…`````, a quote doubled
  inside them) and is read twice, with backslash escapes (MySQL's default) and without them
  (``NO_BACKSLASH_ESCAPES``): ``'\\'`` ends a string in one mode and not in the other, so a filter must
  be one expression either way, whatever ``sql_mode`` ``database.initial.statements`` sets;
* every connection cdc opens has multi-statements off (:mod:`cdc.drivers`), so the server itself refuses
  a second statement should one slip through;
* :func:`where_clause` builds the statement as bytes: the chunk bounds' values are escaped by the
  connection (``literal``, which honours ``NO_BACKSLASH_ESCAPES``) into cdc's own SQL text, and the
  filter is appended after that formatting, so the statement goes to ``execute`` with no arguments and
  the driver's ``%s`` paramstyle never reads the filter: ``name LIKE 'A%'`` is just a filter.

What a filter can read is what Debezium's can: anything the connector's user may ``SELECT`` (subqueries
are expressions), call (``SLEEP``, stored functions) or read with ``LOAD_FILE`` (FILE privilege).
docs/snapshots.md says so, with who can send signals through each channel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cdc.api.errors import ConnectError

__all__ = ["UnsafeFilterError", "bind", "check_filter", "where_clause"]

MAX_FILTER_CHARS = 65536
"""A filter longer than this is refused (the signal table's ``data`` column is 2048 in Debezium's DDL)."""


class UnsafeFilterError(ConnectError):
    """A filter that is not exactly one SQL expression: the signal (or the table) is skipped."""


def check_filter(text: str) -> str:
    """``text`` stripped, once it is one SQL expression (see the module docstring); else
    :class:`UnsafeFilterError` naming what is wrong."""
    condition = text.strip()
    if not condition:
        return ""
    if len(condition) > MAX_FILTER_CHARS:
        raise UnsafeFilterError(f"the filter is longer than {MAX_FILTER_CHARS} characters")
    try:
        condition.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnsafeFilterError(f"the filter is not valid text: {exc.reason}") from None
    for backslash_escapes in (True, False):
        problem = _problem(condition, backslash_escapes)
        if problem is not None:
            raise UnsafeFilterError(f"the filter {condition!r} is not one SQL expression: {problem}")
    return condition


def _problem(text: str, backslash_escapes: bool) -> str | None:
    """What makes ``text`` more (or less) than one expression, read in one backslash mode; None: nothing."""
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            i = _after_quoted(text, i, backslash_escapes and c != "`")
            if i < 0:
                return f"a {c} quote is not closed"
            continue
        if c == ";":
            return "';' outside quotes"
        if c == "#" or text.startswith("--", i) or text.startswith("/*", i) or text.startswith("*/", i):
            return "a comment"
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return "a ')' closes more than the filter opened"
        i += 1
    if depth:
        return "a '(' is not closed"
    return None


def _after_quoted(text: str, start: int, backslash_escapes: bool) -> int:
    """The index after the quoted token opening at ``start``; -1 when its quote is never closed."""
    quote = text[start]
    i, n = start + 1, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and backslash_escapes:
            i += 2
            continue
        if c == quote:
            if i + 1 < n and text[i + 1] == quote:  # a doubled quote stands for itself
                i += 2
                continue
            return i + 1
        i += 1
    return -1


def bind(conn: Any, sql: str, params: Sequence[Any]) -> bytes:
    """cdc's own ``sql`` (``%s`` placeholders, any other ``%`` doubled) with ``params`` as ``conn``
    (PyMySQL's or MySQLdb's) writes them as literals: the statement's bytes, nothing left to format."""
    literals = []
    for value in params:
        literal = conn.literal(value)  # MySQLdb: bytes; PyMySQL: str (bytes values surrogate-escaped)
        literals.append(literal if isinstance(literal, bytes) else literal.encode("utf-8", "surrogateescape"))
    return sql.encode("utf-8") % tuple(literals)


def where_clause(conn: Any, bounds: str, params: Sequence[Any], condition: str) -> bytes:
    """`` WHERE <bounds> AND (<filter>)`` (either may be absent; nothing when both are) as bytes:
    ``bounds`` bound by :func:`bind`, the filter checked by :func:`check_filter` and appended verbatim."""
    parts = []
    if bounds:
        parts.append(bind(conn, bounds, params))
    checked = check_filter(condition)
    if checked:
        parts.append(b"(" + checked.encode("utf-8") + b")")
    return b" WHERE " + b" AND ".join(parts) if parts else b""
