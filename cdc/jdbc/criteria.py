"""The SQL of each mode, exactly as kafka-connect-jdbc's ``TimestampIncrementingCriteria`` writes it.

* bulk: nothing appended (the whole table every poll);
* incrementing: ``WHERE inc > ? ORDER BY inc ASC`` with the last id (-1 at first);
* timestamp: ``WHERE TS > ? AND TS < ? ORDER BY TS ASC`` with begin, end;
* timestamp+incrementing: ``WHERE TS < ? AND ((TS = ? AND inc > ?) OR TS > ?) ORDER BY TS,inc ASC`` with
  end, begin, last id, begin.

``TS`` is the column, or ``COALESCE(c1,c2,…)`` for several; columns are qualified with the quoted table in
table mode and bare in query mode; ``query.suffix`` follows after a space. The look-back extra turns the
incrementing clause into ``WHERE (inc > ? OR inc IN (?,…)) ORDER BY inc ASC``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cdc.jdbc.config import BULK, INCREMENTING, TIMESTAMP, TIMESTAMP_INCREMENTING
from cdc.jdbc.dialects import Dialect
from cdc.jdbc.tables import TableId

__all__ = ["Criteria"]


@dataclass(frozen=True)
class Criteria:
    """The parts of one querier's SQL; :meth:`sql` renders it for its dialect."""

    dialect: Dialect
    mode: str
    table: TableId | None
    query: str = ""
    incrementing_column: str | None = None
    timestamp_columns: Sequence[str] = ()
    suffix: str = ""

    def column(self, name: str) -> str:
        if self.table is None:
            return self.dialect.ident(name)
        return f"{self.dialect.table_sql(self.table)}.{self.dialect.ident(name)}"

    def timestamp_sql(self) -> str:
        cols = [self.dialect.timestamp_expr(self.column(c)) for c in self.timestamp_columns]
        return cols[0] if len(cols) == 1 else f"COALESCE({','.join(cols)})"

    def base(self) -> str:
        if self.table is None:
            return self.dialect.text(self.query)
        return f"SELECT * FROM {self.dialect.table_sql(self.table)}"

    def sql(self, gaps: int = 0) -> str:
        p = self.dialect.placeholder
        out = [self.base()]
        if self.mode == INCREMENTING:
            inc = self.column(self.incrementing_column or "")
            if gaps:
                out.append(f" WHERE ({inc} > {p} OR {inc} IN ({','.join([p] * gaps)})) ORDER BY {inc} ASC")
            else:
                out.append(f" WHERE {inc} > {p} ORDER BY {inc} ASC")
        elif self.mode == TIMESTAMP:
            ts = self.timestamp_sql()
            out.append(f" WHERE {ts} > {p} AND {ts} < {p} ORDER BY {ts} ASC")
        elif self.mode == TIMESTAMP_INCREMENTING:
            ts, inc = self.timestamp_sql(), self.column(self.incrementing_column or "")
            out.append(
                f" WHERE {ts} < {p} AND (({ts} = {p} AND {inc} > {p}) OR {ts} > {p}) ORDER BY {ts},{inc} ASC"
            )
        elif self.mode != BULK:
            raise ValueError(f"Unknown mode {self.mode}")
        if self.suffix:
            out.append(" " + self.dialect.text(self.suffix))
        return "".join(out)
