"""Table ids, their quoted and unquoted forms, the table filters and the grouping into tasks.

A :class:`TableId` is (catalog, schema, name) as JDBC metadata gives it: MySQL tables have a catalog (the
database) and no schema, PostgreSQL tables a schema and no catalog, SQLite tables neither. Its unquoted
form (``kafkadb.customers``) names the offset partition; its quoted form (```kafkadb`.`customers```) is
what the connector writes into each task's ``tables`` and what the SQL uses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cdc.api.errors import ConfigError

__all__ = ["TableFilter", "TableId", "group_partitions", "parse_table_list", "quote_identifier"]


def quote_identifier(name: str, quote: str) -> str:
    return f"{quote}{name.replace(quote, quote * 2)}{quote}"


@dataclass(frozen=True, order=True)
class TableId:
    catalog: str | None
    schema: str | None
    name: str

    def parts(self) -> list[str]:
        return [p for p in (self.catalog, self.schema, self.name) if p]

    def unquoted(self) -> str:
        """``db.table``: the ``table`` of the v1 offset partition."""
        return ".".join(self.parts())

    def quoted(self, quote: str) -> str:
        return ".".join(quote_identifier(p, quote) for p in self.parts())


def _split(text: str, sep: str, quotes: str) -> list[str]:
    """Split on ``sep`` outside quoted names (a doubled quote inside one is literal)."""
    parts: list[str] = []
    buf: list[str] = []
    open_quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if open_quote:
            buf.append(ch)
            if ch == open_quote:
                if i + 1 < len(text) and text[i + 1] == open_quote:
                    buf.append(ch)
                    i += 1
                else:
                    open_quote = ""
        elif ch in quotes:
            open_quote = ch
            buf.append(ch)
        elif ch == sep:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


def _unquote(part: str) -> str:
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] and part[0] in '`"':
        q = part[0]
        return part[1:-1].replace(q * 2, q)
    return part


def parse_table_list(text: str, with_catalog: bool) -> list[TableId]:
    """The task's ``tables`` back into ids. ``with_catalog``: a two-part name is catalog.table (MySQL)."""
    out: list[TableId] = []
    for item in _split(text, ",", '`"'):
        if not item.strip():
            continue
        names = [_unquote(p) for p in _split(item.strip(), ".", '`"')]
        if len(names) == 1:
            out.append(TableId(None, None, names[0]))
        elif len(names) == 2:
            out.append(
                TableId(names[0], None, names[1]) if with_catalog else TableId(None, names[0], names[1])
            )
        else:
            out.append(TableId(names[-3], names[-2], names[-1]))
    return out


@dataclass(frozen=True)
class TableFilter:
    """Confluent's table selection: exact white/black lists, or include/exclude regexes (10.8.5+)."""

    whitelist: Sequence[str] = ()
    blacklist: Sequence[str] = ()
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()

    @staticmethod
    def _names(table: TableId) -> set[str]:
        return {table.unquoted(), table.quoted("`"), table.quoted('"'), table.name}

    def _listed(self, table: TableId, entries: Sequence[str]) -> bool:
        names = self._names(table)
        return any(
            e.strip() in names or ".".join(_unquote(p) for p in _split(e.strip(), ".", '`"')) in names
            for e in entries
        )

    def accepts(self, table: TableId) -> bool:
        if self.whitelist:
            return self._listed(table, self.whitelist)
        if self.blacklist:
            return not self._listed(table, self.blacklist)
        fqn = table.unquoted()
        if self.include and not any(re.fullmatch(p, fqn) for p in self.include):
            return False
        return not (self.exclude and any(re.fullmatch(p, fqn) for p in self.exclude))

    def select(self, tables: Sequence[TableId]) -> list[TableId]:
        chosen = sorted(t for t in tables if self.accepts(t))
        by_name: dict[str, list[TableId]] = {}
        for t in chosen:
            by_name.setdefault(t.name, []).append(t)
        clashes = {n: ts for n, ts in by_name.items() if len(ts) > 1}
        if clashes:
            shown = "; ".join(
                f"{n}: {', '.join(t.unquoted() for t in ts)}" for n, ts in sorted(clashes.items())
            )
            raise ConfigError(
                "The same table name appears in more than one schema or catalog, so their records would go "
                f"to one topic ({shown}). Narrow the selection with table.whitelist, table.include.list, "
                "catalog.pattern or schema.pattern."
            )
        return chosen


def group_partitions(items: Sequence[TableId], groups: int) -> list[list[TableId]]:
    """Connect's ``ConnectorUtils.groupPartitions``: contiguous slices whose sizes differ by at most 1."""
    if groups <= 0:
        raise ValueError("Number of groups must be positive.")
    per, extra = divmod(len(items), groups)
    out: list[list[TableId]] = []
    start = 0
    for i in range(groups):
        size = per + (1 if i < extra else 0)
        out.append(list(items[start : start + size]))
        start += size
    return out
