"""The cyclic garbage collector's settings for a worker process: fewer, cheaper collections.

CPython's collector makes a pass over its youngest generation every 700 net allocations of container
objects (lists, dicts, instances) and, as objects survive, over older generations up to the whole heap. A
worker builds a few such objects for every record (the value and key structs, their lists, the record,
its offset dict) and holds thousands of records in flight (the task's queue, the window of an incremental
snapshot, the producer's delivery callbacks). With the defaults the collector ran every hundred-odd
records and kept walking every record still in flight and every object made at start-up (modules,
classes, configs, schemas): in an incremental snapshot (B12) a quarter of the worker's CPU.

Records and the values they carry hold no reference cycles: reference counting frees them and a
collection finds nothing to free. So the worker (:func:`tune`) freezes what start-up made (moved to the
permanent generation, never walked again) and collects the youngest generation every
:data:`YOUNG_THRESHOLD` allocations instead of 700. Cyclic garbage is still collected, less often; the
memory that waits for it is a few MB at most.

Start-up itself runs with the collector paused (:func:`pause`): importing the worker makes some hundred
thousand container objects, a collection every 700 of them walked them all again and again, about a sixth
of the CPU from the process's start to its first answer over REST; :func:`tune` collects once and resumes.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "pause", "tune"]

YOUNG_THRESHOLD = 20_000
"""Net container allocations between two collections of the youngest generation (CPython's default: 700)."""


def pause() -> None:
    """No automatic collection until :func:`tune` (call first thing in a worker command)."""
    gc.disable()


def tune() -> None:
    """Freeze the objects made so far and raise the youngest generation's threshold (call once, after
    start-up's imports and before the work starts); resumes automatic collection if :func:`pause` paused it.
    """
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)
    gc.enable()
