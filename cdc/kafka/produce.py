"""Produce and wait for delivery, written once for every writer of records.

The worker's task loop (and its exactly-once variant's offsets), the Spark snapshot writer (through which
the MySQL source's snapshots and incremental back-fills write) and the internal topics' log all produce
with confluent_kafka the same way:

* ``produce`` raises ``BufferError`` when librdkafka's local queue is full (the brokers away or slow);
  the answer is to serve delivery reports (``poll``) until there is room: :func:`produce`, with a hook
  that may give up (a task that is stopping) or raise a failure already reported;
* a failed delivery shows only in its report, later, on whichever thread polls: :class:`FirstFailure`
  keeps the first one until the writer checks it;
* a writer that must know everything is in Kafka flushes, then checks: :func:`flush_and_check`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["FirstFailure", "ProducerLike", "flush_and_check", "produce"]


class ProducerLike(Protocol):
    """What these helpers use of ``confluent_kafka.Producer`` (a unit test hands a scripted one)."""

    def produce(self, topic: str, *args: Any, **kwargs: Any) -> None: ...
    def poll(self, timeout: float = ...) -> int: ...
    def flush(self, timeout: float = ...) -> int: ...


def produce(
    producer: ProducerLike,
    topic: str,
    *,
    wait_s: float = 0.05,
    while_full: Callable[[], None] | None = None,
    **record: Any,
) -> None:
    """Produce one record (``record``: ``key``, ``value``, ``headers``, ``partition``, ``timestamp``,
    ``on_delivery``), waiting for room in the local queue: each turn polls up to ``wait_s`` (serving
    delivery reports, which frees room) and calls ``while_full``, which may raise to give up."""
    while True:
        try:
            producer.produce(topic, **record)
            return
        except BufferError:
            producer.poll(wait_s)
            if while_full is not None:
                while_full()


class FirstFailure:
    """A delivery callback (``on_delivery``) that keeps the first failed delivery's error."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: Any = None

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None and self.error is None:
            self.error = err

    def take(self) -> Any:
        """The error kept (None: every delivery reported so far succeeded), forgotten once taken."""
        err, self.error = self.error, None
        return err


def flush_and_check(producer: ProducerLike, timeout: float, check: Callable[[], None]) -> int:
    """Wait up to ``timeout`` seconds for every record produced so far, then ``check`` (which raises the
    first delivery failure); returns how many records are still unacknowledged."""
    remaining = producer.flush(timeout)
    check()
    return remaining
