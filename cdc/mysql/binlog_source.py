"""Opening the binlog: the events the streamer asks for, and the reader on the connector's server.

:class:`~cdc.mysql.streaming.Streamer` reads through an :class:`EventReader` that a :data:`ReaderFactory`
opens at an offset; :func:`binlog_reader_factory` gives our :class:`~cdc.mysql.binlog.BinlogReader`, a
unit test a reader of recorded events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import pymysqlreplication.binlogstream as _binlogstream
from pymysqlreplication.event import (
    GtidEvent,
    HeartbeatLogEvent,
    MariadbAnnotateRowsEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XidEvent,
)
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from cdc.mysql.binlog import BinlogReader
from cdc.mysql.binlog_events import BinlogEvent
from cdc.mysql.config import MySqlSettings
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.server_ids import report_host

__all__ = ["QUERY_EVENTS", "STREAM_EVENTS", "EventReader", "ReaderFactory", "binlog_reader_factory"]

# Errors 2013/2006 must reach us: the library's own reconnect restarts from its *original* position.
_binlogstream.MYSQL_EXPECTED_ERROR_CODES = []


class _RowMetadataAdvice(logging.Filter):
    """Drops the library's advice to set binlog_row_metadata=FULL: cdc reads names from its own model."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "BINLOG_ROW_METADATA = FULL" not in record.getMessage()


logging.getLogger(_binlogstream.__name__).addFilter(_RowMetadataAdvice())

# The library's event classes the streamer asks for (BinlogReader reads the frequent ones itself).
STREAM_EVENTS = (
    WriteRowsEvent,
    UpdateRowsEvent,
    DeleteRowsEvent,
    QueryEvent,
    XidEvent,
    RotateEvent,
    GtidEvent,
    MariadbGtidEvent,
    HeartbeatLogEvent,
)
# With include.query: the statement of the row events that follow (MariaDB's ANNOTATE_ROWS, written with
# binlog_annotate_row_events=ON; MySQL's ROWS_QUERY, with binlog_rows_query_log_events=ON).
QUERY_EVENTS = (MariadbAnnotateRowsEvent, RowsQueryLogEvent)


class EventReader(Protocol):
    """A source of binlog events (:mod:`cdc.mysql.binlog_events`), None at the end; an
    :class:`OperationalError` for a lost connection."""

    table_maps_read: int
    """TABLE_MAP events read so far (Debezium counts them in an offset's ``event``)."""

    def read(self) -> BinlogEvent | None: ...

    def close(self) -> None: ...


ReaderFactory = Callable[[BinlogOffset], EventReader]
"""Opens an event source at an offset's file and position."""


def binlog_reader_factory(settings: MySqlSettings, mariadb: bool = False) -> ReaderFactory:
    """Our :class:`BinlogReader` on the connector's server, as a replica with its ``database.server.id``;
    with ``include.query`` it asks for the statements of row events too (on MariaDB: ANNOTATE_ROWS)."""
    events = [*STREAM_EVENTS, *(QUERY_EVENTS if settings.include_query else ())]
    # connect.keep.alive: Debezium asks for a heartbeat every 0.8 x the keep-alive interval and its client
    # takes a connection that brought nothing for the interval as lost. cdc asks for one at least every
    # second either way (heartbeat.interval.ms and the signals are served between events), and at most
    # every 100 ms: a config must not make the server send thousands a second.
    interval_s = settings.connect_keep_alive_interval_ms / 1000
    heartbeat_s = max(0.1, min(1.0, 0.8 * interval_s)) if settings.connect_keep_alive else 1.0
    keep_alive = {"read_timeout": max(interval_s, 2 * heartbeat_s)} if settings.connect_keep_alive else {}

    def open_reader(start: BinlogOffset) -> EventReader:
        return BinlogReader(
            connection_settings={
                "host": settings.database_hostname,
                "port": settings.database_port,
                "user": settings.database_user,
                "password": settings.password,
                **keep_alive,
            },
            server_id=settings.database_server_id,
            # registered under a name of its own: validate tells this connector's connection from others'
            report_slave=report_host(settings.prefix),
            resume_stream=True,
            log_file=start.file,
            log_pos=start.pos,
            blocking=True,
            only_events=events,
            annotate_rows=settings.include_query and mariadb,
            net_timeouts=(settings.binlog_net_write_timeout, settings.binlog_net_read_timeout),
            nongraceful=settings.use_nongraceful_disconnect,
            slave_heartbeat=heartbeat_s,
            is_mariadb=False,
            freeze_schema=True,
            enable_logging=False,
            # the replication connection and the library's control connection, with database.ssl.*'s TLS
            pymysql_wrapper=settings.tls.pymysql_connect,
        )

    return open_reader
