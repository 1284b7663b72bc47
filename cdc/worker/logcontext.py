"""Connect-style log lines: ``[2024-01-01 10:00:00,123] INFO [name|task-0] message (logger)``.

The ``[connector|task-N]`` context is per thread: a task's thread sets it once, and a filter on the
root handler adds it to every record logged from that thread.
"""

from __future__ import annotations

import logging
import threading

__all__ = ["ContextFilter", "configure_logging", "set_context"]

_local = threading.local()


def set_context(context: str | None) -> None:
    _local.context = context


class ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ctx = getattr(_local, "context", None)
        record.connect_context = f"[{ctx}] " if ctx else ""
        return True


class _Formatter(logging.Formatter):
    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return super().formatTime(record, "%Y-%m-%d %H:%M:%S") + f",{int(record.msecs):03d}"


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.addFilter(ContextFilter())
    handler.setFormatter(_Formatter("[%(asctime)s] %(levelname)s %(connect_context)s%(message)s (%(name)s)"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("kafka", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
