"""``cdc snapshot`` on a Spark standalone cluster whose executors live only on other hosts (issue #18).

The hosts are network namespaces of the test's own (:mod:`netlab`): a bridge with ``10.X.Y.1`` on this
machine (the driver host) and two namespaces ``10.X.Y.2`` and ``.3``, each running one Spark worker and so
its executors; a namespace's 127.0.0.1 is its own, so nothing an executor does can take a loopback
shortcut. On the driver host, on the lab's address only: the Spark master, a Kafka broker of the test's own,
and a ``socat`` forward to the shared MariaDB (which listens on loopback). The driver is told its address
with ``--conf`` only (no ``SPARK_LOCAL_IP``); the executors run the venv's interpreter
(``spark.pyspark.python``: the dependencies are "installed on the executors") and find cdc only in the zip
the driver ships (the workers have no ``PYTHONPATH``).

- ``test_snapshot_with_executors_on_other_hosts_then_streaming``: one ``op=r`` per row, read
  ``read_committed``; every executor ran in a namespace and got the shipped zip; then the connector
  streams later changes from the stored offsets.
- ``test_killed_executors_leave_one_record_per_row``: executors SIGKILLed twice while chunks are written;
  the ``read_committed`` topic still has exactly one ``op=r`` per row, and the summary names re-read chunks.
- ``test_all_executors_gone_stops_the_run_and_it_resumes``: the workers (and their executors) killed
  mid-run; the run ends with the stall message within the configured time (exit status 75), keeping its
  state; with the workers back the same command resumes and completes, one ``op=r`` per row.

All ``slow``: the lab, a broker and a Spark cluster start once for the module (~1 min), each test runs
snapshots on it. The fast variants (threads, the real stack) are in ``test_spark_delivery.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from faultkit import PrivateKafka, free_port, mysql_connector, read_topic, wait_for, worker_properties
from netlab import Lab, TcpForward, require_netns
from spark_cluster import SparkCluster, kill_executors_when

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@dataclass
class Hosts:
    lab: Lab
    kafka: PrivateKafka
    mysql: TcpForward
    spark: SparkCluster
    root: Path


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory, stack: Any) -> Iterator[Hosts]:
    pytest.importorskip("pyspark", reason="pyspark is not installed: `make spark`")
    require_netns("socat")
    root = tmp_path_factory.mktemp("hosts")
    lab = Lab("sp")
    try:
        workers = [lab.add_host(), lab.add_host()]
        for w in workers:  # the namespaces cannot reach this machine's loopback services
            probe = w.run(
                sys.executable,
                "-c",
                f"import socket; socket.create_connection(('127.0.0.1', {stack.mysql_port}), 2)",
            )
            assert probe.returncode != 0, "a namespace reached the driver host's loopback"
        mysql = TcpForward(lab, f"{stack.mysql_host}:{stack.mysql_port}", root / "socat.log")
        kafka = PrivateKafka(root / "kafka", host=lab.address).start()
        lab.procs.append(kafka.proc)  # type: ignore[arg-type]
        spark = SparkCluster(lab, workers, root / "spark").start()
        try:
            yield Hosts(lab, kafka, mysql, spark, root)
        finally:
            spark.close()
            kafka.stop()
    finally:
        lab.close()


def _dataset(mysql_db: Any, rows: int) -> None:
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL, c VARCHAR(120) NOT NULL, "
            "d DATETIME(6) NOT NULL DEFAULT '2024-01-02 03:04:05.678901')"
        )
        for i in range(0, rows, 10_000):
            values = ",".join(f"({j * 7919 % 1_000_003}, 'c-{j}')" for j in range(i, min(rows, i + 10_000)))
            cur.execute(f"INSERT INTO a (k, c) VALUES {values}")


def _files(tmp: Path, h: Hosts, mysql_db: Any, name: str) -> tuple[dict[str, str], Path, Path]:
    """The worker file and the connector, both pointing at the lab's address only."""
    prefix = f"{name}{int(time.time() * 1000) % 10**8}"
    worker_file = worker_properties(
        tmp / "worker.properties", h.kafka.bootstrap, free_port(), offsets_file=tmp / "offsets"
    )
    config = mysql_connector(
        mysql_db,
        prefix,
        h.kafka.bootstrap,
        **{"database.hostname": h.mysql.address, "database.port": str(h.mysql.port)},
    )
    connector_file = tmp / "connector.json"
    connector_file.write_text(json.dumps({"name": name, "config": config}))
    return {"prefix": prefix, "topic": f"{prefix}.{mysql_db.name}.a"}, worker_file, connector_file


