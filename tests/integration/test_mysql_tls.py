"""TLS on every connection of the MySQL connector, proven by the server (issue #25).

- The stack's MariaDB serves TLS with a certificate for localhost/127.0.0.1 signed by the stack's CA
  (``stack_tls``) and has users that only log in encrypted (``cdc_tls``: REQUIRE SSL; ``cdc_x509``: REQUIRE
  X509). Each mode's SQL connections — PyMySQL, and mysqlclient for rows — report ``Ssl_cipher`` in their
  own session; a client certificate from a JKS or PKCS12 key store logs in as ``cdc_x509``.
- The binlog connection: a MariaDB of the test's own (with ``performance_schema``) shows the cipher of the
  ``Binlog Dump`` thread itself (``performance_schema.status_by_thread``). It serves the stack's
  ``wronghost.pem`` (signed by the same CA, for another host name): ``verify_ca`` connects,
  ``verify_identity`` fails naming the mismatch.
- ``preferred`` on a MariaDB without TLS falls back to plain; ``required`` and the verifying modes fail.
- Validate answers the failures on the key they concern, and create answers 400.
- The users' seed Debezium config plus ``database.ssl.mode=verify_identity`` captures from ``cdc_tls``.

If the stack runs without TLS (started before it had it) these tests fail saying so: never skipped.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymysql
import pytest
import requests

from cdc.api.errors import ConnectError
from cdc.drivers import mysql_driver
from cdc.mysql.config import MySqlSettings
from cdc.mysql.connection import connect
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.streaming import binlog_reader_factory
from cdc.worker.runtime import ConnectRuntime
from tests.integration.inprocess import standalone
from tests.integration.private_mariadb import PrivateMariaDb

if TYPE_CHECKING:  # the fixtures' types; conftest is no module to import at run time
    from tests.conftest import Stack, StackTls

CLASS = "io.debezium.connector.mysql.MySqlConnector"
REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "tests" / "fixtures" / "seed-configs" / "debezium-mysql-avro.json"


def _props(host: str, port: int, user: str, password: str, **tls: str) -> dict[str, str]:
    return {
        "connector.class": CLASS,
        "name": "tls-check",
        "database.hostname": host,
        "database.port": str(port),
        "database.user": user,
        "database.password": password,
        "database.server.id": str(5000 + uuid.uuid4().int % 50000),
        "topic.prefix": "tls",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **{k.replace("_", "."): v for k, v in tls.items()},
    }


def _settings(**kwargs: Any) -> MySqlSettings:
    return MySqlSettings.parse(_props(**kwargs))


def _cipher(conn: Any) -> str:
    """The session's cipher as the server reports it ('' for a plain connection)."""
    cur = conn.cursor()
    try:
        cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        row = cur.fetchone()
    finally:
        cur.close()
    return str(row[1] or "") if row else ""


def _user(conn: Any) -> str:
    cur = conn.cursor()
    try:
        cur.execute("SELECT CURRENT_USER()")
        return str(cur.fetchone()[0])
    finally:
        cur.close()


def _both(settings: MySqlSettings) -> list[tuple[str, Any]]:
    """A metadata connection (PyMySQL) and a row-reading one (mysqlclient where installed)."""
    out = []
    for streaming in (False, True):
        conn = connect(settings, streaming=streaming)
        out.append((type(conn).__module__.split(".")[0], conn))
    return out


# ------------------------------------------------------------------------------------------ servers


