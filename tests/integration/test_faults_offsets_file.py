"""The standalone offsets file under faults, through a real worker process running the MySQL source:

* truncated to 0 bytes, and cut in the middle: the worker refuses to start with a clear error naming the
  file and the remedy; it does not start over (no new snapshot) and leaves the file as it found it;
* the disk full (RLIMIT_FSIZE on the worker process: every write past a few bytes fails with "File too
  large"): the task FAILS with a clear error and the previous offsets file stays intact — no silent
  reset; once the space is back the worker resumes from it and nothing is missing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    Writer,
    audit,
    mysql_connector,
    read_topic,
    report,
    setup_items,
    standalone_worker,
    wait_for,
)


def _snapshots(kafka: Any, topic: str) -> int:
    return sum(
        1 for e in read_topic(kafka.bootstrap_servers, topic, "read_uncommitted") if e.get("op") == "r"
    )


@pytest.mark.timeout(1200)
def test_offsets_file_truncated_or_disk_full_is_a_clear_error_never_a_reset(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    setup_items(mysql_db, 40)
    prefix = kafka.prefix + "off"
    topic = f"{prefix}.{mysql_db.name}.items"
    offsets = tmp_path / "offsets"
    config = mysql_connector(mysql_db, prefix, kafka.bootstrap_servers)
    worker = standalone_worker(tmp_path, kafka.bootstrap_servers, "off", config)
    worker.start()
    try:
        wait_for(lambda: _snapshots(kafka, topic) >= 40, 60, "the snapshot", worker.log)
        time.sleep(1.5)
    finally:
        worker.stop()
    good = offsets.read_bytes()
    assert good, "the first run should have written the offsets file"

    # Truncated files: refused at start, with the file's name and what to do; the file is left alone.
    for cut, words in ((0, "is empty (0 bytes)"), (len(good) // 2, "corrupt or truncated")):
        offsets.write_bytes(good[:cut])
        worker.start(wait_rest=False)
        assert worker.proc is not None
        code = worker.proc.wait(60)
        log = worker.log()
        assert code != 0, log
        assert words in log and str(offsets) in log and "Restore it from a backup" in log, log[-3000:]
        assert offsets.read_bytes() == good[:cut], "the worker must not rewrite a file it could not read"
    assert _snapshots(kafka, topic) == 40, "no silent reset: the connector must not have started over"

    # A full disk: the offset commit fails, the task says why, and the old file survives.
    offsets.write_bytes(good)
    writer = Writer(mysql_db)
    worker.start(file_size_limit=64)
    try:
        writer.start()
        state, trace = wait_for(
            lambda: (s := worker.task_state("off"))[0] == "FAILED" and s,
            60,
            "the task to fail on the full disk",
            worker.log,
        )
    finally:
        writer.stop_event.set()
        writer.join(30)
        worker.stop()
    assert "Cannot write the offsets file" in trace and "File too large" in trace, trace
    assert offsets.read_bytes() == good, "the previous offsets must survive a failed write"

    # Space again: the worker resumes from the intact file and misses nothing.
    worker.start()
    try:
        result = audit(kafka.bootstrap_servers, topic, mysql_db, "read_uncommitted")
        state, trace = worker.task_state("off")
    finally:
        worker.stop()
    report("offsets file truncated/full", 3, writer, result)
    assert state == "RUNNING", trace
    assert result.missing == [], f"missing (id, version) pairs: {result.missing[:10]}"
