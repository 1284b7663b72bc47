"""The worker's collector settings: start-up's objects frozen, the young generation collected less often."""

from __future__ import annotations

import gc

from cdc import gc_settings


def test_tune_freezes_start_up_and_raises_the_young_threshold() -> None:
    before = gc.get_threshold()
    try:
        gc_settings.tune()
        assert gc.get_threshold() == (gc_settings.YOUNG_THRESHOLD, before[1], before[2])
        assert gc.get_freeze_count() > 0
        # cyclic garbage is still found, by a collection of the youngest generation
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect(0) >= 1
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_pause_stops_automatic_collection_until_tune() -> None:
    before = gc.get_threshold()
    try:
        gc_settings.pause()
        assert not gc.isenabled()
        gc_settings.tune()
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*before)
