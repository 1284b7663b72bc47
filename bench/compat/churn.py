"""A snapshot failed by another client of the shared server, not by either connector: the run is redone.

Under ``snapshot.locking.mode=none`` (and in the table-lock path) nothing holds the server's schema still
while a snapshot reads it, and under Debezium's defaults both connectors read every database's schema:
a table another client drops between the snapshot's listing of the tables and its ``SHOW CREATE TABLE``
fails Debezium's snapshot (``Table '<db>.<table>' doesn't exist``), and cdc's, which does the same. Such a
failure says nothing about the two connectors' records: a row whose snapshot failed on a table or
database *not of the run* is run again with a fresh database and topics (``ATTEMPTS`` in all); a failure
naming one of the run's own databases is a failure as any other.
"""

from __future__ import annotations

import re

__all__ = ["ATTEMPTS", "ServerChanged", "foreign_vanished"]

ATTEMPTS = 3

# MariaDB's messages as Connector/J (Debezium) and PyMySQL/mysqlclient (cdc) carry them, inside a
# connector's status JSON (quotes possibly escaped)
_VANISHED = re.compile(r"Table \\?'([^'\\]+)\.[^'\\]+\\?' doesn't exist|Unknown database \\?'([^'\\]+)\\?'")


class ServerChanged(RuntimeError):
    """A connector's snapshot failed because another client dropped a table or database meanwhile."""


def foreign_vanished(status: str, own: set[str]) -> str | None:
    """The database named by a vanished-table (1146) or unknown-database (1049) error in ``status`` when it
    is none of ``own`` (the run's databases); None otherwise."""
    for match in _VANISHED.finditer(status):
        database = match.group(1) or match.group(2)
        if database not in own:
            return database
    return None
