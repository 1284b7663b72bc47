"""``BinlogReader``: mysql-replication's stream reader with a fast path for the events of every transaction.

Why: with small transactions the capture thread's time goes to the library's per-event machinery more
than to decoding rows: every packet builds a ``BinLogPacketWrapper`` and an event object through a dozen
keyword arguments and a method call per field read, and every transaction repeats the same TABLE_MAP,
which the library parses again each time. A MariaDB transaction is five packets (GTID,
ANNOTATE_ROWS, TABLE_MAP, ROWS, XID), a MySQL one five as well (GTID, BEGIN, TABLE_MAP, ROWS, XID).

This reader keeps the library for everything about the protocol (connecting, registering as a replica,
COM_BINLOG_DUMP, checksums, the FORMAT_DESCRIPTION's post-header lengths, ROTATE and the table map it
keeps) and for every event it does not handle itself, and reads these events straight from the packet's
bytes:

- MariaDB GTID (→ :class:`~cdc.mysql.binlog_events.Gtid`), XID (→ ``Xid``), the ``BEGIN``/``COMMIT``
  query events (→ ``Query``; any other query, i.e. DDL, goes to the library);
- rows events v1 and v2 (→ ``Rows``): the header is read here, the rows stay in the packet for
  :class:`~cdc.mysql.rowdecoder.RowDecoder`; ``Rows.library_event`` builds the library's event from the
  same packet when the decoder must fall back;
- a TABLE_MAP whose bytes equal the last one seen for its table id while the library's table map still
  holds the ``Table`` built from them is skipped (nothing in it is new); any other goes to the library;
- events the caller did not ask for (ANNOTATE_ROWS, ROWS_QUERY, checkpoints, …) are skipped without
  being built, as the library would drop them after building them.

A packet the fast path declines is handed to the library's own ``fetchone`` unchanged (it is replayed as
the next packet the stream connection returns), so the library's behaviour — its bookkeeping included —
is the fallback for anything unusual. :meth:`BinlogReader.read` gives every event as one of
:mod:`cdc.mysql.binlog_events`' types (the fast path builds them, the library's events are adapted);
:meth:`~BinlogReader.fetchone` gives the library's own events where the library read them, so that tests
compare both paths on the same binlog.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from typing import Any

from pymysql.constants import CR
from pymysql.err import InternalError, OperationalError
from pymysql.protocol import MysqlPacket
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.constants import BINLOG
from pymysqlreplication.event import MariadbGtidEvent, QueryEvent, XidEvent
from pymysqlreplication.packet import BinLogPacketWrapper
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from cdc.mysql.binlog_events import BinlogEvent, Gtid, Query, Rows, Xid, from_library

__all__ = ["READ_BUFFER", "BinlogReader"]

MAX_PACKET_LEN = 2**24 - 1
READ_BUFFER = 256 * 1024
"""The stream connection's read buffer: at most this many bytes per ``recv`` (see ``_widen_read_buffer``)."""
_COM_BINLOG_DUMP = 0x12
_SEND_ANNOTATE_ROWS = 0x02
_HEADER = struct.Struct("<xIBIIIH")  # OK byte, timestamp, type, server id, event size, next position, flags
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_GTID = struct.Struct("<QIB")  # MariaDB: sequence number, domain id, flags
_QUERY = struct.Struct("<IIBHH")  # thread id, exec time, schema length, error code, status vars length

_ROWS_KIND = {
    BINLOG.WRITE_ROWS_EVENT_V1: "c",
    BINLOG.UPDATE_ROWS_EVENT_V1: "u",
    BINLOG.DELETE_ROWS_EVENT_V1: "d",
    BINLOG.WRITE_ROWS_EVENT_V2: "c",
    BINLOG.UPDATE_ROWS_EVENT_V2: "u",
    BINLOG.DELETE_ROWS_EVENT_V2: "d",
}
_ROWS_V2 = {BINLOG.WRITE_ROWS_EVENT_V2, BINLOG.UPDATE_ROWS_EVENT_V2, BINLOG.DELETE_ROWS_EVENT_V2}
_ROWS_CLASS = {"c": WriteRowsEvent, "u": UpdateRowsEvent, "d": DeleteRowsEvent}
# Events the library needs to see even when the caller does not ask for them.
_LIBRARY_ALWAYS = {BINLOG.ROTATE_EVENT, BINLOG.FORMAT_DESCRIPTION_EVENT, BINLOG.TABLE_MAP_EVENT}
_EVENT_MAP: dict[int, type] = BinLogPacketWrapper._BinLogPacketWrapper__event_map


