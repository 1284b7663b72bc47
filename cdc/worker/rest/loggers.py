"""Log levels under ``/admin/loggers``, as Connect's ``Loggers`` does over Log4j, here over :mod:`logging`.

Log4j names map to Python levels: TRACE 5, DEBUG 10, INFO 20, WARN 30, ERROR 40, FATAL 50, OFF above
everything, ALL 1 (0 would mean "inherit" in Python). The root logger is called ``root``. Setting a
namespace sets every existing logger whose name starts with it, plus the namespace itself, and answers
the sorted names; ``last_modified`` (ms since the epoch) is kept per logger that was set through here.

Java names (``io.debezium…``, ``io.confluent.connect.jdbc…``, ``org.apache.kafka.connect…``) stand for
the cdc loggers that do that work (:mod:`cdc.logs.java_names`): setting one sets those loggers and their
descendants; reading one answers the level of the first of them; the list shows every Java name.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from cdc.logs.java_names import JAVA_LOGGERS, python_loggers

__all__ = ["ROOT_LOGGER_NAME", "Loggers", "to_log4j_level", "to_python_level"]

ROOT_LOGGER_NAME = "root"
TRACE = 5
OFF = logging.CRITICAL + 50

_LEVELS = {
    "ALL": 1,
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "OFF": OFF,
}
# Descending thresholds to name any Python level with the nearest Log4j level at or below it.
_NAMES = sorted(((v, k) for k, v in _LEVELS.items()), reverse=True)

if logging.getLevelName(TRACE) == f"Level {TRACE}":
    logging.addLevelName(TRACE, "TRACE")


def to_python_level(name: str) -> int | None:
    """The Python level of a Log4j level name (any case), None if it is not one."""
    return _LEVELS.get(name.strip().upper())


def to_log4j_level(level: int) -> str:
    for threshold, name in _NAMES:
        if level >= threshold:
            return name
    return "ALL"


class Loggers:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last_modified: dict[str, int] = {}

    def _existing(self) -> dict[str, logging.Logger]:
        return {
            name: logger
            for name, logger in list(logging.Logger.manager.loggerDict.items())
            if isinstance(logger, logging.Logger)
        }

    def _level_of(self, name: str, logger: logging.Logger) -> dict[str, object]:
        level = logger.level or logger.getEffectiveLevel()
        return {"level": to_log4j_level(level), "last_modified": self._last_modified.get(name)}

    def all_levels(self) -> dict[str, dict[str, object]]:
        """Every logger with a level of its own, and the root: ``{name: {"level","last_modified"}}``."""
        with self._lock:
            out = {
                name: self._level_of(name, logger)
                for name, logger in self._existing().items()
                if logger.level != logging.NOTSET
            }
            out[ROOT_LOGGER_NAME] = self._level_of(ROOT_LOGGER_NAME, logging.getLogger())
            for java in JAVA_LOGGERS:
                out[java] = self._level_of(java, self._stand_in(java))
            return dict(sorted(out.items()))

    @staticmethod
    def _stand_in(java: str) -> logging.Logger:
        """The cdc logger whose level a Java name answers (the first it maps to)."""
        mapped = python_loggers(java)
        assert mapped
        return logging.getLogger(mapped[0])

    def level(self, name: str) -> dict[str, object] | None:
        with self._lock:
            if name.lower() == ROOT_LOGGER_NAME:
                return self._level_of(ROOT_LOGGER_NAME, logging.getLogger())
            if python_loggers(name) is not None:
                return self._level_of(name, self._stand_in(name))
            logger = self._existing().get(name)
            return None if logger is None else self._level_of(name, logger)

    def set_level(self, namespace: str, level: str) -> list[str]:
        """Set ``namespace`` and its descendants to the Log4j ``level``; the affected names, sorted."""
        value = to_python_level(level)
        if value is None:
            raise ValueError(f"invalid log level '{level}'.")
        with self._lock:
            now = int(self._clock() * 1000)
            if namespace.lower() == ROOT_LOGGER_NAME:
                targets = dict(self._existing())
                targets[ROOT_LOGGER_NAME] = logging.getLogger()
            else:
                names = (namespace, *(python_loggers(namespace) or ()))
                for name in names:
                    logging.getLogger(name)  # created if absent, as Log4j's lookup does
                targets = {
                    n: lg for n, lg in self._existing().items() if any(n.startswith(name) for name in names)
                }
            for name, logger in targets.items():
                logger.setLevel(value)
                self._last_modified[name] = now
            return sorted(targets)
