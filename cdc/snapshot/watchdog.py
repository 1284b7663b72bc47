"""The run's watchdog: a snapshot whose executors are all gone must end, not hang.

Spark does not fail a job whose executors died: the standalone master relaunches executors while a worker
lives, and with no worker left the job waits for resources for ever (YARN and Kubernetes likewise wait for
containers). So the driver watches for *progress*: a chunk finished, or the records in the topics the run
writes grew (records of a chunk in flight reach Kafka long before it finishes; its transaction's open
records count). When neither happened for ``timeout`` seconds, or the runner says the application is lost
(Spark stopped its context: every master unreachable, the application killed), the watchdog calls
``halt`` with the reason; the engine cancels the chunks in flight, fences their transactions and ends the
run with :class:`SnapshotStalled`, keeping the resume file, so the same command run again resumes.

The clock and the probes are injected, so the decisions are unit-tested without Spark or Kafka.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from cdc.api.errors import ConnectError
from cdc.logs import in_context

__all__ = ["DEFAULT_STALL_TIMEOUT", "SnapshotStalled", "Watchdog"]

log = logging.getLogger(__name__)

DEFAULT_STALL_TIMEOUT = 300.0
"""Seconds without progress before a run is stopped (``--stall-timeout``,
``snapshot.spark.stall.timeout.ms``)."""


class SnapshotStalled(ConnectError):
    """The run made no progress for the stall timeout, or Spark lost the application; its state is kept."""


class Watchdog:
    """Calls ``halt(reason)`` once, when nothing progressed for ``timeout`` s or ``lost()`` names a reason.

    ``written()``: the records written so far in the watched topics (any growth is progress; an error
    probing it counts as no progress). :meth:`progress` notes a finished chunk. :meth:`check` makes one
    decision (the thread started by :meth:`start` calls it every ``interval`` seconds).
    """

    def __init__(
        self,
        timeout: float,
        written: Callable[[], int],
        lost: Callable[[], str | None],
        halt: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        interval: float | None = None,
    ) -> None:
        self.timeout = timeout
        self._written = written
        self._lost = lost
        self._halt = halt
        self._clock = clock
        self.interval = interval if interval is not None else max(0.2, min(5.0, timeout / 5))
        self._last_progress = clock()
        self._last_written: int | None = None
        self.reason: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def progress(self) -> None:
        self._last_progress = self._clock()

    def check(self) -> str | None:
        """One look: the reason the run was halted now, else None."""
        if self.reason is not None:
            return None
        reason = self._lost()
        if reason is None:
            written: int | None
            try:
                written = self._written()
            except Exception as exc:  # Kafka unreachable: no progress seen
                log.debug("Progress probe failed: %s", exc)
                written = self._last_written
            if written is not None and written != self._last_written:
                if self._last_written is not None:
                    self.progress()
                self._last_written = written
            idle = self._clock() - self._last_progress
            if idle < self.timeout:
                return None
            reason = (
                f"no executor made progress for {idle:,.0f} s (no chunk finished, no record written; "
                f"the stall timeout is {self.timeout:,.0f} s): are the executors gone?"
            )
        self.reason = reason
        self._halt(reason)
        return reason

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(self.interval):
                if self.check() is not None:
                    return

        self._thread = threading.Thread(target=in_context(loop), name="snapshot-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
