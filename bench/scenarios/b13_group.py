"""B13: a worker group at scale: connectors created over REST, then a rolling restart of every worker.

Each run starts ``workers`` distributed workers (default 5) in one fresh group (its own ``group.id`` and
internal topics), creates the case's connectors through the first worker, and times until every
connector and every task is RUNNING (``GET /connectors?expand=status`` on a live worker). Then, worker by
worker, it stops the worker (SIGTERM, as an operator's restart does), starts it again with the same
properties, and times from the stop until the group again shows every connector and task RUNNING: one
figure per step, reported as the median and the slowest step. A step is timed twice: from the worker's
exit (the stop has returned: what the published figures have always measured) and from the SIGTERM (when
an operator's restart begins; a worker that takes longer to exit after leaving the group gains nothing
from it here).

Cases (``--set cases=file`` picks one):

* ``file``: ``tasks`` FileStreamSource connectors (one task each, the only source in Kafka's own jars),
  each tailing a file of its own with 20 lines: the load both workers can run;
* ``mixed``: the issue's load, ``connectors`` connectors with ``tasks`` tasks: half of them
  FileStreamSource, half Confluent's JdbcSourceConnector (``mode=bulk``, one poll an hour) over
  ``tables`` tables of ``bench_b13`` each, one task per table. Kafka Connect cannot run it: Confluent's
  JDBC jar is not on Maven Central (see B11), so that column says "not run".

Both workers get the same properties. ``scheduled.rebalance.max.delay.ms`` stays at the workers'
default (300 000) unless ``--set delay_ms=N``: at that default Kafka Connect holds a departed worker's
tasks unassigned until the delay ends, even after the restarted worker joined (seen: ``delay=284989`` in
its assignment), so each step lasts about five minutes; ``delay_ms=0`` is its setting for fast
reassignment. Options: ``workers``, ``connectors``, ``tasks`` (defaults 5, 50, 200), ``delay_ms``,
``timeout`` (seconds a step may take, default 600).
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable
from functools import partial
from pathlib import Path
from statistics import median
from typing import Any, ClassVar

import requests

from bench.core import Case, Contender, Metric, Sample, Scenario, Unavailable, scenario
from bench.stack import Stack, unique
from bench.workers import WorkerProcess, WorkerSpec, free_port, worker_properties

__all__ = ["B13Group", "GroupContender", "Load"]

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
JDBC_SOURCE = "io.confluent.connect.jdbc.JdbcSourceConnector"
DATABASE = "bench_b13"


class Load:
    """The connector configs of a case: name → config, and the tasks they make."""

    def __init__(self, configs: dict[str, dict[str, str]], tasks: int, topics: list[str]) -> None:
        self.configs, self.tasks, self.topics = configs, tasks, topics


@scenario
class B13Group(Scenario):
    id = "B13"
    title = "worker group: connectors created, then a rolling restart of every worker"
    measures = (
        "Seconds from the first `POST /connectors` until every connector and task of the load is RUNNING, "
        "then, for each worker in turn, seconds from its stop (its exit, and also from the SIGTERM) until "
        "the group, with the worker started again, shows every connector and task RUNNING once more "
        "(median and slowest step). "
        "`workers` distributed workers (default 5) in a fresh group per run."
    )
    metrics = (
        Metric("create_s", "create all to all RUNNING", "s", "lower", 1),
        Metric("restart_median_s", "rolling restart: median step, from the exit", "s", "lower", 1),
        Metric("restart_max_s", "rolling restart: slowest step, from the exit", "s", "lower", 1),
        Metric("restart_total_s", "rolling restart: all steps, from the exit", "s", "lower", 1),
        Metric("restart_term_median_s", "rolling restart: median step, from the SIGTERM", "s", "lower", 1),
        Metric("restart_term_max_s", "rolling restart: slowest step, from the SIGTERM", "s", "lower", 1),
        Metric("tasks", "tasks RUNNING", "", "higher", 0, ratio=False),
    )

    def option(self, key: str, default: int) -> int:
        return int(self.ctx.options.get(key, str(default)))

    def cases(self) -> list[Case]:
        tasks, connectors = self.option("tasks", 200), self.option("connectors", 50)
        return [
            Case("file", f"{tasks} FileStreamSource connectors, {tasks} tasks", {"tasks": tasks}),
            Case(
                "mixed",
                f"{connectors} connectors (file and JDBC sources), {tasks} tasks",
                {"tasks": tasks, "connectors": connectors},
            ),
        ]

    def prepare(self, case: Case) -> None:
        if case.key != "mixed":
            return
        jdbc = case.params["connectors"] // 2
        tables = self.tables(case)
        if tables * jdbc + (case.params["connectors"] - jdbc) != case.params["tasks"]:
            self.ctx.log(
                f"[bench]   B13: {jdbc} JDBC sources x {tables} tables do not make exactly the tasks"
            )
        stack = Stack(self.ctx.repo)
        statements = [f"CREATE DATABASE IF NOT EXISTS {DATABASE}"]
        for t in range(tables):
            statements.append(
                f"CREATE TABLE IF NOT EXISTS {DATABASE}.t{t} (id INT PRIMARY KEY, v VARCHAR(20))"
            )
            statements.append(f"INSERT IGNORE INTO {DATABASE}.t{t} VALUES (1, 'a'), (2, 'b')")
        stack.sql(";\n".join(statements) + ";")

    def tables(self, case: Case) -> int:
        jdbc = case.params["connectors"] // 2
        return max(1, (case.params["tasks"] - (case.params["connectors"] - jdbc)) // max(jdbc, 1))

    def load(self, case: Case, group: str, workdir: Path) -> Load:
        configs: dict[str, dict[str, str]] = {}
        files = (
            case.params["tasks"]
            if case.key == "file"
            else case.params["connectors"] - case.params["connectors"] // 2
        )
        for i in range(files):
            data = workdir / f"{group}-f{i}.txt"
            data.write_text("".join(f"line {n}\n" for n in range(20)))
            configs[f"{group}-f{i}"] = {
                "connector.class": FILE_SOURCE,
                "tasks.max": "1",
                "file": str(data),
                "topic": f"{group}-files",
            }
        tasks, topics = files, [f"{group}-files"]
        if case.key == "mixed":
            stack = Stack(self.ctx.repo)
            tables = self.tables(case)
            for i in range(case.params["connectors"] // 2):
                configs[f"{group}-j{i}"] = {
                    "connector.class": JDBC_SOURCE,
                    "tasks.max": str(tables),
                    "connection.url": f"jdbc:mysql://{stack.mysql_host}:{stack.mysql_port}/{DATABASE}",
                    "connection.user": "cdc",
                    "connection.password": "cdc",
                    "table.whitelist": ",".join(f"t{t}" for t in range(tables)),
                    "mode": "bulk",
                    "poll.interval.ms": "3600000",
                    "topic.prefix": f"{group}-j{i}-",
                }
                tasks += tables
                topics += [f"{group}-j{i}-t{t}" for t in range(tables)]
        return Load(configs, tasks, topics)


def _all_running(url: str, load: Load, gone: set[str]) -> bool:
    """Every connector and task of ``load`` RUNNING, none on a worker of ``gone`` (``host:port``): a
    status the stopped worker wrote before it went does not count."""
    try:
        r = requests.get(url + "/connectors?expand=status", timeout=10)
    except requests.RequestException:
        return False
    if r.status_code != 200:
        return False
    body: dict[str, Any] = r.json()
    running = 0
    for name in load.configs:
        status = body.get(name, {}).get("status", {})
        connector = status.get("connector", {})
        if connector.get("state") != "RUNNING" or connector.get("worker_id") in gone:
            return False
        running += sum(
            1
            for t in status.get("tasks", [])
            if t.get("state") == "RUNNING" and t.get("worker_id") not in gone
        )
    return running == load.tasks


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.25)
    raise TimeoutError(f"{what} after {timeout} s")


class GroupContender(Contender):
    """One kind of worker in B13; subclasses say how to start one."""

    scenario_id: ClassVar[str] = "B13"
    runs_jdbc: ClassVar[bool] = True

    @abstractmethod
    def spec(self, props: dict[str, str], workdir: Path) -> WorkerSpec: ...

    def _spec(self, group: str, name: str) -> WorkerSpec:
        """A worker of the group on a port of its own, its files in a directory of its own."""
        workdir = self.ctx.workdir / f"{group}-{name}"
        workdir.mkdir(parents=True, exist_ok=True)
        extra = {}
        if "delay_ms" in self.ctx.options:
            extra["scheduled.rebalance.max.delay.ms"] = self.ctx.options["delay_ms"]
        props = worker_properties(Stack(self.ctx.repo).bootstrap, group, free_port(), extra)
        return self.spec(props, workdir)

    def run(self, case: Case, run: int) -> Sample:
        if case.key == "mixed" and not self.runs_jdbc:
            raise Unavailable("Confluent's JdbcSourceConnector jar is not on Maven Central (see B11)")
        b13: B13Group = self.scenario  # type: ignore[assignment]
        stack = Stack(self.ctx.repo)
        group = unique(f"bench-b13-{self.name}")
        timeout = float(b13.option("timeout", 600))
        specs = [self._spec(group, f"w{w}") for w in range(b13.option("workers", 5))]
        load = b13.load(case, group, self.ctx.workdir)
        workers: list[WorkerProcess] = []
        try:
            for spec in specs:
                workers.append(WorkerProcess(spec))
            for worker in workers:
                worker.wait_ready()
            started = time.monotonic()
            for name, config in load.configs.items():
                workers[0].create_connector(name, config, retries=timeout)
            _wait(partial(_all_running, workers[0].url, load, set()), timeout, "not all RUNNING")
            create = time.monotonic() - started
            steps, term_steps = [], []
            for i in range(len(workers)):
                # the worker comes back on another port, as a restarted pod on another address: its
                # tasks must be RUNNING under the new identity, not in a status the old one wrote
                gone = {f"127.0.0.1:{workers[i].spec.port}"}
                workers[i].stop()
                stopped = time.monotonic()
                signalled = workers[i].signalled or stopped
                workers[i] = WorkerProcess(self._spec(group, f"w{i}r"))
                other = workers[(i + 1) % len(workers)]
                _wait(partial(_all_running, other.url, load, gone), timeout, f"step {i + 1}: not all RUNNING")
                done = time.monotonic()
                steps.append(done - stopped)
                term_steps.append(done - signalled)
            return Sample(
                {
                    "create_s": create,
                    "restart_median_s": median(steps),
                    "restart_max_s": max(steps),
                    "restart_total_s": sum(steps),
                    "restart_term_median_s": median(term_steps),
                    "restart_term_max_s": max(term_steps),
                    "tasks": float(load.tasks),
                },
                notes=[
                    f"{self.name}: steps {', '.join(f'{s:.1f}' for s in steps)} s from the exit, "
                    f"{', '.join(f'{s:.1f}' for s in term_steps)} s from the SIGTERM",
                    " ".join(specs[0].argv),
                ],
            )
        finally:
            for worker in workers:
                worker.stop()
            stack.delete_topics([*specs[0].internal_topics, *load.topics])
