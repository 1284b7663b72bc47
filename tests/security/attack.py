"""What the security tests need: workers with basic authentication started as users start them, the
worker's resident memory read from ``/proc``, and a raw HTTP client that sends a body of any size the way
an attacker would (declared with ``Content-Length`` or streamed in chunks) and stops when answered."""

from __future__ import annotations

import base64
import contextlib
import select
import socket
from pathlib import Path
from typing import Any

import requests
from faultkit import group_worker_props
from worker_process import WorkerProcess, free_port, seed_properties

USER, PASSWORD = "alice", "s3cret-pa55"
AUTH = (USER, PASSWORD)
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
MB = 1024 * 1024


def credentials(tmp_path: Path) -> Path:
    path = tmp_path / "users.properties"
    path.write_text(f"{USER}={PASSWORD}\n", encoding="utf-8")
    return path


def standalone_worker(
    tmp_path: Path, kafka: Any, workers: list[WorkerProcess], add: dict[str, str] | None = None
) -> WorkerProcess:
    """The seed ``connect-standalone.properties`` on a loopback port, with basic authentication."""
    port = free_port()
    props = seed_properties(
        "connect-standalone.properties",
        tmp_path / "standalone.properties",
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
        },
        {
            "listeners": f"http://127.0.0.1:{port}",
            "rest.basic.auth.credentials.file": str(credentials(tmp_path)),
            **(add or {}),
        },
    )
    worker = WorkerProcess(["standalone", str(props)], port, tmp_path / "standalone.log", auth=AUTH)
    workers.append(worker)
    return worker.start()


def provider_worker(tmp_path: Path, kafka: Any, workers: list[WorkerProcess]) -> WorkerProcess:
    """A standalone worker with a ``file`` config provider allowed to read ``tmp_path/secrets`` only."""
    secrets = tmp_path / "secrets"
    secrets.mkdir(exist_ok=True)
    return standalone_worker(
        tmp_path,
        kafka,
        workers,
        {
            "config.providers": "file",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "config.providers.file.param.allowed.paths": str(secrets),
        },
    )


def distributed_props(kafka: Any, tmp_path: Path, port: int, group: str) -> dict[str, str]:
    """A distributed worker of ``group`` (the group tests' properties, internal topics of the test's own),
    basic auth on, and the FileStream connectors as a distributed worker has them by default: off."""
    props = group_worker_props(
        kafka.bootstrap_servers, kafka.topic(group), kafka.topic(f"{group}-"), port, 6000, 1000
    )
    props.pop("filestream.connectors.enable", None)
    props["rest.basic.auth.credentials.file"] = str(credentials(tmp_path))
    return props


def distributed_worker(
    tmp_path: Path,
    kafka: Any,
    workers: list[WorkerProcess],
    group: str = "sec",
    add: dict[str, str] | None = None,
) -> WorkerProcess:
    port = free_port()
    props = {**distributed_props(kafka, tmp_path, port, group), **(add or {})}
    path = tmp_path / f"worker-{port}.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    worker = WorkerProcess(["distributed", str(path)], port, tmp_path / f"worker-{port}.log", auth=AUTH)
    workers.append(worker)
    return worker.start()


def call(worker: WorkerProcess, method: str, path: str, **kwargs: Any) -> requests.Response:
    kwargs.setdefault("auth", AUTH)
    kwargs.setdefault("timeout", 60)
    return requests.request(method, worker.url + path, **kwargs)


def rss_kb(pid: int) -> int:
    """Resident memory of a process, from ``/proc/<pid>/status`` (``VmRSS``, kB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def send_body(
    port: int,
    method: str,
    path: str,
    size: int,
    headers: dict[str, str] | None = None,
    *,
    chunked: bool = False,
    send_all: bool = False,
) -> tuple[int, bytes, int]:
    """Send a ``size``-byte JSON-looking body; return (status, response bytes, body bytes sent).

    The body is sent until the server answers (or, with ``send_all``, to its end anyway): a server that
    refuses it early must not need the rest, and one that reads it all must not keep it."""
    head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}")
    piece = b'[{"k":"' + b"v" * (64 * 1024 - 16) + b'"},'
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    response = b""
    sent = 0
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        while sent < size and (send_all or not _complete(response)):
            if select.select([sock], [], [], 0)[0]:
                data = _recv(sock)
                if not data:
                    break
                response += data
                continue
            chunk = piece[: size - sent]
            try:
                sock.sendall((b"%x\r\n" % len(chunk) + chunk + b"\r\n") if chunked else chunk)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break
            sent += len(chunk)
        if chunked and sent >= size:
            with contextlib.suppress(OSError):
                sock.sendall(b"0\r\n\r\n")
        while not _complete(response):
            data = _recv(sock)
            if not data:
                break
            response += data
    finally:
        sock.close()
    status_line = response.split(b"\r\n", 1)[0].split()
    status = int(status_line[1]) if len(status_line) > 1 else 0
    return status, response.partition(b"\r\n\r\n")[2], sent


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except (ConnectionResetError, TimeoutError):
        return b""


def _complete(response: bytes) -> bool:
    header, sep, rest = response.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = _content_length(header)
    return length is not None and len(rest) >= length


def _content_length(header: bytes) -> int | None:
    for line in header.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return None


MYSQL = "io.debezium.connector.mysql.MySqlConnector"


def mysql_config(db: Any, name: str, **extra: str) -> dict[str, str]:
    """A MySQL connector config that validates clean against the stack's server (``db``: a ``mysql_db``),
    with ``extra`` keys on top."""
    return {
        "connector.class": MYSQL,
        "name": name,
        "tasks.max": "1",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.password": db.password,
        "database.server.id": str(5400 + abs(hash(name)) % 500),
        "topic.prefix": name,
        "database.include.list": db.name,
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **extra,
    }


def validate_errors(worker: WorkerProcess, config: dict[str, str]) -> dict[str, list[str]]:
    """``PUT …/config/validate``: the errors by key (the answer must be a 200 ConfigInfos, never a 500)."""
    response = call(
        worker, "PUT", f"/connector-plugins/{config['connector.class']}/config/validate", json=config
    )
    assert response.status_code == 200, response.text
    body = response.json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    assert body["error_count"] == sum(len(e) for e in errors.values()), body
    return errors
