"""A secured worker for real: HTTPS between the workers of a group, basic auth, secrets kept out of sight.

* Two distributed workers with only ``https`` listeners that require client certificates and basic auth:
  requests sent to either reach the leader (forwarded with the user's credentials over TLS, trusted
  through the configured PEM trust store), and followers' task configs reach it too (signed, KIP-507).
* A standalone worker *process* whose connector takes a path from a ``${file:…}`` provider: the value
  never shows in ``GET …/config``, ``GET …/tasks``, the FAILED task's trace, nor the worker's log file.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP = os.environ.get("CDC_KAFKA_BOOTSTRAP", "127.0.0.1:9092")
USER, PASSWORD = "connect-admin", "adm1n-Pa55"
AUTH = (USER, PASSWORD)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        with contextlib.suppress(requests.RequestException):
            last = predicate()
            if last:
                return last
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A key + certificate PEM for 127.0.0.1/localhost (the key store) and the certificate alone (the
    trust store): every worker of the test presents and trusts the same certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cdc-test-worker")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    keystore, truststore = directory / "worker.pem", directory / "ca.pem"
    keystore.write_bytes(key_pem + cert_pem)
    truststore.write_bytes(cert_pem)
    return keystore, truststore


# -- HTTPS group ----------------------------------------------------------------------------------------
@pytest.fixture
def https_group(tmp_path: Path) -> Iterator[tuple[list[Any], Path, Path]]:
    from cdc.worker.runtime import build_distributed

    keystore, truststore = self_signed(tmp_path)
    users = tmp_path / "users.properties"
    users.write_text(f"{USER}={PASSWORD}\n")
    prefix = f"sec-{uuid.uuid4().hex[:8]}-"
    runtimes: list[Any] = []

    def props(port: int) -> dict[str, str]:
        return {
            "bootstrap.servers": BOOTSTRAP,
            "group.id": f"{prefix}group",
            "config.storage.topic": f"{prefix}configs",
            "offset.storage.topic": f"{prefix}offsets",
            "status.storage.topic": f"{prefix}status",
            "config.storage.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "offset.storage.partitions": "2",
            "status.storage.partitions": "2",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "listeners": f"https://127.0.0.1:{port}",
            "rest.advertised.host.name": "127.0.0.1",
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.keystore.location": str(keystore),
            "listeners.https.ssl.truststore.type": "PEM",
            "listeners.https.ssl.truststore.location": str(truststore),
            "listeners.https.ssl.client.auth": "required",
            "rest.basic.auth.credentials.file": str(users),
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "rebalance.timeout.ms": "20000",
            "scheduled.rebalance.max.delay.ms": "2000",
            "offset.flush.interval.ms": "1000",
            "filestream.connectors.enable": "true",  # the test's connectors
        }

    try:
        for _ in range(2):
            runtime = build_distributed(props(_free_port()))
            runtime.start()
            runtimes.append(runtime)
        yield runtimes, keystore, truststore
    finally:
        for runtime in reversed(runtimes):
            with contextlib.suppress(Exception):
                runtime.stop()
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
        topics = [t for t in admin.list_topics(timeout=10).topics if t.startswith(prefix)]
        if topics:
            for future in admin.delete_topics(topics).values():
                with contextlib.suppress(Exception):
                    future.result(30)


def test_https_group_with_basic_auth(https_group: tuple[list[Any], Path, Path], tmp_path: Path) -> None:
    runtimes, keystore, truststore = https_group
    urls = [r.url.rstrip("/") for r in runtimes]
    assert all(url.startswith("https://127.0.0.1:") for url in urls)
    tls: dict[str, Any] = {"verify": str(truststore), "cert": str(keystore), "timeout": 30}

    # No client certificate: the TLS handshake fails. Certificate but no password: 401.
    with pytest.raises(requests.exceptions.ConnectionError):  # TLS 1.3 tells after the handshake
        requests.get(urls[0] + "/", verify=str(truststore), timeout=10)
    response = requests.get(urls[0] + "/connectors", **tls)
    assert response.status_code == 401 and response.headers["WWW-Authenticate"].startswith("Basic")
    _wait(
        lambda: all(requests.get(u + "/connectors", auth=AUTH, **tls).status_code == 200 for u in urls),
        60,
        "both workers to join the group",
    )

    # Create through each worker: one of them is a follower and forwards to the leader over HTTPS,
    # passing the user's Authorization header along (the leader checks it again).
    for i, url in enumerate(urls * 2):
        name = f"src-{i}"
        source = tmp_path / f"{name}.txt"
        source.write_text("a\n")
        config = {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": f"{name}-topic",
            "tasks.max": "1",
        }
        response = requests.post(url + "/connectors", json={"name": name, "config": config}, auth=AUTH, **tls)
        assert response.status_code == 201, response.text
        assert (
            requests.post(url + "/connectors", json={"name": f"x{i}", "config": config}, **tls).status_code
            == 401
        )

    # Every connector gets its task: connectors run on both workers, so the followers' task configs
    # went to the leader over HTTPS (signed; basic auth is not asked of a signed internal request).
    def all_running() -> bool:
        for i in range(4):
            status = requests.get(f"{urls[0]}/connectors/src-{i}/status", auth=AUTH, **tls).json()
            if status.get("connector", {}).get("state") != "RUNNING" or len(status.get("tasks", [])) != 1:
                return False
            if status["tasks"][0]["state"] != "RUNNING":
                return False
        return True

    _wait(all_running, 90, "every connector and task RUNNING")
    owners = {
        requests.get(f"{urls[0]}/connectors/src-{i}/status", auth=AUTH, **tls).json()["connector"][
            "worker_id"
        ]
        for i in range(4)
    }
    assert len(owners) == 2, f"connectors did not spread over both workers: {owners}"


# -- secrets in a worker process -----------------------------------------------------------------------
class _Worker:
    def __init__(self, args: list[str], port: int, log_path: Path, env: dict[str, str]) -> None:
        with log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cdc.cli", *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
                env=env,
            )
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def test_provider_secrets_stay_out_of_config_status_and_logs(tmp_path: Path) -> None:
    secret_path = f"/nonexistent-{uuid.uuid4().hex[:6]}/Sink-S3cret-Segment/out.txt"
    worker_secret = "W0rker-Secret-Value"
    secrets_file = tmp_path / "secrets.properties"
    secrets_file.write_text(f"out={secret_path}\n")
    users = tmp_path / "users.properties"
    users.write_text(f"{USER}={PASSWORD}\n")
    port = _free_port()
    worker_props = tmp_path / "worker.properties"
    worker_props.write_text(
        "\n".join(
            [
                f"bootstrap.servers={BOOTSTRAP}",
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=org.apache.kafka.connect.storage.StringConverter",
                f"offset.storage.file.filename={tmp_path / 'offsets'}",
                f"listeners=http://127.0.0.1:{port}",
                f"rest.basic.auth.credentials.file={users}",
                "config.providers=file,env",
                "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider",
                "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider",
                "my.database.password=${env:CDC_TEST_WORKER_SECRET}",
                "offset.flush.interval.ms=1000",
            ]
        )
        + "\n"
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CDC_TEST_WORKER_SECRET": worker_secret}
    worker = _Worker(["standalone", str(worker_props)], port, tmp_path / "worker.log", env)
    try:
        _wait(
            lambda: requests.get(worker.url + "/", auth=AUTH, timeout=2).status_code == 200, 60, "the worker"
        )
        assert requests.get(worker.url + "/connectors", timeout=5).status_code == 401
        placeholder = f"${{file:{secrets_file}:out}}"
        config = {
            "connector.class": "FileStreamSink",
            "topics": f"sec-{uuid.uuid4().hex[:6]}",
            "file": placeholder,
            "tasks.max": "1",
        }
        response = requests.post(
            worker.url + "/connectors", json={"name": "sink", "config": config}, auth=AUTH, timeout=30
        )
        assert response.status_code == 201, response.text
        assert response.json()["config"]["file"] == placeholder

        def failed() -> Any:
            status = requests.get(worker.url + "/connectors/sink/status", auth=AUTH, timeout=5).json()
            tasks = status.get("tasks", [])
            return status if tasks and tasks[0]["state"] == "FAILED" else None

        status = _wait(failed, 60, "the sink task to fail on its missing directory")
        trace = status["tasks"][0]["trace"]
        assert "Couldn't find or create file" in trace and "[hidden]" in trace
        assert "S3cret-Segment" not in trace
        assert (
            requests.get(worker.url + "/connectors/sink/config", auth=AUTH, timeout=5).json()["file"]
            == placeholder
        )
        tasks = requests.get(worker.url + "/connectors/sink/tasks", auth=AUTH, timeout=5).json()
        assert tasks and all("S3cret-Segment" not in str(t["config"]) for t in tasks)
        validate = requests.put(
            worker.url + "/connector-plugins/FileStreamSink/config/validate",
            json={**config, "consumer.override.sasl.jaas.config": 'password="Jaa5-secret"'},
            auth=AUTH,
            timeout=30,
        )
        assert validate.status_code == 200 and "Jaa5-secret" not in validate.text
    finally:
        worker.stop()
    log = worker.log()
    assert "Worker configuration" in log and "Couldn't find or create file" in log
    assert "S3cret-Segment" not in log, "a provider's value reached the log"
    assert worker_secret not in log, "a worker secret reached the log"
