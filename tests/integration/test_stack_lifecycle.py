"""Issue #2: ``make down`` leaves no process of the stack running; ``make up`` after ``make down`` keeps
earlier data.

On a **private** MariaDB, never the shared stack in .stack/: ``CDC_STACK_DIR`` is a fresh directory (short,
under /tmp: the server's socket lives in it), ``CDC_MYSQL_PORT`` a free port, ``CDC_STACK_SERVICES=mariadb``
and ``CDC_STACK_BACKEND=local``; ``make up``/``make down`` pass them to scripts/stack.sh. Kafka is not
part of this check (a private broker would take ``CDC_KAFKA_PORT`` and ``CDC_KAFKA_CONTROLLER_PORT``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()


def _processes_mentioning(text: str) -> list[int]:
    """Pids whose command line names ``text`` (the private stack's directory)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if text.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
    return pids


class PrivateStack:
    def __init__(self, directory: Path, port: int) -> None:
        self.dir = directory
        self.port = port
        self.env = {
            **os.environ,
            "CDC_STACK_DIR": str(directory),
            "CDC_STACK_SERVICES": "mariadb",
            "CDC_STACK_BACKEND": "local",
            "CDC_MYSQL_PORT": str(port),
        }

    def make(self, target: str) -> str:
        result = subprocess.run(
            ["make", "-s", "-C", str(REPO), target], env=self.env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, f"make {target}:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def pid(self) -> int:
        return int((self.dir / "run" / "mariadb.pid").read_text())

    def connect(self) -> pymysql.connections.Connection:
        return pymysql.connect(host="127.0.0.1", port=self.port, user="cdc", password="cdc", autocommit=True)


@pytest.fixture
def private_stack() -> Iterator[PrivateStack]:
    directory = Path(tempfile.mkdtemp(prefix="cdc-stack-", dir="/tmp"))
    stack = PrivateStack(directory, _free_port())
    assert directory.resolve() != (REPO / ".stack").resolve() and stack.port != 3306
    try:
        yield stack
    finally:
        pid_file = directory / "run" / "mariadb.pid"
        if pid_file.exists():
            subprocess.run(
                ["make", "-s", "-C", str(REPO), "down"], env=stack.env, capture_output=True, timeout=300
            )
        for pid in _processes_mentioning(str(directory)):  # only ours: they name the private directory
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)


def test_down_stops_the_stack_and_up_keeps_the_data(private_stack: PrivateStack) -> None:
    out = private_stack.make("up")
    assert f"MariaDB on 127.0.0.1:{private_stack.port}" in out, out
    first = private_stack.pid()
    assert _alive(first)
    with private_stack.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE kept")
        cur.execute("CREATE TABLE kept.t (id INT PRIMARY KEY, note VARCHAR(32))")
        cur.execute("INSERT INTO kept.t VALUES (1, 'before down')")

    private_stack.make("down")
    assert not _alive(first)
    assert _processes_mentioning(str(private_stack.dir)) == []
    with pytest.raises(pymysql.err.OperationalError):
        private_stack.connect()

    private_stack.make("up")
    second = private_stack.pid()
    assert second != first and _alive(second)
    with private_stack.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT id, note FROM kept.t")
        assert cur.fetchall() == ((1, "before down"),)

    private_stack.make("down")
    assert not _alive(second)
    assert _processes_mentioning(str(private_stack.dir)) == []


def _tls_login(stack: PrivateStack, **kwargs: object) -> str:
    """cdc_tls's session cipher (the user is refused in plain text), with the stack's CA and host check."""
    ca = stack.dir / "tls" / "ca.pem"
    with (
        pymysql.connect(
            host="127.0.0.1",
            port=stack.port,
            user="cdc_tls",
            password="cdc_tls",
            ssl_ca=str(ca),
            ssl_verify_identity=True,
            **kwargs,  # type: ignore[arg-type]
        ) as conn,
        conn.cursor() as cur,
    ):
        cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        return str(cur.fetchone()[1])


def test_up_serves_tls_and_upgrades_a_stack_made_before_tls(private_stack: PrivateStack) -> None:
    private_stack.make("up")
    tls = private_stack.dir / "tls"
    assert {"ca.pem", "server.pem", "wronghost.pem", "client.pem", "truststore.jks", "keystore.p12"} <= {
        p.name for p in tls.iterdir()
    }
    assert _tls_login(private_stack).startswith("TLS_")
    with pytest.raises(pymysql.err.OperationalError, match="Access denied"):
        pymysql.connect(
            host="127.0.0.1", port=private_stack.port, user="cdc_tls", password="cdc_tls", ssl_disabled=True
        )
    # a stack dir from before TLS: no certificates, a my.cnf without them, a server started from it
    private_stack.make("down")
    shutil.rmtree(tls)
    cnf = private_stack.dir / "mariadb" / "my.cnf"
    cnf.write_text("".join(line for line in cnf.read_text().splitlines(True) if not line.startswith("ssl_")))
    private_stack.make("up")  # the configuration is rewritten and the certificates made again
    assert (tls / "ca.pem").is_file()
    assert _tls_login(private_stack).startswith("TLS_")
    private_stack.make("down")
