"""The matrix row ``snapshot-writes``: rows written during the initial and an incremental snapshot.

A writer (one ``mariadb`` client, autocommit, one row per statement) inserts, updates and deletes rows of
``t_live`` (:data:`ROWS` rows at the start) from before the connectors start until both incremental
snapshots (a signal, chunks of :data:`CHUNK` rows) have ended; then it stops, an end marker is inserted and
both workers catch up and stop. The comparison is per key (:mod:`bench.compat.perkey`): record by record
is not possible here, as each side snapshots at its own moment.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import jars
from bench.compat import compare as cmp
from bench.compat import perkey, workload
from bench.compat.matrix import Row
from bench.compat.run import (
    CONNECTOR,
    DOC,
    REPO,
    Side,
    _payloads,
    capture,
    committed_offsets,
    connector_config,
    snapshot_committed,
    wait_for,
    worker_spec,
)
from bench.stack import Stack, unique
from bench.workers import WorkerProcess

__all__ = ["run_snapshot_writes"]

TABLE = "t_live"
ROWS = 20000
CHUNK = 1000
KEY = ("id",)
COLLECTIONS_KEY = "incremental_snapshot_collections"
SKIPPED_AFTER = 180.0


def _setup_sql(db: str) -> str:
    values = ", ".join(f"({i}, {i % 97}, 's{i}')" for i in range(1, ROWS + 1))
    return (
        f"DROP DATABASE IF EXISTS `{db}`;\nCREATE DATABASE `{db}` CHARACTER SET utf8mb4;\nUSE `{db}`;\n"
        f"CREATE TABLE {TABLE} (id INT PRIMARY KEY, n INT NULL, s VARCHAR(32));\n"
        f"INSERT INTO {TABLE} VALUES {values};\n"
        f"CREATE TABLE {workload.END_TABLE} (id INT PRIMARY KEY);\n"
        + "".join(
            f"CREATE TABLE {t} (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048));\n"
            for t in workload.SIGNAL_TABLES.values()
        )
    )


class Writer:
    """INSERT/UPDATE/DELETE of single rows of ``t_live`` until stopped (one statement every few ms)."""

    def __init__(self, stack: Stack, db: str) -> None:
        self.proc = subprocess.Popen(
            ["mariadb", f"--socket={stack.socket}", "-uroot", "-N", "-B", db],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        self.stop = threading.Event()
        self.counts = {"insert": 0, "update": 0, "delete": 0}
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        rnd = random.Random(27)
        live = list(range(1, ROWS + 1))
        next_id = ROWS + 1
        assert self.proc.stdin is not None
        while not self.stop.is_set():
            op = rnd.choice(("insert", "update", "update", "delete"))
            if op == "insert":
                sql = f"INSERT INTO {TABLE} VALUES ({next_id}, NULL, 'new{next_id}');"
                live.append(next_id)
                next_id += 1
            elif op == "update":
                row = rnd.choice(live)
                sql = f"UPDATE {TABLE} SET n = {rnd.randrange(1000)}, s = CONCAT('u', s) WHERE id = {row};"
            else:
                row = live.pop(rnd.randrange(len(live)))
                sql = f"DELETE FROM {TABLE} WHERE id = {row};"
            self.proc.stdin.write(sql + "\n")
            self.proc.stdin.flush()
            self.counts[op] += 1
            time.sleep(0.02)  # ~50 statements a second at most: the machine is shared

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        if self.proc.wait(60) != 0:
            raise RuntimeError(f"the writer's mariadb client exited {self.proc.returncode}")


def _incremental_state(stack: Stack, side: Side) -> str:
    """``none`` (no offset carried the incremental snapshot's keys yet), ``running``, ``done`` (the last
    committed offset no longer carries them)."""
    offsets = [r.value_json() for r in committed_offsets(stack, side)]
    seen = [isinstance(v, dict) and COLLECTIONS_KEY in v for v in offsets]
    if not any(seen):
        return "none"
    return "running" if seen[-1] else "done"


def _skips(side: Side) -> list[str]:
    """Debezium's log lines saying it skipped an incremental snapshot (and the SQL error before each)."""
    if side.spec is None or not side.spec.log.exists():
        return []
    lines = side.spec.log.read_text(encoding="utf-8", errors="replace").splitlines()
    return [
        f"{lines[i - 1]} / {line}" if i else line
        for i, line in enumerate(lines)
        if "skipping and continuing streaming" in line
    ]


def _table(stack: Stack, db: str) -> dict[tuple[Any, ...], dict[str, str]]:
    out = {}
    for line in stack.sql(f"SELECT id, n, s FROM `{db}`.{TABLE};").splitlines():
        ident, n, s = line.split("\t")
        out[(int(ident),)] = {"id": ident, "n": n, "s": s}
    return out


