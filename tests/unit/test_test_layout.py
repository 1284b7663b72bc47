"""The test tree's own rule: pytest imports test modules by basename (rootdir-relative packages are not
used), so two test files with one name in different folders stop the whole collection ("import file
mismatch"). It happened twice while branches merged; this fails on the branch that adds the second one."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_basename() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
