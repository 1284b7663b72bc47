"""Running a Connect-compatible worker as a process: ours (``cdc distributed``) or Apache Kafka Connect's.

Both read the same worker ``.properties``; each run gets its own ``group.id``, internal topics and REST
port, so runs never see each other's state. :class:`WorkerProcess` starts the process, times the first
``200`` on ``GET /``, drives the REST API and stops the process (TERM, then KILL after a grace period),
reading its CPU and peak RSS from ``/proc`` before it goes.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from bench import jars
from bench.procstat import ProcSnapshot, TreeMonitor, snapshot, wait_until

__all__ = [
    "WorkerProcess",
    "WorkerSpec",
    "cdc_worker",
    "connect_worker",
    "free_port",
    "worker_properties",
    "write_properties",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def worker_properties(
    bootstrap: str, group: str, port: int, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A distributed worker's properties, the same for both workers: JSON without schemas both sides."""
    props = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "listeners": f"http://127.0.0.1:{port}",
        "rest.advertised.host.name": "127.0.0.1",
        "rest.advertised.port": str(port),
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "1",
        "status.storage.partitions": "1",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "false",
        "value.converter.schemas.enable": "false",
        "offset.flush.interval.ms": "10000",
    }
    props.update(extra or {})
    return props


def write_properties(path: Path, props: Mapping[str, str]) -> Path:
    """Write ``props`` as a ``.properties`` file (``key=value`` lines, as Kafka's own samples) for a
    worker or a MirrorMaker, ours or Kafka's; returns ``path``."""
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


