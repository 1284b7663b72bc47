"""Consistency under concurrent writes: the watermark window and its reconciliation.

Parallel readers do not share a transaction, so each chunk is read at its own moment. The DBLog /
Flink CDC argument (reference §3.4) makes that safe: a chunk read is one consistent read at some point
inside the window between a low and a high watermark, so for every key in it the state at the high
watermark is either the row read (no binlog event in the window touched the key) or the result of the
window's last event for the key.

Here the window of every chunk is widened to the run's: the low watermark is the snapshot's start
position ``S`` (taken under the global read lock, before any chunk; every chunk attempt, including
Spark's retries of failed tasks and chunks done before a resumed run, reads after it) and the high
watermark is the end position ``E``. That is all this module assumes of a chunk's read, on either path:
the Python path reads on the task's own connection, the JVM path (:mod:`cdc.mysql.spark.jvm`) on the
connection of Spark's JDBC reader in the executor, with the chunk's own watermarks taken on the driver
before its job is submitted and after it finished; both reads lie after ``S`` and before ``E``.
``E`` is a consistent snapshot point: on MariaDB the position of
``START TRANSACTION WITH CONSISTENT SNAPSHOT`` itself (``binlog_snapshot_file/position``, no lock); on
MySQL taken under a brief ``FLUSH TABLES WITH READ LOCK`` as the single reader does. Reconciliation:

1. read the binlog ``(S, E]`` and collect every key of a snapshotted table that a row event touched
   (before and after images, so a key change counts for both keys);
2. in the transaction whose snapshot *is* ``E``, read those keys again: each found row is written as
   an ``op=r`` record after the chunk's records (same key → same partition → later offset), and each
   key no longer there a delete as the stream writes it (``op=d`` with the last row image the window
   saw, then a tombstone unless ``tombstones.on.delete=false``): consumers that drop tombstones (e.g.
   ``ExtractNewRecordState``'s default) still see the row go.

So the topic reduced by key equals the table as of ``E``, and the connector, started afterwards from
``E``, streams every later change: no gap, no overlap. Duplicates: a key touched during the run has
two ``op=r`` records (the possibly stale one from its chunk, then the one as of ``E``), and a chunk
retried by Spark or re-run after a kill repeats its records; the reduced topic is unaffected. A DDL on a
captured database inside the window aborts the run (the schema the records were built with would be
wrong); run it again. Tables without a primary key are not reconciled (their records have no key).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cdc.api.errors import ConnectError
from cdc.history.model import Table, TableId
from cdc.mysql.offsets import BinlogOffset

__all__ = ["SchemaChangedError", "Touched", "binlog_seq", "consistent_end", "touched_keys"]

log = logging.getLogger(__name__)

_DDL = ("CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE")


class SchemaChangedError(ConnectError):
    """A DDL on a captured database happened while the snapshot ran."""


def binlog_seq(file: str) -> int:
    """The sequence number of a binlog file (``mysql-bin.000012`` → 12); names compare by it, never as
    strings (``.9`` < ``.10``)."""
    return int(file.rsplit(".", 1)[-1])


def after(file: str, pos: int, than: BinlogOffset) -> bool:
    return (binlog_seq(file), pos) > (binlog_seq(than.file), than.pos)


@dataclass
class Touched:
    """Keys touched in the window, per table, with the last full row image seen (for tombstone keys)."""

    rows: dict[TableId, dict[tuple[Any, ...], list[Any]]]
    events: int = 0

    def count(self) -> int:
        return sum(len(v) for v in self.rows.values())


def consistent_end(conn: Any, mariadb: bool, lock: bool) -> BinlogOffset:
    """Open a consistent-snapshot transaction on ``conn`` and return its exact binlog position."""
    import time

    with conn.cursor() as cur:
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        if mariadb:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
            status = {str(k).lower(): str(v) for k, v in cur.fetchall()}
            file, pos = status["binlog_snapshot_file"], int(status["binlog_snapshot_position"])
            cur.execute("SELECT BINLOG_GTID_POS(%s, %s)", (file, pos))
            gtids = str(cur.fetchone()[0] or "") or None
            return BinlogOffset(file=file, pos=pos, gtids=gtids, ts_sec=int(time.time()))
        locked = False
        if lock:
            try:
                cur.execute("FLUSH TABLES WITH READ LOCK")
                locked = True
            except Exception as exc:
                log.warning(
                    "Global read lock not allowed (%s): the end position may trail the snapshot "
                    "point by the transactions committing meanwhile",
                    exc,
                )
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
        cur.fetchall()
        if locked:
            cur.execute("UNLOCK TABLES")
        file, pos = str(row[0]), int(row[1])
        gtids = str(row[4]).replace("\n", "") if len(row) > 4 and row[4] else None
        return BinlogOffset(file=file, pos=pos, gtids=gtids, ts_sec=int(time.time()))


def _key_of(values: dict[str, Any], key: Sequence[str], lower: dict[str, str]) -> tuple[Any, ...] | None:
    out = []
    for col in key:
        name = col if col in values else lower.get(col.lower())
        if name is None:
            return None
        out.append(values[name])
    return tuple(out)


def touched_keys(
    connection_settings: dict[str, Any],
    server_id: int,
    start: BinlogOffset,
    end: BinlogOffset,
    tables: Sequence[Table],
    connect: Callable[..., Any] | None = None,
) -> Touched:
    """The keys of ``tables`` touched by row events in ``(start, end]``; raises :class:`SchemaChangedError`
    on a DDL of one of their databases."""
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import QueryEvent, RotateEvent
    from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

    by_id = {t.id: t for t in tables if t.primary_key}
    touched = Touched({tid: {} for tid in by_id})
    if not after(end.file, end.pos, start):
        return touched
    databases = sorted({t.id.database for t in tables})
    reader = BinLogStreamReader(
        connection_settings=connection_settings,
        server_id=server_id,
        resume_stream=True,
        log_file=start.file,
        log_pos=start.pos,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, QueryEvent, RotateEvent],
        is_mariadb=False,
        only_schemas=databases,
        freeze_schema=True,
        enable_logging=False,
        pymysql_wrapper=connect,  # the connector's TLS (MySqlSettings.tls.pymysql_connect)
    )
    file = start.file
    try:
        for event in _events(reader):
            if isinstance(event, RotateEvent):
                file = str(event.next_binlog)
                continue
            log_pos = int(event.packet.log_pos)
            if after(file, log_pos, end):
                break
            if isinstance(event, QueryEvent):
                _check_ddl(event, databases, file, log_pos)
                continue
            schema = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema)
            table = by_id.get(TableId(schema, str(event.table)))
            if table is None:
                continue
            names = table.column_names()
            seen = touched.rows[table.id]
            for row in event.rows:
                images = (
                    [row["before_values"], row["after_values"]] if "before_values" in row else [row["values"]]
                )
                for image in images:
                    lower_img = {str(k).lower(): str(k) for k in image}
                    key = _key_of(image, table.primary_key, lower_img)
                    if key is None:
                        raise ConnectError(
                            f"Binlog row of {table.id} has no key columns {table.primary_key}: "
                            "is binlog_row_metadata=FULL?"
                        )
                    seen[key] = [image.get(n, image.get(lower_img.get(n.lower(), n))) for n in names]
                touched.events += 1
    finally:
        reader.close()
    return touched


def _events(reader: Any) -> Iterable[Any]:
    while True:
        event = reader.fetchone()
        if event is None:
            return
        yield event


def _check_ddl(event: Any, databases: Sequence[str], file: str, pos: int) -> None:
    query = str(event.query).strip()
    head = query.split(None, 1)[0].upper() if query else ""
    if head not in _DDL:
        return
    schema = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema or "")
    if schema in databases or any(db in query for db in databases):
        raise SchemaChangedError(
            f"A schema change ran on a captured database while the snapshot ran ({file}:{pos}: "
            f"{query[:200]}); the records already written describe the old schema. "
            "Run `cdc snapshot` again (with --restart)."
        )


def reread(
    conn: Any,
    table: Table,
    keys: dict[tuple[Any, ...], list[Any]],
    emit_row: Callable[[Sequence[Any]], None],
    emit_gone: Callable[[Sequence[Any]], None],
    batch: int = 500,
) -> tuple[int, int]:
    """Read ``keys`` of ``table`` again inside ``conn``'s current transaction; rows found go to
    ``emit_row``, the binlog images of keys no longer there to ``emit_gone``. Returns (found, gone)."""
    if not keys:
        return 0, 0
    pk = list(table.primary_key)
    names = table.column_names()
    idx = [next(i for i, n in enumerate(names) if n.lower() == c.lower()) for c in pk]
    cols = ", ".join("`" + c.replace("`", "``") + "`" for c in pk)
    items = list(keys.items())
    found = gone = 0
    with conn.cursor() as cur:
        for i in range(0, len(items), batch):
            part = items[i : i + batch]
            if len(pk) == 1:
                marks = ", ".join(["%s"] * len(part))
                params: list[Any] = [k[0] for k, _ in part]
                cur.execute(f"SELECT * FROM {table.id.sql()} WHERE {cols} IN ({marks})", params)
            else:
                one = "(" + ", ".join(["%s"] * len(pk)) + ")"
                params = [v for k, _ in part for v in k]
                cur.execute(
                    f"SELECT * FROM {table.id.sql()} WHERE ({cols}) IN ({', '.join([one] * len(part))})",
                    params,
                )
            rows = cur.fetchall()
            present = set()
            for row in rows:
                present.add(tuple(row[j] for j in idx))
                emit_row(row)
                found += 1
            normalized = {_norm(k) for k in present}
            for key, image in part:
                if key not in present and _norm(key) not in normalized:
                    emit_gone(image)
                    gone += 1
    return found, gone


def _norm(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """Compare keys the way the server does for the common case (case-insensitive, trailing spaces)."""
    return tuple(v.rstrip().lower() if isinstance(v, str) else v for v in key)
