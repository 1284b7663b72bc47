"""What the worker measures of itself and its tasks, under Kafka Connect's metric names.

Connect's metrics (``kafka.connect:type=connector-task-metrics`` …) are Kafka ``Sensor``s: totals, and
rates, averages and maxima over a sliding window (``metrics.sample.window.ms`` times ``metrics.num.samples``,
30 s and 2 by default). :class:`Meter` and :class:`WindowStat` keep the same shape over a 60 s window; the
task loops feed a :class:`SourceTaskMetrics` or :class:`SinkTaskMetrics`, the worker a
:class:`WorkerMetrics`, and :mod:`cdc.worker.connect_metrics` reads them all for ``GET /metrics``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

__all__ = [
    "Meter",
    "RebalanceMetrics",
    "SinkTaskMetrics",
    "SourceTaskMetrics",
    "TaskMetrics",
    "WindowStat",
    "WorkerMetrics",
]

WINDOW_S = 60.0

Clock = Callable[[], float]


class WindowStat:
    """Values recorded over the last ``window`` seconds: their count, sum, average and maximum."""

    def __init__(self, window: float = WINDOW_S, clock: Clock = time.monotonic) -> None:
        self.window, self.clock = window, clock
        self._samples: deque[tuple[float, float]] = deque()
        self._lock = threading.Lock()

    def record(self, value: float) -> None:
        now = self.clock()
        with self._lock:
            self._samples.append((now, value))
            self._expire(now)

    def _expire(self, now: float) -> None:
        while self._samples and self._samples[0][0] < now - self.window:
            self._samples.popleft()

    def values(self) -> list[float]:
        with self._lock:
            self._expire(self.clock())
            return [v for _, v in self._samples]

    def avg(self) -> float:
        values = self.values()
        return sum(values) / len(values) if values else float("nan")

    def max(self) -> float:
        values = self.values()
        return max(values) if values else float("nan")


class Meter:
    """A total and its rate per second over the window (Kafka's ``Meter``: ``*-total`` and ``*-rate``)."""

    def __init__(self, window: float = WINDOW_S, clock: Clock = time.monotonic) -> None:
        self.total = 0
        self.clock = clock
        self._started = clock()
        self._recent = WindowStat(window, clock)

    def mark(self, count: int = 1) -> None:
        self.total += count
        self._recent.record(count)

    def rate(self) -> float:
        elapsed = min(self._recent.window, max(self.clock() - self._started, 1.0))
        return sum(self._recent.values()) / elapsed


class TaskMetrics:
    """``connector-task-metrics``: offset commits and batch sizes (the status comes from the status store)."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.commit_time_ms = WindowStat(clock=clock)
        self._commit_outcomes = WindowStat(clock=clock)  # 1.0 success, 0.0 failure
        self.commit_success_total = 0
        self.commit_failure_total = 0
        self.batch_size = WindowStat(clock=clock)

    def offset_commit(self, succeeded: bool, started: float) -> None:
        """One offset commit that began at ``started`` (this clock) and ended now."""
        self.commit_time_ms.record((self.clock() - started) * 1000)
        self._commit_outcomes.record(1.0 if succeeded else 0.0)
        if succeeded:
            self.commit_success_total += 1
        else:
            self.commit_failure_total += 1

    def commit_percentages(self) -> tuple[float, float]:
        """(success, failure) shares of the window's commits, 0 to 1 as Connect reports them."""
        outcomes = self._commit_outcomes.values()
        if not outcomes:
            return 0.0, 0.0
        ok = sum(outcomes) / len(outcomes)
        return ok, 1.0 - ok


class SourceTaskMetrics(TaskMetrics):
    """``source-task-metrics``: records polled from the task and written to Kafka, poll batch times."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        super().__init__(clock)
        self.poll = Meter(clock=clock)
        self.write = Meter(clock=clock)
        self.poll_batch_time_ms = WindowStat(clock=clock)
        self.active_count = 0

    def polled(self, count: int, started: float) -> None:
        self.poll_batch_time_ms.record((self.clock() - started) * 1000)
        if count:
            self.poll.mark(count)
            self.batch_size.record(count)

    def written(self, count: int) -> None:
        self.write.mark(count)


class SinkTaskMetrics(TaskMetrics):
    """``sink-task-metrics``: records read from Kafka and handed to ``put``, put times, the lag."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        super().__init__(clock)
        self.read = Meter(clock=clock)
        self.send = Meter(clock=clock)
        self.put_batch_time_ms = WindowStat(clock=clock)
        self.partition_count = 0
        self.record_lag = WindowStat(clock=clock)

    def put(self, read: int, sent: int, started: float) -> None:
        self.read.mark(read)
        self.send.mark(sent)
        self.put_batch_time_ms.record((self.clock() - started) * 1000)
        if sent:
            self.batch_size.record(sent)


class WorkerMetrics:
    """``connect-worker-metrics``: connector and task start-ups on this worker."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.connector_startup = {"attempts": 0, "success": 0, "failure": 0}
        self.task_startup = {"attempts": 0, "success": 0, "failure": 0}

    def connector_started(self, succeeded: bool) -> None:
        self._count(self.connector_startup, succeeded)

    def task_started(self, succeeded: bool) -> None:
        self._count(self.task_startup, succeeded)

    def _count(self, counts: dict[str, int], succeeded: bool) -> None:
        with self._lock:
            counts["attempts"] += 1
            counts["success" if succeeded else "failure"] += 1


class RebalanceMetrics:
    """``connect-worker-rebalance-metrics``: completed rebalances, their times, whether one is under way."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.completed_total = 0
        self.epoch = 0
        self.leader = ""
        self._began: float | None = None
        self._last_completed: float | None = None
        self.time_ms = WindowStat(window=float("inf"), clock=clock)

    @property
    def rebalancing(self) -> bool:
        return self._began is not None

    def began(self) -> None:
        if self._began is None:
            self._began = self.clock()

    def completed(self, epoch: int, leader: str) -> None:
        now = self.clock()
        if self._began is not None:
            self.time_ms.record((now - self._began) * 1000)
        self._began = None
        self._last_completed = now
        self.completed_total += 1
        self.epoch, self.leader = epoch, leader

    def time_since_last_ms(self) -> float:
        last = self._last_completed
        return -1.0 if last is None else (self.clock() - last) * 1000
