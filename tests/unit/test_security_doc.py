"""docs/security.md's tables of what a REST user and a signal sender cannot do match the tests: every row
names a test file (or says "same" as the row above), every file and test function it names exists, and
every attack test file in tests/security is named on the page, so a row cannot outlive its test nor a test
go unlisted."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
NAMED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")
SECTIONS = ("## What a REST user can and cannot do", "## What a signal sender can and cannot do")


def _rows(heading: str) -> list[list[str]]:
    section = PAGE.split(heading, 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("| ").split(" | ")] for line in lines[1:]]  # past the header


def test_every_row_names_its_test() -> None:
    for heading in SECTIONS:
        rows = _rows(heading)
        assert len(rows) >= 4, heading
        for i, cells in enumerate(rows):
            assert NAMED.search(cells[-1]) or (cells[-1] == "same" and i > 0), (heading, cells[0])


def test_every_named_test_exists_and_every_attack_test_is_named() -> None:
    named = NAMED.findall(PAGE)
    for path, function in named:
        assert (REPO / path).is_file(), path
        if function:
            assert f"def {function}(" in (REPO / path).read_text(encoding="utf-8"), (path, function)
    attack_tests = {f"tests/security/{p.name}" for p in (REPO / "tests" / "security").glob("test_*.py")}
    assert attack_tests <= {path for path, _ in named}, sorted(attack_tests - {path for path, _ in named})
