"""The bounded change-event queue: a batch larger than the room left goes in as polls make room, in order."""

from __future__ import annotations

import threading

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
