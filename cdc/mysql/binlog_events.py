"""The binlog events the streamer handles, as our own types, and the adapter from mysql-replication's.

Two readers produce them: :class:`~cdc.mysql.binlog.BinlogReader`'s fast path builds them straight from a
packet's bytes (the events of every transaction), and :func:`from_library` turns the library's event
objects into them (everything the fast path leaves to the library: DDL, MySQL GTIDs, rotates, rows events
of a table map just read, …). The streamer dispatches on the type, by a table, and reads only these fields.

=================  =============================================  ===============================
type               what it is                                     from the library's
=================  =============================================  ===============================
:class:`Gtid`      a transaction's GTID (MySQL or MariaDB)        ``GtidEvent``, ``MariadbGtidEvent``
:class:`Query`     a statement: BEGIN, COMMIT, DDL, …             ``QueryEvent``
:class:`Xid`       a transaction's commit                         ``XidEvent``
:class:`Rows`      the rows of an insert, update or delete        ``Write/Update/DeleteRowsEvent``
:class:`Rotate`    the next binlog file                           ``RotateEvent``
:class:`Heartbeat` the server is alive, nothing happened          ``HeartbeatLogEvent``
:class:`RowsQuery` the statement of the rows events that follow   ``MariadbAnnotateRowsEvent``,
                   (``include.query``)                            ``RowsQueryLogEvent``
:class:`Other`     anything else the reader returns: moves the    any other event
                   position only
=================  =============================================  ===============================

TABLE_MAP and FORMAT_DESCRIPTION events never reach the streamer: the reader keeps the table map (a
:class:`Rows` carries its table's entry) and the post-header lengths itself.

The classes are slotted and never changed after they are built (one is built per binlog event, and a
frozen dataclass costs several times more to build); the header fields are those of every event:
``timestamp`` (seconds), ``server_id``, ``log_pos`` (where the next event starts) and ``event_size``
(0 when not known). :class:`Rotate`, :class:`Heartbeat` and :class:`RowsQuery` have a ``timestamp`` of 0
(a class attribute): as in Debezium's ``onEvent``, they do not move the time of the last event (the ts_ms of
a transaction's BEGIN/END), and every event answering ``timestamp`` spares the streamer a type test per event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pymysqlreplication.event import (
    BinLogEvent,
    GtidEvent,
    HeartbeatLogEvent,
    MariadbAnnotateRowsEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XidEvent,
)
from pymysqlreplication.row_event import DeleteRowsEvent, RowsEvent, UpdateRowsEvent, WriteRowsEvent
from pymysqlreplication.table import Table

__all__ = [
    "HEARTBEAT",
    "BinlogEvent",
    "Gtid",
    "Heartbeat",
    "Other",
    "PacketReader",
    "Query",
    "Rotate",
    "Rows",
    "RowsQuery",
    "Xid",
    "from_library",
]


class _Header:
    __slots__ = ("event_size", "log_pos", "server_id", "timestamp")

    timestamp: int
    server_id: int
    log_pos: int
    event_size: int

    def __init__(self, timestamp: int, server_id: int, log_pos: int, event_size: int) -> None:
        self.timestamp = timestamp
        self.server_id = server_id
        self.log_pos = log_pos
        self.event_size = event_size

    def start(self, fallback: int) -> int:
        """Where the event starts, as Debezium's ``source.pos`` names it: its end less its size (the event
        before it may be a Table_map or Annotate_rows event the reader does not hand over)."""
        end, size = self.log_pos, self.event_size
        return end - size if end and size else fallback


class Gtid(_Header):
    """A GTID event; ``standalone``: MariaDB's FL_STANDALONE, a DDL follows without a transaction."""

    __slots__ = ("gtid", "standalone")

    def __init__(
        self, timestamp: int, server_id: int, log_pos: int, event_size: int, gtid: str, standalone: bool
    ) -> None:
        _Header.__init__(self, timestamp, server_id, log_pos, event_size)
        self.gtid = gtid
        self.standalone = standalone


class Query(_Header):
    """A query event: ``query`` stripped, ``schema`` the default database ('' for none), ``thread`` the
    session's id (None when 0)."""

    __slots__ = ("query", "schema", "thread")

    def __init__(
        self,
        timestamp: int,
        server_id: int,
        log_pos: int,
        event_size: int,
        query: str,
        schema: str,
        thread: int | None,
    ) -> None:
        _Header.__init__(self, timestamp, server_id, log_pos, event_size)
        self.query = query
        self.schema = schema
        self.thread = thread


class Xid(_Header):
    __slots__ = ("xid",)

    def __init__(self, timestamp: int, server_id: int, log_pos: int, event_size: int, xid: int) -> None:
        _Header.__init__(self, timestamp, server_id, log_pos, event_size)
        self.xid = xid


class Other(_Header):
    """An event the streamer does not handle: only its position counts."""

    __slots__ = ()


class PacketReader(Protocol):
    """What a fast :class:`Rows` keeps of its reader (:class:`~cdc.mysql.binlog.BinlogReader`)."""

    def library_event(self, data: bytes) -> RowsEvent:
        """The library's event object for a packet."""
        ...


