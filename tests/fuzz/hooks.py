"""Schemathesis hooks for fuzzing the worker's REST API (``SCHEMATHESIS_HOOKS=tests.fuzz.hooks``).

Adds the check our issue asks for beyond "no 5xx": no response body carries a stack trace.
"""

from __future__ import annotations

from typing import Any

import schemathesis

_MARKERS = ("Traceback (most recent call last)", 'File "/', "  at org.", "  at java.")


@schemathesis.check
def no_stack_trace(ctx: Any, response: Any, case: Any) -> bool | None:
    text = response.text or ""
    for marker in _MARKERS:
        if marker in text:
            raise AssertionError(f"A stack trace is in the response body: {text[:300]!r}")
    return None
