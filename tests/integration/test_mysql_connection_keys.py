"""Debezium's connection keys of the MySQL connector, each shown acting on the real stack (in-process
tasks): ``connect.keep.alive`` and ``connect.keep.alive.interval.ms`` (a lost or silent binlog connection),
``errors.max.retries``, ``database.initial.statements``, and ``inconsistent.schema.handling.mode`` (a
binlog table map that the schema does not describe)."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cdc.api.records import SourceRecord
from tests.integration.stream_task import await_failure, await_row, config, row_ids, sql, streaming_task

pytestmark = pytest.mark.integration


def _local_ports(remote_port: int) -> set[int]:
    """Local ports of this process's TCP connections to ``remote_port`` (from /proc)."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/self/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                if fields[9] in inodes and int(fields[2].rsplit(":", 1)[1], 16) == remote_port:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _kill_our_binlog_connection(mysql_db: Any, timeout: float = 20) -> None:
    """KILL this process's binlog dump thread on the server (a server restart or a network cut, as the
    connector sees it)."""
    deadline = time.monotonic() + timeout
    with mysql_db.connect() as conn, conn.cursor() as cur:
        while time.monotonic() < deadline:
            ports = _local_ports(mysql_db.port)
            cur.execute(
                "SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
            )
            ours = [
                i
                for i, host in cur.fetchall()
                if host and host.rsplit(":", 1)[-1].isdigit() and int(host.rsplit(":", 1)[-1]) in ports
            ]
            if ours:
                for thread in ours:
                    cur.execute(f"KILL {int(thread)}")
                return
            time.sleep(0.2)
    raise AssertionError("no binlog dump thread of this process")


@pytest.mark.honours("connect.keep.alive", "errors.max.retries")
@pytest.mark.parametrize(
    ("extra", "fails_with"),
    [
        ({"connect.keep.alive": "false"}, "connect.keep.alive=false: the binlog client does not reconnect"),
        ({"errors.max.retries": "0"}, "giving up after errors.max.retries=0 retries"),
        ({"connect.keep.alive": "true", "errors.max.retries": "-1"}, None),
    ],
    ids=["no-keep-alive", "no-retries", "defaults"],
)
def test_a_lost_binlog_connection_is_reopened_unless_keep_alive_or_retries_say_no(
    mysql_db: Any, kafka: Any, extra: dict[str, str], fails_with: str | None
) -> None:
    sql(mysql_db, "CREATE TABLE t (id INT PRIMARY KEY)")
    with streaming_task(config(mysql_db, kafka.topic("lost"), **extra)) as task:
        sql(mysql_db, "INSERT INTO t VALUES (1)")
        await_row(task, 1)
        _kill_our_binlog_connection(mysql_db)
        sql(mysql_db, "INSERT INTO t VALUES (2)")
        if fails_with is None:
            await_row(task, 2)  # read again after reconnecting
        else:
            error = await_failure(task)
            assert fails_with in str(error), error


class FreezingProxy:
    """A TCP proxy to the server whose connections can be frozen: a frozen connection stays open and
    relays nothing more either way (a half-dead network path); connections opened later relay normally."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(32)
        self.port = self.server.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.frozen: set[int] = set()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        src.settimeout(0.1)
        while not self.closed and src.fileno() not in self.frozen:
            try:
                data = src.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data or src.fileno() in self.frozen:
                return
            with contextlib.suppress(OSError):
                dst.sendall(data)

    def freeze(self) -> None:
        self.frozen |= {s.fileno() for s in self.sockets}

    def close(self) -> None:
        self.closed = True
        self.server.close()
        for s in self.sockets:
            s.close()


@pytest.mark.honours("connect.keep.alive.interval.ms")
def test_a_silent_binlog_connection_is_reopened_after_the_keep_alive_interval(
    mysql_db: Any, kafka: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The path to the server goes silent without closing (a dropped NAT entry, a frozen firewall): the
    binlog connection that brought nothing, not even the heartbeat asked for, for
    connect.keep.alive.interval.ms is taken as lost and opened again."""
    sql(mysql_db, "CREATE TABLE t (id INT PRIMARY KEY)")
    proxy = FreezingProxy(mysql_db.port)
    props = config(mysql_db, kafka.topic("silent"), **{"connect.keep.alive.interval.ms": "1500"})
    props["database.hostname"], props["database.port"] = "127.0.0.1", str(proxy.port)
    try:
        with caplog.at_level(logging.WARNING, logger="cdc.mysql.streaming"), streaming_task(props) as task:
            sql(mysql_db, "INSERT INTO t VALUES (1)")
            await_row(task, 1)
            proxy.freeze()
            sql(mysql_db, "INSERT INTO t VALUES (2)")
            took = await_row(task, 2, timeout=20)
    finally:
        proxy.close()
    assert 1.0 <= took < 15, took
    assert "Binlog connection lost" in caplog.text and "timed out" in caplog.text, caplog.text


