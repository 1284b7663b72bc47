"""DML logged as a statement: a writer session on ``binlog_format=STATEMENT`` (or MIXED writing a statement).

Such an event holds the statement, not the rows, so its changes cannot be captured (Debezium skips it too).
The binlog must be ROW for every writer, but ``binlog_format`` is a session variable: an application or a
tool may change it after validate checked the server's global value. :class:`StatementDml` recognises the
statement's target table; for a captured one it logs a WARN with the binlog position and the fix (at most
one per table every 10 s, with the number since) and counts it in
``cdc_mysql_streaming_statement_events_total{table}``.
"""

from __future__ import annotations

import logging
import re
import time

from cdc.history.model import TableId
from cdc.mysql.filters import Filters
from cdc.mysql.metrics import StreamingMetrics

__all__ = ["StatementDml", "dml_table"]

log = logging.getLogger("cdc.mysql.streaming")  # the streamer's lines, where operators look for them

WARN_EVERY_S = 10.0
_NAME = r"(?:`((?:[^`]|``)+)`|([\w$]+))"
# The statement's (first) target table: INSERT/REPLACE … INTO t, UPDATE t, DELETE … FROM t, LOAD DATA.
_DML = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)*(?:"
    r"(?:INSERT|REPLACE)(?:\s+(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE))*(?:\s+INTO)?"
    r"|UPDATE(?:\s+(?:LOW_PRIORITY|IGNORE))*"
    r"|DELETE(?:\s+(?:LOW_PRIORITY|QUICK|IGNORE))*\s+FROM"
    r"|LOAD\s+DATA\b.*?\bINTO\s+TABLE"
    rf")\s+{_NAME}(?:\s*\.\s*{_NAME})?",
    re.IGNORECASE | re.DOTALL,
)


def dml_table(query: str, database: str | None) -> TableId | bool | None:
    """The target table of a DML statement; None when it is DML without a known database; False when the
    statement is not DML."""
    match = _DML.match(query)
    if match is None:
        return False
    first = (match.group(1) or match.group(2) or "").replace("``", "`")
    second = (match.group(3) or match.group(4) or "").replace("``", "`")
    if second:
        return TableId(first, second)
    return TableId(database, first) if database else None


class StatementDml:
    def __init__(self, filters: Filters, metrics: StreamingMetrics) -> None:
        self.filters = filters
        self.metrics = metrics
        self._warned: dict[str, tuple[float, int]] = {}  # table → (last WARN, suppressed since)

    def on_query(self, query: str, database: str | None, file: str, pos: int) -> bool:
        """True when ``query`` is DML (warned about if its table is captured), False for anything else."""
        table_id = dml_table(query, database)
        if table_id is False:
            return False
        if isinstance(table_id, TableId) and not self.filters.table(table_id):
            return True
        key = str(table_id) if isinstance(table_id, TableId) else f"{database or '?'}.?"
        counts = self.metrics.statement_events
        counts[key] = counts.get(key, 0) + 1
        now = time.monotonic()
        last, suppressed = self._warned.get(key, (0.0, 0))
        if last and now - last < WARN_EVERY_S:
            self._warned[key] = (last, suppressed + 1)
            return True
        self._warned[key] = (now, 0)
        log.warning(
            "Statement-based DML on captured table %s at %s:%s is not captured: the writing session uses "
            "binlog_format=STATEMENT or MIXED, so the binlog holds the statement, not the rows%s. Set "
            "binlog_format=ROW (globally, in the server's configuration file and in any session that sets "
            "it) and re-capture the table (for example with an incremental snapshot): %.200s",
            key,
            file,
            pos,
            f" ({suppressed} more since the last warning)" if suppressed else "",
            query,
        )
        return True
