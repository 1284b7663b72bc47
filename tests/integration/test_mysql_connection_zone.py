"""``database.connectionTimeZone`` (alias of ``database.connectionTimezone``): a zone other than the
server's changes no TIMESTAMP or DATETIME value, in the snapshot or the stream, as Debezium's MariaDB
connector writes them (``python -m bench.compat --row connection-time-zone``, 0 unexplained differences)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest

from cdc.mysql.task import MariaDbSourceTask
from tests.integration.inprocess import NoOffsetsContext
from tests.integration.test_mysql_tuning_keys import _config, _poll_until

pytestmark = pytest.mark.integration


@pytest.mark.honours("database.connectionTimeZone")
def test_a_connection_time_zone_changes_no_instant(mysql_db: Any, kafka: Any) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE z (id INT PRIMARY KEY, ts TIMESTAMP(3) NULL, d DATETIME NULL)")
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("INSERT INTO z VALUES (1, '2024-02-29 12:34:56.780', '2024-02-29 12:34:56')")
    seen: dict[str, dict[tuple[Any, bool], tuple[Any, ...]]] = {}
    for zone in ("", "America/New_York"):
        task = MariaDbSourceTask()
        task.initialize(NoOffsetsContext())
        config = {
            **_config(mysql_db, kafka.topic(f"z{len(zone)}")),
            **({"database.connectionTimeZone": zone} if zone else {}),
            "snapshot.mode": "initial",
            "table.include.list": f"{mysql_db.name}.z",
        }
        task.start(config)
        try:
            rows = _poll_until(task, lambda rs: any(r.topic.endswith(".z") for r in rs))
            with mysql_db.connect() as conn, conn.cursor() as cur:  # streamed: the binlog's epoch seconds
                cur.execute("SET time_zone = '+00:00'")
                cur.execute(
                    f"INSERT INTO z VALUES ({10 + len(zone)}, '2030-06-15 12:00:00', '2030-06-15 12:00:00')"
                )
            time.sleep(0.5)
            rows += _poll_until(task, lambda rs: any(r.topic.endswith(".z") for r in rs))
        finally:
            task.stop()
        seen[zone] = {
            (r.value.get("after").get("id"), r.value.get("source").get("snapshot") != "false"): (
                r.value.get("after").get("ts"),
                r.value.get("after").get("d"),
            )
            for r in rows
            if r.topic.endswith(".z")
        }
    first = (
        "2024-02-29T12:34:56.78Z",
        int(dt.datetime(2024, 2, 29, 12, 34, 56, tzinfo=dt.UTC).timestamp()) * 1000,
    )
    later = int(dt.datetime(2030, 6, 15, 12, tzinfo=dt.UTC).timestamp()) * 1000
    # (id, read by the snapshot) → (TIMESTAMP, DATETIME): the second run snapshots the first's streamed row
    assert seen == {
        "": {(1, True): first, (10, False): ("2030-06-15T12:00:00.000Z", later)},
        "America/New_York": {
            (1, True): first,
            (10, True): ("2030-06-15T12:00:00Z", later),
            (26, False): ("2030-06-15T12:00:00.000Z", later),
        },
    }
