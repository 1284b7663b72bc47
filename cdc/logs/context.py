"""The ``[connector|task-N]`` context of log lines: per thread, handed on to the threads a task starts.

A task's thread sets its context once (:func:`set_context`); every record logged from that thread
carries it (:class:`ContextFilter` puts it on the record as ``connect_context``, Connect's MDC key
``connector.context``). Threads do not inherit it, so the threads a connector starts for its own work
(snapshot readers, the binlog reader, Spark's progress watcher, the offset committer) are started
with :func:`in_context`, which wraps their target in the context of the thread that created them.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["ContextFilter", "current_context", "in_context", "set_context"]

_local = threading.local()

P = ParamSpec("P")
R = TypeVar("R")


def set_context(context: str | None) -> None:
    """This thread's context, e.g. ``name|task-0`` (None: none)."""
    _local.context = context


def current_context() -> str | None:
    context: str | None = getattr(_local, "context", None)
    return context


def in_context(target: Callable[P, R]) -> Callable[P, R]:
    """``target`` run in the calling thread's context, from whichever thread calls it."""
    context = current_context()

    @functools.wraps(target)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        set_context(context)
        return target(*args, **kwargs)

    return run


class ContextFilter(logging.Filter):
    """Adds ``connect_context`` (``"[name|task-0] "`` or ``""``) and ``connect_scope`` to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = current_context()
        record.connect_scope = context or ""
        record.connect_context = f"[{context}] " if context else ""
        return True
