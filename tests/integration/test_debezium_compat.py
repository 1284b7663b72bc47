"""``make compat`` as a test: the real Debezium MariaDB connector (Kafka Connect, jars from Maven Central)
and cdc capture one database side by side; every difference must be listed as intentional in
docs/debezium-compatibility.md, and the harness's self-test (an altered copy of cdc's records) must find
the alteration. Slow (two workers, one a JVM, about three minutes) and needs Maven Central once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.compat.run import main

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_cdc_writes_what_debezium_writes(
    stack: object, tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """``spark``: cdc's snapshot is the parallel Spark read (JVM encoders, chunks of 40 rows, records
    written by Spark's tasks), compared with Debezium's as the single reader's is."""
    if engine == "spark":
        pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark`")
    rc = main(["--workdir", str(tmp_path), "--engine", engine])
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "self-test: the altered value was found; the altered offsets were found" in report
    assert rc == 0, report
