"""The life of one task in the worker: a thread, its target state and its status reports.

:class:`WorkerTask` owns the thread and the state machine (start → RUNNING ⇄ PAUSED → stop, or
FAILED with a trace); subclasses write only ``initialize`` / ``execute`` / ``close``. Failures never
leave the thread: they become a FAILED status, so one task cannot take the worker down.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol

from cdc.logs import set_context
from cdc.worker.metrics import TaskMetrics
from cdc.worker.security import format_trace
from cdc.worker.stores.base import TargetState, TaskId

__all__ = ["TaskStatusListener", "WorkerTask"]

log = logging.getLogger(__name__)


class TaskStatusListener(Protocol):
    def on_startup(self, task: TaskId) -> None: ...
    def on_pause(self, task: TaskId) -> None: ...
    def on_resume(self, task: TaskId) -> None: ...
    def on_failure(self, task: TaskId, trace: str) -> None: ...
    def on_shutdown(self, task: TaskId) -> None: ...


class WorkerTask(ABC):
    metrics: TaskMetrics
    """Set by each subclass to its kind's metrics (source or sink)."""

    def __init__(self, task_id: TaskId, listener: TaskStatusListener, target_state: TargetState) -> None:
        self.id = task_id
        self.listener = listener
        self._target = target_state
        self._state_changed = threading.Condition()
        self.stopping = threading.Event()
        self.failed = False
        self._thread = threading.Thread(target=self._run, name=f"task-{task_id}", daemon=True)

    # -- control from the herder's thread ----------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def transition_to(self, state: TargetState) -> None:
        with self._state_changed:
            self._target = state
            self._state_changed.notify_all()

    def stop(self) -> None:
        """Ask the task to stop; returns at once (see :meth:`await_stop`)."""
        self.stopping.set()
        with self._state_changed:
            self._state_changed.notify_all()
        self.on_stop_requested()

    def await_stop(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def target_state(self) -> TargetState:
        return self._target

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    # -- in the task's thread -------------------------------------------------------------------------
    def await_unpause(self) -> bool:
        """Block while PAUSED; True if the task should go on running, False if it is stopping."""
        with self._state_changed:
            if self._target is TargetState.STARTED or self.stopping.is_set():
                return not self.stopping.is_set()
            self.on_pause()
            self.listener.on_pause(self.id)
            while self._target is not TargetState.STARTED and not self.stopping.is_set():
                self._state_changed.wait(1.0)
            if self.stopping.is_set():
                return False
        self.on_resume()
        self.listener.on_resume(self.id)
        return True

    def _run(self) -> None:
        set_context(f"{self.id.connector}|task-{self.id.task}")
        try:
            self.initialize()
            if not self.stopping.is_set():
                if self._target is TargetState.PAUSED:
                    self.listener.on_pause(self.id)
                else:
                    self.listener.on_startup(self.id)
                self.execute()
        except BaseException as exc:
            self.failed = True
            trace = format_trace(exc)  # secrets masked before the status store sees it
            log.error(
                "%s Task threw an uncaught and unrecoverable exception. Task is being killed and will "
                "not recover until manually restarted",
                self,
                exc_info=exc,
            )
            self._safe_close()
            self.listener.on_failure(self.id, trace)
            return
        self._safe_close()
        self.listener.on_shutdown(self.id)

    def _safe_close(self) -> None:
        try:
            self.close()
        except Exception:
            log.exception("%s Error while closing the task", self)

    def __str__(self) -> str:
        return f"WorkerTask{{id={self.id}}}"

    # -- for subclasses ---------------------------------------------------------------------------------
    @abstractmethod
    def initialize(self) -> None: ...

    @abstractmethod
    def execute(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    def on_stop_requested(self) -> None:
        """Called from the herder's thread after ``stopping`` is set (e.g. to call ``task.stop()``)."""

    @abstractmethod
    def progress(self) -> Mapping[str, Any]:
        """The connector task's :meth:`~cdc.api.connector.Task.progress`, for the REST status."""

    def on_pause(self) -> None: ...

    def on_resume(self) -> None: ...
