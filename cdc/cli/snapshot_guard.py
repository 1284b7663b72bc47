"""Before ``cdc snapshot`` writes anything: is the connector running, and would Spark be worth its start?

**Running.** A snapshot run while the connector's task runs writes an ``op=r`` per row beside the task's
records and then overwrites the offsets the task keeps committing: duplicates, and an offset that no longer
matches what the task has sent. So the command refuses when the connector is RUNNING, or PAUSED (its
task holds offsets it commits again when resumed or stopped), or any of its tasks is RUNNING or PAUSED,
in the worker group its worker file names:

* a distributed worker file (``group.id``, ``status.storage.topic``): the statuses on the status topic,
  read to its end as the workers read it (without creating it, and without joining the group);
* a standalone worker file (``offset.storage.file.filename``): the worker's own REST API at its
  ``listeners`` (or ``rest.host.name``/``rest.port``): the standalone worker keeps statuses in memory.

The message gives the command that stops the connector (``PUT /connectors/<name>/stop``, Connect 3.5+: the
tasks stop and commit, the config stays) and ``--force`` for the rare case (a status left RUNNING by
workers that were all killed). A worker that cannot be asked (no status topic, nothing listening) is not
running the connector.

**Spark or the connector's own snapshot.** Spark's start-up is a fixed cost the connector's own reader
does not pay; below :func:`cdc.mysql.snapshot_engine.spark_worth_rows` rows for the master's cores (the
break-even the connector's ``snapshot.engine=auto`` uses, from B1's measurements) the command says that
the connector's own snapshot (just start the connector) would be faster, and goes on.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc.mysql.snapshot_engine import LOCAL_ROWS_S, SPARK_START_S, estimated_rows, spark_worth_rows

__all__ = [
    "RunningConnector",
    "built_in_would_be_faster",
    "estimated_rows",
    "running_connector",
]

log = logging.getLogger("cdc.snapshot")

ACTIVE = frozenset({"RUNNING", "PAUSED"})


@dataclass(frozen=True)
class RunningConnector:
    """The connector as its worker group reports it, when it is active there."""

    name: str
    state: str
    tasks: dict[int, str] = field(default_factory=dict)
    worker_id: str = ""
    where: str = ""
    rest_url: str = ""

    def refusal(self) -> str:
        tasks = ", ".join(f"task {i} {s}" for i, s in sorted(self.tasks.items())) or "no task"
        worker = f" on worker {self.worker_id}" if self.worker_id else ""
        url = self.rest_url or "http://<a worker of the group>:8083"
        return (
            f"The connector '{self.name}' is {self.state}{worker} ({tasks}; {self.where}). A snapshot "
            "now would write a second op=r record for every row beside its task's records, and then "
            "overwrite the offsets the task keeps committing. Stop it first (its tasks stop and commit, "
            "its config stays):\n"
            f"    curl -X PUT {url}/connectors/{self.name}/stop\n"
            "then run this command again, and resume the connector afterwards with\n"
            f"    curl -X PUT {url}/connectors/{self.name}/resume\n"
            "(--force runs the snapshot anyway, e.g. when the status is stale because every worker of "
            "the group was killed.)"
        )


def _active(state: str, tasks: Mapping[int, str]) -> bool:
    """RUNNING or PAUSED, or a task that is. A STOPPED connector has shut its tasks down, whatever their
    last status says (a task's last status can lag behind the stop on the status topic)."""
    if state == "STOPPED":
        return False
    return state in ACTIVE or bool(ACTIVE & set(tasks.values()))


def running_connector(worker: Mapping[str, Any], name: str, timeout: float = 15.0) -> RunningConnector | None:
    """The connector ``name`` when it is active in the worker group of ``worker`` (a worker file's
    properties); None when it is not, or when no worker of that file is there to run it."""
    if str(worker.get("status.storage.topic") or "").strip() and str(worker.get("group.id") or "").strip():
        return _from_status_topic(worker, name, timeout)
    return _from_standalone_rest(worker, name, timeout)


def _advertised_url(worker: Mapping[str, Any]) -> str:
    """The REST address to put in the message (the worker file's first listener, loopback for 0.0.0.0)."""
    from cdc.worker.rest.settings import Listener, parse_listeners

    try:
        if worker.get("listeners") is not None:
            listener = parse_listeners(str(worker["listeners"]))[0]
        else:
            listener = Listener(
                "http", str(worker.get("rest.host.name") or ""), int(worker.get("rest.port") or 8083)
            )
    except Exception:
        return "http://localhost:8083"
    host = str(worker.get("rest.advertised.host.name") or listener.host)
    if host in ("", "0.0.0.0", "::"):
        host = "localhost"
    if ":" in host:
        host = f"[{host}]"
    return f"{listener.scheme}://{host}:{listener.port or 8083}"


def _bootstrap(worker: Mapping[str, Any]) -> str:
    value = worker.get("bootstrap.servers", "localhost:9092")
    return ",".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)


