"""The bounded change-event queue: a batch larger than the room left goes in as polls make room, in order."""

from __future__ import annotations

import threading
import time

import pytest

from cdc.mysql.queue import ChangeEventQueue


def test_a_batch_larger_than_the_room_left_arrives_whole_and_in_order() -> None:
    queue = ChangeEventQueue(max_size=10, max_batch=4)
    stopping = threading.Event()
    assert queue.put_all(list(range(7)), stopping)
    done: list[bool] = []
    writer = threading.Thread(target=lambda: done.append(queue.put_all(list(range(7, 40)), stopping)))
    writer.start()
    seen: list[int] = []
    while len(seen) < 40:
        batch = queue.poll(1.0)
        assert len(batch) <= 4 and len(queue) <= 10
        seen.extend(batch)
    writer.join(5)
    assert done == [True] and seen == list(range(40))


def test_a_writer_waiting_for_room_gives_up_when_stopping() -> None:
    queue = ChangeEventQueue(max_size=3, max_batch=3)
    stopping = threading.Event()
    result: list[bool] = []
    writer = threading.Thread(target=lambda: result.append(queue.put_all([1, 2, 3, 4, 5], stopping)))
    writer.start()
    writer.join(0.3)
    assert writer.is_alive() and len(queue) == 3  # the first three went in; the rest wait for room
    stopping.set()
    writer.join(5)
    assert result == [False]


@pytest.mark.honours("poll.interval.ms")
def test_poll_waits_for_a_full_batch_or_the_interval_as_debezium() -> None:
    """``poll.interval.ms`` as Debezium's ChangeEventQueue honours it: a poll returns once ``max.batch.size``
    records are there or the interval has passed, not on the first record."""
    queue = ChangeEventQueue(max_size=100, max_batch=5)
    stopping = threading.Event()
    assert queue.put_all([1, 2], stopping)
    late = threading.Timer(0.15, lambda: queue.put_all([3, 4, 5, 6], stopping))
    late.start()
    started = time.monotonic()
    batch = queue.poll(2.0)
    took = time.monotonic() - started
    late.join()
    assert batch == [1, 2, 3, 4, 5]  # the two waiting records did not return alone
    assert 0.1 < took < 1.5  # returned when the batch was full, well before the interval
    started = time.monotonic()
    assert queue.poll(0.3) == [6]  # a partial batch once the interval passed
    assert time.monotonic() - started >= 0.25


def test_poll_with_a_failure_returns_what_it_holds_first() -> None:
    queue = ChangeEventQueue(max_size=10, max_batch=5)
    assert queue.put_all([1], threading.Event())
    queue.fail(RuntimeError("producer"))
    assert queue.poll(1.0) == [1]
    try:
        queue.poll(1.0)
    except RuntimeError as exc:
        assert str(exc) == "producer"
    else:
        raise AssertionError("the failure was not raised")


class _CountingCondition(threading.Condition):
    """A condition that counts how often a waiter went to sleep on it (each wake-up starts a new wait)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    def wait(self, timeout: float | None = None) -> bool:
        self.waits += 1
        return super().wait(timeout)


@pytest.mark.honours("max.batch.size")
def test_a_waiting_poll_is_woken_by_a_full_batch_not_by_every_record() -> None:
    """As Debezium's doEnqueue signals the poller only on a full batch: one record at a time (the binlog's
    single-row transactions) does not wake the poll per record to go back to sleep."""
    queue = ChangeEventQueue(max_size=1000, max_batch=50)
    counting = _CountingCondition()
    queue._cond = counting
    stopping = threading.Event()

    def feed() -> None:
        for i in range(60):
            queue.put_all([i], stopping)
            time.sleep(0.002)

    feeder = threading.Thread(target=feed)
    feeder.start()
    batch = queue.poll(5.0)
    feeder.join(5)
    assert batch == list(range(50))  # returned on the full batch, long before the interval
    assert counting.waits <= 2  # woken once, by the full batch (the old queue woke it per record)
    assert queue.poll(0.05) == list(range(50, 60))


@pytest.mark.honours("poll.interval.ms")
def test_a_short_interval_does_not_return_empty_polls_while_nothing_comes() -> None:
    """poll.interval.ms under 500 ms bounds how long records wait for a batch; with nothing queued the poll
    waits (up to 500 ms) for the first record and returns it at once, instead of spinning on empty polls."""
    queue = ChangeEventQueue(max_size=100, max_batch=10)
    stopping = threading.Event()
    started = time.monotonic()
    assert queue.poll(0.0) == []  # nothing came: empty after the idle wait, not at once
    assert time.monotonic() - started >= 0.45
    late = threading.Timer(0.1, lambda: queue.put_all([1], stopping))
    late.start()
    started = time.monotonic()
    assert queue.poll(0.0) == [1]
    assert 0.05 < time.monotonic() - started < 0.4  # the first record returned as soon as it came
    late.join()
    assert queue.put_all([2, 3], stopping)
    started = time.monotonic()
    assert queue.poll(0.0) == [2, 3]  # records already there: at once, as Debezium's
    assert time.monotonic() - started < 0.1


def test_the_default_interval_still_returns_an_empty_poll_when_it_ends() -> None:
    queue = ChangeEventQueue(max_size=100, max_batch=10)
    started = time.monotonic()
    assert queue.poll(0.6) == []
    assert 0.55 <= time.monotonic() - started < 1.5


def test_a_full_queue_wakes_the_poll_even_below_a_batch() -> None:
    """max.queue.size under max.batch.size: the queue fills before a batch does; the poll is woken each time
    it fills (the capture thread is about to wait for room), not left to sleep out its interval."""
    queue = ChangeEventQueue(max_size=4, max_batch=10)
    stopping = threading.Event()
    writer = threading.Thread(target=lambda: queue.put_all(list(range(12)), stopping))
    started = time.monotonic()
    writer.start()
    assert queue.poll(3.0) == list(range(10))  # three queuefuls, each handed over as it filled
    assert time.monotonic() - started < 2.5
    writer.join(5)
    assert queue.poll(0.1) == [10, 11]


def test_records_wait_in_the_queue_until_a_batch_is_there() -> None:
    """The poller is not woken (and does not take records one put at a time) before ``max.batch.size``
    records are there: single-row transactions cost the capture thread a wake-up each otherwise."""
    queue = ChangeEventQueue(max_size=100, max_batch=3)
    stopping = threading.Event()
    got: list[list[int]] = []
    poller = threading.Thread(target=lambda: got.append(queue.poll(5.0)))
    poller.start()
    for i in range(2):
        assert queue.put_all([i], stopping)
        time.sleep(0.05)
    assert len(queue) == 2 and poller.is_alive()  # still queued: nothing woke the poller for them
    started = time.monotonic()
    assert queue.put_all([2, 3], stopping)
    poller.join(5)
    assert got == [[0, 1, 2]] and time.monotonic() - started < 2.0  # woken by the full batch
    assert queue.poll(0.1) == [3]