@pytest.mark.honours("database.initial.statements")
def test_initial_statements_run_on_the_connections_that_read_the_database_not_on_the_binlogs(
    mysql_db: Any, kafka: Any
) -> None:
    db = mysql_db.name
    sql(
        mysql_db,
        "CREATE TABLE t (id INT PRIMARY KEY)",
        "INSERT INTO t VALUES (1), (2)",
        "CREATE TABLE opened (conn BIGINT, tz VARCHAR(64))",
    )
    statements = (
        f"SET time_zone = '+05:00'; INSERT INTO `{db}`.opened VALUES (CONNECTION_ID(), @@session.time_zone)"
    )
    props = config(
        mysql_db,
        kafka.topic("init"),
        **{"snapshot.mode": "initial", "database.initial.statements": statements},
    )
    with streaming_task(props) as task:
        sql(mysql_db, "INSERT INTO t VALUES (3)")
        await_row(task, 3)
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT conn, tz FROM opened")
            opened = cur.fetchall()
            cur.execute(
                "SELECT ID, HOST FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
            )
            ports = _local_ports(mysql_db.port)
            dump = {
                i
                for i, host in cur.fetchall()
                if host and host.rsplit(":", 1)[-1].isdigit() and int(host.rsplit(":", 1)[-1]) in ports
            }
    assert opened and {tz for _, tz in opened} == {"+05:00"}, opened  # run, in order, on the snapshot's
    assert dump and not dump & {c for c, _ in opened}, (dump, opened)  # not on the binlog connection


@pytest.mark.honours("inconsistent.schema.handling.mode")
@pytest.mark.parametrize("mode", ["fail", "warn", "skip"])
def test_rows_of_a_table_the_schema_does_not_describe_follow_the_mode(
    mysql_db: Any, kafka: Any, caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    """An ALTER the history leaves out (schema.history.internal.ddl.filter matches it) leaves the schema
    with fewer columns than the binlog's table map: fail stops the task, warn logs and skips the event,
    skip skips it silently."""
    sql(mysql_db, "CREATE TABLE t (id INT PRIMARY KEY)")
    props = config(
        mysql_db,
        kafka.topic("inconsistent"),
        **{
            "inconsistent.schema.handling.mode": mode,
            "schema.history.internal.ddl.filter": "ALTER TABLE t .*",
        },
    )
    with caplog.at_level(logging.DEBUG, logger="cdc.mysql.streaming"), streaming_task(props) as task:
        sql(mysql_db, "INSERT INTO t VALUES (1)")
        await_row(task, 1)
        sql(mysql_db, "ALTER TABLE t ADD COLUMN x INT", "INSERT INTO t VALUES (2, 20)")
        if mode == "fail":
            error = await_failure(task)
            assert "whose schema isn't known to this connector" in str(error)
            assert "inconsistent.schema.handling.mode" in str(error)
            return
        sql(mysql_db, "ALTER TABLE t DROP COLUMN x", "INSERT INTO t VALUES (3)")
        records: list[SourceRecord] = []
        deadline = time.monotonic() + 30
        while 3 not in row_ids(records) and time.monotonic() < deadline:
            records += task.poll() or []
    assert row_ids(records) == [3]  # 2 was skipped; the stream went on
    warned = "whose schema isn't known to this connector" in caplog.text
    assert warned == (mode == "warn"), caplog.text