@pytest.fixture(scope="module")
def wrong_host(stack_tls: StackTls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDb]:
    """A MariaDB serving the stack's wronghost.pem (CA-signed, named wrong.host.invalid), with
    performance_schema for per-thread status; its user requires TLS, 'plain' does not."""
    db = PrivateMariaDb(
        tmp_path_factory.mktemp("mariadb-wronghost"),
        {
            "ssl_cert": stack_tls.path("wronghost.pem"),
            "ssl_key": stack_tls.path("wronghost.key"),
            "ssl_ca": stack_tls.path("ca.pem"),
            "performance_schema": "ON",
        },
    ).start()
    try:
        with db.root_connection() as conn, conn.cursor() as cur:
            cur.execute(f"ALTER USER '{db.user}'@'%' REQUIRE SSL")
            cur.execute("CREATE USER IF NOT EXISTS 'plain'@'%' IDENTIFIED BY 'plain'")
            cur.execute("GRANT ALL PRIVILEGES ON *.* TO 'plain'@'%'")
        yield db
    finally:
        db.stop()


@pytest.fixture(scope="module")
def no_tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDb]:
    db = PrivateMariaDb(tmp_path_factory.mktemp("mariadb-plain")).start()
    try:
        with db.root_connection() as conn, conn.cursor() as cur:
            cur.execute("SELECT @@have_ssl")
            assert cur.fetchone()[0] != "YES", "the private server was meant to have no TLS"
        yield db
    finally:
        db.stop()


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA that signed nothing the servers present."""
    d = tmp_path_factory.mktemp("other-ca")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=other CA",
         "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    return d / "ca.pem"


@pytest.fixture
def worker(tmp_path: Path, kafka: Any) -> Iterator[ConnectRuntime]:
    with standalone(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "listeners": "http://127.0.0.1:0",
        }
    ) as runtime:
        yield runtime


# ------------------------------------------------------------------------------ the SQL connections


@pytest.mark.parametrize(
    ("mode", "store", "host"),
    [
        ("preferred", None, "127.0.0.1"),  # Debezium's default: negotiated, unverified
        ("required", None, "127.0.0.1"),
        ("verify_ca", "truststore.jks", "127.0.0.1"),
        ("verify_identity", "truststore.p12", "127.0.0.1"),
        ("verify_identity", "ca.pem", "localhost"),
    ],
)
def test_every_sql_connection_is_encrypted(
    stack: Stack, stack_tls: StackTls, mode: str, store: str | None, host: str
) -> None:
    tls = {"database_ssl_mode": mode}
    if store:
        tls |= {"database_ssl_truststore": stack_tls.path(store)}
        if not store.endswith(".pem"):
            tls["database_ssl_truststore_password"] = stack_tls.store_password
    settings = _settings(
        host=host, port=stack.mysql_port, user=stack_tls.user, password=stack_tls.password, **tls
    )
    drivers = []
    for driver, conn in _both(settings):
        try:
            assert _cipher(conn), f"{driver} connection not encrypted under {mode}"
            assert _user(conn).startswith(f"{stack_tls.user}@")
        finally:
            conn.close()
        drivers.append(driver)
    # rows are read by mysqlclient where it is installed, except under verify_ca (libmariadb checks the
    # host name with the CA): both drivers are covered
    expected_rows = "MySQLdb" if mysql_driver() == "mysqlclient" and mode != "verify_ca" else "pymysql"
    assert drivers == ["pymysql", expected_rows]


@pytest.mark.parametrize("store", ["keystore.jks", "keystore.p12"])
def test_a_client_certificate_from_a_java_key_store(stack: Stack, stack_tls: StackTls, store: str) -> None:
    base = {
        "host": "127.0.0.1",
        "port": stack.mysql_port,
        "user": stack_tls.x509_user,
        "password": stack_tls.x509_password,
        "database_ssl_mode": "verify_identity",
        "database_ssl_truststore": stack_tls.path("ca.pem"),
    }
    settings = _settings(
        **base,
        database_ssl_keystore=stack_tls.path(store),
        database_ssl_keystore_password=stack_tls.store_password,
    )
    for driver, conn in _both(settings):
        try:
            assert _cipher(conn) and _user(conn).startswith(f"{stack_tls.x509_user}@"), driver
        finally:
            conn.close()
    # the same user without the certificate is refused by the server (REQUIRE X509)
    with pytest.raises(ConnectError, match="Access denied"):
        connect(_settings(**base))


def test_an_untrusted_server_certificate_is_refused(
    stack: Stack, stack_tls: StackTls, other_ca: Path
) -> None:
    for mode in ("verify_ca", "verify_identity"):
        settings = _settings(
            host="127.0.0.1",
            port=stack.mysql_port,
            user=stack_tls.user,
            password=stack_tls.password,
            database_ssl_mode=mode,
            database_ssl_truststore=str(other_ca),
        )
        for streaming in (False, True):
            with pytest.raises(
                ConnectError, match=r"TLS to 127\.0\.0\.1:\d+ failed.*(certificate|self-signed)"
            ):
                connect(settings, streaming=streaming)


# ------------------------------------------------------------------------------ the binlog connection


def _dump_thread_cipher(server: PrivateMariaDb, user: str) -> str | None:
    """The Ssl_cipher of ``user``'s Binlog Dump thread, from the server's per-thread status."""
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT s.VARIABLE_VALUE FROM information_schema.PROCESSLIST p "
            "JOIN performance_schema.threads t ON t.PROCESSLIST_ID = p.ID "
            "JOIN performance_schema.status_by_thread s "
            "  ON s.THREAD_ID = t.THREAD_ID AND s.VARIABLE_NAME = 'Ssl_cipher' "
            "WHERE p.COMMAND LIKE 'Binlog Dump%%' AND p.USER = %s",
            (user,),
        )
        row = cur.fetchone()
    return None if row is None else str(row[0] or "")


def _stream(server: PrivateMariaDb, settings: MySqlSettings) -> tuple[Any, threading.Thread]:
    with server.root_connection() as conn, conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        file, pos = cur.fetchone()[:2]
    reader = binlog_reader_factory(settings)(BinlogOffset(str(file), int(pos)))
    thread = threading.Thread(target=reader.read, daemon=True)  # blocks on the dump connection
    thread.start()
    return reader, thread


def _await_dump(server: PrivateMariaDb, user: str) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        cipher = _dump_thread_cipher(server, user)
        if cipher is not None:
            return cipher
        time.sleep(0.2)
    raise AssertionError(f"no Binlog Dump thread of {user} appeared")


def test_the_binlog_connection_is_encrypted(stack_tls: StackTls, wrong_host: PrivateMariaDb) -> None:
    # verify_ca: the CA is checked, the host name is not (the certificate names wrong.host.invalid)
    settings = _settings(
        host=wrong_host.host,
        port=wrong_host.port,
        user=wrong_host.user,
        password=wrong_host.password,
        database_ssl_mode="verify_ca",
        database_ssl_truststore=stack_tls.path("truststore.jks"),
        database_ssl_truststore_password=stack_tls.store_password,
    )
    reader, _ = _stream(wrong_host, settings)
    try:
        assert _await_dump(wrong_host, wrong_host.user).startswith("TLS_")
    finally:
        reader.close()
    # the check tells plain from encrypted: the same dump under disabled shows no cipher
    plain = _settings(
        host=wrong_host.host,
        port=wrong_host.port,
        user="plain",
        password="plain",
        database_ssl_mode="disabled",
    )
    reader, _ = _stream(wrong_host, plain)
    try:
        assert _await_dump(wrong_host, "plain") == ""
    finally:
        reader.close()


def test_verify_identity_refuses_a_certificate_for_another_host(
    stack_tls: StackTls, wrong_host: PrivateMariaDb
) -> None:
    settings = _settings(
        host=wrong_host.host,
        port=wrong_host.port,
        user=wrong_host.user,
        password=wrong_host.password,
        database_ssl_mode="verify_identity",
        database_ssl_truststore=stack_tls.path("ca.pem"),
    )
    for streaming in (False, True):
        with pytest.raises(ConnectError) as err:
            connect(settings, streaming=streaming)
        message = str(err.value).lower()
        # Python's ssl names the mismatch; libmariadb only that validation failed, and cdc says what it checks
        assert "tls to" in message and ("mismatch" in message or "name database.hostname" in message), message
    reader = binlog_reader_factory(settings)(BinlogOffset("binlog.000001", 4))
    with pytest.raises(pymysql.err.OperationalError, match=r"(IP address|[Hh]ostname) mismatch"):
        reader.read()
    reader.close()


# ------------------------------------------------------------------------- a server without TLS


def test_preferred_falls_back_on_a_server_without_tls_and_nothing_else_does(no_tls: PrivateMariaDb) -> None:
    def settings(mode: str) -> MySqlSettings:
        return _settings(
            host=no_tls.host,
            port=no_tls.port,
            user=no_tls.user,
            password=no_tls.password,
            database_ssl_mode=mode,
        )

    for driver, conn in _both(settings("preferred")):
        try:
            assert _cipher(conn) == "", driver
        finally:
            conn.close()
    for mode in ("required", "verify_ca", "verify_identity"):
        for streaming in (False, True):
            with pytest.raises(ConnectError, match=r"(SSL is required|TLS).*(doesn't|does not) support"):
                connect(settings(mode), streaming=streaming)
    reader = binlog_reader_factory(settings("required"))(BinlogOffset("binlog.000001", 4))
    with pytest.raises(pymysql.err.OperationalError, match="SSL is required"):
        reader.read()
    reader.close()


# --------------------------------------------------------------------------------- validate, create


def _validate(worker: ConnectRuntime, config: dict[str, str]) -> dict[str, list[str]]:
    base = worker.url.rstrip("/")
    response = requests.put(f"{base}/connector-plugins/{CLASS}/config/validate", json=config, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    assert body["error_count"] == sum(len(e) for e in errors.values())
    return errors


def test_validate_answers_tls_failures_on_their_keys(
    worker: ConnectRuntime,
    stack: Stack,
    stack_tls: StackTls,
    wrong_host: PrivateMariaDb,
    no_tls: PrivateMariaDb,
    other_ca: Path,
) -> None:
    on_stack = {"host": "127.0.0.1", "port": stack.mysql_port, "user": stack_tls.user}
    on_stack["password"] = stack_tls.password
    cases = [
        (
            _props(
                **on_stack,
                database_ssl_mode="verify_identity",
                database_ssl_truststore=stack_tls.path("truststore.jks"),
                database_ssl_truststore_password="not-the-password",
            ),
            "database.ssl.truststore.password",
            "wrong password",
        ),
        (
            _props(**on_stack, database_ssl_mode="verify_ca", database_ssl_truststore=str(other_ca)),
            "database.ssl.truststore",
            "certificate verify failed",
        ),
        (
            _props(
                host=wrong_host.host,
                port=wrong_host.port,
                user=wrong_host.user,
                password=wrong_host.password,
                database_ssl_mode="verify_identity",
                database_ssl_truststore=stack_tls.path("ca.pem"),
            ),
            "database.hostname",
            "mismatch",
        ),
        (
            _props(
                host=no_tls.host,
                port=no_tls.port,
                user=no_tls.user,
                password=no_tls.password,
                database_ssl_mode="required",
            ),
            "database.ssl.mode",
            "support",
        ),
        (_props(**on_stack, database_ssl_mode="disabled"), "database.hostname", "Access denied"),
    ]
    base = worker.url.rstrip("/")
    for config, key, reason in cases:
        errors = _validate(worker, config)
        assert list(errors) == [key], errors
        assert reason.lower() in errors[key][0].lower(), errors
        assert "not-the-password" not in json.dumps(errors)
        created = requests.post(
            f"{base}/connectors", json={"name": "tls-check", "config": config}, timeout=60
        )
        assert created.status_code == 400 and created.json()["error_code"] == 400, created.text
        assert key in created.json()["message"] or reason.lower() in created.json()["message"].lower()
    good = _props(
        **on_stack, database_ssl_mode="verify_identity", database_ssl_truststore=stack_tls.path("ca.pem")
    )
    assert _validate(worker, good) == {}


# ------------------------------------------------------------------------------ the seed config


@pytest.mark.honours(
    "database.ssl.mode",
    "database.ssl.truststore",
    "database.ssl.truststore.password",
    "schema.history.internal.kafka.topic",
    "schema.history.internal.kafka.bootstrap.servers",
)
def test_seed_config_with_verify_identity_captures_from_the_tls_only_user(
    stack: Stack, stack_tls: StackTls, kafka: Any
) -> None:
    """The seed Debezium config (Avro, RegexRouter, ExtractNewRecordState) with database.ssl.mode=
    verify_identity and the stack's trust store, as the REQUIRE SSL user: the snapshot, the streamed
    changes and the server's list of the user's connections (which it only admits encrypted)."""
    from cdc.converters import AvroConverter
    from cdc.worker.runtime import build_distributed
    from tests.integration.test_mysql_seed_avro import TOPIC, _end_offset, _read_from

    subprocess.run(
        [str(REPO / "scripts" / "registry.sh"), "start"], check=True, capture_output=True, timeout=600
    )
    prefix = kafka.prefix
    body = json.loads(SEED.read_text())
    name = f"{body['name']}-{uuid.uuid4().hex[:6]}"
    config = body["config"]
    config.update(
        {
            "database.user": stack_tls.user,
            "database.password": stack_tls.password,
            "database.port": str(stack.mysql_port),
            "database.ssl.mode": "verify_identity",
            "database.ssl.truststore": stack_tls.path("truststore.jks"),
            "database.ssl.truststore.password": stack_tls.store_password,
            # a history topic and replica id of this test's own (the seed's 30001 may be streaming already)
            "database.history.kafka.topic": prefix + "schema-changes.mysql.oc",
            "database.history.kafka.bootstrap.servers": kafka.bootstrap_servers,
            "database.server.id": str(40000 + uuid.uuid4().int % 10000),
        }
    )
    worker = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "group.id": prefix + "group",
        "config.storage.topic": prefix + "configs",
        "offset.storage.topic": prefix + "offsets",
        "status.storage.topic": prefix + "status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.flush.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
        # a distributed worker opens the key and trust stores connector configs name only inside these
        "connector.file.allowed.paths": str(stack_tls.dir),
    }
    admin = pymysql.connect(
        host="127.0.0.1", port=stack.mysql_port, user="cdc", password="cdc", database="ops", autocommit=True
    )
    with admin.cursor() as cur:
        cur.execute(
            "CREATE TABLE IF NOT EXISTS customers (id INT AUTO_INCREMENT PRIMARY KEY, "
            "name VARCHAR(255) NOT NULL, email VARCHAR(255), balance DECIMAL(10,2) NOT NULL DEFAULT 0, "
            "updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3))"
        )
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": prefix + "reader",
            "enable.auto.commit": False,
        }
    )
    runtime = build_distributed(worker)
    runtime.start()
    try:
        url = runtime.url.rstrip("/")
        created = requests.post(f"{url}/connectors", json={"name": name, "config": config}, timeout=90)
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 120
        metrics = ""
        while time.monotonic() < deadline:
            status = requests.get(f"{url}/connectors/{name}/status", timeout=30).json()
            assert not status.get("tasks") or status["tasks"][0]["state"] != "FAILED", status
            metrics = requests.get(f"{url}/metrics", timeout=30).text
            # the series carry connector="<name>" too: match the server label among them
            if re.search(
                r'debezium_mysql_snapshot_SnapshotCompleted\{[^}]*server="mysqlavro"[^}]*\} 1', metrics
            ) and (
                re.search(r'debezium_mysql_streaming_Connected\{[^}]*server="mysqlavro"[^}]*\} 1', metrics)
            ):
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the snapshot did not complete or streaming did not connect:\n{metrics}")
        time.sleep(1)
        start = _end_offset(consumer, TOPIC)
        run = uuid.uuid4().hex[:8]
        with admin.cursor() as cur:
            cur.execute("INSERT INTO customers (name, email) VALUES (%s, 'tls@x')", (f"tls {run}",))
            row_id = cur.lastrowid
        value_conv = AvroConverter()
        value_conv.configure({"schema.registry.url": "http://localhost:8081"}, False)
        rows: list[Any] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(v.get("name") == f"tls {run}" for v in rows):
            # other tests may write to ops.customers too: read on until this test's row arrives
            messages = _read_from(consumer, TOPIC, start + len(rows), 1, timeout=5)
            rows += [value_conv.to_connect_data(TOPIC, m.value()).value for m in messages if m.value()]
        assert any(v.get("id") == row_id and v.get("name") == f"tls {run}" for v in rows), rows
        # the server admits cdc_tls only over TLS: every connection of the user, the binlog dump among
        # them, is encrypted
        with admin.cursor() as cur:
            cur.execute(
                "SELECT COMMAND FROM information_schema.PROCESSLIST WHERE USER = %s", (stack_tls.user,)
            )
            commands = [str(r[0]) for r in cur.fetchall()]
        assert any(c.startswith("Binlog Dump") for c in commands), commands
        requests.delete(f"{url}/connectors/{name}", timeout=30)
    finally:
        consumer.close()
        admin.close()
        runtime.stop()


# ------------------------------------------------------------------------- the Spark snapshot (JDBC)


def test_spark_snapshot_reads_over_tls_through_connector_j(
    stack: Stack, stack_tls: StackTls, kafka: Any, mysql_db: Any, tmp_path: Path
) -> None:
    """The Spark snapshot's JVM path (MariaDB Connector/J, ``snapshot.spark.encoder=sql``: no Python
    fallback) as the REQUIRE SSL user with verify_identity: the server admits its JDBC connections only
    encrypted, and Connector/J's verify-full succeeds only with the trust store handed to it (the JVM's
    own CAs do not include the stack's)."""
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark` (CI installs it)")
    from cdc.mysql.spark.engine import SnapshotOptions, SnapshotRun
    from cdc.mysql.spark.runners import MySqlSparkRunner

    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL)")
        cur.execute("INSERT INTO t VALUES " + ",".join(f"({i}, 'v{i}')" for i in range(1, 301)))
    prefix = kafka.prefix + "spk"
    config = {
        **_props(
            host="127.0.0.1",
            port=stack.mysql_port,
            user=stack_tls.user,
            password=stack_tls.password,
            database_ssl_mode="verify_identity",
            database_ssl_truststore=stack_tls.path("truststore.p12"),
            database_ssl_truststore_password=stack_tls.store_password,
        ),
        "name": "tls-spark",
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "schema.history.internal": "io.debezium.storage.kafka.history.KafkaSchemaHistory",
        "schema.history.internal.kafka.topic": prefix + ".history",
        "schema.history.internal.kafka.bootstrap.servers": kafka.bootstrap_servers,
        "include.schema.changes": "false",
        "snapshot.spark.encoder": "sql",
    }
    worker = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
    }
    runner = MySqlSparkRunner("local[1]", 1, app_name="test-mysql-tls")
    try:
        options = SnapshotOptions(chunk_rows=100, state_dir=tmp_path / "state", progress=False)
        summary = SnapshotRun(config, worker, options, runner=runner).run()
        assert summary.rows == 300 and summary.chunks >= 3
        topic = f"{prefix}.{mysql_db.name}.t"
        assert len(list(kafka.read_to_end(topic, timeout=60))) == 300
    finally:
        runner.close()
