"""Starting a worker's three stores at once.

A distributed worker's stores each create or check their internal topic, open a consumer and a producer
and read the topic to its end: a few round trips to the brokers, and waits for a new topic's leaders,
with little for the worker's own CPU to do. One after the other they were most of the time from the
worker's start to its first answer over REST; side by side they cost the slowest of the three. None of
them depends on another, and their listeners act only once the herder has started (the status
listener's news counts from then; the config store calls its listener after its own start).

A failure is the first one in the stores' order (status, offsets, configs), as when they started one
after the other, and the stores that did start are stopped again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Protocol

__all__ = ["start_stores"]

log = logging.getLogger(__name__)


class _Startable(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


def start_stores(stores: Sequence[_Startable]) -> None:
    """``start()`` every store, each on a thread of its own; raise the first failure in ``stores``' order
    once all have finished, after stopping those that started."""
    failures: list[BaseException | None] = [None] * len(stores)

    def run(i: int) -> None:
        try:
            stores[i].start()
        except BaseException as exc:  # handed to the caller's thread
            failures[i] = exc

    threads = [
        threading.Thread(target=run, args=(i,), name=f"store-start-{i}", daemon=True)
        for i in range(1, len(stores))
    ]
    for thread in threads:
        thread.start()
    if stores:
        run(0)  # the first on this thread
    for thread in threads:
        thread.join()
    first = next((exc for exc in failures if exc is not None), None)
    if first is None:
        return
    for store, failure in zip(stores, failures, strict=True):
        if failure is None:
            try:
                store.stop()
            except Exception:
                log.exception("Could not stop a store after another one failed to start")
    raise first
