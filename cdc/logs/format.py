"""Log lines as Kafka Connect's log4j prints them, or as JSON lines.

:class:`PatternFormatter` reads a log4j ``PatternLayout`` pattern. Connect's
``connect-log4j.properties`` uses ``[%d] %p %X{connector.context}%m (%c:%L)%n``; our default drops the
line number: ``[2026-01-01 10:00:00,123] WARN [name|task-0] message
(io.confluent.connect.jdbc.source.JdbcSourceTask)``. Supported conversions: ``%d`` / ``%d{ISO8601}`` /
``%d{yyyy-MM-dd HH:mm:ss.SSS}`` (local time), ``%p`` (the level as log4j names it: ``WARN``, ``FATAL``,
``TRACE``), ``%m``, ``%c`` and ``%c{N}`` (the logger's name or its last N parts: the Java class whose work
the module does, :func:`~cdc.logs.java_names.java_name`, else the Python logger's), ``%C`` and ``%C{N}``
(the Python module: log4j's "caller class"), ``%t`` (thread), ``%L`` (line), ``%X{connector.context}``
(``[name|task-N] `` or nothing, as Connect's MDC), ``%n`` and ``%%``, each with log4j's padding
(``%-5p``). Anything else is refused when the worker starts, naming it.

:class:`JsonFormatter` writes one object per line: ``timestamp`` (UTC, ISO 8601 with milliseconds),
``level`` (log4j's name), ``logger`` (the Java name, as ``%c``), ``thread``, ``message``, ``connector``
and ``task`` when the line has a context, and ``exception`` (the trace) when there is one.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Callable

from cdc.logs.java_names import java_name

__all__ = ["DEFAULT_PATTERN", "JsonFormatter", "PatternFormatter", "log4j_level"]

DEFAULT_PATTERN = "[%d] %p %X{connector.context}%m (%c)%n"
TRACE = 5

_LEVELS: tuple[tuple[int, str], ...] = (
    (logging.CRITICAL, "FATAL"),
    (logging.ERROR, "ERROR"),
    (logging.WARNING, "WARN"),
    (logging.INFO, "INFO"),
    (logging.DEBUG, "DEBUG"),
    (TRACE, "TRACE"),
)


def log4j_level(levelno: int) -> str:
    """The log4j name of a Python level: the nearest log4j level at or below it."""
    for threshold, name in _LEVELS:
        if levelno >= threshold:
            return name
    return "ALL"


_TOKEN = re.compile(r"%(?P<pad>-?\d+)?(?:\.(?P<trunc>\d+))?(?P<conv>[a-zA-Z]+|%)(?:\{(?P<opt>[^}]*)\})?")
_JAVA_DATE = re.compile(r"yyyy|yy|MM|dd|HH|mm|ss|SSS|'[^']*'")
_JAVA_TO_STRFTIME = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}
_ISO8601 = "yyyy-MM-dd HH:mm:ss,SSS"

Part = Callable[[logging.LogRecord, str], str]


def _date(option: str | None) -> Part:
    java = _ISO8601 if option in (None, "", "ISO8601", "DEFAULT") else option
    assert java is not None

    def render(record: logging.LogRecord, _message: str) -> str:
        when = dt.datetime.fromtimestamp(record.created)

        def piece(m: re.Match[str]) -> str:
            token = m.group(0)
            if token == "SSS":
                return f"{int(record.msecs):03d}"
            if token.startswith("'"):
                return token[1:-1]
            return when.strftime(_JAVA_TO_STRFTIME[token])

        return _JAVA_DATE.sub(piece, java)

    return render


def _logger(option: str | None) -> Part:
    keep = int(option) if option and option.isdigit() else 0

    def render(record: logging.LogRecord, _message: str) -> str:
        name = java_name(record.name)
        return ".".join(name.split(".")[-keep:]) if keep else name

    return render


def _module(option: str | None) -> Part:
    keep = int(option) if option and option.isdigit() else 0

    def render(record: logging.LogRecord, _message: str) -> str:
        return ".".join(record.name.split(".")[-keep:]) if keep else record.name

    return render


def _mdc(option: str | None) -> Part:
    if option != "connector.context":
        raise ValueError(f"log.pattern: only %X{{connector.context}} is known, not %X{{{option}}}")
    return lambda record, _m: str(getattr(record, "connect_context", ""))


_CONVERSIONS: dict[str, Callable[[str | None], Part]] = {
    "d": _date,
    "date": _date,
    "p": lambda _o: lambda r, _m: log4j_level(r.levelno),
    "level": lambda _o: lambda r, _m: log4j_level(r.levelno),
    "m": lambda _o: lambda _r, m: m,
    "msg": lambda _o: lambda _r, m: m,
    "message": lambda _o: lambda _r, m: m,
    "c": _logger,
    "logger": _logger,
    "C": _module,
    "class": _module,
    "t": lambda _o: lambda r, _m: r.threadName or "",
    "thread": lambda _o: lambda r, _m: r.threadName or "",
    "L": lambda _o: lambda r, _m: str(r.lineno),
    "line": lambda _o: lambda r, _m: str(r.lineno),
    "X": _mdc,
    "n": lambda _o: lambda _r, _m: "\n",
    "%": lambda _o: lambda _r, _m: "%",
}


def _padded(part: Part, pad: str | None, trunc: str | None) -> Part:
    if pad is None and trunc is None:
        return part
    width = int(pad) if pad else 0
    limit = int(trunc) if trunc else None

    def render(record: logging.LogRecord, message: str) -> str:
        text = part(record, message)
        if limit is not None and len(text) > limit:
            text = text[len(text) - limit :]  # log4j truncates from the start
        return text.ljust(-width) if width < 0 else text.rjust(width)

    return render


def _literal(text: str) -> Part:
    return lambda _record, _message: text


def compile_pattern(pattern: str) -> list[Part]:
    """The pattern's parts; ValueError naming a conversion that is not supported."""
    parts: list[Part] = []
    pos = 0
    for m in _TOKEN.finditer(pattern):
        if m.start() > pos:
            parts.append(_literal(pattern[pos : m.start()]))
        conv = m.group("conv")
        make = _CONVERSIONS.get(conv)
        if make is None:
            raise ValueError(f"log.pattern: the conversion %{conv} is not supported")
        parts.append(_padded(make(m.group("opt")), m.group("pad"), m.group("trunc")))
        pos = m.end()
    if pos < len(pattern):
        parts.append(_literal(pattern[pos:]))
    return parts


class PatternFormatter(logging.Formatter):
    def __init__(self, pattern: str = DEFAULT_PATTERN) -> None:
        super().__init__()
        self.pattern = pattern
        self._parts = compile_pattern(pattern)

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        line = "".join(part(record, message) for part in self._parts)
        if line.endswith("\n"):
            line = line[:-1]  # the handler ends the line
        trace = self._trace(record)
        return f"{line}\n{trace}" if trace else line

    def _trace(self, record: logging.LogRecord) -> str:
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        text = record.exc_text or ""
        if record.stack_info:
            text = (
                f"{text}\n{self.formatStack(record.stack_info)}"
                if text
                else self.formatStack(record.stack_info)
            )
        return text


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        when = dt.datetime.fromtimestamp(record.created, dt.UTC)
        line: dict[str, object] = {
            "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(record.msecs):03d}Z",
            "level": log4j_level(record.levelno),
            "logger": java_name(record.name),
            "thread": record.threadName,
            "message": record.getMessage(),
        }
        scope = str(getattr(record, "connect_scope", ""))
        if scope:
            connector, _, task = scope.partition("|")
            line["connector"] = connector
            if task.startswith("task-"):
                line["task"] = int(task[5:]) if task[5:].isdigit() else task[5:]
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)
