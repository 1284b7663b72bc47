"""Shared parts of the fault tests (``test_exactly_once.py``, ``test_faults_*.py``).

* :class:`Writer` — multi-statement, multi-row MariaDB transactions on ``items(id, version, payload)``;
  every update bumps ``version``, so each change is one ``(id, version)`` pair.
* :func:`worker_properties` / :func:`mysql_connector` — a distributed (or standalone) worker file and a
  MySQL connector config with this test's own group, topics and prefix, JSON converters without schemas;
  :func:`group_worker_props`, the fast-rebalancing group of the distributed-mode tests.
* :class:`Worker` — a worker *process* (``python -m cdc.cli``), killed with SIGKILL or stopped with TERM;
  :func:`standalone_worker`, a standalone one with its worker file and one connector's file.
* :func:`audit` — reads the change topic (``read_committed`` or not) until it matches the table reduced by
  key, then counts missing and duplicated ``(id, version)`` pairs: the figure every fault test ends with.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def setup_items(mysql_db: Any, rows: int = 200) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, version INT NOT NULL, "
            "payload VARCHAR(20))"
        )
        if rows:
            cur.execute("INSERT INTO items (version, payload) VALUES " + ",".join(["(1, 's')"] * rows))


class Writer(threading.Thread):
    """Transactions of several statements touching several rows each; updates bump ``version``.

    ``pause`` (an Event) holds it between transactions; ``errors`` counts transactions that failed (a
    killed connection) and were retried on a new connection.
    """

    def __init__(self, mysql_db: Any, seed: int = 7, sleep: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.db = mysql_db
        self.stop_event = threading.Event()
        self.transactions = 0
        self.errors = 0
        self.sleep = sleep
        self.rng = random.Random(seed)

    def run(self) -> None:
        conn = self.db.connect(autocommit=False)
        while not self.stop_event.is_set():
            try:
                self._one(conn)
                self.transactions += 1
            except Exception:
                self.errors += 1
                with contextlib.suppress(Exception):
                    conn.close()
                conn = self._reconnect()
                if conn is None:
                    return
            time.sleep(self.sleep)
        conn.close()

    def _reconnect(self) -> Any:
        """A new connection, retried while the server is away (a restart, a failover); None if stopped."""
        while not self.stop_event.wait(0.2):
            try:
                return self.db.connect(autocommit=False)
            except Exception:
                self.errors += 1
        return None

    def _one(self, conn: Any) -> None:
        with conn.cursor() as cur:
            cur.execute("SELECT id FROM items")
            ids = [r[0] for r in cur.fetchall()]
            chosen = self.rng.sample(ids, min(12, len(ids)))
            cur.execute(
                "UPDATE items SET version = version + 1 WHERE id IN (" + ",".join(map(str, chosen[:3])) + ")"
            )
            cur.execute("INSERT INTO items (version, payload) VALUES (1, 'a'), (1, 'b'), (1, 'c')")
            for i in chosen[3:]:  # many row events per transaction: offsets land mid-transaction
                cur.execute("UPDATE items SET version = version + 1, payload = 'u' WHERE id = %s", (i,))
            cur.execute("INSERT INTO items (version, payload) VALUES (1, 'd')")
        conn.commit()


def worker_properties(
    path: Path,
    bootstrap: str,
    port: int,
    group: str | None = None,
    topics_prefix: str = "",
    extra: Mapping[str, str] | None = None,
    offsets_file: Path | None = None,
) -> Path:
    """A worker file: distributed when ``group`` is given, else standalone with ``offsets_file``."""
    props = {
        "bootstrap.servers": bootstrap,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        "offset.flush.interval.ms": "1000",
        "listeners": f"http://127.0.0.1:{port}",
        "task.shutdown.graceful.timeout.ms": "5000",
    }
    if group is not None:
        props.update(
            {
                "group.id": group,
                "config.storage.topic": topics_prefix + "configs",
                "offset.storage.topic": topics_prefix + "offsets",
                "status.storage.topic": topics_prefix + "status",
                "config.storage.replication.factor": "1",
                "offset.storage.replication.factor": "1",
                "status.storage.replication.factor": "1",
                "offset.storage.partitions": "5",
                "status.storage.partitions": "1",
                "session.timeout.ms": "6000",
                "heartbeat.interval.ms": "1000",
                "scheduled.rebalance.max.delay.ms": "0",
            }
        )
    else:
        assert offsets_file is not None
        props["offset.storage.file.filename"] = str(offsets_file)
    props.update(extra or {})
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def group_worker_props(
    bootstrap: str, group: str, topics_prefix: str, port: int, session_timeout_ms: int, max_delay_ms: int
) -> dict[str, str]:
    """A distributed worker's properties for the group tests (``test_distributed*.py``): this test's group
    and internal topics, JSON without schemas, REST on ``port`` advertised on loopback, and short session,
    rebalance-delay and flush intervals so that failovers happen within seconds."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "config.storage.topic": f"{topics_prefix}configs",
        "offset.storage.topic": f"{topics_prefix}offsets",
        "status.storage.topic": f"{topics_prefix}status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "status.storage.partitions": "2",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        "listeners": f"http://127.0.0.1:{port}",
        "rest.advertised.host.name": "127.0.0.1",
        "rest.advertised.port": str(port),
        "session.timeout.ms": str(session_timeout_ms),
        "heartbeat.interval.ms": "1000",
        "rebalance.timeout.ms": "20000",
        "scheduled.rebalance.max.delay.ms": str(max_delay_ms),
        "offset.flush.interval.ms": "500",
        "task.shutdown.graceful.timeout.ms": "3000",
        "filestream.connectors.enable": "true",  # the group tests run FileStream connectors
    }


