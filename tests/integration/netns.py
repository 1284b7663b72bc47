"""Network namespaces of a test's own: another "host" on the same machine, for tests across hosts.

:class:`Host` is a namespace joined to the machine by a veth pair: the machine's end gets
``gateway`` (``10.x.y.1/24``), the namespace's end ``address`` (``10.x.y.2``). Inside, ``127.0.0.1`` is
the namespace's own loopback, so a process there reaches the machine's services only when they listen on
``gateway`` — a loopback shortcut (a client that dials 127.0.0.1, an advertised ``localhost``) fails as
it would between two machines. ``host.popen([...])`` / ``host.run([...])`` start a command inside.

Addresses come from ``10.<200 + pid % 50>.<n>.0/24`` (a free ``n`` is picked), names from the pid, so
parallel test sessions do not collide. It needs root (``ip netns``); :func:`available` says whether
this machine allows it. Every namespace and veth is removed on :meth:`Host.close` (the context
manager's exit); ``ip netns pids`` names processes left inside, which ``close`` kills.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["Host", "available", "host"]

_COUNTER = iter(range(1, 250))


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def available() -> bool:
    """Whether this process may create network namespaces (root and ``ip`` present)."""
    if os.geteuid() != 0:
        return False
    try:
        return _ip("netns", "list", check=False).returncode == 0
    except OSError:
        return False


def _used_networks() -> set[ipaddress.IPv4Network]:
    out = _ip("-o", "-4", "addr", "show").stdout
    return {ipaddress.ip_interface(line.split()[3]).network for line in out.splitlines() if " inet " in line}


class Host:
    """One namespace with a veth pair to the machine (see the module docstring)."""

    def __init__(self) -> None:
        n = next(_COUNTER)
        tag = f"{os.getpid() % 100000}x{n}"
        self.name = f"cdcns{tag}"
        self._veth_host, self._veth_ns = f"vh{tag}", f"vn{tag}"
        second = 200 + os.getpid() % 50
        used = _used_networks()
        for third in range(n, 256):
            network = ipaddress.ip_network(f"10.{second}.{third}.0/24")
            if network not in used:
                break
        else:
            raise RuntimeError("no free 10.x.y.0/24 network for a test namespace")
        self.gateway = str(network.network_address + 1)
        """The machine's end of the veth: what a process inside dials to reach the machine."""
        self.address = str(network.network_address + 2)
        """The namespace's own address, reachable from the machine."""
        self._created = False

    def open(self) -> Host:
        _ip("netns", "add", self.name)
        self._created = True
        _ip("link", "add", self._veth_host, "type", "veth", "peer", "name", self._veth_ns)
        _ip("link", "set", self._veth_ns, "netns", self.name)
        _ip("addr", "add", f"{self.gateway}/24", "dev", self._veth_host)
        _ip("link", "set", self._veth_host, "up")
        inside = ("netns", "exec", self.name, "ip")
        _ip(*inside, "addr", "add", f"{self.address}/24", "dev", self._veth_ns)
        _ip(*inside, "link", "set", self._veth_ns, "up")
        _ip(*inside, "link", "set", "lo", "up")
        return self

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside the namespace."""
        return ["ip", "netns", "exec", self.name, *argv]

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self.command(argv), **kwargs)

    def run(self, argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        return subprocess.run(self.command(argv), **kwargs)

    def close(self) -> None:
        if not self._created:
            return
        pids = _ip("netns", "pids", self.name, check=False).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        _ip("link", "del", self._veth_host, check=False)  # takes its peer with it
        _ip("netns", "del", self.name, check=False)
        self._created = False


@contextlib.contextmanager
def host() -> Iterator[Host]:
    """A :class:`Host` for the ``with`` block, removed after it."""
    h = Host()
    try:
        yield h.open()
    finally:
        h.close()
