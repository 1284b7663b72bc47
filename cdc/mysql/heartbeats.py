"""``heartbeat.action.query``: a statement run on the source with every heartbeat (Debezium's
``DatabaseHeartbeatImpl``).

Why users set it: a connector whose captured tables are idle on a busy server still reads the binlog, but
with nothing to emit its committed offset would stay behind (and the server may purge the binlog it points
at). Heartbeats carry the latest position; the action query (typically an upsert into a heartbeat table)
also makes the server write to the binlog when it is otherwise quiet, so the position keeps moving.

As Debezium does: the statement runs on a connection of its own (``database.*``, TLS and initial
statements included), in autocommit, each time a heartbeat is due; an error is logged and the heartbeat is
emitted anyway (the connection is opened again on the next beat).
"""

from __future__ import annotations

import logging
from typing import Any

from cdc.mysql.config import MySqlSettings
from cdc.mysql.connection import connect

__all__ = ["HeartbeatAction"]

log = logging.getLogger(__name__)


class HeartbeatAction:
    def __init__(self, settings: MySqlSettings) -> None:
        self.settings = settings
        self.query = settings.heartbeat_action_query.strip()
        self.conn: Any = None
        self.executed = 0
        self.failed = 0

    @property
    def enabled(self) -> bool:
        return bool(self.query)

    def run(self) -> None:
        """Runs the query once; never raises (a failed action must not stop streaming)."""
        if not self.query:
            return
        try:
            if self.conn is None:
                self.conn = connect(self.settings)
            with self.conn.cursor() as cur:
                cur.execute(self.query)
            self.executed += 1
            log.debug("Executed heartbeat action query")
        except Exception as exc:
            self.failed += 1
            code = exc.args[0] if getattr(exc, "args", None) else ""
            log.error("Could not execute heartbeat action (Error: %s): %s", code, exc)
            self.close()

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # already broken: nothing to release
                log.debug("Closing the heartbeat connection failed", exc_info=True)
