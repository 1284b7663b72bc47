"""Fixtures of the end-to-end tests; the helpers are in worker_process.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from worker_process import WorkerProcess


@pytest.fixture
def workers() -> Iterator[list[WorkerProcess]]:
    """Worker processes a test starts; any still running are killed afterwards."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        if worker.alive():
            assert worker.proc is not None
            worker.proc.kill()
            worker.proc.wait(30)
