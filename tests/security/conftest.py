"""Fixtures of the security acceptance tests: worker processes with basic authentication, as an attacker
finds them. Helpers to start them and to send what an attacker sends are in ``attack.py``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))  # worker_process

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