class BinlogReader(BinLogStreamReader):
    """See the module docstring. ``fast`` counts the events read here, ``slow`` those left to the library."""

    def __init__(
        self,
        *args: Any,
        annotate_rows: bool = False,
        net_timeouts: tuple[int, int] = (0, 0),
        nongraceful: bool = False,
        **kwargs: Any,
    ) -> None:
        self._annotate_rows = annotate_rows
        # binlog.net.write.timeout / binlog.net.read.timeout (seconds, 0: the server's) and
        # use.nongraceful.disconnect
        self._net_timeouts = net_timeouts
        self._nongraceful = nongraceful
        super().__init__(*args, **kwargs)
        self._table_maps: dict[int, tuple[bytes, Any]] = {}  # table id → (TABLE_MAP body, library Table)
        self._pending_map: tuple[int, bytes] | None = None
        allowed = self._BinLogStreamReader__allowed_events
        self._skippable = frozenset(
            code for code, cls in _EVENT_MAP.items() if cls not in allowed and code not in _LIBRARY_ALWAYS
        )
        self._want_gtid = MariadbGtidEvent in allowed
        self._want_xid = XidEvent in allowed
        self._want_query = QueryEvent in allowed
        self._want_rows = {
            code
            for code, kind in _ROWS_KIND.items()
            if _ROWS_CLASS[kind] in allowed and _EVENT_MAP.get(code) is _ROWS_CLASS[kind]
        }
        self._schemas: dict[bytes, str] = {}  # a query event's default database, decoded once
        self.fast = 0
        self.slow = 0
        # TABLE_MAP events read so far (cached or not): Debezium counts them in an offset's ``event``
        self.table_maps_read = 0

    def _register_slave(self) -> None:
        """Registers as a replica; with ``annotate_rows``, the dump request that follows asks a MariaDB server
        for its ANNOTATE_ROWS events (flag BINLOG_SEND_ANNOTATE_ROWS_EVENT, which the library sets only on
        its GTID-positioned path)."""
        self._set_net_timeouts()
        self._widen_read_buffer()
        super()._register_slave()
        if not self._annotate_rows:
            return
        conn = self._stream_connection
        write = conn._write_bytes

        def dump_with_annotations(data: bytes) -> None:
            del conn._write_bytes  # one packet: the COM_BINLOG_DUMP request right after registration
            if len(data) > 11 and data[4] == _COM_BINLOG_DUMP:  # 4-byte header, command, position, flags
                data = data[:9] + bytes([data[9] | _SEND_ANNOTATE_ROWS]) + data[10:]
            write(data)

        conn._write_bytes = dump_with_annotations

    def _widen_read_buffer(self) -> None:
        """The stream connection reads the socket through a :data:`READ_BUFFER`-byte buffer instead of
        pymysql's 8 KiB one: a binlog stream is a run of small packets (a B3 transaction is four of 30 to 300
        bytes), so the default buffer costs a ``recv`` per few dozen events. Swapped here, between the
        session's last query and the dump request, when the old buffer holds nothing: every response so far
        was read to its end and the server sends nothing unasked."""
        conn = self._stream_connection
        old = conn._rfile
        conn._rfile = conn._sock.makefile("rb", READ_BUFFER)
        if old is not None:
            old.close()  # the socket stays open: it has other references (pymysql's _sock)

    def _set_net_timeouts(self) -> None:
        """The session's ``net_write_timeout``/``net_read_timeout`` before the dump starts, as Debezium sets
        them on its binlog client when ``binlog.net.write.timeout``/``binlog.net.read.timeout`` are not 0:
        how long the server waits on a slow replica before it drops the dump."""
        names = ("net_write_timeout", "net_read_timeout")
        assignments = [f"{n} = {int(t)}" for n, t in zip(names, self._net_timeouts, strict=True) if t > 0]
        if assignments:
            with self._stream_connection.cursor() as cur:
                cur.execute("SET SESSION " + ", ".join(assignments))

    def close(self) -> None:
        """With ``use.nongraceful.disconnect``: the stream socket is reset (SO_LINGER 0) and closed without
        COM_QUIT, as Debezium's binlog client drops a connection it holds stale; otherwise the library's
        close (COM_QUIT, then the socket)."""
        conn = getattr(self, "_stream_connection", None)
        if self._nongraceful and conn is not None and conn._sock is not None:
            with contextlib.suppress(OSError):
                conn._sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn._force_close()
        super().close()

    # -- reading ---------------------------------------------------------------------------------------------
    def read(self) -> BinlogEvent | None:
        """The next event as one of our types (None: the end of a non-blocking stream)."""
        event = self.fetchone()
        if event is None or type(event) in _OURS:
            return event
        return from_library(event)

    def fetchone(self) -> Any:
        """The next event: ours where the fast path read it, the library's where the library did."""
        if self.end_log_pos or self.skip_to_timestamp:
            return super().fetchone()  # the library's stop and skip rules, for callers that use them
        while True:
            if not self._BinLogStreamReader__connected_stream:
                return self._library_fetch(None)
            data = self._read_data()
            if data[0] != 0:
                return self._library_fetch(data)  # EOF (non-blocking end) or anything else
            etype = data[5]
            if etype in self._skippable:
                self._advance(data)
                continue
            event = self._fast(data, etype)
            if event is None:
                return self._library_fetch(data)
            self.fast += 1
            if event is not _SKIPPED:
                return event

    def _read_data(self) -> bytes:
        """The next packet's payload: pymysql's ``_read_packet`` without building a ``MysqlPacket``."""
        conn = self._stream_connection
        if conn._current_timeout != conn._read_timeout:
            conn._sock.settimeout(conn._read_timeout)
            conn._current_timeout = conn._read_timeout
        parts: list[bytes] = []
        read = conn._rfile.read
        while True:
            try:  # pymysql's _read_bytes, inlined (Python retries EINTR itself)
                header = read(4)
                length = header[0] | (header[1] << 8) | (header[2] << 16) if len(header) == 4 else -1
                part = read(length) if length >= 0 else b""
            except OSError as exc:
                conn._force_close()
                raise OperationalError(
                    CR.CR_SERVER_LOST, f"Lost connection to MySQL server during query ({exc})"
                ) from exc
            except BaseException:
                conn._force_close()
                raise
            if length < 0 or len(part) < length:
                conn._force_close()
                raise OperationalError(CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
            if header[3] != conn._next_seq_id:
                conn._force_close()
                if header[3] == 0:  # MariaDB sends its shutdown error with sequence number 0
                    raise OperationalError(CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
                raise InternalError(
                    f"Packet sequence number wrong - got {header[3]} expected {conn._next_seq_id}"
                )
            conn._next_seq_id = (conn._next_seq_id + 1) % 256
            parts.append(part)
            if length < MAX_PACKET_LEN:
                break
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        if data[0] == 0xFF:
            MysqlPacket(data, conn.encoding).raise_for_error()
        return data

    def _advance(self, data: bytes) -> None:
        log_pos = _U32.unpack_from(data, 14)[0]
        if log_pos:
            self.log_pos = log_pos

    def _fast(self, data: bytes, etype: int) -> Any:
        """The fast event, ``_SKIPPED``, or None: the library reads this packet."""
        if etype in self._want_rows:
            return self._rows(data, etype)
        if etype == BINLOG.TABLE_MAP_EVENT:
            return self._table_map(data)
        if etype == BINLOG.XID_EVENT and self._want_xid:
            header = _HEADER.unpack_from(data, 0)
            if header[4]:
                self.log_pos = header[4]
            return Xid(header[0], header[2], header[4], header[3], _U64.unpack_from(data, 20)[0])
        if etype == BINLOG.MARIADB_GTID_EVENT and self._want_gtid:
            header = _HEADER.unpack_from(data, 0)
            seq, domain, flags = _GTID.unpack_from(data, 20)
            if header[4]:
                self.log_pos = header[4]
            gtid = f"{domain}-{header[2]}-{seq}"
            return Gtid(header[0], header[2], header[4], header[3], gtid, bool(flags & 1))  # FL_STANDALONE
        if etype == BINLOG.QUERY_EVENT and self._want_query:
            return self._query(data)
        return None

    def _body_end(self, data: bytes, size: int) -> int:
        # 1 OK byte + the event (``size`` counts its 19-byte header and the 4-byte checksum, if any)
        return 1 + size - (4 if self._BinLogStreamReader__use_checksum else 0)

    def _post_header(self, etype: int, known: int) -> int | None:
        lengths = self._BinLogStreamReader__post_header_lengths
        if not lengths or etype - 1 >= len(lengths):
            return known
        declared = int(lengths[etype - 1])
        return declared if declared >= known else None

    def _query(self, data: bytes) -> Any:
        header = _HEADER.unpack_from(data, 0)
        post = self._post_header(BINLOG.QUERY_EVENT, 13)
        if post is None:
            return None
        thread_id, _, schema_len, error_code, status_len = _QUERY.unpack_from(data, 20)
        start = 20 + post + status_len
        query_at = start + schema_len + 1
        query = data[query_at : self._body_end(data, header[3])]
        if error_code or query not in (b"BEGIN", b"COMMIT"):
            return None
        self._advance(data)
        raw = data[start : start + schema_len]
        schema = self._schemas.get(raw)
        if schema is None:
            if len(self._schemas) > 1024:
                self._schemas.clear()
            schema = self._schemas[raw] = raw.decode()
        return Query(header[0], header[2], header[4], header[3], query.decode(), schema, thread_id or None)

    def _table_map(self, data: bytes) -> Any:
        self.table_maps_read += 1
        size = int.from_bytes(data[10:14], "little")
        table_id = int.from_bytes(data[20:26], "little")
        body = data[20 : self._body_end(data, size)]
        known = self._table_maps.get(table_id)
        if known is not None and known[0] == body and self.table_map.get(table_id) is known[1]:
            self._advance(data)
            return _SKIPPED
        self._pending_map = (table_id, bytes(body))
        return None

    def _rows(self, data: bytes, etype: int) -> Any:
        header = _HEADER.unpack_from(data, 0)
        table_id = int.from_bytes(data[20:26], "little")
        table = self.table_map.get(table_id)
        if table is None:
            return None
        v2 = etype in _ROWS_V2
        known = 10 if v2 else 8
        post = self._post_header(etype, known)
        if post is None:
            return None
        pos = 20 + post
        if v2:
            extra = _U16.unpack_from(data, 28)[0]
            if extra != 2:  # partition or NDB info: the library reads those
                return None
        ncols = data[pos]
        if ncols >= 251:
            if ncols != 252:
                return None
            ncols = _U16.unpack_from(data, pos + 1)[0]
            pos += 3
        else:
            pos += 1
        width = (ncols + 7) >> 3
        kind = _ROWS_KIND[etype]
        event = Rows(header[0], header[2], header[4], header[3])
        event.columns_present_bitmap = data[pos : pos + width]
        pos += width
        if kind == "u":
            event.columns_present_bitmap2 = data[pos : pos + width]
            pos += width
        else:
            event.columns_present_bitmap2 = b""
        event.kind = kind
        event.table_id = table_id
        event.mapped = table
        event.schema = table.schema
        event.table = table.table
        event.number_of_columns = ncols
        event.data = data
        event.pos = pos
        event.end = self._body_end(data, header[3])
        event._reader = self
        event._library = None
        self._advance(data)
        return event

    # -- the library's path --------------------------------------------------------------------------------
    def _library_fetch(self, data: bytes | None) -> Any:
        """The library's ``fetchone``, reading ``data`` first (when given) as if it came off the wire."""
        self.slow += 1
        pending, self._pending_map = self._pending_map, None
        connection = getattr(self, "_stream_connection", None) if data is not None else None
        if connection is not None and data is not None:
            packet = MysqlPacket(data, connection.encoding)

            def replay(*_: Any) -> Any:
                del connection._read_packet  # back to the class's method for the packets after this one
                return packet

            connection._read_packet = replay
        try:
            return super().fetchone()
        finally:
            if connection is not None:
                connection.__dict__.pop("_read_packet", None)
            if pending is not None:
                table = self.table_map.get(pending[0])
                if table is not None:
                    self._table_maps[pending[0]] = (pending[1], table)

    def library_event(self, data: bytes) -> Any:
        """The library's event object for a packet (built as its ``fetchone`` builds one)."""
        packet = MysqlPacket(data, self._stream_connection.encoding)
        mangled = "_BinLogStreamReader__"
        wrapper = BinLogPacketWrapper(
            packet,
            self.table_map,
            self._ctl_connection,
            self.mysql_version,
            getattr(self, mangled + "use_checksum"),
            getattr(self, mangled + "allowed_events_in_packet"),
            getattr(self, mangled + "only_tables"),
            getattr(self, mangled + "ignored_tables"),
            getattr(self, mangled + "only_schemas"),
            getattr(self, mangled + "ignored_schemas"),
            getattr(self, mangled + "freeze_schema"),
            getattr(self, mangled + "ignore_decode_errors"),
            getattr(self, mangled + "verify_checksum"),
            getattr(self, mangled + "optional_meta_data"),
            getattr(self, mangled + "enable_logging"),
            getattr(self, mangled + "use_column_name_cache"),
            getattr(self, mangled + "post_header_lengths"),
        )
        return wrapper.event


_SKIPPED: Any = object()
_OURS = frozenset({Gtid, Query, Xid, Rows})  # what the fast path builds
