"""B5's paced writer: single-row UPDATEs and INSERTs in autocommit at a fixed rate, each commit time kept.

    python bench/tools/paced_writer.py --table bench.b5_a_1000000 --rows 1000000 --rate 1000 \\
        --warmup 5 [--wait-go 300] --duration 60 --tag TAG --out FILE [--insert-every 5] [--seed 42] \\
        [--host 127.0.0.1 --port 3306 --user cdc --password cdc]

One connection (mysqlclient, PyMySQL when it is missing), autocommit: every statement is its own
transaction. Change ``i`` (from 0) is due at ``t0 + i / rate``: a change is never sent before it is due, a
late one goes at once and none is skipped (open loop), so a slow database shows as a lower achieved rate,
not as a hidden pause. The first ``warmup * rate`` changes are the warm-up; with ``--wait-go MAX`` the
warm-up goes on at the same rate until a line arrives on stdin (the caller saw the reader catch up) or
MAX seconds of it passed. The measured phase begins when the next change is due and lasts ``duration``
seconds; a change not sent by then is not sent.

Every ``insert-every``-th change (``i % n == n - 1``) is ``INSERT INTO t (k, c, pad) VALUES (...)`` (a
new id, ``updated_at`` by its DEFAULT CURRENT_TIMESTAMP(6)); the others are ``UPDATE t SET k = k + 1,
c = '...' WHERE id = ...`` over a seeded permutation of ids 1..rows (no row is updated twice before every
row was; ``updated_at`` by its ON UPDATE CURRENT_TIMESTAMP(6)). ``c`` holds ``b5 <tag> <i>``: the run and
the change's sequence number, for the consumer to match each record with its change.

Per change the writer keeps its wall clock (``time.time_ns()``, the clock the Kafka producers on this
machine stamp records with) before the statement and when it returned: the server committed before it
answered, so the latter is the commit plus the answer's trip back plus any wait of the writer for a CPU.
(B5 times latency from the server's own stamp, ``updated_at``, and reports these beside it.)

Prints ``warm <epoch_us>`` when the minimum warm-up is over, ``measure <epoch_us>`` when the measured
phase begins and ``end <epoch_us>`` when it ends (each flushed at once, so the caller can read CPU
counters then), then one JSON line: sent, warm (changes before the measured phase), warmup_s, measured,
seconds (from the two lines), rate (measured changes / ``duration``: the planned count when the writer
kept up, fewer when it fell behind and the deadline came first), max_late_ms (how far the measured
phase's latest change went behind its due time). Writes ``--out``: four int64 arrays of ``sent`` values
one after the other (id, op: 0 update / 1 insert, start_us, commit_us), indexed by sequence number.
"""

from __future__ import annotations

import argparse
import json
import random
import select
import sys
import time
from array import array
from typing import Any


def _connect(args: argparse.Namespace) -> Any:
    try:
        import MySQLdb

        return MySQLdb.connect(
            host=args.host, port=args.port, user=args.user, passwd=args.password, autocommit=True
        )
    except ImportError:
        import pymysql

        return pymysql.connect(
            host=args.host, port=args.port, user=args.user, password=args.password, autocommit=True
        )


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _go_requested() -> bool:
    """Whether a line (or the end) is waiting on stdin: the caller's "go"."""
    if not select.select([sys.stdin], [], [], 0)[0]:
        return False
    sys.stdin.readline()
    return True


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3306)
    parser.add_argument("--user", default="cdc")
    parser.add_argument("--password", default="cdc")
    parser.add_argument("--table", required=True)
    parser.add_argument("--rows", type=int, required=True, help="the table's preloaded ids are 1..rows")
    parser.add_argument("--rate", type=float, required=True, help="changes per second")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds at the rate before measuring")
    parser.add_argument(
        "--wait-go",
        type=float,
        metavar="MAX",
        help="after --warmup, keep warming up until a line arrives on stdin, at most MAX seconds in all",
    )
    parser.add_argument("--duration", type=float, required=True, help="seconds measured")
    parser.add_argument("--tag", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--insert-every", type=int, default=5, help="every n-th change an INSERT (0: none)")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    table, tag, every = args.table, args.tag, args.insert_every
    warm_min = round(args.warmup * args.rate)
    warm_max = max(warm_min, round(args.wait_go * args.rate)) if args.wait_go is not None else warm_min
    window = round(args.duration * args.rate)
    planned = warm_max + window
    interval = 1.0 / args.rate
    updates = planned - (planned // every if every > 0 else 0)
    ids = list(range(1, args.rows + 1))
    random.Random(args.seed).shuffle(ids)
    if updates > len(ids):
        ids = ids * (updates // len(ids) + 1)
    rng = random.Random(args.seed + 1)
    pad = "-".join(f"{rng.randrange(10**11):011d}" for _ in range(5))

    conn = _connect(args)
    cur = conn.cursor()
    out_id, out_op, out_start, out_commit = array("q"), array("q"), array("q"), array("q")
    clock, wall = time.perf_counter, time.time_ns
    sleep = time.sleep
    late = 0.0
    upd = 0
    t0 = clock() + 0.05
    first = -1  # the first measured change, once the measured phase began
    stop = end = 0.0
    measure_at = end_at = 0
    i = 0
    while True:
        due = t0 + i * interval
        if first < 0 and i >= warm_min:
            if i == warm_min:
                _say(f"warm {wall() // 1000}")
            if args.wait_go is None or i >= warm_max or _go_requested():
                first, stop, end = i, i + window, due + args.duration
                now = clock()
                if due > now:
                    sleep(due - now)
                measure_at = wall() // 1000
                _say(f"measure {measure_at}")
        now = clock()
        if first >= 0 and (i >= stop or now >= end):
            break
        if due > now:
            sleep(due - now)
            now = clock()
        elif first >= 0 and now - due > late:
            late = now - due
        c = f"b5 {tag} {i}"
        start = wall()
        if every > 0 and i % every == every - 1:
            cur.execute(f"INSERT INTO {table} (k, c, pad) VALUES ({rng.randrange(1, 2**31)}, '{c}', '{pad}')")
            ident, op = int(cur.lastrowid), 1
        else:
            ident, op = ids[upd], 0
            upd += 1
            cur.execute(f"UPDATE {table} SET k = k + 1, c = '{c}' WHERE id = {ident}")
        commit = wall()
        out_id.append(ident)
        out_op.append(op)
        out_start.append(start // 1000)
        out_commit.append(commit // 1000)
        i += 1
    end_at = wall() // 1000
    _say(f"end {end_at}")
    sent = len(out_id)
    measured = sent - first
    with open(args.out, "wb") as fh:
        for arr in (out_id, out_op, out_start, out_commit):
            arr.tofile(fh)
    cur.close()
    conn.close()
    _say(
        json.dumps(
            {
                "sent": sent,
                "warm": first,
                "measured": measured,
                "seconds": (end_at - measure_at) / 1e6,
                "rate": measured / args.duration,
                "max_late_ms": late * 1000.0,
                "warmup_s": first / args.rate,
                "planned": planned,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
