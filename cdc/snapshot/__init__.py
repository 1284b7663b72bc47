"""Parallel snapshots: chunk planning and the Spark executor (``cdc snapshot``, ``snapshot.engine=spark``)."""

from cdc.snapshot.chunks import (
    Chunk,
    TablePlan,
    boundary_ranks,
    chunk_count,
    format_plan,
    plan_table,
    range_predicate,
)
from cdc.snapshot.engine import SnapshotOptions, SnapshotRun, SnapshotSummary, write_offsets

__all__ = [
    "Chunk",
    "SnapshotOptions",
    "SnapshotRun",
    "SnapshotSummary",
    "TablePlan",
    "boundary_ranks",
    "chunk_count",
    "format_plan",
    "plan_table",
    "range_predicate",
    "write_offsets",
]
