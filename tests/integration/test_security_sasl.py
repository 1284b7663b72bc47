"""The worker on a Kafka cluster that requires SASL: every client it makes authenticates, no password shows.

A **private** single-node KRaft broker (its own ports and data dir, the jars ``scripts/stack.sh`` fetched,
as ``test_faults_broker.py`` does) whose client listener is ``SASL_PLAINTEXT`` with ``PLAIN`` (users in the
listener's JAAS line: ``admin``, ``alice``) and ``SCRAM-SHA-256`` (``bob``, created by ``kafka-storage
format --add-scram``), a ``PLAINTEXT`` controller listener, and ACLs (``StandardAuthorizer``, everyone
allowed where a resource has no ACL) under which only ``bob`` may write the topic ``bob-only``.

* A distributed worker configured as a Connect user writes it — ``security.protocol``, ``sasl.mechanism``
  and ``sasl.jaas.config`` (alice) at the top level and under ``producer.``, ``consumer.`` and
  ``admin.`` — creates its internal topics, joins its group and runs a FileStreamSource and a
  FileStreamSink over the broker. A FileStreamSource with ``producer.override.sasl.mechanism`` and
  ``producer.override.sasl.jaas.config`` (bob, from a ``${file:…}`` config provider) writes ``bob-only``,
  which alice may not: the override is what the task's producer uses. No password is in any line of the
  worker's log, nor in ``GET /connectors/{n}/config`` (the placeholder) or ``GET …/tasks``.
* A worker with ``connector.client.config.override.policy=None`` rejects that override in validate and in
  create (Connect's messages), and shows no password in the create answer nor in its log.
* :func:`cdc.kafka.failures.lookup_cluster_id` with a wrong password fails at once, naming the
  authentication failure.

* A worker with a wrong password stops at start naming the authentication failure; validate under policy
  None does not echo the forbidden override's value.
* A connector whose ``producer.override.sasl.jaas.config`` holds a wrong password has its task FAILED, as
  Connect's fails with ``SaslAuthenticationException``: the task's producer reports the refused handshake
  to its ``error_cb`` (librdkafka itself retries it for ever), and the trace names the authentication
  failure without the password. The distributed worker's group client (kafka-python) reads the same
  ``sasl.jaas.config`` with Kafka's grammar (:func:`cdc.kafka.jaas.parse_jaas`).

Runtime: 60-75 s on a loaded 2-core machine, ~20 s of it the broker's JVM. Skips only when the broker's
jars (or ``java``) are missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
from faultkit import PrivateKafka, Worker, free_port, wait_for, worker_properties

LIBS = Path(os.environ.get("CDC_CACHE", str(Path.home() / ".cache" / "cdc"))) / "kafka-4.4.0" / "libs"
pytestmark = pytest.mark.skipif(
    not LIBS.is_dir() or shutil.which("java") is None,
    reason=f"no Kafka broker to start: needs the jars in {LIBS} (scripts/stack.sh up fetches them) and java",
)

RUN = uuid.uuid4().hex[:10]
ADMIN_PW = f"admin-{RUN}"
ALICE_PW = f"alice-{RUN}"  # PLAIN, in the broker's listener JAAS line
BOB_PW = f"bob-{RUN}"  # SCRAM-SHA-256, created when the storage is formatted
WRONG_PW = f"wrong-{RUN}"
PASSWORDS = {"alice": ALICE_PW, "bob": BOB_PW, "wrong": WRONG_PW, "admin": ADMIN_PW}
BOB_ONLY = "bob-only"  # ACLs: bob may write it, alice may not


def plain_jaas(user: str, password: str) -> str:
    return (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{user}" password="{password}";'
    )


def scram_jaas(user: str, password: str) -> str:
    return (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";'
    )


class SaslKafka(PrivateKafka):
    """:class:`faultkit.PrivateKafka` with a ``SASL_PLAINTEXT`` client (and inter-broker) listener."""

    LISTENER = "SASL_PLAINTEXT"

    def _configure(self) -> Path:
        props = super()._configure()  # the stack's shape, PLAINTEXT; the listeners are replaced below
        settings = dict(line.split("=", 1) for line in props.read_text().splitlines() if "=" in line)
        h, name = "127.0.0.1", self.LISTENER
        users = f'user_admin="{ADMIN_PW}" user_alice="{ALICE_PW}"'
        settings.update(
            {
                "listeners": f"{name}://{h}:{self.port},CONTROLLER://{h}:{self.controller_port}",
                "advertised.listeners": f"{name}://{h}:{self.port}",
                "inter.broker.listener.name": name,
                "listener.security.protocol.map": f"CONTROLLER:PLAINTEXT,{name}:{name}",
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                f"listener.name.{name.lower()}.plain.sasl.jaas.config": plain_jaas("admin", ADMIN_PW)[:-1]
                + f" {users};",
                f"listener.name.{name.lower()}.scram-sha-256.sasl.jaas.config": (
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                ),
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                # ANONYMOUS: the broker's own requests to its controller, on the PLAINTEXT controller port
                "super.users": "User:admin;User:ANONYMOUS",
                "allow.everyone.if.no.acl.found": "true",
            }
        )
        props.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        return props

    def start(self, timeout: float = 120.0) -> SaslKafka:
        props = self._configure()
        if not (self.root / "data" / "meta.properties").exists():
            cluster = uuid.uuid4().hex[:22]
            subprocess.run(
                [
                    *self._java(),
                    "kafka.tools.StorageTool",
                    "format",
                    "--cluster-id",
                    cluster,
                    "--config",
                    str(props),
                    "--add-scram",
                    f"SCRAM-SHA-256=[name=bob,password={BOB_PW}]",
                ],
                check=True,
                capture_output=True,
                timeout=120,
            )
        super().start(timeout)  # formatted already: PrivateKafka only starts it
        return self

    def client(self, user: str = "admin", mechanism: str = "PLAIN") -> dict[str, Any]:
        """librdkafka settings of one of the broker's users."""
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": self.LISTENER,
            "sasl.mechanism": mechanism,
            "sasl.username": user,
            "sasl.password": PASSWORDS[user],
            "log_level": 0,
        }

    def _answers(self) -> bool:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"the private broker exited with {self.proc.returncode}")
        try:
            return bool(AdminClient(self.client()).list_topics(timeout=3).brokers)
        except KafkaException:
            return False


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SaslKafka]:
    kafka = SaslKafka(tmp_path_factory.mktemp("sasl-kafka")).start()
    try:
        _restrict_bob_only(kafka)
        yield kafka
    finally:
        kafka.stop()


