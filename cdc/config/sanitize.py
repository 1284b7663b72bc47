"""``custom.sanitize.pattern``: Debezium's rule for which config keys' values its logs mask.

Debezium (``Configuration.withMaskedPasswords``) masks the values of the keys its pattern matches whole
(Java's ``Matcher.matches``, case-sensitive); the key replaces its default pattern. In cdc the pattern
*adds* keys to those masked already (PASSWORD keys and secret-looking names, :func:`cdc.config.mask_secrets`):
a REST user's pattern can hide more, never un-hide a password.

The pattern comes from whoever may create a connector, and the worker matches it on threads every
connector shares: it is matched with the ``regex`` package within :data:`SANITIZE_BUDGET_S` for all the
keys of one config, the GIL released (as signal patterns are, :mod:`cdc.mysql.incremental.patterns`); a
pattern that runs out of that budget is taken to match every key (masking too much, never too little).
``regex`` is imported by the first config that sets the key, not by a worker's start.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "DEBEZIUM_SANITIZE_PATTERN",
    "MAX_PATTERN_CHARS",
    "SANITIZE_BUDGET_S",
    "SANITIZE_KEY",
    "pattern_error",
    "sanitized_keys",
]

SANITIZE_KEY = "custom.sanitize.pattern"
DEBEZIUM_SANITIZE_PATTERN = (
    r".*secret$|.*password$|.*sasl\.jaas\.config$|.*basic\.auth\.user\.info|.*registry\.auth\.client-secret"
    r"|.*credentials\.json$|.*connectionstring$|.*connection\.string$"
)
"""Debezium 3.6's ``Configuration.PASSWORD_PATTERN`` (the key's default)."""
SANITIZE_BUDGET_S = 0.5
MAX_PATTERN_CHARS = 4096


def pattern_error(pattern: str) -> str | None:
    """Why ``pattern`` cannot be a sanitize pattern, or None."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"The pattern is longer than {MAX_PATTERN_CHARS} characters"
    import regex

    try:
        regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError) as exc:
        return f"'{pattern}' is not a valid regular expression: {exc}"
    return None


def sanitized_keys(props: Mapping[str, Any], keys: Iterable[str] | None = None) -> set[str]:
    """The keys of ``props`` (or ``keys``) whose values ``props``' ``custom.sanitize.pattern`` masks: none
    without the key; every key when the pattern is invalid or runs out of :data:`SANITIZE_BUDGET_S`."""
    pattern = props.get(SANITIZE_KEY)
    names = list(props if keys is None else keys)
    if not isinstance(pattern, str) or not pattern:
        return set()
    if pattern_error(pattern) is not None:
        return set(names)
    import regex

    compiled = regex.compile(pattern)
    deadline = time.monotonic() + SANITIZE_BUDGET_S
    out: set[str] = set()
    for name in names:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            if compiled.fullmatch(name, timeout=remaining, concurrent=True) is not None:
                out.add(name)
        except TimeoutError:
            return set(names)
    return out