def _snapshot_position(evs: list[perkey.Event]) -> tuple[str, int]:
    for ev in evs:
        if ev.op == "r" and ev.snapshot != "incremental" and ev.record is not None:
            source = (ev.record.value_json() or {}).get("payload", {}).get("source", {})
            return (str(source.get("file")), int(source.get("pos") or 0))
    return ("", 0)


def compare_sides(
    dbz: cmp.Captured, ours: cmp.Captured, table: dict[tuple[Any, ...], dict[str, str]], topic: str
) -> tuple[list[str], list[cmp.Difference], int, dict[str, list[perkey.Event]]]:
    """The per-key findings (each unexplained) and the field-by-field differences of shared events."""
    evs = {c.side: perkey.events(c.data.get(topic, []), KEY) for c in (dbz, ours)}
    findings = []
    for side, side_evs in evs.items():
        findings += perkey.final_state(side, side_evs, table)
        findings += perkey.consistency(side, side_evs)
    start = {side: _snapshot_position(side_evs) for side, side_evs in evs.items()}
    label = f"<db>.{TABLE}"
    diffs, missing, pairs = perkey.same_places(label, evs["debezium"], evs["cdc"], dbz, ours, start)
    return findings + missing, diffs, pairs, evs


def _self_test(
    dbz: cmp.Captured, ours: cmp.Captured, table: dict[tuple[Any, ...], dict[str, str]], topic: str
) -> str | None:
    """cdc's events without its last one (the final-state check must report it), and one streamed update
    both sides carry with a value altered (the field-by-field check of that place must report it). Only
    the checks concerned run again: comparing every shared pair takes minutes on a loaded machine."""
    records = ours.data.get(topic, [])
    evs = perkey.events(records, KEY)
    if not evs:
        return "cdc wrote no event of the table"
    if not perkey.final_state("cdc", evs[:-1], table):
        return "dropping cdc's last event was not reported"
    dbz_evs = perkey.events(dbz.data.get(topic, []), KEY)
    shared: dict[Any, perkey.Event] = {(e.place, e.key): e for e in dbz_evs if e.place}
    target = next((e for e in evs if e.place and (e.place, e.key) in shared and e.op == "u"), None)
    if target is None:
        return "no update both sides streamed to alter"
    value = records[target.index].value_json()
    value["payload"]["after"]["s"] = "altered"
    altered = cmp.Record(records[target.index].key, json.dumps(value).encode(), records[target.index].headers)
    pair = [shared[(target.place, target.key)]], [replace(target, record=altered)]
    now, _, _ = perkey.same_places(f"<db>.{TABLE}", *pair, dbz, ours, {})
    if not any(d.path == "value.payload.after.s" and d.cdc == "altered" for d in now):
        return "an altered streamed value was not reported"
    return None


