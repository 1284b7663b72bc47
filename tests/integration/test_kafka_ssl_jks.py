"""A worker file with JKS trust and key stores, as Java users write it, against the stack's SSL listener
(``scripts/stack.sh``: 127.0.0.1:9095, client certificates required, the broker's key store and the
clients' ``truststore.jks``/``keystore.jks`` made by keytool under ``$STACK_DIR/tls``, password changeit).

A distributed worker: its internal topics and the connector's producer are librdkafka clients, its group
membership is kafka-python's; all of them get the JKS stores. The connector is the seed FileStreamSource.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from cdc.api.errors import ConfigError
from cdc.kafka.clients import to_librdkafka
from cdc.worker.runtime import build_distributed

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SSL_BOOTSTRAP = os.environ.get("CDC_KAFKA_SSL_BOOTSTRAP", "127.0.0.1:9095")
ROLES = ("producer.", "consumer.", "admin.")


@pytest.fixture(scope="module")
def tls_dir(stack: Any) -> Path:
    """The stack's TLS directory; fails (never skips) when the broker has no SSL listener."""
    directory = Path(os.environ.get("CDC_STACK_DIR", str(REPO / ".stack"))) / "tls"
    host, port = SSL_BOOTSTRAP.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError:
        pytest.fail(
            f"no SSL listener at {SSL_BOOTSTRAP}: the stack's broker predates it; run `make down && make up`",
            pytrace=False,
        )
    if not (directory / "truststore.jks").is_file():
        pytest.fail(f"no {directory}/truststore.jks: run `make down && make up`", pytrace=False)
    return directory


def ssl_settings(tls: Path, password: str = "changeit") -> dict[str, str]:
    """The security part of a Java worker file (Connect needs it at the top and under producer./consumer.)."""
    base = {
        "security.protocol": "SSL",
        "ssl.truststore.location": str(tls / "truststore.jks"),
        "ssl.truststore.password": password,
        "ssl.truststore.type": "JKS",
        "ssl.keystore.location": str(tls / "keystore.jks"),
        "ssl.keystore.password": password,
        "ssl.key.password": password,
        "ssl.keystore.type": "JKS",
    }
    out = dict(base)
    for prefix in ROLES:
        out.update({prefix + k: v for k, v in base.items()})
    return out


@pytest.fixture
def worker_file(tls_dir: Path, kafka: Any) -> dict[str, str]:
    prefix = kafka.prefix
    return {
        "bootstrap.servers": SSL_BOOTSTRAP,
        "group.id": prefix + "ssl-group",
        "config.storage.topic": prefix + "configs",
        "offset.storage.topic": prefix + "offsets",
        "status.storage.topic": prefix + "status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        "offset.flush.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
        "filestream.connectors.enable": "true",  # a distributed worker offers them only when told (docs)
        **ssl_settings(tls_dir),
    }


@pytest.fixture
def ssl_topics(tls_dir: Path, kafka: Any) -> Iterator[None]:
    yield
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(to_librdkafka({"bootstrap.servers": SSL_BOOTSTRAP, **ssl_settings(tls_dir)}))
    mine = [t for t in admin.list_topics(timeout=10).topics if t.startswith(kafka.prefix)]
    if mine:
        for future in admin.delete_topics(mine, operation_timeout=30).values():
            future.result(timeout=30)


def _read(tls_dir: Path, topic: str, count: int, timeout: float = 60) -> list[str]:
    from confluent_kafka import Consumer

    consumer = Consumer(
        to_librdkafka(
            {
                "bootstrap.servers": SSL_BOOTSTRAP,
                "group.id": topic + "-reader",
                "auto.offset.reset": "earliest",
                **{k: v for k, v in ssl_settings(tls_dir).items() if not k.startswith(ROLES)},
            }
        )
    )
    consumer.subscribe([topic])
    values: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                values.append(json.loads(message.value()))
    finally:
        consumer.close()
    return values


def test_java_worker_file_with_jks_stores_runs_a_connector(
    worker_file: dict[str, str], tls_dir: Path, kafka: Any, tmp_path: Path, ssl_topics: None
) -> None:
    source = tmp_path / "lines.txt"
    source.write_text("first message\nsecond message\n")
    topic = kafka.prefix + "ssl-lines"
    runtime = build_distributed(worker_file)
    runtime.start()
    try:
        url = runtime.url.rstrip("/")
        config = {
            "connector.class": "FileStreamSource",
            "tasks.max": "1",
            "file": str(source),
            "topic": topic,
        }
        created = requests.post(f"{url}/connectors", json={"name": "ssl-file", "config": config}, timeout=90)
        assert created.status_code == 201, created.text
        assert _read(tls_dir, topic, 2) == ["first message", "second message"]
        status = requests.get(f"{url}/connectors/ssl-file/status", timeout=30).json()
        assert status["connector"]["state"] == "RUNNING" and status["tasks"][0]["state"] == "RUNNING"
    finally:
        runtime.stop()


def test_wrong_store_password_names_the_key(worker_file: dict[str, str], tls_dir: Path) -> None:
    bad = {**worker_file, **{k: "wrong-pass" for k in worker_file if k.endswith("truststore.password")}}
    with pytest.raises(ConfigError, match=r"ssl\.truststore\.password") as info:
        build_distributed(bad).start()
    assert "wrong-pass" not in str(info.value)
