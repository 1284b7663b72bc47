"""Java syntaxes users write in transform configs, turned into Python.

* regular expressions: ``(?<name>…)`` becomes ``(?P<name>…)``; the rest of the common syntax is shared;
* ``Matcher.replaceFirst`` replacements: ``$1``, ``${name}``, ``\\$`` (a literal dollar);
* ``SimpleDateFormat`` patterns (``yyyy-MM-dd'T'HH:mm:ss.SSSZ`` …), formatted and parsed in UTC.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from typing import Any

from cdc.api.errors import ConfigError

__all__ = ["JavaDateFormat", "compile_java_regex", "java_replacement"]

_NAMED_GROUP = re.compile(r"(?<!\\)\(\?<([A-Za-z][A-Za-z0-9]*)>")


def compile_java_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regex; raises ``re.error`` when Python cannot read it."""
    return re.compile(_NAMED_GROUP.sub(r"(?P<\1>", pattern))


def java_replacement(replacement: str, pattern: re.Pattern[str]) -> list[str | int]:
    """Parse a Java replacement string into literal text and group references (int index or name).

    Like ``Matcher.appendReplacement``: ``\\x`` is a literal ``x``; ``$n`` takes as many digits as still
    name an existing group; ``${name}`` is a named group. Unknown groups raise :class:`ConfigError`.
    """
    parts: list[str | int] = []
    buf: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        c = replacement[i]
        if c == "\\":
            i += 1
            if i >= n:
                raise ConfigError("character to be escaped is missing")
            buf.append(replacement[i])
            i += 1
        elif c == "$":
            i += 1
            if i >= n:
                raise ConfigError("Illegal group reference: group index is missing")
            if replacement[i] == "{":
                end = replacement.find("}", i)
                if end == -1:
                    raise ConfigError("named capturing group is missing trailing '}'")
                name = replacement[i + 1 : end]
                if name not in pattern.groupindex:
                    raise ConfigError(f"No group with name {{{name}}}")
                ref: str | int = pattern.groupindex[name]
                i = end + 1
            else:
                if not replacement[i].isdigit():
                    raise ConfigError("Illegal group reference")
                num = int(replacement[i])
                i += 1
                while i < n and replacement[i].isdigit() and num * 10 + int(replacement[i]) <= pattern.groups:
                    num = num * 10 + int(replacement[i])
                    i += 1
                if num > pattern.groups:
                    raise ConfigError(f"No group {num}")
                ref = num
            if buf:
                parts.append("".join(buf))
                buf = []
            parts.append(ref)
        else:
            buf.append(c)
            i += 1
    if buf:
        parts.append("".join(buf))
    return parts


def expand(parts: list[str | int], match: re.Match[str]) -> str:
    return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in parts)


# -- SimpleDateFormat ---------------------------------------------------------------------------------

_MONTHS = list(calendar.month_name)[1:]
_MONTHS_SHORT = list(calendar.month_abbr)[1:]
_DAYS = list(calendar.day_name)
_DAYS_SHORT = list(calendar.day_abbr)
_SUPPORTED = set("GyYMLdHhkKmsSEuaDzZX")


