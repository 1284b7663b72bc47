"""B8: one UPDATE touching every row of dataset A (1 M by default): one transaction of 1 M row events.

B3's preparation and runs (:mod:`bench.scenarios.b3_binlog`) with one workload: ``bench.b8_bulk_update``
is loaded with dataset A without binlogging, then ``UPDATE bench.b8_bulk_update SET k = k + 1`` runs once
(autocommit: one transaction, one statement, as many row events as rows). Each contender replays that
range from its start; what counts is the time from resume to the last record, the peak RSS of the worker
(ours: the Python process; Debezium's: the JVM, heap ``-Xmx`` as connect-distributed.sh sets it), and
that nothing failed: the connector and its task still RUNNING after the drain, every key in the topic
(missing and duplicated keys as B3 counts them). Our target is a peak RSS of at most 256 MB (issue #30).
"""

from __future__ import annotations

from bench.core import Case, Contender, Sample, scenario
from bench.scenarios.b3_binlog import RUNNING, B3Binlog

__all__ = ["RSS_TARGET_MB", "B8BulkUpdate"]

RSS_TARGET_MB = 256
_B3 = {metric.key: metric for metric in B3Binlog.metrics}


@scenario
class B8BulkUpdate(B3Binlog):
    id = "B8"
    title = "one UPDATE touching every row (dataset A)"
    measures = (
        "One `UPDATE ... SET k = k + 1` of every row of dataset A (1 M rows, one transaction) replayed from "
        "its binlog position: seconds from resume to the last record in Kafka, events per second, the "
        "worker's peak RSS (ours: target at most 256 MB; Debezium's JVM), CPU-seconds per million events, "
        "and that nothing failed: connector and task RUNNING after the drain, no missing or duplicated key."
    )
    metrics = (
        *(
            _B3[key]
            for key in (
                "drain_s",
                "peak_rss_mb",
                "events_per_s_wall",
                "events_per_s",
                "cpu_s_per_m",
                "mysqld_cpu_s_per_m",
                "broker_cpu_s_per_m",
                "records",
                "missing",
                "duplicates",
            )
        ),
        RUNNING,
    )

    def cases(self) -> list[Case]:
        n = self.rows()
        return [Case("update", f"one UPDATE of {n:,} rows (one transaction)", {"workload": "bulk-update"})]

    def ran(self, case: Case, run: int, contender: Contender, topic: str, sample: Sample) -> bool:
        peak = sample.values.get("peak_rss_mb")
        if contender.role == "ours" and peak is not None and peak > RSS_TARGET_MB:
            sample.notes.append(
                f"{contender.name}: peak RSS {peak:.0f} MB in run {run + 1}, over the {RSS_TARGET_MB} MB aim"
            )
        return False
