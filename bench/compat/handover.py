"""``make compat COMPAT_ARGS=--handover``: a running capture handed from the real Debezium to cdc and back.

For each direction (Debezium → cdc, cdc → Debezium) a database of its own gets a table ``t_hand`` and a
writer that runs transactions of several rows events without pause: a four-row INSERT, a one-row
INSERT, a two-row UPDATE and a one-row DELETE per transaction, every change unique by (op, id, v). The
first connector snapshots and streams with small batches (``max.batch.size`` 7), so that its worker's
final offset commit lands inside a transaction; it is stopped while the writer goes on. The second
connector, in a worker of the other kind, is created with the same name, topic prefix and history topic,
and its worker uses the first worker's offsets topic: it must continue exactly where the first stopped.
When the writer has stopped and the second connector has its last change, the table's topic is read back
and compared with what the writer wrote: no change missing, none twice.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql

from bench import jars
from bench.compat.run import REPO, Side, connector_config, read_topic, worker_spec
from bench.stack import Stack, unique
from bench.workers import WorkerProcess

__all__ = ["Writer", "run_handover"]

NAME = "handover"
SMALL_BATCHES = {"max.batch.size": "7", "max.queue.size": "21"}


@dataclass
class Writer:
    """Writes transactions into ``db.t_hand`` on its own thread and remembers every change it made."""

    stack: Stack
    db: str
    changes: list[tuple[str, int, int]] = field(default_factory=list)  # (op, id, v)
    stopping: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    _thread: threading.Thread | None = None

    def connect(self) -> Any:
        return pymysql.connect(
            host=self.stack.mysql_host,
            port=self.stack.mysql_port,
            user="cdc",
            password="cdc",
            database=self.db,
            autocommit=False,
        )

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="handover-writer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(30)
        if self.error is not None:
            raise RuntimeError(f"the writer failed: {self.error}") from self.error

    def _run(self) -> None:
        try:
            conn = self.connect()
            values: dict[int, int] = {}
            next_id, tx = 1, 0
            with conn.cursor() as cur:
                while not self.stopping.is_set():
                    done: list[tuple[str, int, int]] = []
                    ids = list(range(next_id, next_id + 5))
                    next_id += 5
                    cur.execute(
                        "INSERT INTO t_hand (id, v) VALUES " + ", ".join(f"({i}, 0)" for i in ids[:4])
                    )
                    cur.execute("INSERT INTO t_hand (id, v) VALUES (%s, 0)", (ids[4],))
                    done += [("c", i, 0) for i in ids]
                    older = [i for i in sorted(values) if i % 7 != 0][-2:]
                    if older:
                        cur.execute(
                            "UPDATE t_hand SET v = v + 1 WHERE id IN (" + ",".join(map(str, older)) + ")"
                        )
                        done += [("u", i, values[i] + 1) for i in older]
                    gone = [i for i in sorted(values) if i % 7 == 0][:1]
                    if gone:
                        cur.execute("DELETE FROM t_hand WHERE id = %s", (gone[0],))
                        done.append(("d", gone[0], values[gone[0]]))
                    conn.commit()
                    for op, i, v in done:
                        if op == "d":
                            values.pop(i)
                        else:
                            values[i] = v
                    self.changes += done
                    tx += 1
                    time.sleep(0.02)
            conn.close()
        except BaseException as exc:  # reported by stop()
            self.error = exc


def _seen(stack: Stack, topic: str) -> list[tuple[str, int, int]]:
    out = []
    for rec in read_topic(stack.bootstrap, topic):
        value = rec.value_json()
        if not isinstance(value, dict):
            continue  # a tombstone
        payload = value.get("payload", value)
        op = payload.get("op")
        if op == "r" or int((payload.get("after") or {}).get("id", -1)) == 0:
            continue  # the snapshot's row
        image = payload.get("before") if op == "d" else payload.get("after")
        out.append((op, int(image["id"]), int(image["v"])))
    return out


def _committed(stack: Stack, side: Side) -> Any:
    """The last offset committed for the connector in ``side``'s offsets topic."""
    last = None
    for rec in read_topic(stack.bootstrap, side.offsets_topic):
        if rec.key and NAME.encode() in rec.key:
            last = rec.value_json()
    return last


def _wait_count(stack: Stack, topic: str, count: int, worker: WorkerProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while stack.high_watermark(topic) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic}: fewer than {count} records after {timeout} s")
        status = json.dumps(worker.status(NAME)) if worker.alive() else "worker died"
        if "FAILED" in status or "died" in status:
            raise RuntimeError(f"{worker.spec.name}: {status[:3000]}")
        time.sleep(0.5)


