"""``snapshot.engine=spark``: the MySQL connector's initial snapshot done by the parallel engine.

The task calls :func:`spark_snapshot` where it would call ``Snapshotter.run(data=True)`` and uses the
result the same way: emit the heartbeat with ``result.offset`` (no ``snapshot`` flag) so the worker
commits it, then stream from it. The records go to Kafka from the Spark tasks directly, through the
same converters and transforms the worker would apply; the schema history is written through the
task's own :class:`SchemaState`.

The worker's converter settings reach the task as ``cdc.worker.<key>`` entries of its config (the
worker already passes ``cdc.worker.bootstrap.servers``); converters named in the connector's own config
need nothing more.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from cdc.mysql.snapshot import SnapshotResult

__all__ = ["spark_snapshot", "worker_props_from_task"]

WORKER_PREFIX = "cdc.worker."


def worker_props_from_task(props: Mapping[str, str]) -> dict[str, str]:
    return {k[len(WORKER_PREFIX) :]: v for k, v in props.items() if k.startswith(WORKER_PREFIX)}


def spark_snapshot(props: Mapping[str, str], schema: Any, stopping: threading.Event) -> SnapshotResult:
    """Run the Spark snapshot for a connector task; ``props`` is the task config (with ``name``)."""
    from cdc.snapshot.engine import SnapshotOptions, SnapshotRun

    raw = dict(props)
    options = SnapshotOptions(
        master=raw.get("snapshot.spark.master", "local[*]"),
        partitions=int(raw["snapshot.spark.partitions"]) if raw.get("snapshot.spark.partitions") else None,
        chunk_rows=int(raw.get("snapshot.spark.chunk.rows", "50000")),
        progress=False,
    )
    raw.setdefault("name", raw.get("topic.prefix", raw.get("database.server.name", "mysql")))
    job = SnapshotRun(raw, worker_props_from_task(raw), options)
    job.stopping = stopping
    try:
        summary = job.run(schema=schema)
    finally:
        if job.runner is not None:
            job.runner.close()
    return SnapshotResult(summary.end.with_(snapshot=False), summary.tables, summary.rows)
