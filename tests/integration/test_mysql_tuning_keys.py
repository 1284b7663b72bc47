"""Debezium's timings of connections, queries and shutdown (``config_groups.define_tuning``), each shown
acting on the real stack: what the binlog connection says on the wire (through :class:`TcpTap`), how long
a query, validate and a task's stop may take, and a task that starts again after a retriable error."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from cdc.api.connector import OffsetStorageReader
from cdc.api.records import SourceRecord
from cdc.mysql.config import MySqlSettings
from cdc.mysql.connection import connect
from cdc.mysql.connector import MariaDbConnector
from cdc.mysql.task import MariaDbSourceTask
from tests.integration.faultkit import free_port
from tests.integration.inprocess import NoOffsetsContext
from tests.integration.tcp_tap import COM_QUIT, TapSession, TcpTap

pytestmark = pytest.mark.integration


def _config(mysql_db: Any, prefix: str, port: int | None = None, **extra: str) -> dict[str, str]:
    """``port``: a :class:`TcpTap`'s, which reads the connections in clear (TLS off)."""
    return {
        **({"database.ssl.mode": "disabled"} if port else {}),
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": mysql_db.host,
        "database.port": str(port or mysql_db.port),
        "database.user": mysql_db.user,
        "database.password": mysql_db.password,
        "database.server.id": str(random.randint(100_000, 4_000_000)),
        "topic.prefix": prefix,
        "database.include.list": mysql_db.name,
        "snapshot.mode": "no_data",
        "schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory",
        **extra,
    }


@pytest.fixture
def tap(mysql_db: Any) -> Iterator[TcpTap]:
    t = TcpTap((mysql_db.host, mysql_db.port))
    try:
        yield t
    finally:
        t.close()


def _poll_until(task: MariaDbSourceTask, until: Any, timeout: float = 30) -> list[SourceRecord]:
    out: list[SourceRecord] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not until(out):
        out += task.poll() or []
    return out


def _row_id(record: SourceRecord) -> Any:
    return record.key.get("id") if record.topic.endswith(".t") and record.key else None


