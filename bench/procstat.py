"""CPU-seconds and memory of processes, read from ``/proc``.

* CPU: ``utime + stime`` (fields 14 and 15 of ``/proc/<pid>/stat``), and with ``children=True`` also
  ``cutime + cstime`` (16, 17: children that were waited for). A :class:`TreeMonitor` samples a process
  and all its descendants, so a child that ends between samples loses at most one interval.
* Memory: ``VmRSS`` now and ``VmHWM`` (the kernel's peak RSS of that process) from ``/proc/<pid>/status``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "ProcSnapshot",
    "TreeMonitor",
    "cpu_seconds",
    "descendants",
    "mysqld_pid",
    "snapshot",
    "wait_until",
]

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcSnapshot:
    pid: int
    cpu: float  # utime + stime, seconds
    child_cpu: float  # cutime + cstime, seconds
    rss_kb: int
    hwm_kb: int


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as fh:
        data = fh.read()
    # the command name (field 2) may hold spaces and parentheses: split after its closing parenthesis
    return data[data.rindex(")") + 2 :].split()


def snapshot(pid: int) -> ProcSnapshot | None:
    try:
        fields = _stat_fields(pid)
        rss = hwm = 0
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return None
    # after the name: state is index 0, so utime (field 14) is index 11
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    return ProcSnapshot(pid, (utime + stime) / _TICK, (cutime + cstime) / _TICK, rss, hwm)


def cpu_seconds(pid: int, children: bool = False) -> float:
    snap = snapshot(pid)
    if snap is None:
        return 0.0
    return snap.cpu + (snap.child_cpu if children else 0.0)


def descendants(pid: int) -> list[int]:
    """``pid``'s living descendants (from each process's ``/proc/<pid>/task/*/children``)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except FileNotFoundError:
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


def mysqld_pid(pidfile: str) -> int | None:
    try:
        with open(pidfile) as fh:
            pid = int(fh.read().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


class TreeMonitor:
    """Samples a process tree every ``interval`` seconds: CPU per pid (last value seen) and peak RSS.

    ``cpu()`` is the CPU used since the monitor started: for each pid, its last seen CPU less its CPU when
    first seen (pids present at start count from there, new ones from zero).
    """

    def __init__(self, pid: int, interval: float = 0.2, include_children: bool = True) -> None:
        self.pid = pid
        self.interval = interval
        self.include_children = include_children
        self._base: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self.peak_rss_kb = 0
        self.peak_hwm_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"monitor-{pid}", daemon=True)
        self._sample(first=True)

    def _pids(self) -> list[int]:
        return [self.pid, *descendants(self.pid)] if self.include_children else [self.pid]

    def _sample(self, first: bool = False) -> None:
        rss = 0
        for pid in self._pids():
            snap = snapshot(pid)
            if snap is None:
                continue
            if pid not in self._base:
                self._base[pid] = snap.cpu if first else 0.0
            self._last[pid] = snap.cpu
            rss += snap.rss_kb
            if pid == self.pid:
                self.peak_hwm_kb = max(self.peak_hwm_kb, snap.hwm_kb)
        self.peak_rss_kb = max(self.peak_rss_kb, rss)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def start(self) -> TreeMonitor:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Take a last sample and stop (call before the process ends, to keep its last CPU figure)."""
        self._sample()
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def cpu(self) -> float:
        return sum(self._last[pid] - self._base.get(pid, 0.0) for pid in self._last)

    def current_rss_kb(self) -> int:
        return sum(s.rss_kb for s in (snapshot(p) for p in self._pids()) if s is not None)


def wait_until(predicate: Callable[[], object], timeout: float, interval: float = 0.05) -> bool:
    """Call ``predicate()`` until it is truthy or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
