"""Fixtures shared by every test: the local stack, a database per test, Kafka helpers.

- ``stack`` (session): makes sure MariaDB and Kafka run and answer. It runs ``scripts/stack.sh up``
  (idempotent: returns at once when the stack runs), or, where a Docker engine answers and
  testcontainers is installed, ``docker/compose.yaml`` through testcontainers. ``CDC_STACK_AUTOSTART=0``
  starts nothing and uses whatever answers at ``CDC_MYSQL_HOST``/``CDC_MYSQL_PORT`` and
  ``CDC_KAFKA_BOOTSTRAP``.
- ``mysql_db``: a database of its own for each test, dropped afterwards.
- ``kafka``: bootstrap servers, an AdminClient, a topic-name prefix of its own for each test,
  ``create_topic`` and ``read_to_end``; topics under the prefix are deleted afterwards.

Everything under tests/integration and tests/e2e is marked ``integration`` (e2e also ``e2e``). Those tests
need the stack: when it is down they fail, they never skip.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import pytest

REPO = Path(__file__).resolve().parent.parent
MYSQL_HOST = os.environ.get("CDC_MYSQL_HOST", "127.0.0.1")
MYSQL_PORT = int(os.environ.get("CDC_MYSQL_PORT", "3306"))
MYSQL_USER = os.environ.get("CDC_MYSQL_USER", "cdc")
MYSQL_PASSWORD = os.environ.get("CDC_MYSQL_PASSWORD", "cdc")
KAFKA_BOOTSTRAP = os.environ.get("CDC_KAFKA_BOOTSTRAP", "127.0.0.1:9092")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    integration, e2e = REPO / "tests" / "integration", REPO / "tests" / "e2e"
    for item in items:
        path = Path(str(item.path))
        if path.is_relative_to(integration) or path.is_relative_to(e2e):
            item.add_marker(pytest.mark.integration)
        if path.is_relative_to(e2e):
            item.add_marker(pytest.mark.e2e)


# ------------------------------------------------------------------------------------------------ stack


@dataclass(frozen=True)
class Stack:
    """Where the services of the stack answer."""

    mysql_host: str
    mysql_port: int
    kafka_bootstrap: str
    backend: str


def _docker_answers() -> bool:
    if os.environ.get("CDC_STACK_BACKEND", "auto") == "local" or shutil.which("docker") is None:
        return False
    try:
        import testcontainers.compose  # noqa: F401
    except ImportError:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _wait_for_mysql(deadline: float) -> None:
    while True:
        try:
            pymysql.connect(
                host=MYSQL_HOST, port=MYSQL_PORT, user=MYSQL_USER, password=MYSQL_PASSWORD, connect_timeout=3
            ).close()
            return
        except pymysql.err.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    if os.environ.get("CDC_STACK_AUTOSTART", "1") == "0":
        yield Stack(MYSQL_HOST, MYSQL_PORT, KAFKA_BOOTSTRAP, "external")
        return
    if _docker_answers():
        from testcontainers.compose import DockerCompose

        compose = DockerCompose(
            context=str(REPO / "docker"),
            compose_file_name="compose.yaml",
            services=["mysql", "kafka", "schema-registry"],
            wait=True,
        )
        with compose:
            _wait_for_mysql(time.monotonic() + 180)
            yield Stack(MYSQL_HOST, MYSQL_PORT, KAFKA_BOOTSTRAP, "docker")
        return
    result = subprocess.run(
        ["bash", str(REPO / "scripts" / "stack.sh"), "up"],
        env={**os.environ, "CDC_STACK_BACKEND": "local"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    if result.returncode != 0:
        pytest.fail(f"scripts/stack.sh up failed:\n{result.stdout}\n{result.stderr}", pytrace=False)
    yield Stack(MYSQL_HOST, MYSQL_PORT, KAFKA_BOOTSTRAP, "local")


# ---------------------------------------------------------------------------------------------- mysql_db


@dataclass(frozen=True)
class MySqlDb:
    """A database of one test's own, on the stack's server, as the ``cdc`` user."""

    name: str
    host: str
    port: int
    user: str
    password: str

    def connect(self, **kwargs: Any) -> pymysql.connections.Connection:
        options: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "database": self.name,
            "charset": "utf8mb4",
            "autocommit": True,
            **kwargs,
        }
        return pymysql.connect(**options)


def _unique_name(request: pytest.FixtureRequest, prefix: str, limit: int) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", request.node.name.lower()).strip("_")
    suffix = uuid.uuid4().hex[:8]
    return f"{prefix}{stem[: limit - len(prefix) - len(suffix) - 1]}_{suffix}"


def _admin_connection(stack: Stack) -> pymysql.connections.Connection:
    return pymysql.connect(
        host=stack.mysql_host,
        port=stack.mysql_port,
        user=MYSQL_USER,
        password=MYSQL_PASSWORD,
        autocommit=True,
        connect_timeout=10,
    )


# ------------------------------------------------------------------------------------------------ tls


@dataclass(frozen=True)
class StackTls:
    """The stack's throwaway CA and certificates (scripts/stack.sh, ``$CDC_STACK_DIR/tls``) and the users
    that only log in over TLS: MariaDB's ``cdc_tls`` (REQUIRE SSL) and ``cdc_x509`` (REQUIRE X509, with
    ``client.pem``/``client.key`` or ``keystore.jks``/``.p12``), PostgreSQL's ``cdc_tls`` (hostssl only)."""

    dir: Path
    store_password: str = "changeit"
    user: str = "cdc_tls"
    password: str = "cdc_tls"
    x509_user: str = "cdc_x509"
    x509_password: str = "cdc_x509"

    @property
    def ca(self) -> Path:
        return self.dir / "ca.pem"

    def path(self, name: str) -> str:
        return str(self.dir / name)