def handover(
    first: str, args: argparse.Namespace, stack: Stack, cache: Path, workdir: Path
) -> dict[str, Any]:
    """One direction: ``first`` ("debezium" or "cdc") streams, stops, and the other kind continues."""
    tag = unique("h").split("-", 1)[1].replace("-", "_")
    db = f"handover_{tag}"
    prefix = f"ho_{tag}"
    second = "cdc" if first == "debezium" else "debezium"
    a = Side(
        first, prefix, f"handover-{first}-{tag}", 5900 + int(tag[-4:], 16) % 90, extra_config=SMALL_BATCHES
    )
    b = Side(
        second,
        prefix,
        f"handover-{second}-{tag}",
        6600 + int(tag[-4:], 16) % 90,
        extra_config=SMALL_BATCHES,
        shared_offsets=a.offsets_topic,
    )
    stack.sql(
        f"DROP DATABASE IF EXISTS `{db}`; CREATE DATABASE `{db}`; "
        f"CREATE TABLE `{db}`.t_hand (id INT PRIMARY KEY, v INT NOT NULL); "
        f"INSERT INTO `{db}`.t_hand VALUES (0, 0);"  # the snapshot's one row: the writer starts after it
    )
    topic = f"{prefix}.{db}.t_hand"
    writer = Writer(stack, db)
    result: dict[str, Any] = {"direction": f"{first} -> {second}"}
    try:
        a.worker = WorkerProcess(worker_spec(a, stack, workdir, cache, args.python))
        a.worker.wait_ready()
        a.worker.create_connector(NAME, connector_config(a, stack, [db]))
        a.worker.wait_running(NAME)
        _wait_count(stack, topic, 1, a.worker, 180)  # the snapshot is over: changes from now on stream
        writer.start()
        _wait_count(stack, topic, 400, a.worker, 180)
        a.worker.stop()
        result["offset at hand-over"] = _committed(stack, a)
        result["records by the first"] = stack.high_watermark(topic)
        time.sleep(2)  # the writer goes on while nobody captures
        b.worker = WorkerProcess(worker_spec(b, stack, workdir, cache, args.python))
        b.worker.wait_ready()
        b.worker.create_connector(NAME, connector_config(b, stack, [db]))
        b.worker.wait_running(NAME)
        _wait_count(stack, topic, result["records by the first"] + 400, b.worker, 180)
        writer.stop()
        expected = writer.changes
        deadline = time.monotonic() + 120
        while len(_seen(stack, topic)) < len(expected) and time.monotonic() < deadline:
            time.sleep(1)
        time.sleep(3)  # anything more (a duplicate) would arrive now
    finally:
        writer.stopping.set()
        for side in (a, b):
            if side.worker is not None:
                side.worker.stop()
    seen = _seen(stack, topic)
    counts = Counter(seen)
    want = Counter(expected)
    result["changes written"] = len(expected)
    result["changes read"] = len(seen)
    result["missing"] = sum((want - counts).values())
    result["duplicated"] = sum((counts - want).values())
    result["examples"] = {
        "missing": list((want - counts).elements())[:5],
        "duplicated": list((counts - want).elements())[:5],
    }
    if not args.keep:
        stack.delete_topics(
            [
                *stack.topics_with_prefix(prefix),
                *(f"{s.group}-{kind}" for s in (a, b) for kind in ("configs", "offsets", "status")),
            ]
        )
        stack.sql(f"DROP DATABASE IF EXISTS `{db}`;")
    return result


def run_handover(args: argparse.Namespace) -> int:
    stack = Stack(REPO)
    cache = Path(args.cache).expanduser()
    workdir = Path(args.workdir or (cache / "compat" / unique("handover")))
    workdir.mkdir(parents=True, exist_ok=True)
    jars.connect_libs(cache, jars.MARIADB_CONNECT_VERSION)
    jars.debezium_plugin_path(cache, "debezium-connector-mariadb")
    print(
        f"versions: Kafka Connect {jars.MARIADB_CONNECT_VERSION}; Debezium debezium-connector-mariadb "
        f"{jars.MARIADB_VERSION}; MariaDB {stack.sql('SELECT VERSION();').strip()}"
    )
    results = [handover(first, args, stack, cache, workdir) for first in ("debezium", "cdc")]
    lines = [
        "| direction | offset at hand-over | changes written | read | missing | duplicated |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['direction']} | `{json.dumps(r['offset at hand-over'], sort_keys=True)}` | "
            f"{r['changes written']} | {r['changes read']} | {r['missing']} | {r['duplicated']} |"
        )
    report = "\n".join(lines)
    print(report)
    for r in results:
        if r["missing"] or r["duplicated"]:
            print(f"{r['direction']}: examples {r['examples']}")
    (workdir / "handover.md").write_text(report + "\n", encoding="utf-8")
    return 0 if all(not r["missing"] and not r["duplicated"] for r in results) else 1