class JavaDateFormat:
    """A ``SimpleDateFormat`` pattern, formatted and parsed in UTC (as Connect's transforms set it)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = self._tokenize(pattern)
        self._regex: re.Pattern[str] | None = None

    @staticmethod
    def _tokenize(pattern: str) -> list[tuple[str, int | str]]:
        tokens: list[tuple[str, int | str]] = []  # ("lit", text) or (letter, count)
        i, n = 0, len(pattern)
        while i < n:
            c = pattern[i]
            if c == "'":
                end = pattern.find("'", i + 1)
                if end == i + 1:  # '' is a quote
                    tokens.append(("lit", "'"))
                    i += 2
                    continue
                if end == -1:
                    raise ValueError(f"Unterminated quote in pattern {pattern}")
                tokens.append(("lit", pattern[i + 1 : end].replace("''", "'")))
                i = end + 1
            elif c.isascii() and c.isalpha():
                if c not in _SUPPORTED:
                    raise ValueError(f"Illegal pattern character '{c}'")
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                tokens.append((c, j - i))
                i = j
            else:
                tokens.append(("lit", c))
                i += 1
        return tokens

    def format(self, value: _dt.datetime) -> str:
        if value.tzinfo is not None:
            value = value.astimezone(_dt.UTC)
        out: list[str] = []
        for kind, arg in self._tokens:
            if kind == "lit":
                out.append(str(arg))
                continue
            count = int(arg)
            out.append(self._field(kind, count, value))
        return "".join(out)

    @staticmethod
    def _field(letter: str, count: int, v: _dt.datetime) -> str:
        def num(x: int) -> str:
            return str(x).zfill(count)

        if letter in "yY":
            return str(v.year % 100).zfill(2) if count == 2 else num(v.year)
        if letter in "ML":
            if count >= 4:
                return _MONTHS[v.month - 1]
            if count == 3:
                return _MONTHS_SHORT[v.month - 1]
            return num(v.month)
        if letter == "d":
            return num(v.day)
        if letter == "H":
            return num(v.hour)
        if letter == "k":
            return num(v.hour or 24)
        if letter == "K":
            return num(v.hour % 12)
        if letter == "h":
            return num(v.hour % 12 or 12)
        if letter == "m":
            return num(v.minute)
        if letter == "s":
            return num(v.second)
        if letter == "S":
            return num(v.microsecond // 1000)
        if letter == "E":
            return _DAYS[v.weekday()] if count >= 4 else _DAYS_SHORT[v.weekday()]
        if letter == "u":
            return num(v.isoweekday())
        if letter == "a":
            return "AM" if v.hour < 12 else "PM"
        if letter == "D":
            return num(v.timetuple().tm_yday)
        if letter == "G":
            return "AD"
        if letter == "z":
            return "UTC" if count < 4 else "Coordinated Universal Time"
        if letter == "Z":
            return "+0000"
        # X: ISO 8601 zone, "Z" for UTC
        return "Z"

    def _parser(self) -> re.Pattern[str]:
        if self._regex is None:
            parts: list[str] = []
            for idx, (kind, arg) in enumerate(self._tokens):
                if kind == "lit":
                    parts.append(re.escape(str(arg)))
                    continue
                count = int(arg)
                g = f"{kind}{idx}"
                if kind in "ML" and count >= 3:
                    names = "|".join(_MONTHS + _MONTHS_SHORT)
                    parts.append(f"(?P<{g}>{names})")
                elif kind == "E":
                    parts.append(f"(?P<{g}>{'|'.join(_DAYS + _DAYS_SHORT)})")
                elif kind == "a":
                    parts.append(f"(?P<{g}>AM|PM|am|pm)")
                elif kind == "G":
                    parts.append(f"(?P<{g}>AD|BC)")
                elif kind in "zZX":
                    parts.append(rf"(?P<{g}>Z|UTC|GMT|[+-]\d{{2}}:?(?:\d{{2}})?)")
                else:
                    # Adjacent numeric fields ("yyyyMMdd") have fixed widths, as in SimpleDateFormat.
                    nxt = self._tokens[idx + 1][0] if idx + 1 < len(self._tokens) else "lit"
                    fixed = nxt not in ("lit", "a", "E", "G", "z", "Z", "X") and not (
                        nxt in "ML" and int(self._tokens[idx + 1][1]) >= 3
                    )
                    parts.append(f"(?P<{g}>\\d{{{count}}})" if fixed else f"(?P<{g}>\\d+)")
            self._regex = re.compile("".join(parts), re.IGNORECASE)
        return self._regex

    def parse(self, text: str) -> _dt.datetime:
        """The UTC instant ``text`` denotes; raises ``ValueError`` when it does not match."""
        m = self._parser().match(text)
        if m is None:
            raise ValueError(text)
        f: dict[str, Any] = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "ms": 0}
        pm: bool | None = None
        offset = _dt.timedelta(0)
        yday: int | None = None
        for idx, (kind, arg) in enumerate(self._tokens):
            if kind == "lit":
                continue
            raw = m.group(f"{kind}{idx}")
            if kind in "yY":
                year = int(raw)
                f["year"] = (
                    (2000 + year if year < 80 else 1900 + year) if int(arg) == 2 and len(raw) <= 2 else year
                )
            elif kind in "ML":
                f["month"] = int(raw) if raw.isdigit() else self._month(raw)
            elif kind == "d":
                f["day"] = int(raw)
            elif kind in "Hk":
                f["hour"] = int(raw) % 24
            elif kind in "hK":
                f["hour"] = int(raw) % 12
            elif kind == "m":
                f["minute"] = int(raw)
            elif kind == "s":
                f["second"] = int(raw)
            elif kind == "S":
                f["ms"] = int(raw)
            elif kind == "a":
                pm = raw.upper() == "PM"
            elif kind == "D":
                yday = int(raw)
            elif kind in "zZX" and raw.upper() not in ("Z", "UTC", "GMT"):
                sign = -1 if raw[0] == "-" else 1
                digits = raw[1:].replace(":", "")
                offset = sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        if pm is not None and f["hour"] < 12 and pm:
            f["hour"] += 12
        base = _dt.datetime(
            f["year"], f["month"], f["day"], f["hour"], f["minute"], f["second"], tzinfo=_dt.UTC
        )
        if yday is not None:
            base = base.replace(month=1, day=1) + _dt.timedelta(days=yday - 1)
        return base + _dt.timedelta(milliseconds=f["ms"]) - offset

    @staticmethod
    def _month(name: str) -> int:
        lowered = name.lower()
        for i, (full, short) in enumerate(zip(_MONTHS, _MONTHS_SHORT, strict=True)):
            if lowered in (full.lower(), short.lower()):
                return i + 1
        raise ValueError(name)