def _mysql_has_tls(stack: Stack) -> bool:
    with _admin_connection(stack) as conn, conn.cursor() as cur:
        cur.execute("SELECT @@have_ssl")
        row = cur.fetchone()
    return row is not None and row[0] == "YES"


@pytest.fixture(scope="session")
def stack_tls(stack: Stack) -> StackTls:
    """The stack's TLS material; fails (never skips) when the stack runs without TLS."""
    tls = StackTls(Path(os.environ.get("CDC_STACK_DIR", str(REPO / ".stack"))) / "tls")
    if not tls.ca.is_file():
        pytest.fail(f"no {tls.ca}: the stack predates TLS; run `make down && make up`", pytrace=False)
    if not _mysql_has_tls(stack):
        pytest.fail(
            f"MariaDB at {stack.mysql_host}:{stack.mysql_port} serves no TLS (@@have_ssl is not YES): it was "
            "started before the stack had TLS; run `make down && make up`",
            pytrace=False,
        )
    return tls


@pytest.fixture
def mysql_db(stack: Stack, request: pytest.FixtureRequest) -> Iterator[MySqlDb]:
    name = _unique_name(request, "t_", 64)
    with _admin_connection(stack) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    try:
        yield MySqlDb(name, stack.mysql_host, stack.mysql_port, MYSQL_USER, MYSQL_PASSWORD)
    finally:
        with _admin_connection(stack) as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")


# ------------------------------------------------------------------------------------------------- kafka


