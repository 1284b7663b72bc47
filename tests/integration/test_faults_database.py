"""Database faults, on the shared MariaDB without restarting it (other tests use it):

* the binlog connection cut mid-transaction: ``KILL`` of *our* connector's binlog dump thread from a
  second session, again and again while multi-statement transactions flow (the server side of a
  database restart or a network cut). The connector must reconnect from its checkpoint — the start of
  the open transaction plus the events and rows already emitted — and miss and repeat nothing;
* a binlog purged while the connector was stopped: the stored offset names a binlog file that is not on
  the server (``binlog.000000``: exactly what a purged file looks like to the connector, without purging
  the shared server's binlogs). The task must FAIL with a message naming the file and the remedy; with
  ``snapshot.mode=when_needed`` it takes a new snapshot instead, and loses nothing.

Short form: ``CDC_FAULT_CUTS`` (12) cuts. Long form: ``CDC_FAULT_CUTS=100``.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    Worker,
    Writer,
    audit,
    mysql_connector,
    read_topic,
    report,
    setup_items,
    standalone_worker,
    wait_for,
)

from cdc.worker.stores.file import read_offset_file, write_offset_file

CUTS = int(os.environ.get("CDC_FAULT_CUTS", "12"))


def _standalone(tmp_path: Path, kafka: Any, mysql_db: Any, prefix: str, name: str, **extra: str) -> Worker:
    config = mysql_connector(mysql_db, prefix, kafka.bootstrap_servers, **extra)
    return standalone_worker(tmp_path, kafka.bootstrap_servers, name, config)


def _local_ports(pid: int, remote_port: int) -> set[int]:
    """Local ports of process ``pid``'s TCP connections to ``remote_port`` (from /proc, no psutil)."""
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == remote_port:
                ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports


def _dump_threads(admin: Any, pid: int, mysql_port: int) -> list[int]:
    ports = _local_ports(pid, mysql_port)
    with admin.cursor() as cur:
        cur.execute("SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
        rows = cur.fetchall()
    return [
        int(i)
        for i, host in rows
        if host and host.rsplit(":", 1)[-1].isdigit() and int(host.rsplit(":", 1)[-1]) in ports
    ]


@pytest.mark.timeout(1200)
def test_binlog_connection_cut_mid_transaction_loses_and_repeats_nothing(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    setup_items(mysql_db, 100)
    prefix = kafka.prefix + "cut"
    topic = f"{prefix}.{mysql_db.name}.items"
    worker = _standalone(tmp_path, kafka, mysql_db, prefix, "cut").start()
    writer = Writer(mysql_db, sleep=0.005)
    rng = random.Random(3)
    cuts = 0
    admin = mysql_db.connect()
    try:
        wait_for(
            lambda: len(read_topic(kafka.bootstrap_servers, topic, "read_uncommitted")) >= 100,
            60,
            "the snapshot",
            worker.log,
        )
        writer.start()
        assert worker.proc is not None
        while cuts < CUTS:
            threads = wait_for(
                lambda: _dump_threads(admin, worker.proc.pid, mysql_db.port),
                60,  # type: ignore[union-attr]
                "the connector's binlog dump thread",
                worker.log,
            )
            time.sleep(rng.uniform(0.3, 1.2))  # the writer is inside a transaction most of the time
            for thread in threads:
                with admin.cursor() as cur:
                    try:
                        cur.execute(f"KILL {thread}")
                        cuts += 1
                    except Exception:
                        pass
        time.sleep(3)
        writer.stop_event.set()
        writer.join(30)
        result = audit(kafka.bootstrap_servers, topic, mysql_db, "read_uncommitted")
        state, trace = worker.task_state("cut")
        reconnects = worker.log().count("Binlog connection lost")
    finally:
        writer.stop_event.set()
        admin.close()
        worker.stop()
    report("binlog connection cut", cuts, writer, result)
    assert state == "RUNNING", trace
    assert reconnects >= 1, "the connector should have logged its reconnects"
    assert result.missing == [], f"missing (id, version) pairs: {result.missing[:10]}"
    # No worker crash here: the reconnect skips what was emitted, so nothing may repeat either.
    assert result.duplicated == {}, f"duplicated (id, version) pairs: {list(result.duplicated.items())[:10]}"


def _point_offset_at_missing_binlog(offsets_file: Path) -> str:
    offsets = read_offset_file(offsets_file)
    assert len(offsets) == 1, offsets
    ((key, value),) = offsets.items()
    offset = json.loads(value)
    base = offset["file"].rsplit(".", 1)[0]
    missing = f"{base}.000000"
    offset.update({"file": missing, "pos": 4})
    # Without its GTID set: on MariaDB an offset with one resumes by the set wherever the file went (as
    # Debezium reconnects by GTIDs; cdc/mysql/gtid_position.py), and the set is still on this server.
    offset.pop("gtids", None)
    offset.pop("event", None)
    offset.pop("row", None)
    write_offset_file(offsets_file, {key: json.dumps(offset, separators=(",", ":")).encode()})
    return missing


@pytest.mark.timeout(1200)
def test_purged_binlog_fails_clearly_then_when_needed_resnapshots(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    setup_items(mysql_db, 50)
    prefix = kafka.prefix + "purge"
    topic = f"{prefix}.{mysql_db.name}.items"
    worker = _standalone(tmp_path, kafka, mysql_db, prefix, "purge").start()
    try:
        wait_for(
            lambda: len(read_topic(kafka.bootstrap_servers, topic, "read_uncommitted")) >= 50,
            60,
            "the snapshot",
            worker.log,
        )
        time.sleep(1.5)  # an offset flush
    finally:
        worker.stop()
    missing_file = _point_offset_at_missing_binlog(tmp_path / "offsets")
    with mysql_db.connect() as conn, conn.cursor() as cur:  # changes made while the connector is away
        cur.execute("UPDATE items SET version = version + 1 WHERE id <= 10")

    worker.start()
    try:
        _state, trace = wait_for(
            lambda: (s := worker.task_state("purge"))[0] == "FAILED" and s, 60, "the task to fail", worker.log
        )
    finally:
        worker.stop()
    assert missing_file in trace, trace
    assert "snapshot.mode=when_needed" in trace and "no longer available" in trace, trace

    worker = _standalone(tmp_path, kafka, mysql_db, prefix, "purge", **{"snapshot.mode": "when_needed"})
    worker.start()
    try:
        wait_for(lambda: worker.task_state("purge")[0] == "RUNNING", 60, "the task to run", worker.log)
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("UPDATE items SET version = version + 1 WHERE id > 40")
        writer = Writer(mysql_db)
        writer.transactions = 1
        result = audit(kafka.bootstrap_servers, topic, mysql_db, "read_uncommitted")
        log = worker.log()
    finally:
        worker.stop()
    report("binlog purged, when_needed", 1, writer, result)
    assert "taking a new snapshot" in log
    assert result.missing == [], f"missing (id, version) pairs: {result.missing[:10]}"