def _stream_one_row(mysql_db: Any, config: dict[str, str], before_stop: Any = None) -> None:
    """Starts a task, writes a row, polls until its event arrives, (``before_stop()``,) stops the task."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(config)
    try:
        key = random.randint(1, 10**9)
        time.sleep(0.5)  # the binlog connection is up
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO t VALUES (%s)", (key,))
        rows = _poll_until(task, lambda rs: any(_row_id(r) == key for r in rs))
        assert any(_row_id(r) == key for r in rows)
        if before_stop is not None:
            before_stop()
    finally:
        task.stop()


def _binlog_session(tap: TcpTap) -> TapSession:
    """The tapped connection that asked for a binlog dump."""
    [session] = [s for s in tap.sessions if b"@mariadb_slave_capability" in s.sent]
    return session


@pytest.mark.honours("binlog.net.write.timeout", "binlog.net.read.timeout", "use.nongraceful.disconnect")
def test_binlog_session_timeouts_and_nongraceful_disconnect_on_the_wire(
    mysql_db: Any, kafka: Any, tap: TcpTap
) -> None:
    config = _config(
        mysql_db,
        kafka.topic("net"),
        tap.port,
        **{
            "binlog.net.write.timeout": "77",
            "binlog.net.read.timeout": "88",
            "use.nongraceful.disconnect": "true",
        },
    )
    _stream_one_row(mysql_db, config)
    session = _binlog_session(tap)
    sent = bytes(session.sent)
    # set on the binlog session before the dump request, as Debezium's client does
    assert b"SET SESSION net_write_timeout = 77, net_read_timeout = 88" in sent
    assert sent.index(b"net_write_timeout = 77") < sent.rindex(b"binlog.")  # the dump names the file
    assert tap.wait_ended(session) == "reset"  # SO_LINGER 0: an RST, no orderly close
    assert not sent.endswith(COM_QUIT)


def test_binlog_session_by_default_sets_no_timeouts_and_quits(mysql_db: Any, kafka: Any, tap: TcpTap) -> None:
    _stream_one_row(mysql_db, _config(mysql_db, kafka.topic("net0"), tap.port))
    session = _binlog_session(tap)
    assert b"net_write_timeout" not in session.sent and b"net_read_timeout" not in session.sent
    assert tap.wait_ended(session) == "fin"
    assert bytes(session.sent).endswith(COM_QUIT)


@pytest.mark.honours("database.query.timeout.ms")
def test_database_query_timeout_ms_bounds_a_query(mysql_db: Any) -> None:
    props = _config(mysql_db, "qt", **{"database.query.timeout.ms": "700"})
    settings = MySqlSettings.parse(props)
    for streaming in (False, True):  # the checks' connections and the snapshot readers' (mysqlclient)
        conn = connect(settings, streaming=streaming)
        started = time.monotonic()
        with pytest.raises(Exception) as caught, conn.cursor() as cur:
            cur.execute("SELECT SLEEP(6)")
            cur.fetchall()
        assert time.monotonic() - started < 4.0, streaming
        assert "Lost connection" in str(caught.value) or "timed out" in str(caught.value), caught.value
    unlimited = MySqlSettings.parse({**props, "database.query.timeout.ms": "0"})
    conn = connect(unlimited)
    with conn.cursor() as cur:
        cur.execute("SELECT SLEEP(1.2)")  # longer than 700 ms: no limit
        assert cur.fetchone() == (0,)
    conn.close()


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback port that accepts connections and never says anything (no greeting)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        listener.close()
        for s in held:
            s.close()


@pytest.mark.honours("connection.validation.timeout.ms")
def test_connection_validation_timeout_ms_bounds_validate(mysql_db: Any, silent_server: int) -> None:
    props = _config(
        mysql_db,
        "cv",
        silent_server,
        **{"connection.validation.timeout.ms": "1000", "schema.history.internal.kafka.topic": "h"},
    )
    started = time.monotonic()
    values = {v.name: v.errors for v in MariaDbConnector().validate(props)}
    assert time.monotonic() - started < 4.0  # the greeting alone would be awaited 10 s
    assert values["database.hostname"] == ["Connection validation timed out after 1000 ms"]
    # a server that answers is checked within the same bound
    ok = _config(mysql_db, "cv", **{"connection.validation.timeout.ms": "5000"})
    assert {v.name: v.errors for v in MariaDbConnector().validate(ok)}["database.hostname"] == []


@pytest.mark.honours("executor.shutdown.timeout.ms")
def test_executor_shutdown_timeout_ms_bounds_stop(mysql_db: Any, kafka: Any) -> None:
    """The capture thread is busy in a heartbeat action query (on the streaming thread, as Debezium's);
    stop waits executor.shutdown.timeout.ms for it, not the whole query."""
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(
        _config(
            mysql_db,
            kafka.topic("sd"),
            **{
                "heartbeat.interval.ms": "100",
                "heartbeat.action.query": "SELECT SLEEP(8)",
                "database.query.timeout.ms": "0",
                "executor.shutdown.timeout.ms": "1000",
            },
        )
    )
    try:
        _poll_until(task, lambda rs: any(r.topic.startswith("__debezium-heartbeat") for r in rs))
        time.sleep(1.5)  # the next beat's action is sleeping now
        assert task.thread is not None and task.thread.is_alive()
    finally:
        started = time.monotonic()
        task.stop()
        took = time.monotonic() - started
    assert 0.9 < took < 3.0, took
    assert task.thread.is_alive()  # left behind, still in the query


@pytest.mark.honours("retriable.restart.connector.wait.ms")
def test_retriable_restart_connector_wait_ms_restarts_a_task_that_could_not_connect(
    mysql_db: Any, kafka: Any
) -> None:
    """The server cannot be reached when the task starts: it does not fail, and starts again after the wait
    (not before) once the server is there."""
    port = free_port()
    config = _config(mysql_db, kafka.topic("rr"), port, **{"retriable.restart.connector.wait.ms": "2500"})
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(config)  # connection refused: a retriable error, not a failure
    tap = TcpTap((mysql_db.host, mysql_db.port), port=port)  # the server is reachable from now on
    try:
        started = time.monotonic()
        while time.monotonic() - started < 1.5:
            assert task.poll() is None
        assert tap.sessions == []  # still waiting
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS rr (id INT PRIMARY KEY)")
        deadline = time.monotonic() + 30
        while not tap.sessions and time.monotonic() < deadline:
            task.poll()
        assert 2.0 < time.monotonic() - started < 6.0
        time.sleep(0.5)
        with mysql_db.connect() as conn, conn.cursor() as cur:
            cur.execute("INSERT INTO rr VALUES (1)")
        rows = _poll_until(task, lambda rs: any(r.topic.endswith(".rr") for r in rs))
        assert [r.key for r in rows if r.topic.endswith(".rr")] and task.thread is not None
    finally:
        task.stop()
        tap.close()


def test_a_query_timeout_does_not_touch_the_binlog_connection(mysql_db: Any, kafka: Any) -> None:
    """The binlog connection waits for events as long as the server sends none: a short query timeout
    must not drop it (it has its own heartbeats)."""
    config = _config(mysql_db, kafka.topic("qtb"), **{"database.query.timeout.ms": "300"})
    _stream_one_row(mysql_db, config)


@pytest.mark.honours("statistics.metrics.enabled", "internal.advanced.metrics.enable")
def test_statistics_metrics_enabled_false_drops_the_lag_quantiles(mysql_db: Any, kafka: Any) -> None:
    """statistics.metrics.enabled (default true) gives the lag's quantiles; internal.advanced.metrics.enable
    (default false) the change events by table. The first run sets the latter, the second the former off."""
    from cdc.mysql.metrics import REGISTRY

    def by_table(prefix: str) -> dict[str, float]:
        return {
            r.labels["table"]: r.value
            for r in REGISTRY.readings()
            if r.labels.get("server") == prefix and r.name.endswith("_streaming_NumberOfCreateEventsSeen")
        }

    def lag_series(prefix: str) -> dict[str, float]:
        """The connector's streaming lag series the metrics endpoint would render, by attribute."""
        return {
            r.name.rsplit("_", 1)[1]: r.value
            for r in REGISTRY.readings()
            if r.labels.get("server") == prefix and "_streaming_MilliSecondsBehindSource" in r.name
        }

    shown: dict[str, dict[str, float]] = {}
    tables: dict[str, dict[str, float]] = {}

    def record(prefix: str, enabled: str) -> None:
        shown[enabled], tables[enabled] = lag_series(prefix), by_table(prefix)

    for enabled in ("true", "false"):
        prefix = kafka.topic(f"stats{enabled}")
        keys = {"statistics.metrics.enabled": enabled, "internal.advanced.metrics.enable": enabled}
        if enabled == "false":
            keys.pop("internal.advanced.metrics.enable")  # its default
        _stream_one_row(mysql_db, _config(mysql_db, prefix, **keys), lambda p=prefix, e=enabled: record(p, e))
    assert tables == {"true": {f"{mysql_db.name}.t": 1.0}, "false": {}}
    assert {"MilliSecondsBehindSourceP50", "MilliSecondsBehindSourceP99"} <= set(shown["true"])
    assert "MilliSecondsBehindSourceMaxValue" in shown["false"]  # min, max and average stay
    assert not [k for k in shown["false"] if k.startswith("MilliSecondsBehindSourceP")], shown["false"]


def _snapshot_statement_running(mysql_db: Any, config: dict[str, str], table: str) -> bool:
    """Starts a snapshot of ``table``, takes its first record (the rows' reader has had its first rows)
    and polls no more (the queue fills at once), and says whether the server is still running the SELECT
    then (rows left unread behind the blocked reader)."""
    task = MariaDbSourceTask()
    task.initialize(NoOffsetsContext())
    task.start(config)
    try:
        _poll_until(task, lambda rs: any(r.topic.endswith("." + table) for r in rs), timeout=60)
        deadline = time.monotonic() + 3.0
        while True:
            with mysql_db.connect() as conn, conn.cursor() as cur:
                cur.execute(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE %s",
                    (f"SELECT * FROM `{mysql_db.name}`.`{table}`%",),
                )
                running = bool(cur.fetchone()[0])
            if not running or time.monotonic() > deadline:
                return running
            time.sleep(0.2)
    finally:
        task.stop()


@pytest.mark.honours("min.row.count.to.stream.results")
def test_min_row_count_to_stream_results_reads_small_tables_whole(mysql_db: Any, kafka: Any) -> None:
    """A 5000-row table of 8 KB rows (40 MB, more than the sockets buffer): read whole when its estimate
    is within the key, the server's statement is over at once; streamed (0), the server is still sending
    while the reader waits for the consumer."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE wide (id INT PRIMARY KEY, pad TEXT)")
        for start in range(0, 5000, 500):
            values = ",".join(f"({i}, REPEAT('x', 8000))" for i in range(start, start + 500))
            cur.execute(f"INSERT INTO wide VALUES {values}")
        cur.execute("ANALYZE TABLE wide")
        cur.fetchall()
    running = {}
    for rows in ("10000", "0"):
        config = _config(
            mysql_db,
            kafka.topic(f"mr{rows}"),
            **{
                "snapshot.mode": "initial",
                # no lock and no schema change records: the blocked queue must not hold a global lock on
                # the shared server
                "snapshot.locking.mode": "none",
                "include.schema.changes": "false",
                "table.include.list": f"{mysql_db.name}.wide",
                "max.batch.size": "1",
                "max.queue.size": "2",
                "min.row.count.to.stream.results": rows,
            },
        )
        running[rows] = _snapshot_statement_running(mysql_db, config, "wide")
    assert running == {"10000": False, "0": True}


@pytest.mark.honours("query.fetch.size", "internal.snapshot.scan.all.columns.force")
def test_query_fetch_size_is_accepted_and_reads_the_same(mysql_db: Any, kafka: Any) -> None:
    """Debezium's MySQL and MariaDB connectors declare query.fetch.size and read nothing with it (only its
    Oracle and SQL Server connectors do): any non-negative value is accepted and the snapshot and the
    stream are what they are without it; a negative one is refused, as Debezium's validator does. The same
    for internal.snapshot.scan.all.columns.force (read by Debezium's JDBC metadata scan, which its binlog
    connectors do not use: they read SHOW CREATE TABLE)."""
    from cdc.mysql.validation import validate_mysql

    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE f (id INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("INSERT INTO f VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    seen = {}
    for size in ("0", "1"):
        task = MariaDbSourceTask()
        task.initialize(NoOffsetsContext())
        config = {
            **_config(
                mysql_db,
                kafka.topic(f"fs{size}"),
                **{"query.fetch.size": size, "internal.snapshot.scan.all.columns.force": str(size == "1")},
            ),
            "snapshot.mode": "initial",
            "table.include.list": f"{mysql_db.name}.f",
        }
        task.start(config)
        try:
            rows = _poll_until(task, lambda rs: sum(r.topic.endswith(".f") for r in rs) >= 3)
        finally:
            task.stop()
        seen[size] = [r.value.get("after").get("v") for r in rows if r.topic.endswith(".f")]
    assert seen == {"0": ["a", "b", "c"], "1": ["a", "b", "c"]}
    errors = {v.name: v.errors for v in validate_mysql({**config, "query.fetch.size": "-1"})}
    assert errors["query.fetch.size"]


class _StoredOffset(NoOffsetsContext):
    """A task context whose offset store holds ``offset`` for the connector's partition."""

    def __init__(self, offset: dict[str, Any]) -> None:
        self.stored = offset

    def offset_storage_reader(self) -> Any:
        stored = self.stored

        class Reader(OffsetStorageReader):
            def offsets(self, partitions: Any) -> dict[str, dict[str, Any]]:
                return {str(p): stored for p in partitions}

            def offset(self, partition: Any) -> dict[str, Any] | None:
                return stored

        return Reader()


