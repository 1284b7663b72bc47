"""A 1 M-row MariaDB table read in bulk and incrementing mode with peak RSS under 300 MB.

The reading runs in a child process (the task polled directly, records counted and dropped, as the
worker does once they are produced), which reports its own peak RSS (``VmHWM``) and rows per second.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROWS = 1_000_000
LIMIT_MB = 300

CHILD = textwrap.dedent("""
    import json, sys, time
    from cdc.jdbc.task import JdbcSourceTask
    config = json.loads(sys.argv[1])
    task = JdbcSourceTask(max_wait_s=0.5)
    task.start(config)
    count, start = 0, time.monotonic()
    while count < int(sys.argv[2]):
        records = task.poll()
        count += len(records or ())
    elapsed = time.monotonic() - start
    task.stop()
    hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
    print(json.dumps({"rows": count, "seconds": elapsed, "peak_rss_kb": hwm}))
""")


@pytest.mark.parametrize("mode", ["bulk", "incrementing"])
def test_million_rows_bounded_memory(mysql_db: Any, mode: str) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE big (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL, "
            "amount DECIMAL(12,2) NOT NULL, modified DATETIME(3) NOT NULL)"
        )
        cur.execute(
            f"INSERT INTO big (id, name, amount, modified) SELECT seq, CONCAT('name-', seq), seq / 100, "
            f"'2020-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_{ROWS}"
        )
    config = {
        "connection.url": f"jdbc:mysql://{mysql_db.host}:{mysql_db.port}/{mysql_db.name}",
        "connection.user": mysql_db.user,
        "connection.password": mysql_db.password,
        "mode": mode,
        "topic.prefix": "big-",
        "batch.max.rows": "1000",
        "tables": "`" + mysql_db.name + "`.`big`",
        "incrementing.column.name": "id" if mode == "incrementing" else "",
    }
    result = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(config), str(ROWS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    print(
        f"{mode}: {report['rows']} rows in {report['seconds']:.1f} s "
        f"({report['rows'] / report['seconds']:.0f} rows/s), peak RSS {report['peak_rss_kb'] / 1024:.0f} MB"
    )
    assert report["rows"] >= ROWS
    assert report["peak_rss_kb"] < LIMIT_MB * 1024
