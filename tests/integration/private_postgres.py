"""A PostgreSQL server of a test's own (TLS on), on a free port, in a temporary directory.

As ``scripts/stack.sh`` runs the stack's: Debian's postgresql package, owned by the ``postgres`` OS user
when the tests run as root. It listens on 127.0.0.1 and 127.0.0.2 (both loopback; the certificate
covers only the first, so the second is a host name mismatch). Roles: ``cdc``/``cdc`` (any connection,
superuser) and ``tlsonly``/``tlsonly``, which ``pg_hba.conf`` admits over TLS only (``hostssl``).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from tests.integration.faultkit import free_port

__all__ = ["PrivatePostgres", "postgres_bin"]


def postgres_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    return found[-1] if found else None


class PrivatePostgres:
    host = "127.0.0.1"

    def __init__(self, pki: Path) -> None:
        self.pki = pki
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="cdc-pg-tls-"))
        self._as_root = os.geteuid() == 0

    def _run(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        cmd = ["runuser", "-u", "postgres", "--", *args] if self._as_root else list(args)
        return subprocess.run(cmd, capture_output=True, timeout=180)

    def start(self) -> PrivatePostgres:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL is not installed (scripts/stack.sh installs it)")
        data = self.root / "data"
        for name in ("server.pem", "server.key", "ca.pem"):
            shutil.copy(self.pki / name, self.root / name)
        (self.root / "server.key").chmod(0o600)
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
            for path in self.root.iterdir():
                shutil.chown(path, "postgres", "postgres")
        pwfile = self.root / "pw"
        pwfile.write_text("cdc\n")
        if self._as_root:
            shutil.chown(pwfile, "postgres", "postgres")
        init = self._run(
            f"{bin_dir}/initdb", "-D", str(data), "-U", "cdc", "--pwfile", str(pwfile), "-E", "UTF8",
            "--locale=C.UTF-8", "--auth-local=trust", "--auth-host=scram-sha-256",
        )  # fmt: skip
        if init.returncode:
            raise RuntimeError(f"initdb failed: {init.stderr.decode()[-2000:]}")
        (data / "pg_hba.conf").write_text(
            "local all all trust\n"
            "hostssl all tlsonly 127.0.0.0/8 scram-sha-256\n"
            "hostnossl all tlsonly 127.0.0.0/8 reject\n"
            "host all all 127.0.0.0/8 scram-sha-256\n"
        )
        options = (
            f"-h 127.0.0.1,127.0.0.2 -p {self.port} -k {self.root} -c fsync=off -c ssl=on "
            f"-c ssl_cert_file={self.root / 'server.pem'} -c ssl_key_file={self.root / 'server.key'} "
            f"-c ssl_ca_file={self.root / 'ca.pem'}"
        )
        started = self._run(
            f"{bin_dir}/pg_ctl", "-D", str(data), "-l", str(self.root / "postgres.log"), "-w", "-t", "120",
            "-o", options, "start",
        )  # fmt: skip
        if started.returncode:
            log = (self.root / "postgres.log").read_text() if (self.root / "postgres.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {started.stderr.decode()[-1000:]} {log[-2000:]}")
        with self.connect(dbname="postgres") as conn:
            conn.execute("CREATE ROLE tlsonly LOGIN PASSWORD 'tlsonly'")
            conn.execute("CREATE DATABASE cdc OWNER cdc")
            conn.execute("GRANT ALL ON DATABASE cdc TO tlsonly")
        with self.connect() as conn:
            conn.execute("GRANT ALL ON SCHEMA public TO tlsonly")
        return self

    def connect(self, dbname: str = "cdc", **kwargs: Any) -> psycopg.Connection[Any]:
        params: dict[str, Any] = {"sslmode": "disable", **kwargs}
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user="cdc",
            password="cdc",
            dbname=dbname,
            autocommit=True,
            **params,
        )

    def stop(self) -> None:
        bin_dir = postgres_bin()
        if bin_dir is not None and (self.root / "data" / "postmaster.pid").exists():
            self._run(f"{bin_dir}/pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
