"""Parallel snapshots, the parts any source could use: chunk planning, progress, runners, the Kafka writer.

The MySQL connector's Spark job is :mod:`cdc.mysql.spark`.
"""

from cdc.snapshot.chunks import (
    Chunk,
    TablePlan,
    boundary_ranks,
    chunk_count,
    format_plan,
    plan_table,
    range_predicate,
)

__all__ = [
    "Chunk",
    "TablePlan",
    "boundary_ranks",
    "chunk_count",
    "format_plan",
    "plan_table",
    "range_predicate",
]