@pytest.mark.honours("internal.log.position.check.enable")
def test_internal_log_position_check_enable_false_skips_the_binlog_check(
    mysql_db: Any, kafka: Any, tmp_path: Any
) -> None:
    """An offset in a binlog file the server does not have, snapshot.mode=when_needed, a schema history
    in place: checked (the default), a new snapshot is taken; unchecked, the task streams from there and
    fails on the server's answer (binlog purged)."""
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE pc (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO pc VALUES (1)")
    history = {
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(tmp_path / "history.dat"),
        "table.include.list": f"{mysql_db.name}.pc",
    }
    first = MariaDbSourceTask()  # records the schema in the history
    first.initialize(NoOffsetsContext())
    first.start({**_config(mysql_db, kafka.topic("pc0")), **history})
    try:
        _poll_until(first, lambda rs: any(r.source_offset.get("file") for r in rs), timeout=15)
    finally:
        first.stop()
    gone = {"file": "binlog.999990", "pos": 4}
    outcome = {}
    for check in ("true", "false"):
        task = MariaDbSourceTask()
        task.initialize(_StoredOffset(gone))
        config = {
            **_config(mysql_db, kafka.topic(f"pc{check}"), **{"internal.log.position.check.enable": check}),
            **history,
            "snapshot.mode": "when_needed",
        }
        try:
            task.start(config)
            rows = _poll_until(task, lambda rs: any(r.topic.endswith(".pc") for r in rs), timeout=15)
            outcome[check] = "snapshot" if any(r.topic.endswith(".pc") for r in rows) else "nothing"
        except Exception as exc:
            outcome[check] = f"failed: {exc}"
        finally:
            task.stop()
    assert outcome["true"] == "snapshot"
    assert outcome["false"].startswith("failed:") and "999990" in outcome["false"], outcome["false"]
