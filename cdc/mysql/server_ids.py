"""``database.server.id`` conflicts: two binlog clients of one server with the same id take turns forever.

A MySQL/MariaDB server keeps one binlog dump per replica server id: a second client registering with an id
in use ends the first one's connection ("A slave with the same server_uuid/server_id …"), which
reconnects and ends the second's, and so on — both connectors RUNNING, each re-reading and re-emitting
around every switch. This module finds the conflict before it happens and names it:

- :func:`group_conflicts`: another connector of the worker group on the same server with the same id
  (validate and create see every config the group holds);
- :func:`replica_conflicts`: a live replica of the server holding the id (``SHOW SLAVE HOSTS``). cdc's own
  binlog clients register with the report host :func:`report_host` (``cdc:<topic.prefix>``), so the
  connector's own previous connection (a restart, a config update) is told apart from anybody else's.

At run time the server's disconnect is :func:`is_same_id_error`; :class:`SameIdGuard` fails the task after
:data:`SAME_ID_TRIES` of them in a row.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from cdc.api.errors import ConnectError
from cdc.mysql.config import MySqlSettings

__all__ = [
    "SAME_ID_TRIES",
    "SameIdGuard",
    "group_conflicts",
    "is_same_id_error",
    "replica_conflicts",
    "report_host",
]

log = logging.getLogger("cdc.mysql.streaming")  # the streamer's lines, where operators look for them

SAME_ID_TRIES = 3
"""Same-server-id disconnects in a row (within :data:`SAME_ID_WINDOW_S`) after which the task fails."""
SAME_ID_WINDOW_S = 300.0
DEFAULT_SERVER_ID = 5400
_ER_SLAVE_SAME_ID = 4052  # MariaDB; MySQL ends the dump with error 1236 and the same words


def report_host(prefix: str) -> str:
    """The report host cdc's binlog client registers with (shown by ``SHOW SLAVE HOSTS``)."""
    return f"cdc:{prefix}"[:60]


def is_same_id_error(code: int, message: str) -> bool:
    return code == _ER_SLAVE_SAME_ID or "same server_uuid/server_id" in message


def _server(host: str, port: int) -> tuple[str, int]:
    host = host.strip().lower()
    return ("127.0.0.1" if host in ("localhost", "::1") else host), port


def _int(text: str | None, default: int) -> int | None:
    if text is None or not str(text).strip():
        return default
    try:
        return int(str(text).strip())
    except ValueError:
        return None  # unresolved (a config provider's ${…}) or invalid: not comparable


def group_conflicts(
    server_id: int,
    host: str,
    port: int,
    others: Mapping[str, Mapping[str, str]],
    is_binlog: Callable[[str], bool],
) -> list[str]:
    """Messages for the group's other binlog connectors (``is_binlog`` of their ``connector.class``) on
    the same server with the same ``database.server.id``."""
    mine = _server(host, port)
    used: dict[int, list[str]] = {}
    clashes: list[str] = []
    for name, config in sorted(others.items()):
        if not is_binlog(str(config.get("connector.class", ""))):
            continue
        other_port = _int(config.get("database.port"), 3306)
        other_id = _int(config.get("database.server.id"), DEFAULT_SERVER_ID)
        if other_port is None or other_id is None:
            continue
        if _server(str(config.get("database.hostname", "")), other_port) != mine:
            continue
        used.setdefault(other_id, []).append(name)
        if other_id == server_id:
            clashes.append(name)
    if not clashes:
        return []
    free = max([server_id, *used]) + 1
    names = ", ".join(f"'{n}'" for n in clashes)
    return [
        f"database.server.id {server_id} is already used by connector {names} of this worker group on the "
        f"same server ({host}:{port}): two binlog clients with one server id end each other's connection "
        f"over and over. Give each connector its own database.server.id (for example {free})"
    ]


def replica_conflicts(conn: Any, server_id: int, prefix: str, where: str) -> list[str]:
    """Messages for a live replica of the server (``SHOW SLAVE HOSTS``) holding ``server_id``, other than
    this connector's own earlier connection (registered as :func:`report_host` of ``prefix``)."""
    with conn.cursor() as cur:
        try:
            cur.execute("SHOW SLAVE HOSTS")
        except Exception:  # no privilege to list them: the run-time check still applies
            return []
        rows = cur.fetchall()
    own = report_host(prefix)
    holders = [str(row[1] or "") for row in rows if int(row[0]) == server_id and str(row[1] or "") != own]
    if not holders:
        return []
    shown = ", ".join(f"'{h}'" if h else "(no report host)" for h in holders)
    return [
        f"database.server.id {server_id} is held by a replica connected to {where} now (SHOW SLAVE HOSTS: "
        f"host {shown}): two binlog clients with one server id end each other's connection over and "
        "over. Choose a database.server.id no replica of this server uses"
    ]


class SameIdGuard:
    """Counts the server's same-server-id disconnects of one streamer's binlog connection."""

    def __init__(self, settings: MySqlSettings) -> None:
        self.settings = settings
        self.times: list[float] = []  # when the server ended the dump for a same-server-id client

    def disconnect(self, message: str, exc: Exception) -> bool:
        """The server ended the binlog dump because another client registered with this server id: retried
        (it may be this connector's own previous connection) at most SAME_ID_TRIES times in a row; then a
        ConnectError fails the task with the server's words."""
        now = time.monotonic()
        if self.times and now - self.times[-1] > SAME_ID_WINDOW_S:
            self.times.clear()
        self.times.append(now)
        settings = self.settings
        if len(self.times) >= SAME_ID_TRIES:
            raise ConnectError(
                f"Another binlog client connected to {settings.database_hostname}:{settings.database_port} "
                f"with this connector's database.server.id {settings.database_server_id}, "
                f"{len(self.times)} times in a row; the server ended this connector's binlog connection "
                f"each time: {message}. "
                "Two clients with one server id end each other's connection over and over: give each "
                "connector and replica of this server its own database.server.id."
            ) from exc
        log.warning(
            "The server ended the binlog connection: another client uses database.server.id %s (%d of %d "
            "tries): %s",
            settings.database_server_id,
            len(self.times),
            SAME_ID_TRIES,
            message,
        )
        return True
