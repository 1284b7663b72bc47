"""Error handling for record operations: retries, ``errors.tolerance``, error logging.

Connect's ``RetryWithToleranceOperator`` in small: each stage of a record's way (transform, convert,
produce/put) runs through :meth:`ErrorHandler.execute`. A :class:`RetriableError` is retried with
exponential backoff until ``errors.retry.timeout``; any failure left over either fails the task
(``errors.tolerance=none``) or skips the record (``all``), logged when ``errors.log.enable`` is set.
Reporters (the sink's dead-letter queue) see every tolerated failure.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from cdc.api.errors import ConnectError, RetriableError
from cdc.worker.settings import ConnectorSettings

__all__ = ["ErrorHandler", "ErrorReporter", "Stage", "ToleranceExceededError"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Stage:
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"
    TASK_PUT = "TASK_PUT"
    TASK_POLL = "TASK_POLL"


class ToleranceExceededError(ConnectError):
    def __init__(self, cause: BaseException) -> None:
        super().__init__("Tolerance exceeded in error handler")
        self.__cause__ = cause


class ErrorReporter(Protocol):
    def report(self, stage: str, origin: str, error: BaseException, record: Any) -> None: ...


class ErrorHandler:
    def __init__(
        self,
        context: str,
        retry_timeout_ms: int = 0,
        retry_delay_max_ms: int = 60000,
        tolerance: str = "none",
        log_enable: bool = False,
        log_include_messages: bool = False,
        stopping: threading.Event | None = None,
    ) -> None:
        self.context = context
        self.retry_timeout_ms = retry_timeout_ms
        self.retry_delay_max_ms = retry_delay_max_ms
        self.tolerate_all = tolerance.lower() == "all"
        self.log_enable = log_enable
        self.log_include_messages = log_include_messages
        self.stopping = stopping or threading.Event()
        self.reporters: list[ErrorReporter] = []
        self.total_failures = 0
        self.total_skipped = 0

    @classmethod
    def from_config(cls, context: str, config: ConnectorSettings, stopping: threading.Event) -> ErrorHandler:
        """The handler of a connector's ``errors.*`` settings."""
        return cls(
            context,
            config.errors_retry_timeout,
            config.errors_retry_delay_max_ms,
            config.errors_tolerance,
            config.errors_log_enable,
            config.errors_log_include_messages,
            stopping,
        )

    def _retry(self, operation: Callable[[], T]) -> T:
        deadline = None if self.retry_timeout_ms < 0 else time.monotonic() + self.retry_timeout_ms / 1000
        delay = 0.3
        while True:
            try:
                return operation()
            except RetriableError:
                if deadline is not None and time.monotonic() + delay > deadline:
                    raise
                if self.stopping.wait(delay):
                    raise
                delay = min(delay * 2, self.retry_delay_max_ms / 1000)

    def execute(
        self, stage: str, origin: str, operation: Callable[[], T], record: Any
    ) -> tuple[bool, T | None]:
        """Run ``operation``; (True, result) on success, (False, None) if the record is to be skipped."""
        try:
            return True, self._retry(operation)
        except Exception as exc:
            self.total_failures += 1
            if self.log_enable:
                detail = f" for record {record!r}" if self.log_include_messages else ""
                log.error(
                    "[%s] Error encountered in stage %s (%s)%s",
                    self.context,
                    stage,
                    origin,
                    detail,
                    exc_info=exc,
                )
            if not self.tolerate_all:
                raise ToleranceExceededError(exc) from exc
            for reporter in self.reporters:
                reporter.report(stage, origin, exc, record)
            self.total_skipped += 1
            return False, None
