"""A MariaDB server of a test's own, on a free port, in a temporary directory; stopped by the test.

For tests that need server settings the shared stack must keep (``binlog_row_metadata``, …): the same
configuration as ``scripts/stack.sh`` writes, with ``settings`` overriding it.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pymysql

from tests.integration.faultkit import free_port

__all__ = ["PrivateMariaDb"]


class PrivateMariaDb:
    user = "cdc"
    password = "cdc-private"
    host = "127.0.0.1"

    def __init__(self, root: Path, settings: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.port = free_port()
        self.socket = root / "mysqld.sock"
        self.settings = {
            "server_id": "1",
            "log_bin": str(root / "data" / "binlog"),
            "binlog_format": "ROW",
            "binlog_row_image": "FULL",
            "binlog_row_metadata": "FULL",
            "gtid_domain_id": "0",
            "character_set_server": "utf8mb4",
            "collation_server": "utf8mb4_general_ci",
            "innodb_buffer_pool_size": "64M",
            "innodb_log_file_size": "16M",
            "performance_schema": "OFF",
            **dict(settings or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def _config(self) -> Path:
        cnf = self.root / "my.cnf"
        lines = [
            "[mariadbd]",
            "user = root",
            f"datadir = {self.root / 'data'}",
            f"tmpdir = {self.root / 'tmp'}",
            f"socket = {self.socket}",
            f"pid-file = {self.root / 'mariadbd.pid'}",
            f"log-error = {self.root / 'mariadbd.err'}",
            f"bind-address = {self.host}",
            f"port = {self.port}",
            "skip-name-resolve",
            *(f"{k} = {v}" for k, v in self.settings.items()),
        ]
        cnf.write_text("\n".join(lines) + "\n")
        return cnf

    def start(self, timeout: float = 90.0) -> PrivateMariaDb:
        if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
            raise RuntimeError("mariadbd is not installed (scripts/install-deps.sh installs it)")
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        (self.root / "tmp").mkdir(exist_ok=True)
        cnf = self._config()
        install = subprocess.run(
            [
                "mariadb-install-db",
                f"--defaults-file={cnf}",
                "--user=root",
                "--skip-test-db",
                "--auth-root-authentication-method=socket",
            ],
            capture_output=True,
            timeout=timeout,
        )
        if install.returncode:
            raise RuntimeError(f"mariadb-install-db failed: {install.stderr.decode()[-2000:]}")
        mariadbd = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
        log = (self.root / "mariadbd.out").open("ab")
        self.proc = subprocess.Popen(
            [mariadbd, f"--defaults-file={cnf}", "--user=root"],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with self.root_connection() as conn, conn.cursor() as cur:
                    cur.execute(
                        f"CREATE USER IF NOT EXISTS '{self.user}'@'%' IDENTIFIED BY '{self.password}'"
                    )
                    cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{self.user}'@'%'")
                return self
            except pymysql.err.MySQLError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        "the private MariaDB did not start: "
                        + (self.root / "mariadbd.err").read_text()[-2000:]
                    ) from None
                time.sleep(0.3)

    def root_connection(self, **kwargs: Any) -> pymysql.connections.Connection:
        return pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True, **kwargs)

    def connect(self, **kwargs: Any) -> pymysql.connections.Connection:
        return pymysql.connect(
            host=self.host, port=self.port, user=self.user, password=self.password, autocommit=True, **kwargs
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None
