"""Exactly-once source delivery (KIP-618) under kill -9: a distributed worker with
``exactly.once.source.support=enabled`` runs the MySQL connector while a writer commits multi-row
transactions; the worker process is killed with SIGKILL ``CDC_EOS_KILLS`` times (20) during streaming and
started again each time. A ``read_committed`` consumer must then see every change exactly once: no
missing and no duplicated ``(id, version)`` pair.

Short form (CI): 20 kills, each 0.1-1 s after the restarted task delivers again. Long form:
``CDC_EOS_KILLS=100 CDC_EOS_MAX_GAP=6``. The control experiment ``CDC_EOS_WORKER_MODE=disabled`` runs
the same with at-least-once delivery, where the duplicates assertion is expected to fail (it shows the
test can see them).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
import requests
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
    wait_for_progress,
    worker_properties,
)

KILLS = int(os.environ.get("CDC_EOS_KILLS", "20"))
MAX_GAP = float(os.environ.get("CDC_EOS_MAX_GAP", "1.0"))
MODE = os.environ.get("CDC_EOS_WORKER_MODE", "enabled")
# After the kills the connector re-reads the binlog from its last checkpoint; on a server that other
# tests write to heavily that catch-up can take minutes.
AUDIT_TIMEOUT = float(os.environ.get("CDC_EOS_AUDIT_TIMEOUT", "600"))
ROWS = 200


def _eos_worker(tmp_path: Path, kafka: Any, extra: dict[str, str] | None = None) -> Worker:
    port = free_port()
    props = worker_properties(
        tmp_path / "worker.properties",
        kafka.bootstrap_servers,
        port,
        group=kafka.prefix + "group",
        topics_prefix=kafka.prefix,
        extra={"exactly.once.source.support": MODE, **(extra or {})},
    )
    return Worker("distributed", [str(props)], port, tmp_path / "worker.log")


@pytest.mark.slow  # 155 s: make test-all; test_faults_broker covers exactly-once in make test
@pytest.mark.timeout(1200)
def test_kill_9_with_exactly_once_delivers_every_change_once(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    setup_items(mysql_db, ROWS)
    prefix = kafka.prefix + "eos"
    topic = f"{prefix}.{mysql_db.name}.items"
    worker = _eos_worker(tmp_path, kafka).start()
    writer = Writer(mysql_db, sleep=0.05)
    rng = random.Random(5)
    try:
        worker.put_connector(
            "eos",
            mysql_connector(
                mysql_db,
                prefix,
                kafka.bootstrap_servers,
                **{
                    "exactly.once.support": "required" if MODE == "enabled" else "requested",
                    "transaction.boundary": "poll",
                    "max.batch.size": "100",
                },
            ),
        )
        # Kills during streaming only: a snapshot interrupted by a crash is redone from its start.
        wait_for(
            lambda: (
                sum(
                    1
                    for e in read_topic(kafka.bootstrap_servers, topic, "read_committed")
                    if e.get("op") == "r"
                )
                >= ROWS
            ),
            90,
            "the snapshot",
            worker.log,
        )
        writer.start()
        end = committed_end(kafka.bootstrap_servers, topic)
        for _ in range(KILLS):
            # Kill only once the (restarted) task delivers again, a random moment into its streaming.
            end = wait_for_progress(kafka.bootstrap_servers, topic, end, 60, worker.log)
            time.sleep(rng.uniform(0.1, MAX_GAP))
            worker.kill9()
            end = committed_end(kafka.bootstrap_servers, topic)
            worker.start()
        wait_for_progress(kafka.bootstrap_servers, topic, end, 60, worker.log)
        time.sleep(2)
        writer.stop_event.set()
        writer.join(30)
        result = audit(kafka.bootstrap_servers, topic, mysql_db, "read_committed", timeout=AUDIT_TIMEOUT)
        state, trace = worker.task_state("eos")
    finally:
        writer.stop_event.set()
        worker.stop()
    report("exactly-once kill -9", KILLS, writer, result)
    assert writer.transactions > KILLS, "the writer should have committed transactions throughout"
    assert state == "RUNNING", trace
    assert result.caught_up, f"the topic never caught up with the table: {result.line()}"
    assert result.missing == [], f"missing (id, version) pairs: {result.missing[:10]}"
    assert result.duplicated == {}, f"duplicated (id, version) pairs: {list(result.duplicated.items())[:10]}"


def test_required_exactly_once_is_refused_by_a_worker_without_it(
    tmp_path: Path, kafka: Any, mysql_db: Any
) -> None:
    """``exactly.once.support=required`` fails validation on a worker that is not enabled (Connect's text)."""
    worker = _eos_worker(tmp_path, kafka, {"exactly.once.source.support": "preparing"}).start()
    try:
        config = mysql_connector(
            mysql_db, kafka.prefix + "x", kafka.bootstrap_servers, **{"exactly.once.support": "required"}
        )
        r = requests.put(
            f"{worker.url}/connector-plugins/MySqlConnector/config/validate",
            json={**config, "name": "x"},
            timeout=30,
        )
        assert r.status_code == 200, r.text
        errors = {c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"]}
        assert errors["exactly.once.support"] == [
            "This worker does not have exactly-once source support enabled."
        ]
        r = requests.put(f"{worker.url}/connectors/x/config", json=config, timeout=30)
        assert r.status_code == 400
        assert "exactly-once source support enabled" in r.json()["message"]
    finally:
        worker.stop()