@dataclass
class KafkaHelper:
    """One test's view of the broker: its topics start with ``prefix`` and are deleted after it."""

    bootstrap_servers: str
    admin: Any  # confluent_kafka.admin.AdminClient
    prefix: str
    created: list[str] = field(default_factory=list)

    def topic(self, name: str) -> str:
        """The full name of one of this test's topics."""
        return name if name.startswith(self.prefix) else f"{self.prefix}{name}"

    def create_topic(self, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> str:
        """Create a topic (the prefix is added unless ``name`` has it) and wait until it is usable."""
        from confluent_kafka.admin import NewTopic

        full = self.topic(name)
        futures = self.admin.create_topics(
            [NewTopic(full, num_partitions=partitions, replication_factor=1, config=config or {})],
            request_timeout=30,
        )
        futures[full].result(timeout=30)
        self.created.append(full)
        deadline = time.monotonic() + 30
        while True:
            topic = self.admin.list_topics(topic=full, timeout=10).topics.get(full)
            ready = topic is not None and topic.error is None and len(topic.partitions) == partitions
            if ready and all(p.leader >= 0 for p in topic.partitions.values()):
                return full
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {full} has no leader after 30 s")
            time.sleep(0.1)

    def producer(self, **config: Any) -> Any:
        from confluent_kafka import Producer

        return Producer({"bootstrap.servers": self.bootstrap_servers, **config})

    def read_to_end(
        self, topic: str, timeout: float = 30.0, isolation: str = "read_uncommitted"
    ) -> list[Any]:
        """Every message (``confluent_kafka.Message``) of every partition of ``topic``, from the start
        up to the high watermark at the call. ``topic`` is a full name or one of this test's short names."""
        from confluent_kafka import Consumer, KafkaError, TopicPartition

        topics = self.admin.list_topics(timeout=10).topics
        full = topic if topic in topics else self.topic(topic)
        metadata = self.admin.list_topics(topic=full, timeout=10).topics[full]
        if metadata.error is not None and metadata.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            return []  # not created yet: nothing to read (callers poll until what they wait for is there)
        if metadata.error is not None:
            raise RuntimeError(f"read_to_end({full}): {metadata.error}")
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap_servers,
                "group.id": f"{self.prefix}reader",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "isolation.level": isolation,
            }
        )
        try:
            wanted: dict[int, int] = {}
            assignment = []
            for partition in sorted(metadata.partitions):
                low, high = consumer.get_watermark_offsets(TopicPartition(full, partition), timeout=10)
                if high > low:
                    wanted[partition] = high
                    assignment.append(TopicPartition(full, partition, low))
            messages: list[Any] = []
            if not assignment:
                return messages
            consumer.assign(assignment)
            deadline = time.monotonic() + timeout
            while wanted:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"read_to_end({full}): partitions {sorted(wanted)} not read in {timeout} s"
                    )
                msg = consumer.poll(0.5)
                if msg is None:
                    continue
                partition = msg.partition()
                if msg.error() is None:
                    messages.append(msg)
                    if msg.offset() + 1 >= wanted.get(partition, 0):
                        wanted.pop(partition, None)
                elif msg.error().code() == KafkaError._PARTITION_EOF:
                    # compaction or aborted transactions can leave the last offsets without a record
                    position = consumer.position([TopicPartition(full, partition)])[0].offset
                    if position >= wanted.get(partition, 0):
                        wanted.pop(partition, None)
                else:
                    raise RuntimeError(f"read_to_end({full}): {msg.error()}")
            return messages
        finally:
            consumer.close()

    def delete_topics(self) -> None:
        names = [n for n in self.admin.list_topics(timeout=10).topics if n.startswith(self.prefix)]
        if names:
            for future in self.admin.delete_topics(names, operation_timeout=30).values():
                with contextlib.suppress(Exception):  # already gone: nothing to clean
                    future.result(timeout=30)


@pytest.fixture
def kafka(stack: Stack, request: pytest.FixtureRequest) -> Iterator[KafkaHelper]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": stack.kafka_bootstrap})
    # fails (not skips) when the broker does not answer
    admin.list_topics(timeout=30)
    helper = KafkaHelper(
        stack.kafka_bootstrap, admin, _unique_name(request, "t-", 120).replace("_", "-") + "."
    )
    try:
        yield helper
    finally:
        helper.delete_topics()
