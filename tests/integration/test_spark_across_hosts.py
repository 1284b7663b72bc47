"""``cdc snapshot`` on a Spark standalone cluster whose executors live only on other hosts (issue #18).

The hosts are network namespaces of the test's own (:mod:`netlab`): a bridge with ``10.X.Y.1`` on this
machine (the driver host) and two namespaces ``10.X.Y.2`` and ``.3``, each running one Spark worker and so
its executors; a namespace's 127.0.0.1 is its own, so nothing an executor does can take a loopback
shortcut. On the driver host, on the lab's address only: the Spark master, a Kafka broker of the test's own,
and a ``socat`` forward to the shared MariaDB (which listens on loopback). The driver is told its address
with ``--conf`` only (no ``SPARK_LOCAL_IP``); the executors find cdc only in the zip the driver ships
(the workers have no ``PYTHONPATH`` and no virtualenv on ``PATH``) and its dependencies by one of the two
routes of docs/snapshots.md: "installed on the executors" (``spark.pyspark.python`` is the project venv's
interpreter, on the same filesystem) or "shipped as an archive" (``spark.archives``, the last test).

- ``test_snapshot_with_executors_on_other_hosts_then_streaming``: one ``op=r`` per row, read
  ``read_committed``; every executor ran in a namespace and got the shipped zip; then the connector
  streams later changes from the stored offsets.
- ``test_killed_executors_leave_one_record_per_row``: executors SIGKILLed twice while chunks are written;
  the ``read_committed`` topic still has exactly one ``op=r`` per row, and the summary names re-read chunks.
- ``test_all_executors_gone_stops_the_run_and_it_resumes``: the workers (and their executors) killed
  mid-run; the run ends with the stall message within the configured time (exit status 75), keeping its
  state; with the workers back the same command resumes and completes, one ``op=r`` per row.
- ``test_snapshot_with_the_environment_shipped_as_an_archive``: a venv with cdc built from this checkout
  and packed by venv-pack (:mod:`envpack`) is the executors' Python (``spark.archives=…#env``,
  ``spark.pyspark.python=./env/bin/python``); a JVM-path table and a Python-path table, one ``op=r`` per
  row, each executor's stderr shows the archive's interpreter, then the connector streams.

All ``slow``: the lab, a broker and a Spark cluster start once for the module (~1 min), each test runs
snapshots on it (the archive is built once, when its test runs). The variants on threads (the real stack)
are in ``test_spark_snapshot.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import envpack
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
    h: Hosts,
    tmp: Path,
    worker_file: Path,
    connector_file: Path,
    *extra: str,
    python: str = sys.executable,
    encoder: str = "python",
    conf: Sequence[str] = (),
) -> subprocess.Popen[str]:
    """``cdc snapshot`` as a user on the driver host runs it against the cluster; ``python``: the
    executors' interpreter (``spark.pyspark.python``), ``conf``: more ``--conf`` settings."""
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
        f"spark.pyspark.python={python}",
        "--conf",
        "spark.executor.memory=512m",
        *(arg for setting in conf for arg in ("--conf", setting)),
        "--partitions",
        "2",
        "--encoder",
        encoder,
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


def _connector_streams(
    h: Hosts,
    tmp: Path,
    worker_file: Path,
    connector_file: Path,
    topics: Sequence[str],
    expected: list[tuple[str, int]],
) -> None:
    """The connector, started on the driver host from the offsets the snapshot stored, writes exactly the
    ``expected`` changes (op, id) after the snapshot's records to ``topics``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (tmp / "worker.log").open("wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "cdc.cli", "standalone", str(worker_file), str(connector_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            env=env,
        )
    try:

        def streamed() -> list[tuple[str, int]] | None:
            later = [
                (v["op"], int((v["after"] or v["before"])["id"]))
                for topic in topics
                for v in read_topic(h.kafka.bootstrap, topic, "read_committed", timeout=30)
                if v["op"] != "r"
            ]
            return later if len(later) >= len(expected) else None

        later = wait_for(streamed, 120, "the connector's changes after the snapshot")
        assert sorted(later) == sorted(expected), later
    finally:
        worker.terminate()
        worker.wait(30)


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
    _connector_streams(
        hosts,
        tmp_path,
        worker_file,
        connector_file,
        [names["topic"]],
        [("u", 1), ("u", 20000), ("d", 777), ("c", rows + 1)],
    )


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


@pytest.fixture(scope="module")
def env_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cdc and its dependencies in a venv packed by venv-pack, as docs/snapshots.md says to build it (built
    from this checkout; the dependencies from the package index at the driver's versions); its
    interpreter announces itself on stderr (:data:`envpack.PROBE`)."""
    return envpack.env_archive(tmp_path_factory.mktemp("cdc-env"), probe=True)


