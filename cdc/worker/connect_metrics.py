"""Kafka Connect's worker, connector and task metrics, named as the Prometheus JMX exporter names them.

Connect registers MBeans such as ``kafka.connect:type=source-task-metrics,connector="c",task="0"``
with the attribute ``source-record-poll-rate``; the JMX exporter's default rule turns the domain, the
first key's value and the attribute into the name and the other keys into labels:
``kafka_connect_source_task_metrics_source_record_poll_rate{connector="c",task="0"}``. Dashboards and
alerts written against a Connect cluster scraped that way read these unchanged. String attributes
(``status``) follow the rule most deployments add (Strimzi's): ``kafka_connect_connector_status{connector,
status}`` and ``kafka_connect_connector_task_status{connector,task,status}`` with the value 1, the status
lower-cased as Connect's MBean shows it.

As in Connect, a worker reports what it runs: the connectors and tasks assigned to it, the rebalances it
took part in. Averages and maxima are over the last minute and NaN when nothing was recorded in it
(Connect's sensors answer NaN too); rates are per second.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Protocol

from cdc.metrics import Reading
from cdc.worker.membership import Membership
from cdc.worker.metrics import SinkTaskMetrics, SourceTaskMetrics, TaskMetrics, WindowStat
from cdc.worker.stores.base import StatusBackingStore, TaskId
from cdc.worker.worker import Worker, connector_kind

__all__ = ["ConnectMetrics"]

_TASK_STATES = ("running", "paused", "failed", "unassigned", "destroyed", "restarting")


class _Herder(Protocol):
    worker: Worker
    status_store: StatusBackingStore
    membership: Membership


def _name(mbean_type: str, attribute: str) -> str:
    return f"kafka_connect_{mbean_type}_{attribute}".replace("-", "_")


class ConnectMetrics:
    """A :class:`~cdc.metrics.MetricSource` over one herder's worker, stores and membership."""

    def __init__(self, herder: _Herder) -> None:
        self.herder = herder

    def readings(self) -> Iterator[Reading]:
        yield from self._worker()
        yield from self._rebalances()
        for name in self.herder.worker.connector_names():
            yield from self._connector(name)
        for task_id in sorted(self.herder.worker.task_ids(), key=lambda t: (t.connector, t.task)):
            yield from self._task(task_id)

    # -- connect-worker-metrics -------------------------------------------------------------------------
    def _worker(self) -> Iterator[Reading]:
        worker = self.herder.worker
        t = "connect-worker-metrics"
        yield Reading(
            _name(t, "connector-count"), len(worker.connector_names()), {}, "Connectors run in this worker"
        )
        yield Reading(_name(t, "task-count"), len(worker.task_ids()), {}, "Tasks run in this worker")
        for what, counts in (
            ("connector", worker.metrics.connector_startup),
            ("task", worker.metrics.task_startup),
        ):
            attempts = counts["attempts"]
            for outcome in ("attempts", "success", "failure"):
                yield Reading(
                    _name(t, f"{what}-startup-{outcome}"),
                    counts[outcome],
                    {},
                    f"{what.capitalize()} start-ups this worker has attempted"
                    if outcome == "attempts"
                    else f"{what.capitalize()} start-ups that ended in {outcome}",
                    counter=True,
                )
            for outcome in ("success", "failure"):
                share = counts[outcome] / attempts if attempts else 0.0
                yield Reading(
                    _name(t, f"{what}-startup-{outcome}-percentage"),
                    share,
                    {},
                    f"Share of {what} start-ups that ended in {outcome} (0 to 1)",
                )
        by_connector: dict[str, Counter[str]] = {}
        for task_id in worker.task_ids():
            status = self.herder.status_store.get_task(task_id)
            state = status.state.value.lower() if status is not None else "unassigned"
            by_connector.setdefault(task_id.connector, Counter())[state] += 1
        for connector, states in sorted(by_connector.items()):
            labels = {"connector": connector}
            yield Reading(
                _name(t, "connector-total-task-count"),
                sum(states.values()),
                labels,
                "Tasks of the connector here",
            )
            for state in _TASK_STATES:
                yield Reading(
                    _name(t, f"connector-{state}-task-count"),
                    states[state],
                    labels,
                    f"Tasks of the connector in state {state.upper()} on this worker",
                )

    def _rebalances(self) -> Iterator[Reading]:
        r = self.herder.membership.rebalances
        t = "connect-worker-rebalance-metrics"
        yield Reading(
            _name(t, "completed-rebalances"), r.completed_total, {}, "Rebalances completed", counter=True
        )
        yield Reading(_name(t, "epoch"), r.epoch, {}, "The group generation of the last rebalance")
        yield Reading(_name(t, "rebalancing"), float(r.rebalancing), {}, "1 while a rebalance is under way")
        yield Reading(_name(t, "rebalance-avg-time-ms"), r.time_ms.avg(), {}, "Average rebalance time (ms)")
        yield Reading(_name(t, "rebalance-max-time-ms"), r.time_ms.max(), {}, "Longest rebalance time (ms)")
        yield Reading(
            _name(t, "time-since-last-rebalance-ms"),
            r.time_since_last_ms(),
            {},
            "Since the last rebalance (ms)",
        )

    # -- connector-metrics --------------------------------------------------------------------------------
    def _connector(self, name: str) -> Iterator[Reading]:
        status = self.herder.status_store.get(name)
        if status is None:
            return
        kind = connector_kind(self.herder.worker.connector_class(name))
        yield Reading(
            "kafka_connect_connector_status",
            1,
            {"connector": name, "status": status.state.value.lower(), "connector_type": kind},
            "The connector's state (1 for the state it is in)",
        )

    # -- connector-task-metrics and the source or sink task metrics ---------------------------------------
    def _task(self, task_id: TaskId) -> Iterator[Reading]:
        task = self.herder.worker.task(task_id)
        if task is None:
            return
        labels = {"connector": task_id.connector, "task": str(task_id.task)}
        status = self.herder.status_store.get_task(task_id)
        state = status.state.value.lower() if status is not None else "unassigned"
        yield Reading(
            "kafka_connect_connector_task_status",
            1,
            {**labels, "status": state},
            "The task's state (1 for the state it is in)",
        )
        yield from self._task_common(task.metrics, labels)
        if isinstance(task.metrics, SourceTaskMetrics):
            yield from self._source(task.metrics, labels)
        elif isinstance(task.metrics, SinkTaskMetrics):
            yield from self._sink(task.metrics, labels)

    def _task_common(self, m: TaskMetrics, labels: dict[str, str]) -> Iterator[Reading]:
        t = "connector-task-metrics"
        ok, failed = m.commit_percentages()
        yield Reading(
            _name(t, "offset-commit-success-percentage"), ok, labels, "Share of offset commits that succeeded"
        )
        yield Reading(
            _name(t, "offset-commit-failure-percentage"),
            failed,
            labels,
            "Share of offset commits that failed",
        )
        yield from _stat(t, "offset-commit", "time-ms", m.commit_time_ms, labels, "offset commit time (ms)")
        yield from _stat(t, "batch-size", "", m.batch_size, labels, "records in a batch")
        # Totals Connect keeps only as percentages; a counter survives scrapes far apart.
        for outcome, total in (("success", m.commit_success_total), ("failure", m.commit_failure_total)):
            yield Reading(
                "cdc_connector_task_offset_commit",
                total,
                {**labels, "outcome": outcome},
                "Offset commits by outcome",
                counter=True,
            )

    def _source(self, m: SourceTaskMetrics, labels: dict[str, str]) -> Iterator[Reading]:
        t = "source-task-metrics"
        yield Reading(_name(t, "source-record-poll-rate"), m.poll.rate(), labels, "Records polled per second")
        yield Reading(_name(t, "source-record-poll"), m.poll.total, labels, "Records polled", counter=True)
        yield Reading(
            _name(t, "source-record-write-rate"),
            m.write.rate(),
            labels,
            "Records written to Kafka per second",
        )
        yield Reading(
            _name(t, "source-record-write"), m.write.total, labels, "Records written to Kafka", counter=True
        )
        yield from _stat(
            t, "poll-batch", "time-ms", m.poll_batch_time_ms, labels, "time to poll a batch (ms)"
        )

    def _sink(self, m: SinkTaskMetrics, labels: dict[str, str]) -> Iterator[Reading]:
        t = "sink-task-metrics"
        yield Reading(
            _name(t, "sink-record-read-rate"), m.read.rate(), labels, "Records read from Kafka per second"
        )
        yield Reading(
            _name(t, "sink-record-read"), m.read.total, labels, "Records read from Kafka", counter=True
        )
        yield Reading(
            _name(t, "sink-record-send-rate"), m.send.rate(), labels, "Records put into the task per second"
        )
        yield Reading(
            _name(t, "sink-record-send"), m.send.total, labels, "Records put into the task", counter=True
        )
        yield Reading(
            _name(t, "sink-record-lag-max"), m.record_lag.max(), labels, "Largest lag behind the log end"
        )
        yield Reading(
            _name(t, "partition-count"), m.partition_count, labels, "Partitions assigned to the task"
        )
        yield from _stat(t, "put-batch", "time-ms", m.put_batch_time_ms, labels, "time to put a batch (ms)")


def _stat(
    t: str, what: str, unit: str, stat: WindowStat, labels: dict[str, str], doc: str
) -> Iterator[Reading]:
    """``<what>-avg-<unit>`` and ``<what>-max-<unit>`` as Connect names them (``batch-size-avg``)."""
    suffix = f"-{unit}" if unit else ""
    yield Reading(_name(t, f"{what}-avg{suffix}"), stat.avg(), labels, f"Average {doc} over the last minute")
    yield Reading(_name(t, f"{what}-max{suffix}"), stat.max(), labels, f"Largest {doc} over the last minute")
