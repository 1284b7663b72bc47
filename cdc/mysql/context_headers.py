"""Debezium's ``__debezium.context.*`` headers, on every record a connector task returns.

Debezium 3.x (``extended.headers.enabled``, on by default) adds four string headers to each record:
the logical name (``topic.prefix``), the task id, the connector's short name (``mysql``/``mariadb``)
and a run id, a time-ordered UUID (version 7) made when the task starts, so a consumer can tell the
records of one run from another's.
"""

from __future__ import annotations

from cdc.api.records import Header
from cdc.api.schema import STRING_SCHEMA
from cdc.ids import uuid7

__all__ = ["context_headers", "uuid7"]

_PREFIX = "__debezium.context."


def context_headers(
    logical_name: str, connector: str, task_id: str = "0", run_id: str | None = None
) -> list[Header]:
    """The headers in Debezium's order; ``Header`` is immutable, so one list serves every record.
    ``run_id``: the task's (also its OpenLineage run's); None: a new one."""
    items = (
        ("connectorLogicalName", logical_name),
        ("taskId", task_id),
        ("connectorName", connector),
        ("runId", run_id or str(uuid7())),
    )
    return [Header(_PREFIX + name, STRING_SCHEMA, value) for name, value in items]
