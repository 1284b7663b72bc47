"""Reading ``.properties`` files exactly as Java's ``java.util.Properties.load`` does.

Kafka's scripts (``connect-standalone worker.properties connector.properties``) read their files with
``Utils.loadProps`` → ``Properties.load(InputStream)``, so the rules users rely on are Java's:

* A *natural line* ends at ``\\n``, ``\\r`` or ``\\r\\n``. Leading spaces, tabs and form feeds are
  ignored; blank lines are skipped.
* A natural line whose first non-blank character is ``#`` or ``!`` is a comment (and never continues
  onto the next line, even if it ends with a backslash).
* A line ending in an odd number of backslashes continues on the next natural line; the backslash and
  the line break are dropped and so is the leading whitespace of the continuation.
* The key ends at the first unescaped ``=``, ``:`` or whitespace. Whitespace around the separator is
  skipped, and one ``=`` or ``:`` after whitespace counts as the separator (``key = value``,
  ``key value``, ``key:value`` all mean the same). Trailing whitespace of the value is *kept*, as Java
  keeps it.
* Escapes in keys and values: ``\\t \\n \\r \\f`` and ``\\uXXXX`` (exactly four hex digits, else
  "Malformed \\uxxxx encoding."); a backslash before any other character stands for that character
  (``\\\\ \\= \\: \\  \\# \\!``). A surrogate pair written as two ``\\u`` escapes becomes one character.
* A later key overwrites an earlier one.

The state machine below follows the JDK's ``Properties.LineReader.readLine`` (Java 9+) and
``loadConvert`` step for step, including their corner cases (e.g. an empty continuation line ends the
logical line; a logical line that is empty after a continuation lets a following ``#`` start a
comment).

Encoding: ``Properties.load(InputStream)`` decodes ISO-8859-1. Our users also write UTF-8 (the seed
configs come from Korean write-ups), so :func:`load_properties` decodes UTF-8 first and falls back to
ISO-8859-1, which decodes any bytes; for ASCII files, the common case, both agree. A UTF-8 byte-order
mark is dropped (Java would make it part of the first key, which no user means).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

from cdc.api.errors import ConfigError

__all__ = ["decode_properties_bytes", "load_connector_config", "load_properties", "parse_properties"]

_BLANK = " \t\f"
_EOL = "\r\n"
_HEX = "0123456789abcdefABCDEF"


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """The properties of the file at ``path`` (UTF-8, else ISO-8859-1), in first-appearance order."""
    with open(path, "rb") as f:
        data = f.read()
    return parse_properties(decode_properties_bytes(data))


def load_connector_config(path: str) -> dict[str, str]:
    """A connector config from a .properties file, or a JSON file as users POST it."""
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as fh:
            body = json.load(fh)
        config = body.get("config", body)
        if "name" in body and "config" in body:
            config = {**config, "name": body["name"]}
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    return load_properties(path)


def decode_properties_bytes(data: bytes) -> str:
    """Decode a properties file: UTF-8 (a leading BOM dropped) if valid, else ISO-8859-1."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_properties(text: str) -> dict[str, str]:
    """Parse properties text as ``Properties.load(Reader)``; later keys overwrite earlier ones."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        props[key] = value
    return props


def _logical_lines(text: str) -> Iterator[str]:
    """Yield the logical lines of ``text`` as the JDK's ``LineReader.readLine`` returns them.

    Each yielded line still holds its escapes (they are converted after the key/value split, because an
    escaped separator must not split).
    """
    buf: list[str] = []
    skip_white = True  # skipping the leading whitespace of a (natural or continuation) line
    appended_line_begin = False  # at the start of a continuation line
    preceding_backslash = False
    skip_lf = False  # the previous line break was a \r: a following \n belongs to it
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        i += 1
        if skip_lf:
            skip_lf = False
            if c == "\n":
                continue
        if skip_white:
            if c in _BLANK:
                continue
            if not appended_line_begin and c in _EOL:
                continue
            skip_white = False
            appended_line_begin = False
        if not buf and c in "#!":
            # A comment: consume the rest of the natural line.
            while i < n and text[i] not in _EOL:
                i += 1
            if i < n:
                skip_lf = text[i] == "\r"
                i += 1
            skip_white = True
            continue
        if c not in _EOL:
            buf.append(c)
            preceding_backslash = not preceding_backslash if c == "\\" else False
            continue
        # End of a natural line.
        if not buf:
            skip_white = True
            continue
        if i >= n:
            # Input ends right after this line break: the JDK returns the line without a trailing
            # escaping backslash, even when nothing is left (an odd but real empty key).
            if preceding_backslash:
                buf.pop()
            yield "".join(buf)
            return
        if preceding_backslash:
            # The backslash is not part of the line; the next natural line continues it.
            buf.pop()
            skip_white = True
            appended_line_begin = True
            preceding_backslash = False
            skip_lf = c == "\r"
            continue
        yield "".join(buf)
        buf = []
        skip_white = True
    if buf:
        if preceding_backslash:
            buf.pop()
        yield "".join(buf)


def _split_key_value(line: str) -> tuple[str, str]:
    """Split a logical line into its unescaped key and value (``Properties.load0``)."""
    limit = len(line)
    key_len = 0
    value_start = limit
    has_sep = False
    preceding_backslash = False
    while key_len < limit:
        c = line[key_len]
        if c in "=:" and not preceding_backslash:
            value_start = key_len + 1
            has_sep = True
            break
        if c in _BLANK and not preceding_backslash:
            value_start = key_len + 1
            break
        preceding_backslash = not preceding_backslash if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in _BLANK:
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _unescape(line[:key_len]), _unescape(line[value_start:])


_SIMPLE_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}


def _unescape(s: str) -> str:
    """``Properties.loadConvert``: resolve ``\\t \\r \\n \\f \\uXXXX`` and ``\\<any>`` → ``<any>``."""
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:  # a lone trailing backslash (only reachable through odd inputs): Java drops it
            break
        c = s[i]
        i += 1
        if c == "u":
            digits = s[i : i + 4]
            if len(digits) < 4 or any(d not in _HEX for d in digits):
                raise ConfigError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_SIMPLE_ESCAPES.get(c, c))
    result = "".join(out)
    if any("\ud800" <= ch <= "\udfff" for ch in result):
        # Java strings are UTF-16: "\ud83d\ude00" is one character. Lone surrogates stay as they are.
        result = result.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return result