@dataclass
class WorkerSpec:
    """How to start one worker: the command, its environment and where it logs."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    port: int
    internal_topics: list[str] = field(default_factory=list)


def _connect_log4j(path: Path, log_file: Path, levels: Mapping[str, str] | None = None) -> None:
    loggers = "".join(
        f"logger.l{i}.name = {name}\nlogger.l{i}.level = {level}\n"
        for i, (name, level) in enumerate(sorted((levels or {}).items()))
    )
    path.write_text(
        "status = warn\n"
        "appender.file.type = File\n"
        "appender.file.name = FILE\n"
        f"appender.file.fileName = {log_file}\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = INFO\n"
        "rootLogger.appenderRef.file.ref = FILE\n" + loggers,
        encoding="utf-8",
    )


def connect_worker(
    workdir: Path,
    cache: Path,
    props: dict[str, str],
    *,
    plugin_path: Path | None = None,
    more_plugins: tuple[Path, ...] = (),
    cpus: str | None = None,
    log_levels: Mapping[str, str] | None = None,
    connect_version: str | None = None,
) -> WorkerSpec:
    """Apache Kafka Connect's distributed worker, started as ``bin/connect-distributed.sh`` starts it
    (``log_levels``: logger name → level, beside the root logger's INFO; ``more_plugins``: further
    ``plugin.path`` roots, a converter's; ``connect_version``: default, the one the plugin runs in)."""
    libs = jars.connect_libs(cache, connect_version or jars.connect_version_for(plugin_path))
    props = dict(props)
    if plugin_path is not None:
        props["plugin.path"] = ",".join(str(p) for p in (plugin_path, *more_plugins))
    group = props["group.id"]
    worker_file = workdir / f"{group}.properties"
    write_properties(worker_file, props)
    log4j = workdir / f"{group}.log4j2.properties"
    log = workdir / f"{group}.log"
    _connect_log4j(log4j, log, log_levels)
    argv = [
        "java",
        *jars.jvm_heap(),
        *jars.JVM_OPTS,
        f"-Dlog4j2.configurationFile={log4j}",
        "-cp",
        f"{libs}/*",
        "org.apache.kafka.connect.cli.ConnectDistributed",
        str(worker_file),
    ]
    if cpus:
        argv = ["taskset", "-c", cpus, *argv]
    topics = [props["config.storage.topic"], props["offset.storage.topic"], props["status.storage.topic"]]
    return WorkerSpec(
        "kafka-connect", argv, dict(os.environ), log, int(props["rest.advertised.port"]), topics
    )


@functools.cache
def compile_cdc(python: str, env_key: tuple[tuple[str, str], ...]) -> None:
    """Compile the ``cdc`` package the worker will import (the same interpreter and environment) to
    bytecode once, as ``pip install`` does for an installed package. Without it, an environment with
    ``PYTHONDONTWRITEBYTECODE=1`` (or a read-only checkout) compiles every module of the worker from source
    at each start, which measures the checkout rather than the worker (about 0.3 CPU-seconds of B10's
    start-up). Kafka Connect's jars are compiled classes."""
    code = "import compileall, os, cdc; compileall.compile_dir(os.path.dirname(cdc.__file__), quiet=1)"
    subprocess.run([python, "-c", code], env=dict(env_key), check=False, capture_output=True, timeout=600)


def cdc_worker(workdir: Path, python: str, props: dict[str, str], *, cpus: str | None = None) -> WorkerSpec:
    """Our worker: ``cdc distributed worker.properties`` (``python -m cdc.cli``, the venv's interpreter),
    its package compiled to bytecode first (:func:`compile_cdc`)."""
    group = props["group.id"]
    worker_file = workdir / f"{group}.properties"
    write_properties(worker_file, props)
    argv = [python, "-m", "cdc.cli", "distributed", str(worker_file)]
    if cpus:
        argv = ["taskset", "-c", cpus, *argv]
    topics = [props["config.storage.topic"], props["offset.storage.topic"], props["status.storage.topic"]]
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    compile_cdc(python, tuple(sorted(env.items())))
    return WorkerSpec("cdc", argv, env, workdir / f"{group}.out", int(props["rest.advertised.port"]), topics)


class WorkerProcess:
    """A started worker. Use as a context manager: the process is stopped on exit whatever happens."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.url = f"http://127.0.0.1:{spec.port}"
        self._out = spec.log.with_suffix(".out").open("wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            spec.argv, env=spec.env, stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True
        )
        # with taskset in front, the worker is taskset's exec'd image: the same pid
        self.monitor = TreeMonitor(self.proc.pid).start()
        self.last: ProcSnapshot | None = None
        self.signalled: float | None = None  # time.monotonic() when stop() sent SIGTERM

    @property
    def pid(self) -> int:
        return self.proc.pid

    def __enter__(self) -> WorkerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float = 180.0) -> float:
        """Seconds from the process's start to the first 200 on ``GET /``."""
        session = requests.Session()

        def ready() -> bool:
            if not self.alive():
                raise RuntimeError(
                    f"{self.spec.name} exited with {self.proc.returncode}; see {self.spec.log}"
                )
            try:
                return session.get(self.url + "/", timeout=1).status_code == 200
            except requests.RequestException:
                return False

        if not wait_until(ready, timeout, interval=0.02):
            raise TimeoutError(
                f"{self.spec.name} gave no 200 on GET / within {timeout} s; see {self.spec.log}"
            )
        return time.monotonic() - self.started

    def request(self, method: str, path: str, body: Any = None, timeout: float = 120.0) -> Any:
        resp = requests.request(
            method,
            self.url + path,
            timeout=timeout,
            data=None if body is None else json.dumps(body),
            headers={"Content-Type": "application/json"},
        )
        if resp.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {resp.status_code} {resp.text[:500]}")
        return resp.json() if resp.content else None

    def create_connector(
        self, name: str, config: Mapping[str, str], initial_state: str | None = None, retries: float = 60.0
    ) -> Any:
        body: dict[str, Any] = {"name": name, "config": dict(config)}
        if initial_state:
            body["initial_state"] = initial_state
        deadline = time.monotonic() + retries
        while True:
            try:
                return self.request("POST", "/connectors", body)
            except RuntimeError as exc:
                # 409 while the worker joins its group or reads its config topic: try again
                if "409" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def wait_running(self, name: str, tasks: int = 1, timeout: float = 120.0, interval: float = 0.2) -> None:
        """Until ``name`` and ``tasks`` of its tasks are RUNNING, asking ``GET /status`` every ``interval``
        seconds (a timed wait passes a short one: the figure is quantised by it)."""

        def running() -> bool:
            try:
                status = self.request("GET", f"/connectors/{name}/status", timeout=5)
            except (RuntimeError, requests.RequestException):
                return False
            states = [t.get("state") for t in status.get("tasks", [])]
            if "FAILED" in states or status.get("connector", {}).get("state") == "FAILED":
                raise RuntimeError(f"{name} failed: {json.dumps(status)[:2000]}")
            return status.get("connector", {}).get("state") == "RUNNING" and states.count("RUNNING") >= tasks

        if not wait_until(running, timeout, interval=interval):
            raise TimeoutError(f"{name} is not RUNNING after {timeout} s; see {self.spec.log}")

    def status(self, name: str) -> Any:
        return self.request("GET", f"/connectors/{name}/status", timeout=10)

    def snap(self) -> ProcSnapshot | None:
        snap = snapshot(self.pid)
        if snap is not None:
            self.last = snap
        return snap

    def stop(self, grace: float = 30.0) -> None:
        if self.proc.poll() is None:
            self.snap()
            self.monitor.stop()
            self.signalled = time.monotonic()
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        else:
            self.monitor.stop()
        self._out.close()


def tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""


def argv_text(argv: Sequence[str]) -> str:
    return " ".join(argv)
