"""mysqld CPU spent serving one table's reads: the threads of the connections whose statement names it.

The whole ``mysqld`` process's CPU (``mysqld_cpu_s_per_m``) counts every client of a shared server: on a
machine where others run their own tests it measures them. MariaDB runs one OS thread per connection
(``thread_handling=one-thread-per-connection``) and shows it in ``information_schema.processlist.TID``,
so :class:`QueryCpu` polls the process list every :data:`INTERVAL` seconds for statements that name the
table, and sums ``utime + stime`` of those threads (``/proc/<mysqld>/task/<tid>/stat``) from the run's
start (a thread made later: from zero) to the end of the run. A statement shorter than one interval may be
missed; a snapshot's reads (one long ``SELECT``, or chunks of 50 000 rows) are not. Another client reading
the same table at the same time would be counted too.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["INTERVAL", "QueryCpu"]

INTERVAL = 0.2
_TICK = os.sysconf("SC_CLK_TCK")


def _thread_cpu(pid: int, tid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _all_threads(pid: int) -> dict[int, float]:
    out: dict[int, float] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for name in tids:
        cpu = _thread_cpu(pid, int(name))
        if cpu is not None:
            out[int(name)] = cpu
    return out


class QueryCpu:
    """CPU-seconds of the ``mysqld`` threads that ran statements naming ``table`` between start and stop.

    A thread is followed from the first poll that shows it running such a statement until one shows it
    running another (a connection reusing a cached thread) or the end; its last CPU reading counts, so a
    connection that closed (its thread gone) keeps what it used.
    """

    def __init__(self, mysqld: int, connect: Any, table: str) -> None:
        self.mysqld, self._connect, self.needle = mysqld, connect, table.split(".")[-1]
        self._baseline: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._frozen: set[int] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    def start(self) -> QueryCpu:
        self._baseline = _all_threads(self.mysqld)
        self._thread = threading.Thread(target=self._poll, name="query-cpu", daemon=True)
        self._thread.start()
        return self

    def _sample(self, cur: Any) -> None:
        cur.execute("SELECT TID, INFO FROM information_schema.processlist WHERE ID <> CONNECTION_ID()")
        for tid, info in cur.fetchall():
            if tid is None or info is None:
                continue
            if self.needle in str(info):
                self._last.setdefault(int(tid), self._baseline.get(int(tid), 0.0))
            elif int(tid) in self._last:
                self._frozen.add(int(tid))  # the thread serves another statement now
        for tid in self._last.keys() - self._frozen:
            cpu = _thread_cpu(self.mysqld, tid)
            if cpu is not None:
                self._last[tid] = cpu

    def _poll(self) -> None:
        try:
            conn = self._connect()
        except Exception as exc:
            self.error = str(exc)
            return
        try:
            cur = conn.cursor()
            while not self._stop.wait(INTERVAL):
                self._sample(cur)
            self._sample(cur)
        except Exception as exc:
            self.error = str(exc)
        finally:
            conn.close()

    def stop(self) -> float:
        """The CPU-seconds those threads used since :meth:`start`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        return sum(cpu - self._baseline.get(tid, 0.0) for tid, cpu in self._last.items())

    @property
    def threads(self) -> int:
        return len(self._last)