def mysql_connector(mysql_db: Any, prefix: str, bootstrap: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(10_000, 90_000)),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal.kafka.topic": prefix + ".history",
        "schema.history.internal.kafka.bootstrap.servers": bootstrap,
        "include.schema.changes": "false",
        "max.batch.size": "7",
        **extra,
    }


class Worker:
    """A ``cdc`` worker process (``mode`` is ``distributed`` or ``standalone``)."""

    def __init__(
        self,
        mode: str,
        args: list[str],
        port: int,
        log_path: Path,
        host: str = "127.0.0.1",
        wrap: list[str] | None = None,
        program: list[str] | None = None,
    ) -> None:
        """``host``: where its REST API answers; ``wrap``: a command prefix, e.g. a network namespace's
        ``ip netns exec <name>`` (:meth:`netlab.Host.command`); ``program``: another worker than ours,
        run with ``args`` (Kafka Connect's, :func:`connect_program`)."""
        self.mode, self.args, self.port, self.log_path = mode, args, port, log_path
        self.url = f"http://{host}:{port}"
        self.wrap = wrap or []
        self.program = program or [sys.executable, "-m", "cdc.cli", mode]
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(
        self, wait_rest: bool = True, timeout: float = 60.0, file_size_limit: int | None = None
    ) -> Worker:
        """Start the process; ``file_size_limit`` (RLIMIT_FSIZE, bytes) makes every file it writes hit
        "File too large" past that size — a full disk, for its files only (its output goes through a pipe)."""
        with self.log_path.open("ab") as log:
            log.write(f"\n===== start #{self.starts}\n".encode())
            log.flush()
            env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
            if file_size_limit is None:
                self.proc = subprocess.Popen(
                    [*self.wrap, *self.program, *self.args],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=REPO,
                    env=env,
                )
            else:
                import resource

                def limit() -> None:
                    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

                self.proc = subprocess.Popen(
                    [*self.wrap, *self.program, *self.args],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    cwd=REPO,
                    env=env,
                    preexec_fn=limit,
                )
                threading.Thread(target=self._copy_output, args=(self.proc,), daemon=True).start()
        self.starts += 1
        if wait_rest:
            wait_for(self._answers, timeout, "the worker's REST API", self.log)
        return self

    def _copy_output(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        with self.log_path.open("ab") as log:
            for line in proc.stdout:
                log.write(line)
                log.flush()

    def _answers(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
        try:
            return requests.get(self.url + "/", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.kill9()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-15000:]

    def put_connector(self, name: str, config: Mapping[str, str]) -> None:
        def put() -> bool:
            r = requests.put(f"{self.url}/connectors/{name}/config", json=dict(config), timeout=30)
            if r.status_code in (200, 201):
                return True
            if r.status_code == 400:
                raise AssertionError(r.text)
            return False

        wait_for(put, 60, "the connector to be accepted", self.log)

    def status(self, name: str) -> dict[str, Any]:
        r = requests.get(f"{self.url}/connectors/{name}/status", timeout=10)
        return dict(r.json()) if r.status_code == 200 else {}

    def task_state(self, name: str) -> tuple[str, str]:
        tasks = self.status(name).get("tasks") or [{}]
        return str(tasks[0].get("state", "")), str(tasks[0].get("trace") or "")


def standalone_worker(
    tmp_path: Path,
    bootstrap: str,
    name: str,
    config: Mapping[str, str],
    extra: Mapping[str, str] | None = None,
) -> Worker:
    """A standalone worker (not started) on a free port running connector ``name`` with ``config``: its
    files ``worker.properties`` (offsets in ``offsets``, ``extra`` worker settings) and ``<name>.json``
    and its log ``worker.log`` in ``tmp_path``."""
    port = free_port()
    props = worker_properties(
        tmp_path / "worker.properties", bootstrap, port, offsets_file=tmp_path / "offsets", extra=extra
    )
    connector = tmp_path / f"{name}.json"
    connector.write_text(json.dumps({"name": name, "config": dict(config)}))
    return Worker("standalone", [str(props), str(connector)], port, tmp_path / "worker.log")


def connect_program(log_path: Path) -> list[str]:
    """Apache Kafka Connect's distributed worker (``ConnectDistributed <worker.properties>``), from the jars
    ``bench/`` fetched into the cache (``python -m bench run --scenario B10`` fetches them), logging to
    ``log_path``; the worker file names Debezium's ``plugin.path``."""
    cache = Path(os.environ.get("CDC_CACHE", str(Path.home() / ".cache" / "cdc")))
    libs = next(iter(sorted((cache / "peers").glob("connect-*/libs"))), None)
    if libs is None:
        raise AssertionError(f"no Kafka Connect jars under {cache / 'peers'}: run bench's B10 once")
    log4j = log_path.with_suffix(".log4j2.properties")
    log4j.write_text(
        "status = warn\nappender.f.type = File\nappender.f.name = F\n"
        f"appender.f.fileName = {log_path.with_suffix('.connect.log')}\n"
        "appender.f.layout.type = PatternLayout\nappender.f.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = INFO\nrootLogger.appenderRef.f.ref = F\n"
    )
    return [
        "java",
        "-Xmx1G",
        f"-Dlog4j2.configurationFile={log4j}",
        "-cp",
        f"{libs}/*",
        "org.apache.kafka.connect.cli.ConnectDistributed",
    ]


def debezium_plugin_path(artifact: str = "debezium-connector-mariadb") -> Path:
    """The ``plugin.path`` holding Debezium's connector that ``bench/`` fetched into the cache."""
    cache = Path(os.environ.get("CDC_CACHE", str(Path.home() / ".cache" / "cdc")))
    found = sorted((cache / "peers").glob(f"{artifact}-*/{artifact}"))
    if not found:
        raise AssertionError(f"no {artifact} under {cache / 'peers'}: run python -m bench run --scenario B3")
    return found[-1].parent


def wait_for(predicate: Any, timeout: float, what: str, log: Any = None) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.2)
    tail = f"\n{log()}" if log is not None else ""
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}{tail}")


