"""A Spark standalone cluster of a test's own: the master on the lab's driver host, each worker (and so
its executors) in a network namespace of :mod:`netlab`.

Started from the jars of the installed pyspark (``spark-class org.apache.spark.deploy.master.Master`` and
``…worker.Worker``), each daemon with a small heap. Workers get no ``PYTHONPATH``, no ``VIRTUAL_ENV`` and
no virtualenv's ``bin`` on ``PATH`` (so neither the project venv nor its ``python`` is theirs by default):
the executors' Python finds cdc only in the zip the driver ships, and is the interpreter the driver names
(``spark.pyspark.python``: a path on the host, or one inside a shipped archive).

:meth:`SparkCluster.kill_executors` SIGKILLs the executor JVMs (the workers start new ones),
:meth:`SparkCluster.stop_workers` kills the workers with their executors (every executor gone),
:meth:`SparkCluster.start_workers` brings them back.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests
from faultkit import free_port
from netlab import Host, Lab, children, kill_tree

__all__ = ["SparkCluster"]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _env(bind: str, root: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHONPATH", "SPARK_", "PYSPARK_", "VIRTUAL_ENV"))
    }
    venvs = {sys.prefix, os.environ.get("VIRTUAL_ENV", sys.prefix)}
    env["PATH"] = os.pathsep.join(
        d for d in env.get("PATH", "").split(os.pathsep) if d and not any(d.startswith(v) for v in venvs)
    )
    env.update(
        {
            "SPARK_HOME": str(_spark_home()),
            "SPARK_LOCAL_IP": bind,
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_LOG_DIR": str(root / "logs"),
            "SPARK_CONF_DIR": str(root / "conf"),
        }
    )
    return env


class SparkCluster:
    def __init__(self, lab: Lab, hosts: list[Host], root: Path, cores: int = 1, memory: str = "1g") -> None:
        self.lab, self.hosts, self.root = lab, hosts, root
        self.cores, self.memory = cores, memory
        self.port, self.ui_port = free_port(), free_port()
        self.url = f"spark://{lab.address}:{self.port}"
        self.master: subprocess.Popen[bytes] | None = None
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        (root / "logs").mkdir(parents=True, exist_ok=True)
        (root / "conf").mkdir(parents=True, exist_ok=True)

    def _class(self, name: str) -> list[str]:
        return [str(_spark_home() / "bin" / "spark-class"), name]

    def start(self, timeout: float = 120.0) -> SparkCluster:
        self.master = self.lab.popen(
            [
                *self._class("org.apache.spark.deploy.master.Master"),
                "--host",
                self.lab.address,
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            ],
            _env(self.lab.address, self.root),
            self.root / "logs" / "master.out",
        )
        self.start_workers(timeout)
        return self

    def work_dir(self, host: Host) -> Path:
        return self.root / f"work-{host.name}"

    def start_workers(self, timeout: float = 120.0) -> None:
        for host in self.hosts:
            self.work_dir(host).mkdir(parents=True, exist_ok=True)
            self.workers[host.name] = host.popen(
                [
                    *self._class("org.apache.spark.deploy.worker.Worker"),
                    "--host",
                    host.address,
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--work-dir",
                    str(self.work_dir(host)),
                    "--webui-port",
                    str(free_port()),
                    self.url,
                ],
                _env(host.address, self.root),
                self.root / "logs" / f"worker-{host.name}.out",
            )
        self.wait_workers(len(self.hosts), timeout)

    def alive_workers(self) -> list[str]:
        state = requests.get(f"http://{self.lab.address}:{self.ui_port}/json/", timeout=5).json()
        return [w["host"] for w in state.get("workers", []) if w.get("state") == "ALIVE"]

    def wait_workers(self, n: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline:
            if self.master is not None and self.master.poll() is not None:
                raise AssertionError(f"the Spark master exited: see {self.root / 'logs' / 'master.out'}")
            with contextlib.suppress(requests.RequestException, ValueError):
                seen = self.alive_workers()
                if len(seen) >= n:
                    return
            time.sleep(1)
        raise AssertionError(f"{len(seen)} of {n} Spark workers alive after {timeout:.0f} s: {seen}")

    def executors(self) -> list[int]:
        """Pids of the executor JVMs (children of our workers)."""
        pids = []
        for worker in self.workers.values():
            for pid in children(worker.pid):
                with contextlib.suppress(OSError):
                    if b"CoarseGrainedExecutorBackend" in Path(f"/proc/{pid}/cmdline").read_bytes():
                        pids.append(pid)
        return pids

    def kill_executors(self, count: int = 1) -> list[int]:
        """SIGKILL up to ``count`` executor JVMs (their Python workers die with their pipes)."""
        killed = []
        for pid in self.executors()[:count]:
            for child in [*children(pid), pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            killed.append(pid)
        return killed

    def stop_workers(self) -> None:
        for worker in self.workers.values():
            kill_tree(worker)
        self.workers.clear()

    def close(self) -> None:
        self.stop_workers()
        if self.master is not None:
            kill_tree(self.master)

    def logs(self) -> str:
        out = []
        for f in sorted((self.root / "logs").glob("*.out")):
            out.append(f"--- {f.name}\n{f.read_text(errors='replace')[-2000:]}")
        return "\n".join(out)

    def executor_logs(self) -> list[Path]:
        """The stderr files of every executor the workers launched (work/<app>/<id>/stderr)."""
        return sorted(p for host in self.hosts for p in self.work_dir(host).glob("*/*/stderr"))

    def shipped(self) -> list[Path]:
        """The cdc zips the driver shipped into the executors' work directories."""
        return sorted(p for host in self.hosts for p in self.work_dir(host).glob("*/*/cdc-*.zip"))

    def unpacked(self, name: str) -> list[Path]:
        """The directories ``name`` an archive (``spark.archives``, ``…#name``) was unpacked into, one per
        executor that got it: ``work/<app>/<executor>/<name>``."""
        return sorted(p for host in self.hosts for p in self.work_dir(host).glob(f"*/*/{name}") if p.is_dir())

    def executor_lines(self, marker: str, files: list[Path] | None = None) -> list[tuple[Path, str]]:
        """The lines of the executors' stderr ``files`` (default: all) that hold ``marker``, with the file."""
        return [
            (f, line)
            for f in (self.executor_logs() if files is None else files)
            for line in f.read_text(errors="replace").splitlines()
            if marker in line
        ]


def kill_executors_when(cluster: SparkCluster, ready: Any, count: int, timeout: float) -> list[int]:
    """Wait for ``ready()`` and an executor, then kill ``count`` executors; returns their pids."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready() and cluster.executors():
            return cluster.kill_executors(count)
        time.sleep(0.2)
    raise AssertionError("no moment to kill an executor came")
