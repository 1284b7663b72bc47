"""Fixtures of the security acceptance tests: the ``workers`` of the end-to-end tests (worker processes,
killed after the test). Helpers to start workers as an attacker finds them are in ``attack.py``."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "e2e"), str(TESTS / "integration")]  # worker_process, faultkit

from worker_process import workers  # noqa: E402

__all__ = ["workers"]
