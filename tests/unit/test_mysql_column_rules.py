"""cdc's column rules and converters answer as Debezium 3.5's own classes did on the same cases.

``tests/fixtures/mysql/debezium-column-rules.tsv`` holds what Debezium's ``ColumnMappers`` and
``TinyIntOneToBooleanConverter`` answered (``python -m bench.debezium_columns --record`` runs them on
Debezium's jars); this test runs cdc on the same cases without Java.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.debezium_columns import CASES, cdc_answer
from cdc.mysql.columns import debezium_hash

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mysql" / "debezium-column-rules.tsv"
RECORDED = [
    line.split("\t") for line in FIXTURE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")
]


def test_the_recorded_cases_are_the_benchmarks() -> None:
    assert [tuple(r[:10]) for r in RECORDED] == CASES


@pytest.mark.parametrize("row", RECORDED, ids=[f"{r[1][:40]}|{r[4]}|{r[9][:12]}" for r in RECORDED])
def test_cdc_answers_as_debezium(row: list[str]) -> None:
    assert cdc_answer(tuple(row[:10])) == "\t".join(row[10:])


def test_hash_versions_differ_and_null_stays_null() -> None:
    v1 = debezium_hash("x", "SHA-256", "s", "v1")
    v2 = debezium_hash("x", "SHA-256", "s", "v2")
    assert v1 != v2 and len(v1 or "") == 64
    assert debezium_hash(None, "SHA-256", "s") is None
