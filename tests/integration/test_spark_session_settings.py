"""The Spark session of a run takes its interpreter and network settings as session settings, never from
or into the process's environment (issue #24): a connector's ``spark.pyspark.python`` used to be written to
``os.environ["PYSPARK_PYTHON"]``, the interpreter of every later Spark job of every connector of the worker.

A real local Spark session (the JVM included): with ``spark.pyspark.python`` naming a wrapper script (it
leaves a marker, then runs this interpreter), the executors' Python workers are started through it and
the job's answer comes back; ``PYSPARK_PYTHON`` and ``SPARK_LOCAL_IP`` are what they were before; the
next session of the process, without the setting, runs this interpreter again (the wrapper is not run).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_the_interpreter_is_the_sessions_and_the_environment_stays(tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    from cdc.snapshot.runners import SparkRunner

    marker = tmp_path / "wrapper-ran"
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho ran >> "{marker}"\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    before = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "SPARK_LOCAL_IP")}

    runner = SparkRunner(
        sum, "local[1]", 1, app_name="test-interpreter", conf={"spark.pyspark.python": str(wrapper)}
    )
    try:
        assert runner.sc.parallelize([(1, 2)], 1).map(sum).collect() == [3]
        assert runner.sc.getConf().get("spark.driver.bindAddress") == "127.0.0.1"
    finally:
        runner.close()
    assert marker.exists(), "the executors' Python was not the session's spark.pyspark.python"
    assert {k: os.environ.get(k) for k in before} == before

    marker.unlink()
    runner = SparkRunner(sum, "local[1]", 1, app_name="test-interpreter-2")
    try:
        assert runner.sc.parallelize([(2, 2)], 1).map(sum).collect() == [4]
        assert runner.sc.pythonExec == sys.executable
    finally:
        runner.close()
    assert not marker.exists(), "the previous session's interpreter was used again"
    assert {k: os.environ.get(k) for k in before} == before
