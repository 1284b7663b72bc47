"""A MariaDB primary and a GTID replica of one test's own, for the failover test.

Two ``mariadbd`` processes on free ports, data under the test's directory (socket paths under a short
/tmp directory: a unix socket path is limited to 108 bytes), configured as the stack's server (row
binlog, full images and metadata, ``gtid_strict_mode``, ``log_slave_updates``) with server ids 1 and 2,
listening on 127.0.0.1 and 127.0.0.2.
The replica follows the primary with ``MASTER_USE_GTID=slave_pos`` and semi-synchronous replication
(``AFTER_SYNC``), so a transaction the writer saw committed is on the replica before the primary stops.
:meth:`Pair.promote` is a DBA's failover: wait until the replica applied what it received, stop the
replication, make it writable. The shared stack's MariaDB is never touched.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql
from faultkit import free_port, wait_for

__all__ = ["Pair", "Server", "ServerDb"]

USER, PASSWORD = "cdc", "cdc"


@dataclass
class ServerDb:
    """A database on whichever server is the primary now (the writer reconnects to the new one): the
    shape of conftest's ``MySqlDb``, which is frozen and not importable at run time (see test_stack.py)."""

    name: str
    host: str
    port: int
    user: str = USER
    password: str = PASSWORD

    def connect(self, **kwargs: Any) -> pymysql.connections.Connection:
        options: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "database": self.name,
            "autocommit": True,
            "connect_timeout": 5,
            **kwargs,
        }
        return pymysql.connect(**options)


class Server:
    def __init__(self, root: Path, server_id: int, host: str) -> None:
        self.root, self.server_id, self.host = root, server_id, host
        self.port = free_port()
        self.sockdir = Path(tempfile.mkdtemp(prefix="cdcmy"))
        self.socket = self.sockdir / "s.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    def _cnf(self) -> Path:
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        cnf = self.root / "my.cnf"
        cnf.write_text(
            "\n".join(
                [
                    "[mariadbd]",
                    "user = root",
                    f"datadir = {self.root / 'data'}",
                    f"socket = {self.socket}",
                    f"pid-file = {self.root / 'mariadbd.pid'}",
                    f"log-error = {self.root / 'mariadbd.err'}",
                    f"bind-address = {self.host}",
                    f"port = {self.port}",
                    "skip-name-resolve",
                    f"server_id = {self.server_id}",
                    f"log_bin = {self.root / 'data' / 'binlog'}",
                    "binlog_format = ROW",
                    "binlog_row_image = FULL",
                    "binlog_row_metadata = FULL",
                    "gtid_domain_id = 0",
                    "gtid_strict_mode = ON",
                    "log_slave_updates = ON",
                    "rpl_semi_sync_master_enabled = ON",
                    "rpl_semi_sync_slave_enabled = ON",
                    "rpl_semi_sync_master_wait_point = AFTER_SYNC",
                    "rpl_semi_sync_master_timeout = 30000",
                    "innodb_buffer_pool_size = 64M",
                    "innodb_log_file_size = 32M",
                    "performance_schema = OFF",
                    "character_set_server = utf8mb4",
                    "",
                ]
            )
        )
        return cnf

    def start(self) -> Server:
        cnf = self._cnf()
        if not (self.root / "data" / "mysql").is_dir():
            subprocess.run(
                [
                    "mariadb-install-db",
                    f"--defaults-file={cnf}",
                    "--user=root",
                    "--skip-test-db",
                    "--auth-root-authentication-method=socket",
                ],
                check=True,
                capture_output=True,
                timeout=180,
            )
        with (self.root / "mariadbd.out").open("ab") as out:
            self.proc = subprocess.Popen(
                ["mariadbd", f"--defaults-file={cnf}", "--user=root"],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        wait_for(self._answers, 120, f"mariadbd {self.server_id} on port {self.port}", self.errors)
        with self.root_connection() as conn, conn.cursor() as cur:
            cur.execute("SET sql_log_bin = 0")  # the users are each server's own, not replicated
            for host in ("%", "localhost"):
                cur.execute(f"CREATE USER IF NOT EXISTS '{USER}'@'{host}' IDENTIFIED BY '{PASSWORD}'")
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'{host}'")
        return self

    def errors(self) -> str:
        path = self.root / "mariadbd.err"
        return path.read_text(errors="replace")[-5000:] if path.exists() else ""

    def _answers(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"mariadbd exited with {self.proc.returncode}:\n{self.errors()}")
        try:
            self.root_connection().close()
            return True
        except pymysql.MySQLError:
            return False

    def root_connection(self) -> pymysql.connections.Connection:
        return pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        with self.root_connection() as conn, conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def stop(self) -> None:
        """A clean shutdown (SIGTERM), as an operator stops a primary to fail over."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        shutil.rmtree(self.sockdir, ignore_errors=True)


class Pair:
    def __init__(self, root: Path) -> None:
        # two addresses, as two machines: the failover changes database.hostname, not only the port
        self.primary = Server(root / "primary", 1, "127.0.0.1")
        self.replica = Server(root / "replica", 2, "127.0.0.2")

    def start(self) -> Pair:
        self.primary.start()
        self.replica.start()
        # A replica's binlog seldom matches its primary's file for file (restarts, FLUSH LOGS, its own
        # rotation): the replicated events start in its binlog.000003 here, so the primary's
        # coordinates name no position of the same transaction on the replica.
        for _ in range(2):
            self.replica.query("FLUSH BINARY LOGS")
        self.replica.query(
            f"CHANGE MASTER TO MASTER_HOST='{self.primary.host}', MASTER_PORT={self.primary.port}, "
            f"MASTER_USER='{USER}', MASTER_PASSWORD='{PASSWORD}', MASTER_USE_GTID=slave_pos, "
            "MASTER_CONNECT_RETRY=1"
        )
        self.replica.query("START SLAVE")
        wait_for(
            lambda: self.replica.query("SHOW STATUS LIKE 'Rpl_semi_sync_slave_status'")[0][1] == "ON",
            60,
            "semi-synchronous replication",
            self.replica.errors,
        )
        return self

    def promote(self) -> None:
        """The replica applies everything it received, leaves replication and takes writes."""

        def applied() -> bool:
            status = self.replica.root_connection()
            with status, status.cursor(pymysql.cursors.DictCursor) as cur:
                cur.execute("SHOW SLAVE STATUS")
                row = cur.fetchone() or {}
                cur.execute("SELECT @@gtid_slave_pos")
                slave_pos = str(cur.fetchone()["@@gtid_slave_pos"])
            return row.get("Gtid_IO_Pos", "") == slave_pos

        wait_for(applied, 60, "the replica to apply its relay log", self.replica.errors)
        self.replica.query("STOP SLAVE")
        self.replica.query("RESET SLAVE ALL")
        self.replica.query("SET GLOBAL read_only = 0")

    def close(self) -> None:
        self.replica.close()
        self.primary.close()
