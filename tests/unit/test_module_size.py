"""No module of ``cdc`` over the house's 25 KB (STYLE.md: small modules, split where a seam exists) unless its
docstring says why it stays whole, in a paragraph starting ``Kept whole:``."""

from __future__ import annotations

import ast
from pathlib import Path

import cdc

LIMIT = 25 * 1024
ROOT = Path(cdc.__file__).parent


def test_no_module_over_25_kb_without_a_reason() -> None:
    over = []
    for path in sorted(ROOT.rglob("*.py")):
        size = path.stat().st_size
        if size <= LIMIT:
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if "Kept whole:" not in doc:
            over.append(f"{path.relative_to(ROOT.parent)} ({size} bytes)")
    assert over == [], "split these or say in their docstring why they are kept whole"
