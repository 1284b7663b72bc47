"""One broker of three stopped for good while the MySQL source streams, and while it snapshots.

The test starts a three-node KRaft cluster of its own (:class:`kafka_cluster.KafkaCluster`: replication
factor 3, ``min.insync.replicas`` 2, as ``CDC_KAFKA_BROKERS=3 make up``), creates the worker's internal
topics and the change topic with node 1 as the leader of every partition, starts a distributed worker
and a MySQL connector, and stops node 1 (SIGTERM) while a writer commits multi-statement transactions:

* ``streaming``: after the snapshot, 3 s into the writer's run;
* ``snapshot``: once part of a 20 000-row snapshot is in the topic.

The node stays down until the end: the remaining two are in sync, so every write still reaches
``min.insync.replicas``. Then the topic is read back against the table: nothing missing, and with
``exactly.once.source.support=enabled`` nothing duplicated for a ``read_committed`` consumer. Each run
starts its own cluster (about a minute): ``slow``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from faultkit import (
    Worker,
    Writer,
    audit,
    committed_end,
    free_port,
    mysql_connector,
    read_topic,
    report,
    setup_items,
    wait_for,
    worker_properties,
)
from kafka_cluster import KafkaCluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

LEADER = 1
SNAPSHOT_ROWS = 20_000


@pytest.fixture
def cluster(tmp_path: Path) -> Any:
    kafka = KafkaCluster(tmp_path / "kafka").start()
    try:
        yield kafka
    finally:
        kafka.kill()


def _worker(tmp_path: Path, cluster: KafkaCluster, exactly_once: bool) -> Worker:
    port = free_port()
    prefix = "rb-"
    # the offsets' partitions led by the node the test stops; the worker creates the other two
    cluster.create_topic(prefix + "offsets", 5, LEADER, **{"cleanup.policy": "compact"})
    props = worker_properties(
        tmp_path / "worker.properties",
        cluster.bootstrap,
        port,
        group="rb",
        topics_prefix=prefix,
        extra={
            "config.storage.replication.factor": "3",
            "offset.storage.replication.factor": "3",
            "status.storage.replication.factor": "3",
            "status.storage.partitions": "1",
            "exactly.once.source.support": "enabled" if exactly_once else "disabled",
        },
    )
    return Worker("distributed", [str(props)], port, tmp_path / "worker.log").start(timeout=120)


@pytest.mark.parametrize("delivery", ["at-least-once", "exactly-once"])
@pytest.mark.parametrize("phase", ["streaming", "snapshot"])
def test_leader_broker_stopped(
    tmp_path: Path, cluster: KafkaCluster, mysql_db: Any, phase: str, delivery: str
) -> None:
    exactly_once = delivery == "exactly-once"
    rows = SNAPSHOT_ROWS if phase == "snapshot" else 100
    setup_items(mysql_db, rows)
    prefix = f"rb{phase[:4]}"
    topic = f"{prefix}.{mysql_db.name}.items"
    cluster.create_topic(topic, 1, LEADER)
    isolation = "read_committed" if exactly_once else "read_uncommitted"
    worker = _worker(tmp_path, cluster, exactly_once)
    config = mysql_connector(
        mysql_db,
        prefix,
        cluster.bootstrap,
        **{"max.batch.size": "200", "schema.history.internal.store.only.captured.databases.ddl": "true"},
    )
    if exactly_once:
        config["exactly.once.support"] = "required"
    writer = Writer(mysql_db, sleep=0.05)
    try:
        worker.put_connector("rb", config)
        if phase == "snapshot":
            writer.start()
            seen = wait_for(
                lambda: committed_end(cluster.bootstrap, topic) >= 1000, 120, "a part of the snapshot"
            )
            assert seen < rows, "the snapshot ended before the broker could be stopped: make the table larger"
            cluster.node(LEADER).stop()
        else:
            wait_for(
                lambda: len(read_topic(cluster.bootstrap, topic, isolation)) >= rows,
                120,
                "the snapshot",
                worker.log,
            )
            writer.start()
            time.sleep(3)
            cluster.node(LEADER).stop()
        wait_for(lambda: LEADER not in cluster.leaders(topic) and cluster.leaders(topic), 60, "a new leader")
        time.sleep(10)
        writer.stop_event.set()
        writer.join(30)
        result = audit(cluster.bootstrap, topic, mysql_db, isolation, timeout=240)
        state, trace = worker.task_state("rb")
        offsets_leaders = cluster.leaders("rb-offsets")
        configs_isr = cluster.isr("rb-configs")
        configs_min_isr = cluster.topic_config("rb-configs")["min.insync.replicas"]
    finally:
        writer.stop_event.set()
        worker.stop()
    report(f"leader broker stopped during the {phase} ({delivery})", 1, writer, result)
    # the worker created its config topic replicated on all three, with the cluster's min.insync.replicas
    assert configs_min_isr == "2" and len(configs_isr[0]) == 2, (configs_min_isr, configs_isr)
    assert LEADER not in offsets_leaders, offsets_leaders  # the offsets' leader moved too
    assert state == "RUNNING", trace
    assert result.caught_up, result.line()
    assert result.missing == [], f"missing (id, version) pairs: {result.missing[:10]}"
    if exactly_once:
        assert result.duplicated == {}, f"duplicated: {list(result.duplicated.items())[:10]}"
