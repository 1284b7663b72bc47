"""A running capture handed over between the real Debezium MariaDB connector (Kafka Connect, jars from
Maven Central) and cdc, both ways, in the middle of multi-row transactions: the second connector continues
from the first one's offsets and history topics with no change missing and none twice
(bench/compat/handover.py). Slow: two JVM starts, two cdc workers, about three minutes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.compat.run import main

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_handover_both_ways_loses_and_repeats_nothing(stack: object, tmp_path: Path) -> None:
    rc = main(["--handover", "--workdir", str(tmp_path)])
    report = (tmp_path / "handover.md").read_text(encoding="utf-8")
    assert "debezium -> cdc" in report and "cdc -> debezium" in report
    assert rc == 0, report