def run_snapshot_writes(args: argparse.Namespace, row: Row) -> int:
    stack = Stack(REPO)
    cache = Path(args.cache).expanduser()
    workdir = Path(args.workdir or (cache / "compat" / unique("run")))
    workdir.mkdir(parents=True, exist_ok=True)
    tag = unique("x").split("-", 1)[1].replace("-", "_")
    db = f"compat_{tag}"
    server_id = 480 + args.slot if getattr(args, "slot", None) is not None else int(tag[-4:], 16) % 480
    sides = [
        Side("debezium", f"dbz_{tag}", f"compat-dbz-{tag}", 5400 + server_id),
        Side("cdc", f"cdc_{tag}", f"compat-cdc-{tag}", 6000 + server_id),
    ]
    for side in sides:
        own = workload.SIGNAL_TABLES[side.name]
        foreign = next(t for n, t in workload.SIGNAL_TABLES.items() if n != side.name)
        side.extra_config.update(
            {
                "signal.data.collection": f"{db}.{own}",
                "table.exclude.list": f"{db}.{foreign}",
                "incremental.snapshot.chunk.size": str(CHUNK),
                **row.config(db),
            }
        )
    print(f"[compat] row {row.name}: {row.family}; database {db}; {ROWS} rows in {TABLE}; workdir {workdir}")
    stack.sql(_setup_sql(db))
    jars.connect_libs(cache, jars.MARIADB_CONNECT_VERSION)
    jars.debezium_plugin_path(cache, "debezium-connector-mariadb")
    writer: Writer | None = None
    end = f"{db}.{workload.END_TABLE}"
    timings: dict[str, float] = {}
    incremental: dict[str, str] = {}
    try:
        for side in sides:
            side.spec = worker_spec(side, stack, workdir, cache, args.python)
            side.worker = WorkerProcess(side.spec)
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda s: s.worker.wait_ready(), sides))
        writer = Writer(stack, db)
        started = time.monotonic()
        for side in sides:
            assert side.worker is not None
            side.worker.create_connector(CONNECTOR, connector_config(side, stack, [db]))
        wait_for("both snapshots", lambda: all([snapshot_committed(stack, s) for s in sides]), sides, 600)
        timings["initial snapshots (both)"] = time.monotonic() - started
        print(f"[compat] both initial snapshots ended; writer so far {writer.counts}; signal")
        signal = f'{{"data-collections": ["{db}.{TABLE}"], "type": "incremental"}}'  # Debezium's signal
        stack.sql(
            "".join(
                f"INSERT INTO `{db}`.{t} VALUES ('{workload.SIGNAL_ID}', 'execute-snapshot', '{signal}');\n"
                for t in workload.SIGNAL_TABLES.values()
            )
        )
        started = time.monotonic()

        def incremental_over() -> bool:
            # A side whose offsets never carried the incremental snapshot's keys within SKIPPED_AFTER
            # seconds skipped it (Debezium logs "SQL error while executing incremental snapshot ...,
            # skipping"): the row goes on and reports it (its replay then has no incremental reads).
            states = {s.name: _incremental_state(stack, s) for s in sides}
            incremental.update(states)
            late = time.monotonic() - started > SKIPPED_AFTER
            return all(v == "done" or (v == "none" and late) for v in states.values())

        wait_for("both incremental snapshots", incremental_over, sides, 600)
        timings["incremental snapshots (both)"] = time.monotonic() - started
        writer.close()
        print(f"[compat] both incremental snapshots ended; writer stopped: {writer.counts}")
        stack.sql(f"INSERT INTO {end} VALUES (1);")
        wait_for("the end marker", lambda: all(_payloads(stack, s, end) for s in sides), sides, 600)
        time.sleep(3)
    finally:
        if writer is not None and not writer.stop.is_set():
            writer.close()
        for side in sides:
            if side.worker is not None:
                side.worker.stop()
    names = {db: "<db>"}
    got = {side.name: capture(side, stack, names) for side in sides}
    table = _table(stack, db)
    topic = f"{db}.{TABLE}"  # Captured.data is keyed without the side's prefix
    findings, diffs, pairs, evs = compare_sides(got["debezium"], got["cdc"], table, topic)
    intentional = cmp.load_intentional(DOC)
    bad = cmp.unexplained(diffs, intentional)
    failed_self_test = _self_test(got["debezium"], got["cdc"], table, topic)
    counts = {
        side: {op: sum(1 for e in side_evs if e.op == op) for op in ("r", "c", "u", "d")}
        | {"incremental r": sum(1 for e in side_evs if e.snapshot == "incremental")}
        for side, side_evs in evs.items()
    }
    report = "\n".join(
        [
            f"row: {row.name} ({row.family}) {json.dumps(row.keys)}",
            f"table: {len(table)} rows at the end; writer: {json.dumps(writer.counts if writer else {})}; "
            + "; ".join(f"{k} {v:.1f} s" for k, v in timings.items()),
            "events: " + "; ".join(f"{s}: {json.dumps(c)}" for s, c in counts.items()),
            "incremental snapshot: "
            + "; ".join(
                f"{s}: {'ran' if v == 'done' else 'SKIPPED (no offset carried it)'}"
                for s, v in incremental.items()
            )
            + "".join(f"; debezium's log: {line.strip()[:300]}" for line in _skips(sides[0])),
            f"streamed events at the same binlog place compared field by field: {pairs}",
            "compared: " + "; ".join(perkey.COMPARED),
            "ignored: " + "; ".join(perkey.IGNORED + cmp.IGNORED[:2]),
            "",
            *(f"- per-key: {f}" for f in findings[:50]),
            cmp.render(diffs, intentional),
            "",
            f"{len(diffs) + len(findings)} differences ({len(findings)} per-key findings); "
            f"{len(bad) + len(findings)} unexplained; self-test: "
            + (
                f"FAILED: {failed_self_test}"
                if failed_self_test
                else "a dropped event, an altered value found"
            ),
        ]
    )
    print(report)
    (workdir / "report.md").write_text(report + "\n", encoding="utf-8")
    if not args.keep:
        stack.delete_topics([t for s in sides for t in s.topics(stack)])
        stack.sql(f"DROP DATABASE IF EXISTS `{db}`;")
    if failed_self_test:
        return 2
    return 1 if bad or findings else 0
