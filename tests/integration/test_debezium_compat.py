"""``make compat`` as a test: the real Debezium MariaDB connector (Kafka Connect, jars from Maven Central)
and cdc capture one database side by side; every difference must be listed as intentional in
docs/debezium-compatibility.md, and the harness's self-test (an altered copy of cdc's records) must find
the alteration. Slow (two workers, one a JVM, about three minutes) and needs Maven Central once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.compat.run import main

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_cdc_writes_what_debezium_writes(
    stack: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["--workdir", str(tmp_path)])
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "self-test: the altered value was found; the altered offsets were found" in report
    assert rc == 0, report