def _snapshot(
    h: Hosts, tmp: Path, worker_file: Path, connector_file: Path, *extra: str
) -> subprocess.Popen[str]:
    """``cdc snapshot`` as a user on the driver host runs it against the cluster."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env["PYTHONPATH"] = str(REPO)
    cmd = [
        sys.executable,
        "-m",
        "cdc.cli",
        "snapshot",
        str(connector_file),
        "--worker-config",
        str(worker_file),
        "--master",
        h.spark.url,
        "--conf",
        f"spark.driver.host={h.lab.address}",
        "--conf",
        f"spark.driver.bindAddress={h.lab.address}",
        "--conf",
        f"spark.pyspark.python={sys.executable}",
        "--conf",
        "spark.executor.memory=512m",
        "--partitions",
        "2",
        "--encoder",
        "python",
        "--state-dir",
        str(tmp / "state"),
        "--quiet",
        *extra,
    ]
    return subprocess.Popen(
        cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def _op_r_per_id(h: Hosts, topic: str) -> Counter[int]:
    values = read_topic(h.kafka.bootstrap, topic, "read_committed", timeout=120)
    assert {v["op"] for v in values} <= {"r"}, Counter(v["op"] for v in values)
    return Counter(int(v["after"]["id"]) for v in values)


def _done_chunks(tmp: Path) -> int:
    files = list((tmp / "state").glob("*.json"))
    if not files:
        return 0
    try:
        return len(json.loads(files[0].read_text()).get("done", {}))
    except ValueError:  # being replaced
        return 0


def test_snapshot_with_executors_on_other_hosts_then_streaming(
    hosts: Hosts, tmp_path: Path, mysql_db: Any
) -> None:
    rows = 20_000
    _dataset(mysql_db, rows)
    names, worker_file, connector_file = _files(tmp_path, hosts, mysql_db, "across")
    code, out = _finish(_snapshot(hosts, tmp_path, worker_file, connector_file, "--chunk-rows", "2500"), 600)
    assert code == 0, out[-8000:]
    assert f"Snapshot done: {rows:,} rows" in out, out

    per_id = _op_r_per_id(hosts, names["topic"])
    assert set(per_id) == set(range(1, rows + 1)) and set(per_id.values()) == {1}

    # The executors ran on the two other hosts only, with cdc from the shipped zip.
    stderr_files = hosts.spark.executor_logs()
    assert {p.parents[2].name for p in stderr_files} == {f"work-{w.name}" for w in hosts.spark.hosts}, (
        stderr_files
    )
    zips = hosts.spark.shipped()
    assert zips, "no cdc zip reached an executor"
    # as a Python worker of an executor imports it: no PYTHONPATH, the zip put at sys.path[1] by PySpark
    # (before site-packages and the venv's editable install of cdc)
    probe = hosts.spark.hosts[0].run(
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(1, {str(zips[0])!r}); import cdc; print(cdc.__file__)",
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert probe.stdout.strip().startswith(str(zips[0])), probe  # PySpark puts the zip there too

    # Streaming continues from the stored offsets: the connector on the driver host.
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("UPDATE a SET k = -1 WHERE id IN (1, 20000)")
        cur.execute("DELETE FROM a WHERE id = 777")
        cur.execute("INSERT INTO a (k, c) VALUES (7, 'after')")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (tmp_path / "worker.log").open("wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "cdc.cli", "standalone", str(worker_file), str(connector_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env,
        )
    try:

        def streamed() -> list[tuple[str, int]] | None:
            values = read_topic(hosts.kafka.bootstrap, names["topic"], "read_committed", timeout=30)
            later = [(v["op"], int((v["after"] or v["before"])["id"])) for v in values if v["op"] != "r"]
            return later if len(later) >= 4 else None

        later = wait_for(streamed, 120, "the connector's changes after the snapshot")
        assert sorted(later) == sorted([("u", 1), ("u", 20000), ("d", 777), ("c", rows + 1)]), later
    finally:
        worker.terminate()
        worker.wait(30)


def test_killed_executors_leave_one_record_per_row(hosts: Hosts, tmp_path: Path, mysql_db: Any) -> None:
    rows = 60_000
    _dataset(mysql_db, rows)
    names, worker_file, connector_file = _files(tmp_path, hosts, mysql_db, "kills")
    proc = _snapshot(hosts, tmp_path, worker_file, connector_file, "--chunk-rows", "3000")
    killed: list[int] = []
    try:
        killed += kill_executors_when(hosts.spark, lambda: _done_chunks(tmp_path) >= 3, 1, 300)
        done_at_first = _done_chunks(tmp_path)
        killed += kill_executors_when(
            hosts.spark, lambda: _done_chunks(tmp_path) >= done_at_first + 3, 1, 300
        )
        code, out = _finish(proc, 900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert len(killed) == 2
    assert code == 0, out[-8000:]
    assert f"Snapshot done: {rows:,} rows" in out, out
    per_id = _op_r_per_id(hosts, names["topic"])
    assert set(per_id) == set(range(1, rows + 1))
    assert set(per_id.values()) == {1}, Counter(per_id.values())
    reread = int(out.split("delivery exactly-once: ")[1].split(" chunks re-read")[0])
    assert reread >= 1, out
    # the killed attempts did write: their records are in the log, aborted
    uncommitted = read_topic(hosts.kafka.bootstrap, names["topic"], "read_uncommitted", timeout=120)
    print(
        f"{len(killed)} executors killed, {reread} chunks re-read, {len(uncommitted) - rows} aborted records"
    )


def test_all_executors_gone_stops_the_run_and_it_resumes(hosts: Hosts, tmp_path: Path, mysql_db: Any) -> None:
    rows = 40_000
    _dataset(mysql_db, rows)
    names, worker_file, connector_file = _files(tmp_path, hosts, mysql_db, "gone")
    args = ("--chunk-rows", "2000", "--stall-timeout", "20")
    proc = _snapshot(hosts, tmp_path, worker_file, connector_file, *args)
    try:
        wait_for(lambda: _done_chunks(tmp_path) >= 2, 300, "two chunks done")
        hosts.spark.stop_workers()
        gone = time.monotonic()
        code, out = _finish(proc, 200)
        took = time.monotonic() - gone
    finally:
        if proc.poll() is None:
            proc.kill()
        if not hosts.spark.workers:
            hosts.spark.start_workers()
    assert code == 75, out
    assert "no executor made progress" in out and "run the same command again to resume" in out, out
    assert took < 20 + 60, took  # the stall timeout, the poll interval, cancelling and fencing
    done = _done_chunks(tmp_path)
    assert 2 <= done < rows // 2000

    code, out = _finish(_snapshot(hosts, tmp_path, worker_file, connector_file, *args), 600)
    assert code == 0, out[-8000:]
    assert f"Snapshot done: {rows:,} rows" in out and f"{done} already done in an earlier run" in out, out
    per_id = _op_r_per_id(hosts, names["topic"])
    assert set(per_id) == set(range(1, rows + 1)) and set(per_id.values()) == {1}, Counter(per_id.values())
