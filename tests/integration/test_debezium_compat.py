"""``make compat`` as tests: the real Debezium MariaDB connector (Kafka Connect, jars from Maven Central)
and cdc capture one database side by side; every difference must be listed as intentional in
docs/debezium-compatibility.md, and the harness's self-test (an altered copy of cdc's records) must find
the alteration.

The base row (Debezium's defaults, cdc's local snapshot engine) and the avro row (the same with Avro and the
stack's schema registry) are CI's compat subset: not slow, they run in ``make test`` and fail on any record
that differs. The Spark engine and the other rows of the matrix
(bench/compat/matrix.py) are slow: ``make test-all`` or ``make compat COMPAT_ARGS=--matrix``."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from bench.compat.avro import REGISTRY_URL
from bench.compat.matrix import ROWS
from bench.compat.run import main

CI_ROWS = ("base", "avro")  # the tests above; the other rows are slow
# a run is two workers (one a JVM) and ~9 000 records a side: 3 to 5 minutes on a loaded shared machine
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


def _run(tmp_path: Path, *args: str) -> None:
    rc = main(["--workdir", str(tmp_path), *args])
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert (
        "self-test: the altered value was found; the altered offsets were found" in report
        or "self-test: a dropped event, an altered value found" in report  # snapshot-writes (per key)
    )
    assert rc == 0, report


def test_cdc_writes_what_debezium_writes_under_its_defaults(stack: object, tmp_path: Path) -> None:
    _run(tmp_path, "--row", "base")


def test_avro_with_the_registry_decodes_to_what_debezium_writes(stack: object, tmp_path: Path) -> None:
    """Both workers write Avro with the stack's registry (scripts/registry.sh); each record decoded with the
    schema its id names (bench/compat/avro.py) is compared, its registered schema included."""
    try:
        requests.get(REGISTRY_URL + "/subjects", timeout=5).raise_for_status()
    except requests.RequestException as exc:
        pytest.fail(f"no schema registry answers at {REGISTRY_URL} (scripts/registry.sh start): {exc}")
    _run(tmp_path, "--row", "avro")


@pytest.mark.slow
def test_the_spark_snapshot_engine_writes_what_debezium_writes(stack: object, tmp_path: Path) -> None:
    """cdc's snapshot is the parallel Spark read (JVM encoders, chunks of 40 rows, records written by
    Spark's tasks), compared with Debezium's as the single reader's is."""
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark`")
    _run(tmp_path, "--engine", "spark")


@pytest.mark.slow
@pytest.mark.parametrize("row", [r.name for r in ROWS if r.name not in CI_ROWS])
def test_each_row_of_the_matrix(stack: object, tmp_path: Path, row: str) -> None:
    _run(tmp_path, "--row", row)
