"""Several hosts of a test's own: Linux network namespaces on one bridge, so a loopback shortcut cannot pass.

:class:`Lab` makes a bridge on this machine with an address of a private /24 of its own (``10.X.Y.1``, the
"driver host": servers the other hosts must reach listen there), and :meth:`Lab.add_host` a network
namespace joined to the bridge by a veth pair, with the next address of the /24 and its own loopback up.
A namespace has no default route and no route to this machine's 127.0.0.1 (its 127.0.0.1 is its own):
traffic goes only to the lab's addresses. Processes started with :meth:`Host.popen` live in the namespace
(and so do their children: a Spark worker's executors); :meth:`Host.command` is the prefix for a command
another helper starts there (a ``cdc`` worker: ``faultkit.Worker(wrap=…)``).

Needs root (``ip netns``); :func:`require_netns` skips a test where it (or another tool the test needs,
e.g. ``socat`` for :class:`TcpForward`) is not available. :meth:`Lab.close` kills the processes it
started (by pid, with their children), deletes the namespaces and the bridge. The lab's subnet and names
are random and carry the pid, so parallel test sessions do not collide.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["Host", "Lab", "TcpForward", "children", "require_netns"]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def require_netns(*tools: str) -> None:
    """Skip unless this process may create network namespaces and ``tools`` (e.g. ``socat``) are there."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    missing = [t for t in ("ip", *tools) if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}: scripts/install-deps.sh")
    name = f"cdcprobe{os.getpid() % 100000}"
    probe = _ip("netns", "add", name, check=False)
    if probe.returncode != 0:
        pytest.skip(f"ip netns is not available: {probe.stderr.strip()}")
    _ip("netns", "del", name, check=False)


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc), deepest last."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(proc: subprocess.Popen[Any], sig: int = signal.SIGKILL) -> None:
    """Signal a process we started and all its descendants (children first found, then the process)."""
    for pid in [*children(proc.pid), proc.pid]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    with contextlib.suppress(Exception):
        proc.wait(30)


@dataclass
class Host:
    """One namespace of the lab: its name and address; processes started in it."""

    lab: Lab
    name: str
    address: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside the namespace."""
        return ["ip", "netns", "exec", self.name, *argv]

    def run(
        self, *cmd: str, timeout: float = 30, env: Mapping[str, str] | None = None, cwd: str = "/"
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(cmd),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=None if env is None else dict(env),
            cwd=cwd,
        )

    def popen(self, cmd: Sequence[str], env: Mapping[str, str], log: Path, cwd: Path | None = None) -> Any:
        proc = _spawn(self.command(cmd), env, log, cwd)
        self.procs.append(proc)
        return proc


def _spawn(cmd: Sequence[str], env: Mapping[str, str], log: Path, cwd: Path | None) -> Any:
    with log.open("ab") as out:
        return subprocess.Popen(
            list(cmd), env=dict(env), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd
        )


def _free_subnet() -> tuple[int, int]:
    """A 10.X.Y.0/24 no route of this machine covers."""
    routes = _ip("-4", "route", "show", "table", "all").stdout
    for _ in range(200):
        x, y = random.randint(100, 250), random.randint(1, 254)
        if f"10.{x}." not in routes:
            return x, y
    raise AssertionError("no free 10.X.Y.0/24 for the lab")


class Lab:
    """A bridge (``10.X.Y.1/24``, this machine's side) and namespaces on it (``10.X.Y.2`` …)."""

    def __init__(self, tag: str = "") -> None:
        self.tag = (tag or "l") + str(os.getpid() % 10000) + str(random.randint(0, 99))
        x, y = _free_subnet()
        self.prefix = f"10.{x}.{y}"
        self.address = f"{self.prefix}.1"
        self.bridge = f"cdb{self.tag}"[:15]
        self.hosts: list[Host] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.address}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")

    def add_host(self) -> Host:
        n = len(self.hosts) + 2
        name = f"cdc{self.tag}h{n}"
        outside, inside = f"cv{self.tag}{n}o"[:15], f"cv{self.tag}{n}i"[:15]
        _ip("netns", "add", name)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        _ip("link", "set", inside, "netns", name)
        _ip("link", "set", outside, "master", self.bridge)
        _ip("link", "set", outside, "up")
        host = Host(self, name, f"{self.prefix}.{n}")
        for cmd in (
            ("ip", "link", "set", "lo", "up"),
            ("ip", "addr", "add", f"{host.address}/24", "dev", inside),
            ("ip", "link", "set", inside, "up"),
        ):
            result = host.run(*cmd)
            assert result.returncode == 0, result.stderr
        self.hosts.append(host)
        self._wait_reachable(host)
        return host

    def _wait_reachable(self, host: Host, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # an answer (refused: nothing listens on port 9) proves the path both ways
            probe = (
                f"import socket\ntry:\n    socket.create_connection(({self.address!r}, 9), 1)\n"
                "except ConnectionRefusedError:\n    pass"
            )
            if host.run(sys.executable, "-c", probe).returncode == 0:
                return
            time.sleep(0.3)
        raise AssertionError(f"{host.name} ({host.address}) cannot reach {self.address}")

    def popen(self, cmd: Sequence[str], env: Mapping[str, str], log: Path, cwd: Path | None = None) -> Any:
        """A process on this machine (the driver host)."""
        proc = _spawn(cmd, env, log, cwd)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for host in self.hosts:
            for proc in host.procs:
                kill_tree(proc)
        for proc in self.procs:
            kill_tree(proc)
        for host in self.hosts:
            _ip("netns", "del", host.name, check=False)  # its veth end goes, and with it the pair
        _ip("link", "del", self.bridge, check=False)


class TcpForward:
    """``socat`` on this machine: ``address:port`` (a lab address) to ``target`` (e.g. the shared
    MariaDB on 127.0.0.1:3306), so the lab's hosts reach a server that listens on loopback only."""

    def __init__(self, lab: Lab, target: str, log: Path) -> None:
        with socket.socket() as s:
            s.bind((lab.address, 0))
            self.port = int(s.getsockname()[1])
        self.address = lab.address
        self.proc = lab.popen(
            [
                "socat",
                f"TCP-LISTEN:{self.port},bind={lab.address},fork,reuseaddr",
                f"TCP:{target}",
            ],
            os.environ,
            log,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((lab.address, self.port), 1):
                return
            time.sleep(0.1)
        raise AssertionError(f"socat did not listen on {lab.address}:{self.port}")