def _restrict_bob_only(kafka: SaslKafka) -> None:
    """Create ``bob-only`` and the ACLs that let bob, and not alice, write it."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient(kafka.client())
    for future in admin.create_topics([NewTopic(BOB_ONLY, 1, 1)]).values():
        future.result(30)

    def acl(user: str, permission: AclPermissionType) -> AclBinding:
        return AclBinding(
            ResourceType.TOPIC,
            BOB_ONLY,
            ResourcePatternType.LITERAL,
            f"User:{user}",
            "*",
            AclOperation.ALL,
            permission,
        )

    acls = admin.create_acls([acl("bob", AclPermissionType.ALLOW), acl("alice", AclPermissionType.DENY)])
    for future in acls.values():
        future.result(30)


# ------------------------------------------------------------------------------------------------ workers


def sasl_settings(jaas: str, mechanism: str = "PLAIN") -> dict[str, str]:
    """The client security keys at the top level and under each client prefix, as Connect users write them."""
    out: dict[str, str] = {}
    for prefix in ("", "producer.", "consumer.", "admin."):
        out[prefix + "security.protocol"] = "SASL_PLAINTEXT"
        out[prefix + "sasl.mechanism"] = mechanism
        out[prefix + "sasl.jaas.config"] = jaas
    return out


PROVIDERS = {
    "config.providers": "file",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
}
STRINGS = {
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


def distributed_worker(root: Path, kafka: SaslKafka, name: str, password: str, **extra: str) -> Worker:
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    props = worker_properties(
        root / "worker.properties",
        kafka.bootstrap,
        port,
        group=f"sasl-{name}",
        topics_prefix=f"sasl-{name}-",
        extra={
            **STRINGS,
            **PROVIDERS,
            **sasl_settings(plain_jaas("alice", password)),
            "filestream.connectors.enable": "true",  # the test's connectors
            **extra,
        },
    )
    return Worker("distributed", [str(props)], port, root / "worker.log")


@dataclass
class SideWorkers:
    """Workers started with the first test, so that their start overlaps it on a slow machine."""

    wrong_password: Worker
    started: float
    policy_none: Worker


@pytest.fixture(scope="module")
def side_workers(broker: SaslKafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SideWorkers]:
    root = tmp_path_factory.mktemp("side-workers")
    wrong = distributed_worker(root / "wrong", broker, "wrong", WRONG_PW)
    started = time.monotonic()
    wrong.start(wait_rest=False)
    port = free_port()
    props = worker_properties(
        root / "none.properties",
        broker.bootstrap,
        port,
        offsets_file=root / "none.offsets",
        extra={
            **STRINGS,
            **sasl_settings(plain_jaas("alice", ALICE_PW)),
            "connector.client.config.override.policy": "None",
        },
    )
    none = Worker("standalone", [str(props)], port, root / "none.log").start(wait_rest=False)
    try:
        yield SideWorkers(wrong, started, none)
    finally:
        wrong.kill9()  # nothing to keep: it never started
        none.stop()


def read_values(kafka: SaslKafka, topic: str, timeout: float = 5.0) -> list[str]:
    """Every value of ``topic`` so far, read as admin."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {**kafka.client(), "group.id": f"reader-{uuid.uuid4().hex[:6]}", "enable.partition.eof": True}
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            error, value = msg.error(), msg.value()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    break
                continue
            out.append(value.decode() if value is not None else "")
        return out
    finally:
        consumer.close()


