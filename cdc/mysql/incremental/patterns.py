"""Regular expressions from signals (``data-collections``, an additional condition's ``data-collection``),
matched against table names with a time bound.

Whoever can send a signal writes these patterns, and Python's ``re`` backtracks without limit while it
holds the GIL: ``(.*.*)*x`` against a 40-character table name runs for hours, and every thread of the
worker (REST, the group's heartbeats, every other connector's tasks) waits for it. They are matched with
the ``regex`` package (PyPI) instead, because it gives both halves of the fix in one call:

* ``timeout=``: a match that runs past the signal's budget (:data:`SIGNAL_REGEX_BUDGET_S`, shared by all
  the matches one signal asks for) raises, and the signal is reported and skipped;
* ``concurrent=True``: the GIL is released while it matches (on ``str``, which is immutable), so the
  capture thread that acts on signals (never a REST or heartbeat thread) stalls nobody else meanwhile.

``regex`` also avoids much of the catastrophic backtracking ``re`` falls into, and its default (``V0``)
syntax is ``re``'s. The alternatives were worse: a pattern checker misses some evil patterns and refuses
some good ones; a subprocess per match costs a fork per signal; a thread running ``re`` still holds the GIL.
"""

from __future__ import annotations

import time
from typing import Any

import regex

from cdc.api.errors import ConnectError
from cdc.history.model import TableId

__all__ = ["SIGNAL_REGEX_BUDGET_S", "PatternError", "SignalPatterns"]

SIGNAL_REGEX_BUDGET_S = 2.0
"""How long the matches one signal asks for may take in all; a name against a sane pattern takes µs."""

MAX_PATTERN_CHARS = 4096


class PatternError(ConnectError):
    """A signal's pattern that does not compile or takes too long to match: the signal is skipped."""


class SignalPatterns:
    """The patterns of one signal: compiled once, matched within one shared time budget."""

    def __init__(self, budget_s: float = SIGNAL_REGEX_BUDGET_S) -> None:
        self._budget_s = budget_s
        self._deadline = time.monotonic() + budget_s
        self._compiled: dict[tuple[str, bool], Any] = {}

    def compile(self, pattern: str, ignore_case: bool = False) -> Any:
        """``pattern`` compiled (``PatternError`` when it is not a regular expression)."""
        key = (pattern, ignore_case)
        compiled = self._compiled.get(key)
        if compiled is None:
            if len(pattern) > MAX_PATTERN_CHARS:
                raise PatternError(f"a pattern is longer than {MAX_PATTERN_CHARS} characters")
            try:
                compiled = regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
            except (regex.error, OverflowError, RecursionError) as exc:
                raise PatternError(f"'{pattern}' is not a regular expression: {exc}") from exc
            self._compiled[key] = compiled
        return compiled

    def fullmatch(self, pattern: str, text: str, ignore_case: bool = False) -> bool:
        """Whether ``pattern`` matches all of ``text``; ``PatternError`` once the budget is spent."""
        compiled = self.compile(pattern, ignore_case)
        remaining = self._deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            return compiled.fullmatch(text, timeout=remaining, concurrent=True) is not None
        except TimeoutError:
            # spent for good: the regex engine's timer may fire a little before the deadline, and what is
            # left must not let the signal's next match run
            self._deadline = float("-inf")
            raise PatternError(
                f"matching the pattern '{pattern}' took longer than {self._budget_s:g} s"
            ) from None

    def expand(self, patterns: list[str], known: list[TableId]) -> list[TableId]:
        """Names or regexes against the ``known`` tables (a name matching none is kept, as Debezium does),
        within this budget (``PatternError`` past it)."""
        out: list[TableId] = []
        for pattern in patterns:
            try:
                self.compile(pattern)
            except PatternError:
                matched = []  # not a regex: a table name, as Debezium takes it
            else:
                matched = [t for t in known if self.fullmatch(pattern, str(t))]
            for table in matched or [TableId.parse(pattern)]:
                if table not in out:
                    out.append(table)
        return out
