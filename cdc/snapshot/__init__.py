"""Parallel snapshots, the parts any source could use: chunk planning, progress, runners, the Kafka writer.

The MySQL connector's Spark job is :mod:`cdc.mysql.spark`. The names below are imported on first use
(PEP 562): the worker's REST layer imports :mod:`cdc.snapshot.spark_conf`, which must not bring the
chunk planner and the schema history with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from cdc.snapshot import chunks

    value = getattr(chunks, name)
    globals()[name] = value
    return value