class Rows(_Header):
    """A rows event (built with its header, the rest set by the reader that reads it): ``kind`` is ``c``,
    ``u`` or ``d``; ``mapped`` the library's ``Table`` of its table id (None: the reader has no table map
    for it); ``columns_present_bitmap2`` is ``b""`` but for updates.

    Read by the fast path, the rows are ``data[pos:end]`` (``RowDecoder`` reads them there); adapted from
    the library, ``data`` is None and the library's event is kept. Either way :meth:`library_event` gives the
    library's event, whose ``rows`` decode the same bytes (the decoder's fallback).
    """

    __slots__ = (
        "_library",
        "_reader",
        "columns_present_bitmap",
        "columns_present_bitmap2",
        "data",
        "end",
        "kind",
        "mapped",
        "number_of_columns",
        "pos",
        "schema",
        "table",
        "table_id",
    )

    kind: str
    schema: str
    table: str
    table_id: int
    mapped: Table | None
    number_of_columns: int
    columns_present_bitmap: bytes
    columns_present_bitmap2: bytes
    data: bytes | None
    pos: int
    end: int
    _reader: PacketReader | None
    _library: RowsEvent | None

    def library_event(self) -> RowsEvent:
        """The library's event for the same packet."""
        if self._library is not None:
            return self._library
        assert self._reader is not None and self.data is not None
        return self._reader.library_event(self.data)


class Rotate:
    __slots__ = ("next_binlog", "position")

    timestamp = 0  # no time of its own: see the module docstring

    def __init__(self, next_binlog: str, position: int) -> None:
        self.next_binlog = next_binlog
        self.position = position


class Heartbeat:
    __slots__ = ()

    timestamp = 0


HEARTBEAT = Heartbeat()
"""The one heartbeat (it carries nothing the streamer reads)."""


class RowsQuery:
    """The statement of the rows events that follow (MariaDB's ANNOTATE_ROWS, MySQL's ROWS_QUERY)."""

    __slots__ = ("query",)

    timestamp = 0

    def __init__(self, query: str) -> None:
        self.query = query


BinlogEvent = Gtid | Query | Xid | Rows | Rotate | Heartbeat | RowsQuery | Other
"""What an event reader hands the streamer."""


# -- the library's events --------------------------------------------------------------------------------


def _header(event: BinLogEvent) -> tuple[int, int, int, int]:
    packet = event.packet
    return int(event.timestamp), int(packet.server_id), int(packet.log_pos or 0), int(packet.event_size or 0)


def _gtid(event: GtidEvent | MariadbGtidEvent) -> Gtid:
    # MariaDB's flags bit 0 is FL_STANDALONE; MySQL's GTID event flags mean something else
    standalone = not isinstance(event, GtidEvent) and bool(int(getattr(event, "flags", 0)) & 1)
    return Gtid(*_header(event), str(event.gtid), standalone)


def _query(event: QueryEvent) -> Query:
    text = event.query
    query = text.strip() if isinstance(text, str) else bytes(text).decode()
    schema = event.schema.decode() if isinstance(event.schema, bytes) else str(event.schema or "")
    thread = int(getattr(event, "slave_proxy_id", 0) or 0) or None
    return Query(*_header(event), query, schema, thread)


def _rows(event: RowsEvent) -> Rows:
    rows = Rows(*_header(event))
    cls = type(event)
    rows.kind = "u" if issubclass(cls, UpdateRowsEvent) else "c" if issubclass(cls, WriteRowsEvent) else "d"
    rows.schema, rows.table, rows.table_id = str(event.schema), str(event.table), int(event.table_id)
    rows.mapped = event.table_map.get(event.table_id)
    rows.number_of_columns = int(getattr(event, "number_of_columns", 0))
    rows.columns_present_bitmap = getattr(event, "columns_present_bitmap", b"")
    rows.columns_present_bitmap2 = getattr(event, "columns_present_bitmap2", b"") if rows.kind == "u" else b""
    rows.data, rows.pos, rows.end = None, 0, 0
    rows._reader, rows._library = None, event
    return rows


def _rows_query(event: MariadbAnnotateRowsEvent | RowsQueryLogEvent) -> RowsQuery:
    text = event.query if isinstance(event, RowsQueryLogEvent) else event.sql_statement
    return RowsQuery(text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text))


# each adapter takes the library class of its key (the library is untyped: Any)
_ADAPTERS: dict[type, Callable[[Any], BinlogEvent]] = {
    GtidEvent: _gtid,
    MariadbGtidEvent: _gtid,
    QueryEvent: _query,
    XidEvent: lambda event: Xid(*_header(event), int(event.xid)),
    WriteRowsEvent: _rows,
    UpdateRowsEvent: _rows,
    DeleteRowsEvent: _rows,
    RotateEvent: lambda event: Rotate(str(event.next_binlog), int(event.position)),
    HeartbeatLogEvent: lambda _: HEARTBEAT,
    MariadbAnnotateRowsEvent: _rows_query,
    RowsQueryLogEvent: _rows_query,
}


def from_library(event: BinLogEvent) -> BinlogEvent:
    """Our event for one of mysql-replication's (its subclasses, e.g. a partial update, by their base)."""
    adapt = _ADAPTERS.get(type(event))
    if adapt is None:
        adapt = next((a for cls, a in _ADAPTERS.items() if isinstance(event, cls)), None)
    return Other(*_header(event)) if adapt is None else adapt(event)
