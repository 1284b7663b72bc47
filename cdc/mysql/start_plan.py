"""What a starting MySQL task does first (``snapshot.mode`` against the stored offset), and where its
offset is on this server: split from :mod:`cdc.mysql.task`, which wires the pipeline.

:func:`start_plan` answers ``snapshot`` (with data), ``schema`` (schema only, then stream from now),
``stream``, ``stream_from_start``, ``recover_schema``, ``snapshot_only`` or ``idle``.
"""

from __future__ import annotations

import dataclasses
import logging

from cdc.history.store import SchemaHistory
from cdc.mysql.config import MySqlSettings
from cdc.mysql.connection import ServerInfo, connect
from cdc.mysql.gtid_position import GtidNotFoundError, resume_position
from cdc.mysql.offsets import BinlogOffset
from cdc.mysql.schema import SchemaState
from cdc.mysql.snapshot_modes import ConfigurationBased, configuration_based_plan

__all__ = ["binlog_available", "on_this_server", "resume_offset", "start_plan"]

log = logging.getLogger(__name__)


def start_plan(
    settings: MySqlSettings,
    offset: BinlogOffset | None,
    schema: SchemaState,
    server: ServerInfo,
    history: SchemaHistory,
) -> str:
    """``snapshot`` (with data), ``schema`` (schema only, then stream from now), ``stream``, or
    ``snapshot_only``; recovers the schema from the history when streaming resumes."""
    from cdc.history.errors import SchemaHistoryMissingError

    mode = settings.snapshot_mode.lower()
    mode = {"schema_only": "no_data", "schema_only_recovery": "recovery"}.get(mode, mode)
    if mode == "configuration_based":
        plan = configuration_based_plan(
            ConfigurationBased.of(settings),
            offset is not None,
            lambda: (
                offset is not None
                and (not settings.log_position_check or binlog_available(settings, offset, server))
            ),
            history.exists,
        )
        if plan == "stream" and offset is not None:
            schema.recover(offset.position())
        return plan
    if mode == "always":
        return "snapshot"
    if offset is None:
        if mode == "never":
            return "stream_from_start"
        if mode in ("no_data", "recovery"):
            return "schema"
        return "snapshot_only" if mode == "initial_only" else "snapshot"
    if offset.snapshot and mode in ("initial", "initial_only", "when_needed"):
        log.info("The previous snapshot did not complete; redoing it")
        return "snapshot_only" if mode == "initial_only" else "snapshot"
    if mode == "initial_only":
        return "idle"
    check = settings.log_position_check  # internal.log.position.check.enable
    if mode == "when_needed" and check and not binlog_available(settings, offset, server):
        log.warning(
            "The binlog position %s:%s is no longer on the server; taking a new snapshot",
            offset.file,
            offset.pos,
        )
        return "snapshot"
    if mode == "recovery":
        return "recover_schema"
    if not history.exists():
        raise SchemaHistoryMissingError()
    schema.recover(offset.position())
    return "stream"


def resume_offset(settings: MySqlSettings, offset: BinlogOffset, server: ServerInfo) -> BinlogOffset:
    """Where streaming resumes: with ``gtid.ignore.on.recovery``, the offset's binlog file and position
    with its GTID set dropped (Debezium resets it, and tracks GTIDs again from the first transaction it
    reads); else, on MariaDB, the position the GTID set finds on this server."""
    if settings.gtid_ignore_on_recovery:
        if offset.gtids:
            log.info(
                "Ignoring the offset's GTID set on recovery (gtid.ignore.on.recovery); resuming from %s:%s",
                offset.file,
                offset.pos,
            )
        return dataclasses.replace(offset, gtids=None)
    return on_this_server(settings, offset) if server.mariadb else offset


def on_this_server(settings: MySqlSettings, offset: BinlogOffset) -> BinlogOffset:
    """The offset in this server's binlog coordinates, found by its GTID set after a failover."""
    conn = connect(settings)
    try:
        return resume_position(conn, offset)
    finally:
        conn.close()


def binlog_available(settings: MySqlSettings, offset: BinlogOffset, server: ServerInfo) -> bool:
    """Whether the offset can be resumed here: by its GTID set on MariaDB (another server's file names
    say nothing after a failover), else (or with ``gtid.ignore.on.recovery``, as Debezium) by its binlog
    file."""
    conn = connect(settings)
    try:
        if server.mariadb and offset.gtids and not settings.gtid_ignore_on_recovery:
            try:
                resume_position(conn, offset)
                return True
            except GtidNotFoundError:
                return False
        with conn.cursor() as cur:
            cur.execute("SHOW BINARY LOGS")
            files = [str(r[0]) for r in cur.fetchall()]
    finally:
        conn.close()
    return offset.file in files