# ----------------------------------------------------------------------------------------------- audit


@dataclass
class Audit:
    """What a read of the change topic found against the table."""

    changes: int = 0
    """Distinct (id, version) pairs the table's history implies (snapshot version or 1 up to the last)."""
    events: int = 0
    missing: list[tuple[int, int]] = field(default_factory=list)
    duplicated: dict[tuple[int, int], int] = field(default_factory=dict)
    """(id, version) → how many extra copies were read."""

    caught_up: bool = True
    """Whether the topic reduced by key equalled the table before the timeout (else "missing" includes
    changes the connector had simply not delivered yet)."""

    @property
    def duplicates(self) -> int:
        return sum(self.duplicated.values())

    def line(self) -> str:
        return (
            f"changes={self.changes} events={self.events} missing={len(self.missing)} "
            f"duplicated={self.duplicates}" + ("" if self.caught_up else " (NOT caught up)")
        )


def read_topic(bootstrap: str, topic: str, isolation: str, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Every value of ``topic`` (JSON), from the start to the end offsets at the call."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"audit-{os.getpid()}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            return []
        wanted: dict[int, int] = {}
        assign = []
        for p in sorted(metadata.partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            if high > low:
                wanted[p] = high
                assign.append(TopicPartition(topic, p, low))
        out: list[dict[str, Any]] = []
        if not assign:
            return out
        consumer.assign(assign)
        deadline = time.monotonic() + timeout
        while wanted and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            p = msg.partition()
            if msg.error() is None:
                if msg.value() is not None:
                    out.append(json.loads(msg.value()))
                if msg.offset() + 1 >= wanted.get(p, 0):
                    wanted.pop(p, None)
            elif msg.error().code() == KafkaError._PARTITION_EOF:
                # read_committed stops at the LSO; aborted records and markers leave gaps at the end
                wanted.pop(p, None)
            else:
                raise RuntimeError(f"reading {topic}: {msg.error()}")
        return out
    finally:
        consumer.close()


def committed_end(bootstrap: str, topic: str) -> int:
    """The sum of the topic's last stable offsets: it grows when a transaction (or a plain write) commits."""
    from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        metadata = admin.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return 0
        request = {TopicPartition(topic, p): OffsetSpec.latest() for p in metadata.partitions}
        futures = admin.list_offsets(
            request, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=10
        )
        return sum(f.result(15).offset for f in futures.values())
    except KafkaException:
        return 0


def wait_for_progress(bootstrap: str, topic: str, since: int, timeout: float, log: Any = None) -> int:
    """Wait until the topic's committed end passes ``since`` (the task delivers again); the new end."""
    return int(
        wait_for(
            lambda: max(0, committed_end(bootstrap, topic) - since) and committed_end(bootstrap, topic),
            timeout,
            f"new committed records on {topic}",
            log,
        )
    )


def table_versions(mysql_db: Any) -> dict[int, int]:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT id, version FROM items")
        return {int(k): int(v) for k, v in cur.fetchall()}


def audit(
    bootstrap: str, topic: str, mysql_db: Any, isolation: str = "read_committed", timeout: float = 120.0
) -> Audit:
    """Wait until the topic reduced by key equals the table, then count missing and duplicated changes."""
    table = table_versions(mysql_db)
    deadline = time.monotonic() + timeout
    while True:
        events = read_topic(bootstrap, topic, isolation)
        latest: dict[int, int] = {}
        for e in events:
            if e.get("after") is not None:
                latest[e["after"]["id"]] = e["after"]["version"]
        if latest == table or time.monotonic() > deadline:
            break
        time.sleep(1)
    result = Audit(events=len(events), caught_up=latest == table)
    snapshot: dict[int, int] = {}
    counts: Counter[tuple[int, int]] = Counter()
    for e in events:
        after = e.get("after")
        if after is None:
            continue
        if e.get("op") == "r":
            snapshot.setdefault(after["id"], after["version"])
        counts[(after["id"], after["version"])] += 1
    for row_id, final in table.items():
        first = snapshot.get(row_id, 1)
        for version in range(first, final + 1):
            result.changes += 1
            if counts[(row_id, version)] == 0:
                result.missing.append((row_id, version))
    result.duplicated = {k: n - 1 for k, n in counts.items() if n > 1}
    if latest != table:
        differ = {k: (v, latest.get(k)) for k, v in table.items() if latest.get(k) != v}
        result.missing.extend((k, v[0]) for k, v in list(differ.items()) if (k, v[0]) not in result.missing)
    return result


def report(name: str, faults: int, writer: Writer, result: Audit) -> str:
    """One line of figures, printed (``pytest -s``) and appended to ``$CDC_FAULT_REPORT`` if set."""
    line = (
        f"{name}: faults={faults} transactions={writer.transactions} {result.line()} "
        f"(e.g. missing {result.missing[:3]}, duplicated {list(result.duplicated.items())[:3]})"
    )
    print(line)
    target = os.environ.get("CDC_FAULT_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(line + "\n")
    return line


# ---------------------------------------------------------------------------------------- private broker


def kraft_cluster_id() -> str:
    """A random KRaft cluster id as ``kafka-storage.sh random-uuid`` makes one: URL-safe base64 of a UUID
    that does not start with '-' (StorageTool's argument parser would take such an id for an option)."""
    while True:
        cluster = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster.startswith("-"):
            return cluster


class PrivateKafka:
    """A single-node KRaft broker of one test's own (its ports, its data under ``root``), from the jars
    ``scripts/stack.sh`` fetched, in the shape of the stack's ``server.properties``. Stopping it harms no
    other test: the shared broker on 9092 is never touched."""

    def __init__(
        self,
        root: Path,
        host: str = "127.0.0.1",
        node_id: int = 1,
        ports: tuple[int, int] | None = None,
        voters: str | None = None,
        replication: int = 1,
        cluster_id: str | None = None,
    ) -> None:
        """One node; a :class:`KafkaCluster` passes ``node_id``, its ``voters``, its ``cluster_id`` and a
        ``replication`` of 3 (topics' default and internal topics; ``min.insync.replicas`` one less).
        ``host`` is the address it listens on and advertises (a network namespace's veth, say)."""
        cache = Path(os.environ.get("CDC_CACHE", str(Path.home() / ".cache" / "cdc")))
        self.libs = cache / "kafka-4.4.0" / "libs"
        if not self.libs.is_dir():
            raise AssertionError(f"no Kafka jars in {self.libs}: run scripts/stack.sh up first")
        self.root = root
        self.host, self.node_id, self.replication, self.cluster_id = host, node_id, replication, cluster_id
        self.port, self.controller_port = ports or (free_port(), free_port())
        self.voters = voters or f"{node_id}@{host}:{self.controller_port}"
        self.bootstrap = f"{host}:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.stops = 0

    def _java(self) -> list[str]:
        return [
            "java",
            f"-Dlog4j2.configurationFile={self.root / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.root / 'logs'}",
            "-Djava.awt.headless=true",
            "-cp",
            f"{self.libs}/*",
        ]

    def _configure(self) -> Path:
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        (self.root / "log4j2.properties").write_text(
            "status = warn\nappender.f.type = File\nappender.f.name = F\n"
            f"appender.f.fileName = {self.root / 'logs' / 'server.log'}\n"
            "appender.f.layout.type = PatternLayout\nappender.f.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\nrootLogger.appenderRef.f.ref = F\n"
        )
        props = self.root / "server.properties"
        h, rf = self.host, self.replication
        isr = max(1, rf - 1)
        props.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    f"node.id={self.node_id}",
                    f"controller.quorum.voters={self.voters}",
                    f"listeners=PLAINTEXT://{h}:{self.port},CONTROLLER://{h}:{self.controller_port}",
                    f"advertised.listeners=PLAINTEXT://{h}:{self.port}",
                    "inter.broker.listener.name=PLAINTEXT",
                    "controller.listener.names=CONTROLLER",
                    "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                    f"log.dirs={self.root / 'data'}",
                    "num.network.threads=2",
                    "num.io.threads=2",
                    "auto.create.topics.enable=true",
                    "num.partitions=1",
                    f"default.replication.factor={rf}",
                    f"min.insync.replicas={isr}",
                    f"offsets.topic.replication.factor={rf}",
                    f"transaction.state.log.replication.factor={rf}",
                    f"transaction.state.log.min.isr={isr}",
                    f"share.coordinator.state.topic.replication.factor={rf}",
                    f"share.coordinator.state.topic.min.isr={isr}",
                    "group.initial.rebalance.delay.ms=0",
                    "offsets.topic.num.partitions=3",
                    "transaction.state.log.num.partitions=3",
                    "",
                ]
            )
        )
        return props

    def start(self, timeout: float = 120.0, wait: bool = True) -> PrivateKafka:
        props = self._configure()
        if not (self.root / "data" / "meta.properties").exists():
            cluster = self.cluster_id or kraft_cluster_id()
            subprocess.run(
                [
                    *self._java(),
                    "kafka.tools.StorageTool",
                    "format",
                    "--cluster-id",
                    cluster,
                    "--config",
                    str(props),
                ],
                check=True,
                capture_output=True,
                timeout=120,
            )
        with (self.root / "logs" / "kafka.out").open("ab") as out:
            self.proc = subprocess.Popen(
                [*self._java()[:1], "-Xms384m", "-Xmx384m", *self._java()[1:], "kafka.Kafka", str(props)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        if wait:
            wait_for(self._answers, timeout, f"the private broker on {self.bootstrap}")
        return self

    def _answers(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"the private broker exited with {self.proc.returncode}")
        probe = subprocess.run(
            [sys.executable, str(REPO / "scripts" / "kafka_probe.py"), self.bootstrap, "--timeout", "2"],
            capture_output=True,
        )
        return probe.returncode == 0

    def stop(self) -> None:
        """A clean broker stop (SIGTERM), as an operator's restart does."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        self.stops += 1
