"""What ``cdc snapshot`` shows in the user's terminal: without pyspark, what to install; with it, its own
progress and summary, while the start-up output of Spark and Ivy goes to the log file it names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_spark_snapshot import REPO, _configs, _dataset_a

# Lines only the JVM side writes (Ivy's resolution, Spark's log4j banner and warnings).
JVM_NOISE = ("Ivy Default Cache", ":: loading settings", "resolving dependencies", "setLogLevel", "log4j")


def test_without_pyspark_it_says_what_to_install(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    _dataset_a(mysql_db, 10)
    _config, _worker, worker_file, connector_file = _configs(tmp_path, kafka, mysql_db)
    hide = "import sys; sys.modules['pyspark'] = None; from cdc.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", hide, "snapshot", str(connector_file), "--worker-config", str(worker_file)]
    run = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "pip install 'cdc[spark]'" in run.stderr and "make spark" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


@pytest.mark.slow  # Spark's start-up: about a minute on a busy machine
def test_spark_output_goes_to_the_log_file(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    pytest.importorskip("pyspark")
    _dataset_a(mysql_db, 200)
    _config, _worker, worker_file, connector_file = _configs(tmp_path, kafka, mysql_db)
    state_dir = tmp_path / "state"
    argv = [
        sys.executable, "-m", "cdc.cli", "snapshot", str(connector_file), "--worker-config", str(worker_file),
        "--master", "local[1]", "--partitions", "1", "--chunk-rows", "100", "--state-dir", str(state_dir),
    ]  # fmt: skip
    run = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=280)
    terminal = run.stdout + run.stderr
    assert run.returncode == 0, terminal
    spark_log = state_dir / "spark-snap.spark.log"
    assert f"goes to {spark_log}" in run.stderr
    assert "200 rows" in terminal.replace(",", "") or "200/200" in terminal.replace(",", ""), terminal
    noise = [
        line for line in terminal.splitlines() if any(n in line for n in JVM_NOISE) and "goes to" not in line
    ]
    assert noise == []
    kept = spark_log.read_text(encoding="utf-8", errors="replace")
    assert any(n in kept for n in JVM_NOISE), kept[-3000:]
