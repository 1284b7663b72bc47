"""The bounded queue between the capture thread and ``poll``.

The capture thread (snapshot, then binlog streaming) blocks when the queue is full — so memory stays
bounded whatever the table size — and its failure is re-raised by the next ``poll``, as Debezium's
``ChangeEventQueue`` does. With ``max.queue.size.in.bytes`` the queue is also full once the records in it
add up to that many bytes (their approximate sizes, :mod:`cdc.mysql.record_size`), as in Debezium.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["IDLE_POLL_S", "RETURN_CONTROL_S", "ChangeEventQueue"]

RETURN_CONTROL_S = 5.0
"""Debezium's ``ConfigurationDefaults.RETURN_CONTROL_INTERVAL``: the longest a poll waits for a batch."""

IDLE_POLL_S = 0.5
"""The least time a poll that finds nothing waits before it returns empty (Debezium's default interval):
a short ``poll.interval.ms`` bounds how long records wait for a batch, not how often an idle task wakes."""


class ChangeEventQueue:
    def __init__(
        self, max_size: int, max_batch: int, max_bytes: int = 0, sizer: Callable[[Any], int] | None = None
    ) -> None:
        self.max_size = max_size
        self.max_batch = max_batch
        self.max_bytes = max_bytes if sizer is not None else 0
        self._sizer = sizer
        self._sizes: deque[int] = deque()  # per item, when bounded by bytes
        self.bytes = 0
        self._items: deque[Any] = deque()
        self._cond = threading.Condition()
        self._error: BaseException | None = None
        self._closed = False
        # How many more items the waiting poll needs for a full batch (0: no poll waits). The capture thread
        # wakes the poller only once that many are queued, as Debezium's doEnqueue signals ``isFull`` only
        # on a full batch: a wake-up per event (a thread switch and the GIL handed over and back) cost more
        # CPU at a steady 1 000 changes/s than the poll's work itself, to return nothing before the timer.
        self._wanted = 0

    def _full(self) -> bool:
        return len(self._items) >= self.max_size or (self.max_bytes > 0 and self.bytes >= self.max_bytes)

    def put(self, item: Any, stopping: threading.Event) -> bool:
        """Add ``item``; blocks while full. False if stopping was set while waiting."""
        with self._cond:
            while self._full() and not stopping.is_set() and not self._closed:
                self._cond.wait(0.2)
            if stopping.is_set() or self._closed:
                return False
            self._items.append(item)
            if self.max_bytes > 0:
                assert self._sizer is not None
                size = self._sizer(item)
                self._sizes.append(size)
                self.bytes += size
            self._wake_poller()
            return True

    def put_all(self, items: list[Any], stopping: threading.Event) -> bool:
        """Add ``items`` in order; blocks while full. False if stopping was set while waiting.

        As many as there is room for go in at once, with one wake-up of the poller, and the rest once a
        poll made room: a snapshot's capture thread outpaces the worker, so its batches mostly meet a
        full queue, and adding them one item (one lock, one wake-up) at a time cost a lot of its CPU."""
        if self.max_bytes > 0:  # one at a time: each record's size decides whether the next one fits
            return all(self.put(item, stopping) for item in items)
        done, count = 0, len(items)
        with self._cond:
            while done < count:
                while len(self._items) >= self.max_size and not stopping.is_set() and not self._closed:
                    self._cond.wait(0.2)
                if stopping.is_set() or self._closed:
                    return False
                room = self.max_size - len(self._items)
                self._items.extend(items[done : done + room] if done or room < count else items)
                done += room
                self._wake_poller()
        return True

    def _wake_poller(self) -> None:
        """After adding items (the lock held): wake a waiting poll if it can now return a full batch, or
        once the queue is full (by count or bytes: the capture thread is about to wait for room), as
        Debezium's doEnqueue signals ``isFull``."""
        if self._wanted and (len(self._items) >= self._wanted or self._full()):
            self._wanted = 0
            self._cond.notify_all()

    def fail(self, error: BaseException) -> None:
        with self._cond:
            self._error = error
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def poll(self, timeout: float) -> list[Any]:
        """Debezium's ``poll``: up to ``max_batch`` items, waiting until that many are there or ``timeout``
        (``poll.interval.ms``, at most :data:`RETURN_CONTROL_S`) has passed, whichever is first; raises a
        producer failure when nothing is left to return before it.

        One difference, for intervals under :data:`IDLE_POLL_S` only: a poll that has nothing when its
        interval ends goes on waiting for the first item (until :data:`IDLE_POLL_S` has passed) and returns
        as soon as one is there, rather than returning nothing. Debezium's returns an empty batch and the
        worker polls again at once, so ``poll.interval.ms=0`` spins a core while the database is quiet and
        5 ms makes 200 empty polls a second. A record still waits at most the interval for a fuller batch;
        from 500 ms (the default) up, nothing changes."""
        now = time.monotonic()
        deadline = now + min(timeout, RETURN_CONTROL_S)
        idle_until = now + max(min(timeout, RETURN_CONTROL_S), IDLE_POLL_S)
        batch: list[Any] = []
        with self._cond:
            while True:
                n = min(len(self._items), self.max_batch - len(batch))
                if n:
                    batch.extend(self._items.popleft() for _ in range(n))
                    if self.max_bytes > 0:
                        self.bytes -= sum(self._sizes.popleft() for _ in range(n))
                    self._cond.notify_all()  # a capture thread waiting for room
                if len(batch) >= self.max_batch or self._closed:
                    return batch
                if self._error is not None:
                    if batch:
                        return batch  # the failure is raised by the next poll, after these records
                    error, self._error = self._error, None
                    raise error
                now = time.monotonic()
                if now < deadline:
                    self._wanted = self.max_batch - len(batch)
                    self._cond.wait(deadline - now)
                elif batch or now >= idle_until:
                    return batch
                else:
                    self._wanted = 1  # the interval passed with nothing: the first item returns at once
                    self._cond.wait(idle_until - now)
                self._wanted = 0

    def __len__(self) -> int:
        return len(self._items)
