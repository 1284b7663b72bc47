"""One table (or the custom query) polled in one mode: run the query, stream rows out, keep the offset.

A querier runs its SELECT on a server-side cursor and hands out at most ``batch.max.rows`` records per
call, so a result set of any size passes through bounded memory; like Confluent's (before 10.8.5) the
statement and its transaction stay open across polls until the rows run out, then commit.

Offsets per record follow Confluent:

* incrementing: the row's id; timestamp+incrementing: the row's (ts, id);
* timestamp: the offset moves to T only once the next row has a later timestamp or the rows ran out
  (PR #1093), so a restart inside a group of equal timestamps re-reads the group instead of losing it
  (rows T1,T1,T2,T2,T3 carry offsets T0,T1,T1,T2,T3);
* bulk: no offset (a restart re-reads the table).

The two opt-in extras live here too: the incrementing look-back (ids skipped below the offset are
asked for again with ``OR inc IN (…)`` until ``incrementing.lookback.ms`` passes) and bulk delete
detection (keys of the last pass not seen in this one become tombstones).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from cdc.api.errors import ConnectError
from cdc.api.records import Headers, SourceRecord
from cdc.api.schema import SchemaBuilder
from cdc.api.struct import Struct
from cdc.jdbc.config import BULK, INCREMENTING, TIMESTAMP, TIMESTAMP_INCREMENTING, JdbcSourceSettings
from cdc.jdbc.criteria import Criteria
from cdc.jdbc.dialects import Dialect
from cdc.jdbc.offsets import (
    INCREMENTING_FIELD,
    QUERY_PARTITION,
    TimestampIncrementingOffset,
    datetime_to_nanos,
    nanos_to_datetime,
    partition_v0,
    partition_v1,
)
from cdc.jdbc.tables import TableId
from cdc.jdbc.types import ColumnInfo, RowMapper, infer_kind, timestamp_converter

__all__ = ["TableQuerier"]

log = logging.getLogger(__name__)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...] | None:
    """The slots' own setters of a frozen, slotted dataclass, in ``names`` order (None if it has others)."""
    if tuple(f.name for f in dataclasses.fields(cls)) != names:
        return None
    return tuple(getattr(cls, n).__set__ for n in names)


_RECORD_FIELDS = (
    "topic",
    "kafka_partition",
    "key_schema",
    "key",
    "value_schema",
    "value",
    "timestamp",
    "headers",
    "source_partition",
    "source_offset",
)
_RECORD_SET = _slot_setters(SourceRecord, _RECORD_FIELDS)
_STRUCT_SET: tuple[Callable[[Any, Any], None], ...] = tuple(
    vars(Struct)[n].__set__ for n in ("schema", "values")
)


def _value_record(
    topic: str, schema: Any, values: list[Any], partition: dict[str, Any], offset: dict[str, Any] | None
) -> SourceRecord:
    """``SourceRecord(topic, None, None, None, schema, Struct(schema, values), …)`` without the checks.

    The struct's values come from the table's compiled row function (one per field, by construction), so
    the Struct and the frozen record are filled slot by slot: a third of what the checked constructors
    cost, per row.
    """
    struct = _new(Struct)
    set_schema, set_values = _STRUCT_SET
    set_schema(struct, schema)
    set_values(struct, values)
    if _RECORD_SET is None:  # SourceRecord grew a field: take the checked way
        return SourceRecord(
            topic, None, None, None, schema, struct, source_partition=partition, source_offset=offset
        )
    record = _new(SourceRecord)
    s_topic, s_kp, s_ks, s_key, s_vs, s_value, s_ts, s_headers, s_partition, s_offset = _RECORD_SET
    s_topic(record, topic)
    s_kp(record, None)
    s_ks(record, None)
    s_key(record, None)
    s_vs(record, schema)
    s_value(record, struct)
    s_ts(record, None)
    s_headers(record, Headers())
    s_partition(record, partition)
    s_offset(record, offset)
    return record


_new = object.__new__


def _lookup(names: list[str], wanted: str) -> int:
    if wanted in names:
        return names.index(wanted)
    lowered = [n.lower() for n in names]
    if wanted.lower() in lowered:
        return lowered.index(wanted.lower())
    raise ConnectError(f"Column {wanted} is not in the result set (columns: {', '.join(names)})")