def leaked(log: str) -> list[str]:
    """Lines of ``log`` that hold one of the test's passwords."""
    return [line for line in log.splitlines() if any(pw in line for pw in PASSWORDS.values())]


# ------------------------------------------------------------------------------------------------- tests


@dataclass
class MainWorker:
    worker: Worker
    root: Path
    bob_jaas: str  # the placeholder bob-src's override is given as


@pytest.fixture(scope="module")
def main(
    broker: SaslKafka, side_workers: SideWorkers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MainWorker]:
    """The distributed worker (alice everywhere) with its connectors created:

    * ``plain-src`` (FileStreamSource, ``producer.*``) → ``plain-<run>`` → ``sink`` (FileStreamSink,
      ``consumer.*``);
    * ``bob-src`` → ``bob-only`` with bob's SCRAM credentials as ``producer.override.*``, from a provider;
    * ``bad-src`` with a wrong password as a literal ``producer.override.sasl.jaas.config``.
    """
    root = tmp_path_factory.mktemp("main-worker")
    secrets_file = root / "secrets.properties"
    secrets_file.write_text(f"bob.jaas={scram_jaas('bob', BOB_PW)}\n")
    for name in ("plain", "bob", "bad"):
        (root / f"{name}.txt").write_text("".join(f"{name}-{i}\n" for i in range(5)))
    worker = distributed_worker(root / "worker", broker, "main", ALICE_PW)
    worker.start(wait_rest=False)
    try:
        wait_for(worker._answers, 120, "the worker's REST API", lambda: tail(worker))
        plain_topic, bob_jaas = f"plain-{RUN}", f"${{file:{secrets_file}:bob.jaas}}"
        source = {"connector.class": "FileStreamSource"}
        worker.put_connector("plain-src", {**source, "file": str(root / "plain.txt"), "topic": plain_topic})
        worker.put_connector(
            "bob-src",
            {
                **source,
                "file": str(root / "bob.txt"),
                "topic": BOB_ONLY,
                "producer.override.sasl.mechanism": "SCRAM-SHA-256",
                "producer.override.sasl.jaas.config": bob_jaas,
            },
        )
        worker.put_connector(
            "sink",
            {"connector.class": "FileStreamSink", "file": str(root / "sink.txt"), "topics": plain_topic},
        )
        worker.put_connector(
            "bad-src",
            {
                **source,
                "file": str(root / "bad.txt"),
                "topic": f"bad-{RUN}",
                "producer.override.sasl.jaas.config": plain_jaas("alice", WRONG_PW),
            },
        )
        yield MainWorker(worker, root, bob_jaas)
    finally:
        worker.stop()


@pytest.mark.timeout(300)
def test_worker_authenticates_every_client_and_honours_the_producer_override(
    broker: SaslKafka, main: MainWorker
) -> None:
    from confluent_kafka.admin import AdminClient

    worker, sink_file = main.worker, main.root / "sink.txt"
    topics = AdminClient(broker.client()).list_topics(timeout=10).topics
    assert {"sasl-main-configs", "sasl-main-offsets", "sasl-main-status"} <= set(topics)
    # The source's producer (producer.*), the sink's consumer (consumer.*), and bob's override: alice
    # may not write bob-only.
    wait_for(
        lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) == 5,
        60,
        "alice's records through the sink",
        lambda: tail(worker),
    )
    assert sink_file.read_text().splitlines() == [f"plain-{i}" for i in range(5)]
    wait_for(lambda: len(read_values(broker, BOB_ONLY)) == 5, 60, "bob's records", lambda: tail(worker))
    assert read_values(broker, BOB_ONLY) == [f"bob-{i}" for i in range(5)]

    # The placeholder is what the REST API shows; the tasks' configs carry it too.
    config = requests.get(f"{worker.url}/connectors/bob-src/config", timeout=10).json()
    assert config["producer.override.sasl.jaas.config"] == main.bob_jaas
    tasks = requests.get(f"{worker.url}/connectors/bob-src/tasks", timeout=10).text
    assert BOB_PW not in tasks and "bob.jaas" in tasks
    for name in ("plain-src", "bob-src", "sink"):
        status = worker.status(name)
        assert [t["state"] for t in status["tasks"]] == ["RUNNING"], status