def test_snapshot_with_the_environment_shipped_as_an_archive(
    hosts: Hosts, env_archive: Path, tmp_path: Path, mysql_db: Any
) -> None:
    """The executors get cdc's dependencies only from ``spark.archives`` and run its interpreter
    (``spark.pyspark.python=./env/bin/python``): both encoders' tables in one run (the JVM path's table
    ``a`` produces from Python too; ``p``, with a POINT column, takes the Python path), one ``op=r`` per
    row, then the connector streams."""
    rows, points = 12_000, 1_500
    _dataset(mysql_db, rows)
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE p (id INT PRIMARY KEY, g POINT NOT NULL, n VARCHAR(20))")
        values = ",".join(f"({i}, POINT({i}, {i % 97}), 'n-{i}')" for i in range(1, points + 1))
        cur.execute(f"INSERT INTO p (id, g, n) VALUES {values}")
    names, worker_file, connector_file = _files(tmp_path, hosts, mysql_db, "archive")
    point_topic = names["topic"][: -len(".a")] + ".p"
    logs_before = set(hosts.spark.executor_logs())

    proc = _snapshot(
        hosts,
        tmp_path,
        worker_file,
        connector_file,
        "--chunk-rows",
        "3000",
        python="./env/bin/python",
        encoder="auto",
        conf=[f"spark.archives={env_archive}#env"],
    )
    code, out = _finish(proc, 900)
    assert code == 0, out[-8000:]
    assert f"Snapshot done: {rows + points:,} rows" in out, out
    assert "a: chunks read and encoded in the JVM" in out and "p: chunks on the Python path" in out, out

    assert _op_r_per_id(hosts, names["topic"]) == Counter(range(1, rows + 1))
    assert _op_r_per_id(hosts, point_topic) == Counter(range(1, points + 1))

    # Every executor of this run (one on each other host) unpacked the archive in its work directory and its
    # Python workers ran the archive's interpreter: a venv whose prefix is that directory (no system site
    # packages: its dependencies are the archive's), not the project venv the workers cannot see on PATH.
    logs = sorted(set(hosts.spark.executor_logs()) - logs_before)
    assert {f.parents[2].name for f in logs} == {f"work-{w.name}" for w in hosts.spark.hosts}, logs
    probes = hosts.spark.executor_lines(envpack.PROBE, logs)
    assert {f for f, _ in probes} == set(logs), (probes, logs)
    for f, line in probes:
        prefix = line.split(" prefix=")[1].split(" executable=")[0]
        executable = line.split(" executable=")[1]
        assert Path(prefix) == f.parent / "env", line
        assert Path(executable).parent == f.parent / "env" / "bin", line
        assert (f.parent / "env" / "pyvenv.cfg").read_text().count("include-system-site-packages = false")
        assert not prefix.startswith(sys.prefix), line
    print(f"executor interpreters: {sorted({line.split(envpack.PROBE)[1] for _, line in probes})}")

    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("UPDATE a SET k = -1 WHERE id = 1")
        cur.execute("DELETE FROM p WHERE id = 7")
        cur.execute("INSERT INTO p (id, g, n) VALUES (100000, POINT(0, 0), 'after')")
    _connector_streams(
        hosts,
        tmp_path,
        worker_file,
        connector_file,
        [names["topic"], point_topic],
        [("u", 1), ("d", 7), ("c", 100000)],
    )