class TableQuerier:
    """Polls one table or the custom query. Not thread-safe: one task thread drives it."""

    def __init__(
        self,
        dialect: Dialect,
        settings: JdbcSourceSettings,
        table: TableId | None,
        offset: TimestampIncrementingOffset,
        columns: list[ColumnInfo] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.dialect = dialect
        self.settings = settings
        self.table = table
        self.mode = settings.mode
        self.offset = offset
        self.clock = clock
        self.last_update = 0.0
        """When the last query finished (seconds); the next runs ``poll.interval.ms`` later."""
        self.batch_rows = settings.batch_max_rows
        self.topic = settings.topic_prefix + (table.name if table is not None else "")
        self.metric_name = table.unquoted() if table is not None else "query"
        """The ``table`` label of this querier's metrics."""
        if self.mode == BULK:
            self.partition: dict[str, Any] = (
                partition_v0(table) if table is not None else dict(QUERY_PARTITION)
            )
        else:
            self.partition = partition_v1(table) if table is not None else dict(QUERY_PARTITION)
        self.lookback_ms = settings.incrementing_lookback_ms if self.mode == INCREMENTING else 0
        self.max_gaps = settings.incrementing_lookback_max_gaps
        self._gaps: dict[int, int] = dict(offset.gaps) if self.lookback_ms else {}
        self.detect_deletes = settings.bulk_detect_deletes and self.mode == BULK
        self._columns = columns
        self.incrementing_column = settings.incrementing_column or None
        if self.mode in (INCREMENTING, TIMESTAMP_INCREMENTING) and not self.incrementing_column:
            auto = [c.name for c in columns or () if c.autoincrement]
            if not auto:
                raise ConnectError(
                    f"Cannot find an auto-increment column in {self._what()}: set incrementing.column.name"
                )
            self.incrementing_column = auto[0]
            log.info("Using the auto-increment column %s of %s as incrementing column", auto[0], self._what())
        self.criteria = Criteria(
            dialect,
            self.mode,
            table,
            settings.query,
            self.incrementing_column,
            settings.timestamp_columns,
            settings.query_suffix,
        )
        self._mapper: RowMapper | None = None
        self._key_schema: Any = None
        self._key_indexes: list[int] = []
        self._cursor: Any = None
        self._rows: list[Any] = []
        self._pos = 0
        self._ahead: Any = None
        self._exhausted = False
        self._ts_index: list[int] = []
        self._inc_index = -1
        self._to_utc = timestamp_converter(dialect.tz)
        self._seen: set[tuple[Any, ...]] = set()
        self._last_seen: set[tuple[Any, ...]] | None = None
        self._tombstones: Iterator[tuple[Any, ...]] | None = None
        self._gaps_cache: tuple[tuple[int, int], ...] = ()
        self._gaps_dirty = True
        # the common cases take :meth:`_next_batch_fast`: whole fetches turned into records in one loop
        self._fast = (self.mode == BULK and not self.detect_deletes) or (
            self.mode == INCREMENTING and not self.lookback_ms
        )
        if columns is not None:
            self._validate_non_null(columns)

    def _what(self) -> str:
        return self.table.unquoted() if self.table is not None else "the query"

    def _validate_non_null(self, columns: list[ColumnInfo]) -> None:
        if not self.settings.validate_non_null or self.table is None:
            return
        by_name = {c.name.lower(): c for c in columns}
        if self.mode in (INCREMENTING, TIMESTAMP_INCREMENTING):
            col = by_name.get((self.incrementing_column or "").lower())
            if col is not None and col.nullable:
                raise ConnectError(
                    f"Cannot make incremental queries using incrementing column "
                    f"{self.incrementing_column} on {self._what()} because this column is nullable."
                )
        if self.mode in (TIMESTAMP, TIMESTAMP_INCREMENTING):
            cols = [by_name.get(c.lower()) for c in self.settings.timestamp_columns]
            if not any(c is not None and not c.nullable for c in cols):
                raise ConnectError(
                    f"Cannot make incremental queries using timestamp columns "
                    f"{self.settings.timestamp_columns} on {self._what()} because all of these "
                    "columns are nullable."
                )

    # -- state ---------------------------------------------------------------------------------------
    @property
    def querying(self) -> bool:
        return self._cursor is not None

    def next_due(self, poll_interval_s: float) -> float:
        return self.last_update + poll_interval_s

    # -- running a query -----------------------------------------------------------------------------
    def start_query(self, conn: Any) -> None:
        params: list[Any] = []
        gaps = sorted(self._gaps) if self.lookback_ms else []
        if self.mode in (TIMESTAMP, TIMESTAMP_INCREMENTING):
            now = self.dialect.current_timestamp(conn)
            end = now - dt.timedelta(milliseconds=self.settings.timestamp_delay_interval_ms)
            begin = self._begin(now)
            b, e = self.dialect.bind_timestamp(begin), self.dialect.bind_timestamp(end)
            params = [b, e] if self.mode == TIMESTAMP else [e, b, self.offset.incrementing_or(-1), b]
        elif self.mode == INCREMENTING:
            params = [self.offset.incrementing_or(-1), *gaps]
        sql = self.criteria.sql(len(gaps))
        log.debug("Begin using SQL query: %s (%s)", sql, params)
        cursor = self.dialect.streaming_cursor(conn, self.batch_rows)
        try:
            cursor.execute(sql, tuple(params))
        except BaseException:
            self.dialect.close_cursor(cursor)
            raise
        self._cursor = cursor
        self._rows, self._pos, self._ahead, self._exhausted = [], 0, None, False
        self._prepare(cursor)
        if self.detect_deletes:
            self._seen = set()

    def _begin(self, now: dt.datetime) -> dt.datetime:
        if self.offset.timestamp_ns is None:
            initial = self.settings.timestamp_initial
            if initial is None:
                ns = 0
            elif int(initial) == -1:
                ns = datetime_to_nanos(now)
            else:
                ns = int(initial) * 1_000_000
            self.offset = TimestampIncrementingOffset(ns, self.offset.incrementing, self.offset.gaps)
        assert self.offset.timestamp_ns is not None
        return nanos_to_datetime(self.offset.timestamp_ns)

    def _prepare(self, cursor: Any) -> None:
        names = [d[0] for d in cursor.description]
        if self._mapper is None:
            columns = self._columns_for(names, cursor)
            if columns is not None:
                self._build_mapper(columns)
        if self.mode in (TIMESTAMP, TIMESTAMP_INCREMENTING):
            self._ts_index = [_lookup(names, c) for c in self.settings.timestamp_columns]
        if self.mode in (INCREMENTING, TIMESTAMP_INCREMENTING):
            self._inc_index = _lookup(names, self.incrementing_column or "")
        if self.detect_deletes and self._mapper is not None and not self._key_indexes:
            self._setup_keys(names)

    def _columns_for(self, names: list[str], cursor: Any) -> list[ColumnInfo] | None:
        if self._columns is not None:
            by_name = {c.name: c for c in self._columns}
            return [by_name.get(n) or ColumnInfo(n, None) for n in names]
        return self.dialect.describe_cursor(cursor.description)

    def _build_mapper(self, columns: list[ColumnInfo]) -> None:
        name = self.table.name if self.table is not None else None
        self._mapper = RowMapper(name or "", columns, self.settings.numeric_mapping, self.dialect.tz)
        if name is None:  # query mode: an unnamed struct, as Confluent's
            self._mapper.schema = SchemaBuilder.from_schema(self._mapper.schema).name(None).build()

    def _setup_keys(self, names: list[str]) -> None:
        assert self._mapper is not None
        wanted = list(self.settings.bulk_key_columns) or (
            self.dialect.primary_key(self.table) if self.table is not None else []
        )
        if not wanted:
            raise ConnectError(
                f"bulk.detect.deletes needs a primary key or bulk.key.columns for {self._what()}"
            )
        builder = SchemaBuilder.struct().name(f"{self.table.name if self.table else 'query'}.Key")
        for col in wanted:
            idx = _lookup(names, col)
            builder.field(names[idx], self._mapper.schema.fields[self._mapper.indexes.index(idx)].schema)
            self._key_indexes.append(idx)
        self._key_schema = builder.build()

    def _fetch(self) -> Any:
        if self._pos >= len(self._rows):
            if self._exhausted:
                return None
            self._rows = self._cursor.fetchmany(self.batch_rows)
            self._pos = 0
            if not self._rows:
                self._exhausted = True
                return None
        row = self._rows[self._pos]
        self._pos += 1
        return row

    def next_batch(self) -> list[SourceRecord]:
        """Up to ``batch.max.rows`` records; :attr:`done` says whether the result set ran out."""
        if (
            self._fast
            and self._mapper is not None
            and self._pos >= len(self._rows)
            and self._ahead is None
            and self._tombstones is None
        ):
            return self._next_batch_fast()
        records: list[SourceRecord] = []
        limit = self.batch_rows
        while len(records) < limit:
            if self._tombstones is not None:
                key = next(self._tombstones, None)
                if key is None:
                    self._tombstones = None
                    break
                records.append(self._tombstone(key))
                continue
            row = self._ahead if self._ahead is not None else self._fetch()
            self._ahead = None
            if row is None:
                self._on_exhausted()
                if self._tombstones is not None:
                    continue
                break
            if self._mapper is None:  # a result set the driver could not describe: its first row decides
                names = [d[0] for d in self._cursor.description]
                self._build_mapper([ColumnInfo(n, infer_kind(v)) for n, v in zip(names, row, strict=True)])
                self._prepare(self._cursor)
            records.append(self._record(row))
        return records

    def _next_batch_fast(self) -> list[SourceRecord]:
        """Bulk (without delete detection) and incrementing (without look-back): one fetch of
        ``batch.max.rows`` rows, one loop, no per-row dispatch on the mode.

        A short fetch means the result set ran out (server-side cursors return fewer rows only at its end),
        which saves asking once more.
        """
        if self._exhausted:
            return []
        limit = self.batch_rows
        rows = self._cursor.fetchmany(limit)
        if len(rows) < limit:
            self._exhausted = True
            self._rows, self._pos = [], 0
        mapper = self._mapper
        assert mapper is not None
        schema, values, topic, partition = mapper.schema, mapper.values, self.topic, self.partition
        make = _value_record
        if self.mode == BULK:
            records = [make(topic, schema, values(row), partition, None) for row in rows]
        else:
            records = []
            append = records.append
            inc_index, last = self._inc_index, None
            for row in rows:
                inc = row[inc_index]
                if type(inc) is not int:
                    inc = self._incrementing(row)
                last = inc
                append(make(topic, schema, values(row), partition, {INCREMENTING_FIELD: inc}))
            if last is not None:
                self.offset = TimestampIncrementingOffset(None, last)
        if self._exhausted:
            self._on_exhausted()
        return records

    @property
    def done(self) -> bool:
        return (
            self._exhausted
            and self._ahead is None
            and self._tombstones is None
            and (self._pos >= len(self._rows))
        )

    def _on_exhausted(self) -> None:
        if self.detect_deletes and self._tombstones is None:
            previous, self._last_seen = self._last_seen, self._seen
            self._seen = set()
            if previous is not None:
                gone = previous - self._last_seen
                if gone:
                    self._tombstones = iter(sorted(gone, key=repr))
        if self.lookback_ms:
            self._expire_gaps()

    def _record(self, row: Any) -> SourceRecord:
        mapper = self._mapper
        assert mapper is not None
        value = Struct(mapper.schema, mapper.values(row))
        offset: dict[str, Any] | None = None
        mode = self.mode
        if mode == INCREMENTING:
            offset = self._advance_incrementing(self._incrementing(row))
        elif mode == TIMESTAMP_INCREMENTING:
            self.offset = TimestampIncrementingOffset(self._timestamp(row), self._incrementing(row))
            offset = self.offset.to_dict()
        elif mode == TIMESTAMP:
            offset = self._advance_timestamp(row)
        elif self.detect_deletes:
            self._seen.add(tuple(row[i] for i in self._key_indexes))
        return SourceRecord(
            self.topic,
            None,
            None,
            None,
            mapper.schema,
            value,
            source_partition=self.partition,
            source_offset=offset,
        )

    def _tombstone(self, key: tuple[Any, ...]) -> SourceRecord:
        assert self._mapper is not None
        values = []
        for idx, raw in zip(self._key_indexes, key, strict=True):
            conv = self._mapper.converters[self._mapper.indexes.index(idx)]
            values.append(raw if raw is None or conv is None else conv(raw))
        return SourceRecord(
            self.topic,
            None,
            self._key_schema,
            Struct(self._key_schema, values),
            None,
            None,
            source_partition=self.partition,
            source_offset=None,
        )

    def _incrementing(self, row: Any) -> int:
        value = row[self._inc_index]
        if value is None:
            raise ConnectError(
                f"Null value for incrementing column {self.incrementing_column} of {self._what()}"
            )
        if isinstance(value, decimal.Decimal) and value != value.to_integral_value():
            raise ConnectError(f"Incrementing column {self.incrementing_column} has a fraction: {value}")
        return int(value)

    def _timestamp(self, row: Any) -> int:
        for i in self._ts_index:
            raw = row[i]
            if raw is not None:
                value = self._to_utc(raw)
                if value is not None:
                    return datetime_to_nanos(self.dialect.timestamp_offset_ns(value))
        raise ConnectError(f"All timestamp columns are null in a row of {self._what()}")

    def _advance_timestamp(self, row: Any) -> dict[str, Any]:
        ts = self._timestamp(row)
        nxt = self._fetch()
        self._ahead = nxt
        if nxt is None or self._timestamp(nxt) > ts:
            self.offset = TimestampIncrementingOffset(ts, None)
        return self.offset.to_dict()

    def _advance_incrementing(self, inc: int) -> dict[str, Any]:
        last = self.offset.incrementing_or(-1)
        if not self.lookback_ms:
            self.offset = TimestampIncrementingOffset(None, inc)
            return self.offset.to_dict()
        now_ms = int(self.clock() * 1000)
        if inc <= last:
            self._gaps_dirty = self._gaps.pop(inc, None) is not None or self._gaps_dirty  # a late commit
        else:
            if last >= 0 and inc > last + 1:
                first = max(last + 1, inc - self.max_gaps)
                for missing in range(first, inc):
                    self._gaps[missing] = now_ms
                self._gaps_dirty = True
                self._trim_gaps()
            last = inc
        self.offset = TimestampIncrementingOffset(None, last, self._gap_tuple())
        return self.offset.to_dict()

    def _trim_gaps(self) -> None:
        if len(self._gaps) > self.max_gaps:
            for gap in sorted(self._gaps)[: len(self._gaps) - self.max_gaps]:
                del self._gaps[gap]

    def _expire_gaps(self) -> None:
        horizon = int(self.clock() * 1000) - self.lookback_ms
        expired = [g for g, t in self._gaps.items() if t < horizon]
        for gap in expired:
            del self._gaps[gap]
        if expired:
            self._gaps_dirty = True
            log.info("%s: gave up waiting for %d skipped ids of %s", self._what(), len(expired), self.topic)
            self.offset = TimestampIncrementingOffset(None, self.offset.incrementing, self._gap_tuple())

    def _gap_tuple(self) -> tuple[tuple[int, int], ...]:
        # Rebuilt only when the gaps changed: the records of a batch share one tuple.
        if self._gaps_dirty:
            self._gaps_cache = tuple(sorted(self._gaps.items()))
            self._gaps_dirty = False
        return self._gaps_cache

    # -- ending a query --------------------------------------------------------------------------------
    def finish(self, conn: Any) -> None:
        """The result set ran out: close it, end the transaction, wait ``poll.interval.ms`` for the next."""
        self._close_cursor()
        conn.commit()
        self.last_update = self.clock()

    def reset(self, conn: Any | None) -> None:
        """After an error: drop the statement; the next query resumes from the last record's offset."""
        self._close_cursor()
        self._ahead, self._rows, self._pos, self._tombstones = None, [], 0, None
        if conn is not None:
            try:
                conn.rollback()
            except Exception:
                log.debug("Rollback failed", exc_info=True)
        self.last_update = self.clock()

    def _close_cursor(self) -> None:
        if self._cursor is not None:
            self.dialect.close_cursor(self._cursor)
            self._cursor = None