@pytest.mark.timeout(120)
def test_a_wrong_override_password_fails_the_task(main: MainWorker) -> None:
    def failed() -> Any:
        tasks = main.worker.status("bad-src").get("tasks") or [{}]
        return tasks[0] if tasks[0].get("state") == "FAILED" else None

    task = wait_for(failed, 10, "bad-src's task to fail", lambda: tail(main.worker))
    assert re.search("authenticat", task["trace"], re.I), task["trace"]
    assert WRONG_PW not in task["trace"]


def test_no_password_in_the_worker_log(main: MainWorker) -> None:
    main.worker.stop()
    log = main.worker.log_path.read_text(encoding="utf-8", errors="replace")
    assert "Worker configuration" in log and "'sasl.jaas.config': '[hidden]'" in log
    assert "Finished creating connector bob-src" in log or "bob-src" in log
    assert leaked(log) == []


def _forbidden_override_validate(worker: Worker) -> requests.Response:
    wait_for(worker._answers, 90, "the policy-None worker's REST API", lambda: tail(worker))
    return requests.put(
        f"{worker.url}/connector-plugins/FileStreamSource/config/validate",
        json={**FORBIDDEN, "name": "over"},
        timeout=30,
    )


FORBIDDEN = {
    "connector.class": "FileStreamSource",
    "file": "/dev/null",
    "topic": "never",
    "producer.override.sasl.jaas.config": scram_jaas("bob", BOB_PW),
}


@pytest.mark.timeout(180)
def test_policy_none_rejects_client_overrides(side_workers: SideWorkers) -> None:
    worker = side_workers.policy_none
    r = _forbidden_override_validate(worker)
    assert r.status_code == 200, r.text
    values = {c["value"]["name"]: c["value"] for c in r.json()["configs"]}
    assert values["producer.override.sasl.jaas.config"]["errors"] == [
        "The 'None' policy does not allow 'sasl.jaas.config' to be overridden in the connector configuration."
    ]
    r = requests.put(f"{worker.url}/connectors/over/config", json=FORBIDDEN, timeout=30)
    assert r.status_code == 400, r.text
    assert "The 'None' policy does not allow 'sasl.jaas.config'" in r.json()["message"]
    assert BOB_PW not in r.text
    assert requests.get(f"{worker.url}/connectors", timeout=10).json() == []
    assert leaked(worker.log()) == []


@pytest.mark.timeout(180)
def test_validate_does_not_echo_a_forbidden_override(side_workers: SideWorkers) -> None:
    r = _forbidden_override_validate(side_workers.policy_none)
    values = {c["value"]["name"]: c["value"] for c in r.json()["configs"]}
    assert values["producer.override.sasl.jaas.config"]["value"] == "[hidden]"
    assert BOB_PW not in r.text


def test_cluster_id_lookup_names_the_authentication_failure(broker: SaslKafka) -> None:
    """:func:`lookup_cluster_id` (Connect's ``lookupKafkaClusterId``): at once, and saying why."""
    from cdc.api.errors import ConnectError
    from cdc.kafka.failures import lookup_cluster_id

    settings = {"bootstrap.servers": broker.bootstrap, **sasl_settings(plain_jaas("alice", ALICE_PW))}
    assert lookup_cluster_id(settings)  # the prefixed keys are not librdkafka's: dropped
    started = time.monotonic()
    with pytest.raises(ConnectError) as caught:
        lookup_cluster_id({**settings, "sasl.jaas.config": plain_jaas("alice", WRONG_PW)}, timeout=30)
    assert time.monotonic() - started < 15
    assert "Failed to connect to and describe Kafka cluster" in str(caught.value)
    assert "Authentication failed: Invalid username or password" in str(caught.value)
    assert WRONG_PW not in str(caught.value)


@pytest.mark.timeout(180)
def test_wrong_password_stops_the_worker_with_an_authentication_error(side_workers: SideWorkers) -> None:
    worker = side_workers.wrong_password
    assert worker.proc is not None
    deadline = side_workers.started + 30  # Connect fails at once; a worker that waits out timeouts does not
    while worker.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    rc, log = worker.proc.poll(), worker.log()
    assert leaked(log) == []
    # librdkafka's own lines ("%3|…|FAIL|…: SASL authentication error") name it too: not counted here.
    ours = tail(worker)
    assert rc is not None, (
        f"the worker still runs {time.monotonic() - side_workers.started:.0f} s on:\n{ours}"
    )
    assert rc != 0
    assert re.search(r"authenticat", ours, re.I), ours


def tail(worker: Worker) -> str:
    """The worker's log without librdkafka's own lines (``%3|…``), which repeat every few hundred ms."""
    return "\n".join(line for line in worker.log().splitlines() if not line.startswith("%"))[-6000:]
