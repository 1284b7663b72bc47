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
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    Worker,
    Writer,
    audit,
    free_port,
    mysql_connector,
    read_topic,
    report,
    setup_items,
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


def test_failover_to_promoted_replica_by_gtid(tmp_path: Path, pair: Pair, kafka: Any) -> None:
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
    props = worker_properties(
        tmp_path / "worker.properties", bootstrap, port, offsets_file=tmp_path / "offsets"
    )
    connector = tmp_path / "fo.json"
    connector.write_text(json.dumps({"name": "fo", "config": config}))
    worker = Worker("standalone", [str(props), str(connector)], port, tmp_path / "worker.log").start()
    writer = Writer(db, sleep=0.05)
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
        writer.stop_event.set()
        writer.join(30)
        result = audit(bootstrap, topic, db, "read_uncommitted", timeout=120)
        state, trace = worker.task_state("fo")
    finally:
        writer.stop_event.set()
        worker.stop()
    report("database failover by GTID", 1, writer, result)
    log = worker.log()
    assert "this server's position of that set" in log, log  # the task did move the offset
    assert state == "RUNNING", trace
    assert result.caught_up, result.line()
    assert result.missing == [], f"missing (id, version) pairs: {result.missing[:10]}"
    assert result.duplicated == {}, f"duplicated: {list(result.duplicated.items())[:10]}"
