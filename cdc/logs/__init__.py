"""How cdc logs: Connect's line format (or JSON lines), the ``[connector|task-N]`` context, Java names.

``configure_logging`` is called once by the ``cdc`` command with the root level, and again by the worker
with its ``log.*`` settings (:class:`LogSettings`): ``log.format`` (``log4j`` or ``json``),
``log.pattern`` (a log4j ``PatternLayout``) and ``log.file`` (also write to that file).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdc.logs.context import ContextFilter, current_context, in_context, set_context
from cdc.logs.format import DEFAULT_PATTERN, JsonFormatter, PatternFormatter, log4j_level
from cdc.logs.java_names import JAVA_LOGGERS, python_loggers

__all__ = [
    "DEFAULT_PATTERN",
    "JAVA_LOGGERS",
    "ContextFilter",
    "JsonFormatter",
    "LogSettings",
    "PatternFormatter",
    "configure_logging",
    "current_context",
    "in_context",
    "log4j_level",
    "python_loggers",
    "set_context",
]

_QUIET = ("kafka", "uvicorn.access", "py4j")
"""Libraries whose INFO lines are theirs, not the user's: WARN and above only unless raised."""


@dataclass(frozen=True)
class LogSettings:
    format: str = "log4j"
    pattern: str = DEFAULT_PATTERN
    file: str | None = None

    @classmethod
    def from_worker(cls, parsed: Mapping[str, Any]) -> LogSettings:
        return cls(
            str(parsed.get("log.format") or "log4j"),
            str(parsed.get("log.pattern") or DEFAULT_PATTERN),
            str(parsed["log.file"]) if parsed.get("log.file") else None,
        )

    def formatter(self) -> logging.Formatter:
        if self.format == "json":
            return JsonFormatter()
        if self.format == "log4j":
            return PatternFormatter(self.pattern)
        raise ValueError(f"log.format must be log4j or json, not {self.format!r}")


class _Console(logging.StreamHandler):
    """The handler :func:`configure_logging` made for stderr."""


class _File(logging.FileHandler):
    """The handler :func:`configure_logging` made for ``log.file``."""


def configure_logging(
    level: str | None = "INFO", settings: LogSettings | None = None, *, install: bool = True
) -> None:
    """Log to stderr (and ``settings.file``) in ``settings``' format; ``level`` sets the root level.

    Called again, it keeps the handlers it made (and the filters others added to them, such as the
    secret redaction) and changes their format. With ``install=False`` (a worker built inside another
    program, e.g. a test) it only changes handlers it made earlier: the embedding program's logging is
    left as it is."""
    settings = settings or LogSettings()
    formatter = settings.formatter()
    root = logging.getLogger()
    ours: list[logging.Handler] = [h for h in root.handlers if isinstance(h, (_Console, _File))]
    if not ours and not install:
        return
    if not ours:
        console = _Console()
        console.addFilter(ContextFilter())
        root.handlers[:] = [console]
        ours = [console]
        for quiet in _QUIET:
            logging.getLogger(quiet).setLevel(logging.WARNING)
    path = settings.file
    if path and not any(isinstance(h, _File) and h.baseFilename == os.path.abspath(path) for h in ours):
        file_handler = _File(path, encoding="utf-8")
        for f in ours[0].filters:
            file_handler.addFilter(f)
        root.addHandler(file_handler)
        ours.append(file_handler)
    for handler in ours:
        handler.setFormatter(formatter)
    if level is not None:
        root.setLevel(level)
