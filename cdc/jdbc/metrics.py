"""The JDBC source's own metrics: per table (or ``query``), its polls, rows, query time and poll age.

Confluent's connector has none beyond Connect's task metrics; these answer what its users ask of the
logs: is each table polled, how long its query takes, how many rows it returns, how long since it was
last polled to the end (the JDBC source's lag). They are registered in :data:`cdc.metrics.REGISTRY`
per task and named ``cdc_jdbc_source_…{connector,task,table}``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cdc.metrics import REGISTRY, Reading

__all__ = ["JdbcSourceMetrics"]


@dataclass
class _Table:
    polls: int = 0
    rows: int = 0
    query_seconds: float = 0.0
    last_query_seconds: float = 0.0
    last_poll_end: float = 0.0


class JdbcSourceMetrics:
    """One task's tables; ``close`` removes them from the registry."""

    def __init__(self, connector: str, task: str, clock: Callable[[], float] = time.time) -> None:
        self.connector, self.task, self.clock = connector, task, clock
        self._tables: dict[str, _Table] = {}
        self._lock = threading.Lock()
        self._key = ("jdbc", connector, task)
        REGISTRY.add(self._key, self)

    def close(self) -> None:
        REGISTRY.remove(self._key)

    def _table(self, table: str) -> _Table:
        t = self._tables.get(table)
        if t is None:
            with self._lock:
                t = self._tables.setdefault(table, _Table())
        return t

    def query(self, table: str, seconds: float) -> None:
        """The table's query ran (execute until the first rows came back) in ``seconds``."""
        t = self._table(table)
        t.query_seconds += seconds
        t.last_query_seconds = seconds

    def rows(self, table: str, count: int) -> None:
        self._table(table).rows += count

    def poll_done(self, table: str) -> None:
        """The table's poll read its result to the end."""
        t = self._table(table)
        t.polls += 1
        t.last_poll_end = self.clock()

    def poll_age_seconds(self, table: str) -> float:
        """Seconds since the table was last polled to the end; -1 before that."""
        t = self._tables.get(table)
        return self.clock() - t.last_poll_end if t is not None and t.last_poll_end else -1.0

    def tables(self) -> list[str]:
        with self._lock:
            return sorted(self._tables)

    def readings(self) -> Iterator[Reading]:
        now = self.clock()
        with self._lock:
            tables = sorted(self._tables.items())
        for table, t in tables:
            labels = {"connector": self.connector, "task": self.task, "table": table}
            yield Reading(
                "cdc_jdbc_source_polls",
                t.polls,
                labels,
                "Polls that read a table's query to the end",
                counter=True,
            )
            yield Reading("cdc_jdbc_source_rows", t.rows, labels, "Rows read from the table", counter=True)
            yield Reading(
                "cdc_jdbc_source_query_seconds",
                t.query_seconds,
                labels,
                "Time spent running the table's query",
                counter=True,
            )
            yield Reading(
                "cdc_jdbc_source_last_query_seconds", t.last_query_seconds, labels, "The last query's time"
            )
            age = now - t.last_poll_end if t.last_poll_end else -1.0
            yield Reading(
                "cdc_jdbc_source_poll_age_seconds",
                age,
                labels,
                "Seconds since the table was last polled to the end (-1: never)",
            )
