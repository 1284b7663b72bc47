"""Fixtures of the end-to-end tests; the helpers are in worker_process.py."""

from __future__ import annotations

from worker_process import workers

__all__ = ["workers"]
