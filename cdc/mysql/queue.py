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

__all__ = ["RETURN_CONTROL_S", "ChangeEventQueue"]

RETURN_CONTROL_S = 5.0
"""Debezium's ``ConfigurationDefaults.RETURN_CONTROL_INTERVAL``: the longest a poll waits for a batch."""


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
        # put_all wakes the poller once this many records wait (a full batch, or a full queue when that is
        # smaller); before that a poll sleeps until its interval ends, so the capture thread does not wake
        # (and hand the GIL to) the polling thread for every transaction
        self._wake_at = max(1, min(max_batch, max_size))

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
            self._cond.notify_all()
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
                if len(self._items) >= self._wake_at:
                    self._cond.notify()  # one poller, once its batch is there (see poll)
        return True

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
        producer failure when nothing is left to return before it."""
        deadline = time.monotonic() + min(timeout, RETURN_CONTROL_S)
        if self.max_bytes <= 0:
            return self._poll_count(deadline)
        batch: list[Any] = []
        with self._cond:
            while True:
                n = min(len(self._items), self.max_batch - len(batch))
                if n:
                    batch.extend(self._items.popleft() for _ in range(n))
                    if self.max_bytes > 0:
                        self.bytes -= sum(self._sizes.popleft() for _ in range(n))
                    self._cond.notify_all()
                if len(batch) >= self.max_batch or self._closed:
                    return batch
                if self._error is not None:
                    if batch:
                        return batch  # the failure is raised by the next poll, after these records
                    error, self._error = self._error, None
                    raise error
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return batch
                self._cond.wait(remaining)

    def _poll_count(self, deadline: float) -> list[Any]:
        """:meth:`poll` of a queue bounded by count only: the records stay queued until a batch is there
        (``put_all`` wakes the poller only then), the interval passed, the queue closed or failed; then up to
        ``max_batch`` of them leave at once. Waking on every put cost both threads a switch per transaction
        when transactions are small (B3: one row each)."""
        items = self._items
        with self._cond:
            while True:
                available = len(items)
                if available >= self._wake_at or self._closed or self._error is not None:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            n = min(available, self.max_batch)
            if not n:
                if self._error is not None and not self._closed:
                    error, self._error = self._error, None
                    raise error
                return []
            batch = [items.popleft() for _ in range(n)]
            self._cond.notify_all()  # a writer waiting for room
            return batch

    def __len__(self) -> int:
        return len(self._items)
