"""Database failover by GTID: the primary stopped, its replica promoted, the connector repointed.

A MariaDB primary (127.0.0.1) and a replica (127.0.0.2) of the test's own (:mod:`mariadb_pair`: GTID
replication, semi-synchronous). A standalone worker streams the primary's ``items`` table to the shared
Kafka while a writer commits multi-statement transactions; then, as a DBA fails over:

1. the primary is stopped (SIGTERM) while the writer runs (its transactions fail and are retried);
2. the replica applies what it received, leaves replication and takes writes; the writer reconnects there;
3. the connector's ``database.hostname`` and ``database.port`` are updated over REST (``PUT
   /connectors/<name>/config``), which restarts its task.

The offset names the primary's ``binlog.000001`` at a position that the replica's own
``binlog.000001`` (its replicated events are in ``binlog.000003``) does not have; the task must find
where the offset's GTID set ends in the replica's binlog (``cdc.mysql.gtid_position``) and go on from
there: every (id, version) change of the promoted server's table in the topic exactly once. Without
that step the same run missed 688 of 1 444 changes.

``[debezium]`` runs the same failover with Debezium 3.5's MariaDB connector in Kafka Connect (the jars
``bench/`` fetched), side by side: its task FAILS after the update ("Connector last known GTIDs are
'0-1-44', but server has '0-2-54'" → "no longer available on the server"), since it compares GTIDs per
domain *and server id* with ``@@gtid_binlog_pos``; the test asserts that verdict, so that a Debezium that
follows the failover shows up here.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    Worker,
    Writer,
    audit,
    connect_program,
    debezium_plugin_path,
    free_port,
    mysql_connector,
    read_topic,
    report,
    setup_items,
    standalone_worker,
    wait_for,
    worker_properties,
)
from mariadb_pair import Pair, ServerDb

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # about a minute: two servers start


@pytest.fixture
def pair(tmp_path: Path) -> Any:
    servers = Pair(tmp_path / "db").start()
    try:
        yield servers
    finally:
        servers.close()


@pytest.mark.parametrize("connector", ["cdc", "debezium"])
def test_failover_to_promoted_replica_by_gtid(tmp_path: Path, pair: Pair, kafka: Any, connector: str) -> None:
    name = f"fo_{uuid.uuid4().hex[:8]}"
    pair.primary.query(f"CREATE DATABASE {name}")
    db = ServerDb(name, pair.primary.host, pair.primary.port)
    setup_items(db, 100)
    prefix = f"fo{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}.{name}.items"
    bootstrap = kafka.bootstrap_servers
    config = mysql_connector(
        db,
        prefix,
        bootstrap,
        **{"max.batch.size": "100", "schema.history.internal.store.only.captured.databases.ddl": "true"},
    )
    port = free_port()
    if connector == "cdc":
        worker = standalone_worker(tmp_path, bootstrap, "fo", config).start()
    else:  # the peer, side by side: Debezium 3.5's MariaDB connector in Kafka Connect's distributed worker
        config["connector.class"] = "io.debezium.connector.mariadb.MariaDbConnector"
        props = worker_properties(
            tmp_path / "worker.properties",
            bootstrap,
            port,
            group=prefix,
            topics_prefix=prefix + "-",
            extra={"plugin.path": str(debezium_plugin_path())},
        )
        log = tmp_path / "worker.log"
        worker = Worker("connect", [str(props)], port, log, program=connect_program(log)).start(timeout=180)
        worker.put_connector("fo", config)
    writer = Writer(db, sleep=0.05)
    verdict = ""  # Debezium's task trace
    try:
        wait_for(
            lambda: len(read_topic(bootstrap, topic, "read_uncommitted")) >= 100,
            90,
            "the snapshot",
            worker.log,
        )
        writer.start()
        wait_for(lambda: writer.transactions >= 40, 60, "the writer's first transactions")
        before = writer.transactions
        pair.primary.stop()
        pair.promote()
        db.host, db.port = pair.replica.host, pair.replica.port  # the writer's next connection goes there
        worker.put_connector(
            "fo", {**config, "database.hostname": pair.replica.host, "database.port": str(pair.replica.port)}
        )
        wait_for(lambda: writer.transactions >= before + 40, 90, "the writer on the new primary")
        if connector == "debezium":
            _state, trace = wait_for(
                lambda: (t := worker.task_state("fo"))[0] == "FAILED" and t,
                120,
                "Debezium's verdict",
                worker.log,
            )
            verdict = trace
        writer.stop_event.set()
        writer.join(30)
        result = audit(bootstrap, topic, db, "read_uncommitted", timeout=120 if connector == "cdc" else 5)
        state, trace = worker.task_state("fo")
    finally:
        writer.stop_event.set()
        worker.stop()
    report(f"database failover by GTID ({connector})", 1, writer, result)
    if connector == "debezium":
        # Debezium 3.5 compares the offset's GTIDs with @@gtid_binlog_pos per (domain, server id): the
        # promoted server's 0-2-N does not "contain" 0-1-M, so it declares the position gone and stops.
        connect_log = (tmp_path / "worker.connect.log").read_text(errors="replace")
        assert "but server has" in connect_log and "no longer available" in verdict, verdict
        return
    assert "this server's position of that set" in worker.log(), worker.log()  # the task did move the offset
    assert state == "RUNNING", trace
    assert result.caught_up, result.line()
    assert result.missing == [], f"missing (id, version) pairs: {result.missing[:10]}"
    assert result.duplicated == {}, f"duplicated: {list(result.duplicated.items())[:10]}"
