"""DDL followed across restarts: every event is described with the columns of its own moment.

Columns are added, dropped, renamed and modified, and the table itself renamed, while rows flow; the
worker is stopped, more rows and DDL are written, and the worker restarted: its schema comes back from
the history topic up to its offset and then follows the DDL it reads from the binlog.
"""

from __future__ import annotations

import json
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# (phase, table, columns of the row image at that phase, DDL that starts the phase)
PHASES: list[tuple[int, str, list[str], str | None]] = [
    (1, "t", ["id", "phase", "a"], None),
    (2, "t", ["id", "phase", "a", "b"], "ALTER TABLE t ADD COLUMN b INT DEFAULT 5"),
    (3, "t", ["id", "phase", "b"], "ALTER TABLE t DROP COLUMN a"),
    (4, "t", ["id", "phase", "c"], "ALTER TABLE t RENAME COLUMN b TO c"),
    (5, "t", ["id", "phase", "c"], "ALTER TABLE t MODIFY c VARCHAR(20)"),
    (6, "t2", ["id", "phase", "c"], "RENAME TABLE t TO t2"),
    # written while the worker is stopped:
    (7, "t2", ["d", "id", "phase", "c"], "ALTER TABLE t2 ADD COLUMN d DATETIME(6) NULL FIRST"),
    (8, "t2", ["d", "id", "phase"], "ALTER TABLE t2 DROP COLUMN c"),
]
STOP_AFTER_PHASE = 6


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _files(tmp: Path, kafka: Any, db: Any, prefix: str) -> tuple[Path, Path]:
    worker = tmp / "worker.properties"
    worker.write_text(
        "\n".join(
            [
                f"bootstrap.servers={kafka.bootstrap_servers}",
                "key.converter=org.apache.kafka.connect.json.JsonConverter",
                "value.converter=org.apache.kafka.connect.json.JsonConverter",
                "key.converter.schemas.enable=false",
                "value.converter.schemas.enable=true",
                f"offset.storage.file.filename={tmp / 'offsets'}",
                "offset.flush.interval.ms=200",
                f"listeners=http://127.0.0.1:{_free_port()}",
            ]
        )
        + "\n"
    )
    connector = tmp / "mysql.properties"
    connector.write_text(
        "\n".join(
            [
                "name=ddl-test",
                "connector.class=io.debezium.connector.mysql.MySqlConnector",
                f"database.hostname={db.host}",
                f"database.port={db.port}",
                f"database.user={db.user}",
                f"database.password={db.password}",
                f"database.server.id={random.randint(10_000, 90_000)}",
                f"topic.prefix={prefix}",
                f"database.include.list={db.name}",
                f"schema.history.internal.kafka.topic={prefix}.history",
                f"schema.history.internal.kafka.bootstrap.servers={kafka.bootstrap_servers}",
            ]
        )
        + "\n"
    )
    return worker, connector


def _start(worker: Path, connector: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "cdc.cli", "standalone", str(worker), str(connector)],
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


def _write_phase(cur: Any, phase: int, table: str, columns: list[str], ddl: str | None) -> None:
    if ddl:
        cur.execute(ddl)
    values = {
        "phase": phase,
        "a": phase * 10,
        "b": phase * 100,
        "c": phase * 100 if phase == 4 else f"c{phase}",
        "d": "2024-01-02 03:04:05.123456",
    }
    cols = [c for c in columns if c != "id"]
    for _ in range(3):
        cur.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})",
            [values[c] for c in cols],
        )


def _events(kafka: Any, topic: str) -> list[dict[str, Any]]:
    return [json.loads(m.value()) for m in kafka.read_to_end(topic, timeout=60) if m.value() is not None]


def _wait_for(kafka: Any, topics: list[str], count: int, timeout: float = 60) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        known = kafka.admin.list_topics(timeout=10).topics
        events = [e for t in topics if t in known for e in _events(kafka, t)]
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.5)


def test_every_event_carries_the_columns_of_its_moment(tmp_path: Path, kafka: Any, mysql_db: Any) -> None:
    prefix = kafka.prefix + "ddl"
    worker, connector = _files(tmp_path, kafka, mysql_db, prefix)
    log = tmp_path / "worker.log"
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, phase INT NOT NULL, a INT)")
        proc = _start(worker, connector, log)
        try:
            # the snapshot of the empty table, then streaming: its first schema change record (the
            # server's character set) is written once it read its binlog position, so every change below
            # is streamed (it reads the schema of the server's every database, which takes a while)
            assert _wait_for(kafka, [prefix], 1), "no snapshot schema change record"
            for phase, table, columns, ddl in PHASES:
                if phase == STOP_AFTER_PHASE + 1:
                    time.sleep(3)
                    proc.send_signal(signal.SIGTERM)
                    assert proc.wait(60) == 0
                _write_phase(cur, phase, table, columns, ddl)
                time.sleep(0.3)
            proc = _start(worker, connector, log)
            topics = [f"{prefix}.{mysql_db.name}.t", f"{prefix}.{mysql_db.name}.t2"]
            events = _wait_for(kafka, topics, 3 * len(PHASES))
        finally:
            proc.terminate()
            proc.wait(30)
    expected = {phase: columns for phase, _t, columns, _d in PHASES}
    by_phase: dict[int, int] = {}
    for event in events:
        after = event["payload"]["after"]
        phase = after["phase"]
        by_phase[phase] = by_phase.get(phase, 0) + 1
        assert list(after) == expected[phase], f"phase {phase}: {list(after)} != {expected[phase]}"
        fields = [f["field"] for f in event["schema"]["fields"][1]["fields"]]
        assert fields == expected[phase], f"phase {phase} schema: {fields}"
        if phase == 5:
            c_type = next(f for f in event["schema"]["fields"][1]["fields"] if f["field"] == "c")["type"]
            assert c_type == "string"
        if phase in (7, 8):
            assert after["d"] == 1704164645123456  # MicroTimestamp of 2024-01-02 03:04:05.123456
    assert by_phase == {phase: 3 for phase, *_ in PHASES}, f"events per phase: {by_phase}"
    log_text = log.read_text(errors="replace")
    assert "Traceback" not in log_text, log_text[-3000:]