def _from_status_topic(worker: Mapping[str, Any], name: str, timeout: float) -> RunningConnector | None:
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    from cdc.worker.stores import records as r
    from cdc.worker.stores.kafka import worker_client_config

    topic = str(worker["status.storage.topic"]).strip()
    group = str(worker["group.id"]).strip()
    consumer = Consumer(
        {
            **worker_client_config(worker),
            "bootstrap.servers": _bootstrap(worker),
            "group.id": f"cdc-snapshot-status-check-{group}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    connector: tuple[str, str] | None = None  # state, worker id
    tasks: dict[int, str] = {}
    try:
        metadata = consumer.list_topics(topic, timeout=timeout).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            return None  # no status topic: this group never ran
        wanted: list[Any] = []
        for p in metadata.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            if high > low:
                wanted.append(TopicPartition(topic, p, low))
        ends = {tp.partition: consumer.get_watermark_offsets(tp, timeout=timeout)[1] for tp in wanted}
        if not wanted:
            return None
        consumer.assign(wanted)
        left = set(ends)
        deadline = time.monotonic() + timeout
        while left and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    left.discard(message.partition())
                continue
            if (message.offset() or 0) >= ends[message.partition() or 0] - 1:
                left.discard(message.partition())
            key = (message.key() or b"").decode("utf-8", errors="replace")
            value = message.value()
            task = r.parse_task_status_key(key)
            if task is not None and task.connector == name:
                if value is None:
                    tasks.pop(task.task, None)
                else:
                    tasks[task.task] = r.decode_task_status(task, r.decode_json(value)).state.value
                continue
            if r.parse_connector_status_key(key) == name:
                if value is None:  # deleted: its tasks too
                    connector, tasks = None, {}
                else:
                    status = r.decode_connector_status(name, r.decode_json(value))
                    connector = (status.state.value, status.worker_id)
        if left:
            raise TimeoutError(f"the status topic {topic} could not be read to its end in {timeout:.0f} s")
    finally:
        consumer.close()
    state = connector[0] if connector else "UNASSIGNED"
    if not _active(state, tasks):
        return None
    return RunningConnector(
        name,
        state,
        tasks,
        connector[1] if connector else "",
        f"group '{group}', status topic '{topic}'",
        _advertised_url(worker),
    )


def _from_standalone_rest(worker: Mapping[str, Any], name: str, timeout: float) -> RunningConnector | None:
    import requests

    url = _advertised_url(worker)
    try:
        # the worker's own address, typically loopback; a self-signed certificate is fine for a status read
        response = requests.get(f"{url}/connectors/{name}/status", timeout=min(timeout, 5.0), verify=False)
    except requests.RequestException:
        return None  # nothing answers there: no standalone worker of this file runs
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        log.warning(
            "Could not ask the standalone worker at %s whether '%s' runs (HTTP %d); make sure it does not",
            url,
            name,
            response.status_code,
        )
        return None
    try:
        body = response.json()
        state = str(body["connector"]["state"])
        tasks = {int(t["id"]): str(t["state"]) for t in body.get("tasks", [])}
        worker_id = str(body["connector"].get("worker_id") or "")
    except (ValueError, KeyError, TypeError):
        log.warning(
            "The worker at %s answered an unexpected status: %s", url, json.dumps(response.text[:200])
        )
        return None
    if not _active(state, tasks):
        return None
    return RunningConnector(name, state, tasks, worker_id, f"the standalone worker at {url}", url)


def built_in_would_be_faster(rows: int, cores: int) -> str | None:
    """The advice printed before Spark starts on ``cores`` cores when the tables are small (None when
    Spark is worth it)."""
    worth = spark_worth_rows(cores)
    if worth is not None and rows >= worth:
        return None
    below = f"below about {worth:,} rows" if worth is not None else "at any size"
    return (
        f"The captured tables hold about {rows:,} rows (the server's estimate): the connector's own "
        f"snapshot (snapshot.engine=auto, the default, or local; just start the connector) would be "
        f"faster. Spark's start-up takes about {SPARK_START_S:.0f} s, which the built-in reader's "
        f"~{LOCAL_ROWS_S / 1000:.0f}k rows/s outweighs {below} on {cores} core(s) (docs/benchmarks.md, "
        "B1). Going on with Spark."
    )
