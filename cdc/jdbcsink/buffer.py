"""The batch: changes gathered across ``put`` calls, collapsed by key, cut into statement groups.

With a key and ``reduce`` (upsert or update mode, or Debezium's ``use.reduction.buffer``) only the last
change to each key of a table is kept: an insert then two updates is one upsert, an upsert then a delete
is a delete, a delete then an insert is an upsert. The result equals applying every change in order,
because each key's last change alone decides that key's final row. Without (plain inserts, no key),
changes keep their order and consecutive ones of the same kind and layout form one group.

**Secondary unique keys.** A collapsed key keeps the place of its *first* change in the batch. That
alone is not enough when the table has a unique key besides the primary key: rows swapping a unique
value (A x→tmp, B y→x, A tmp→y) cannot be written as final states in any order. So the task asks
:meth:`ChangeBuffer.must_flush_before` first, and writes the batch before adding a change that would
collapse into an earlier change of its key with other values in a unique key (or into a delete, whose
values are unknown). Then no row of a batch takes a unique value another row still holds: a row R
takes the value v that row S held; S released it before (in the source), so S's first change comes
before R's; if R was already in the batch its unique values changed, and the batch was written first.

:meth:`ChangeBuffer.groups` gives the groups in the order they must run: per table, a truncate first
cuts everything before it away; then deletes (which also frees unique values that later rows of the
batch may take), then upserts by layout.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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
            # the key keeps the place of its first change (see the module's note on unique keys)
            self._by_key.setdefault(table, {})[change.key] = change
        else:
            self._ordered.append(change)

    def must_flush_before(self, change: Change, unique_keys: Sequence[tuple[str, ...]]) -> bool:
        """Whether the batch must be written before ``change`` is added: it would collapse into an earlier
        change of its key whose values in one of the table's secondary ``unique_keys`` differ."""
        if not (self.reduce and change.key and unique_keys) or change.op is not Op.UPSERT:
            return False
        previous = self._by_key.get(change.layout.table, {}).get(change.key)
        if previous is None:
            return False
        if previous.op is not Op.UPSERT:
            return True  # a delete, then the key again: what it held in between is unknown
        return any(_unique_values(previous, k) != _unique_values(change, k) for k in unique_keys)

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


def _unique_values(change: Change, columns: tuple[str, ...]) -> tuple[Any, ...]:
    """The change's values of the unique key's ``columns`` (matched case-insensitively; a column the sink
    does not write keeps its value, so it is left out)."""
    names = [c.name.lower() for c in change.layout.keys] + [c.name.lower() for c in change.layout.values]
    values = (*change.key, *change.row)
    return tuple(values[names.index(c.lower())] for c in columns if c.lower() in names)


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
