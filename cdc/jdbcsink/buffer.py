"""The batch: changes gathered across ``put`` calls, collapsed by key, cut into statement groups.

With a key and ``reduce`` (upsert or update mode, or Debezium's ``use.reduction.buffer``) only the last
change to each key of a table is kept: an insert then two updates is one upsert, an upsert then a delete
is a delete, a delete then an insert is an upsert. The result equals applying every change in order,
because each key's last change alone decides that key's final row. Without (plain inserts, no key),
changes keep their order and consecutive ones of the same kind and layout form one group.

:meth:`ChangeBuffer.groups` gives the groups in the order they must run: per table, a truncate first
cuts everything before it away; then deletes (which also frees unique values that later rows of the
batch may take), then upserts by layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cdc.jdbc.tables import TableId
from cdc.jdbcsink.changes import Change, Layout, Op

__all__ = ["ChangeBuffer", "Group"]


@dataclass
class Group:
    """Changes written by one statement kind into one table with one layout."""

    op: Op
    layout: Layout
    changes: list[Change] = field(default_factory=list)


class ChangeBuffer:
    def __init__(self, reduce: bool) -> None:
        self.reduce = reduce
        self._ordered: list[Change] = []
        self._by_key: dict[TableId, dict[tuple[Any, ...], Change]] = {}
        self._truncated: dict[TableId, Change] = {}
        self.records = 0

    def __len__(self) -> int:
        return self.records

    def add(self, change: Change) -> None:
        self.records += 1
        table = change.layout.table
        if change.op is Op.TRUNCATE:
            # everything before a truncate of the table is moot; it runs first, then what follows
            self._truncated[table] = change
            self._by_key.pop(table, None)
            self._ordered = [c for c in self._ordered if c.layout.table != table]
            return
        if self.reduce and change.key:
            per_table = self._by_key.setdefault(table, {})
            per_table.pop(change.key, None)  # re-inserted: the key's place is its last change
            per_table[change.key] = change
        else:
            self._ordered.append(change)

    def changes(self) -> list[Change]:
        """Every change kept, for reporting (in no particular order)."""
        out = list(self._truncated.values()) + list(self._ordered)
        for per_table in self._by_key.values():
            out.extend(per_table.values())
        return out

    def clear(self) -> None:
        self._ordered = []
        self._by_key = {}
        self._truncated = {}
        self.records = 0

    def groups(self) -> Iterator[Group]:
        for change in self._truncated.values():
            yield Group(Op.TRUNCATE, change.layout, [change])
        for per_table in self._by_key.values():
            deletes = [c for c in per_table.values() if c.op is Op.DELETE]
            yield from _consecutive(deletes, by_keys=True)
            yield from _consecutive(
                sorted((c for c in per_table.values() if c.op is Op.UPSERT), key=lambda c: id(c.layout)),
                by_keys=False,
            )
        yield from _consecutive(self._ordered, by_keys=False)


def _consecutive(changes: list[Change], by_keys: bool) -> Iterator[Group]:
    group: Group | None = None
    for change in changes:
        same = (
            group is not None
            and group.op is change.op
            and (
                group.layout is change.layout
                or (
                    (by_keys or change.op is Op.DELETE)
                    and group.layout.table == change.layout.table
                    and [k.name for k in group.layout.keys] == [k.name for k in change.layout.keys]
                )
            )
        )
        if not same:
            if group is not None:
                yield group
            group = Group(change.op, change.layout)
        assert group is not None
        group.changes.append(change)
    if group is not None:
        yield group
