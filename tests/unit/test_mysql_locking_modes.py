"""``snapshot.locking.mode``: ``minimal_percona`` is the MySQL connector's (Debezium's MariaDbConnector has
no such mode: MariaDB has no ``LOCK TABLES FOR BACKUP``), and takes the backup lock, released with the
schema read, where ``minimal`` takes ``FLUSH TABLES WITH READ LOCK``."""

from __future__ import annotations

import pytest

from cdc.mysql import snapshot
from cdc.mysql.connector import MariaDbConnector, MySqlConnector

PROPS = {"topic.prefix": "p", "database.server.id": "1", "database.user": "u"}


def _errors(connector: MySqlConnector, mode: str) -> list[str]:
    values = connector.validate({**PROPS, "snapshot.locking.mode": mode})
    return next(v.errors for v in values if v.name == "snapshot.locking.mode")


def test_the_mariadb_connector_refuses_minimal_percona_as_debezium_does() -> None:
    assert _errors(MariaDbConnector(), "minimal_percona") == ["Value must be one of minimal, extended, none"]
    assert _errors(MariaDbConnector(), "minimal") == []


def test_the_mysql_connector_takes_minimal_percona() -> None:
    assert _errors(MySqlConnector(), "minimal_percona") == []


@pytest.mark.parametrize(
    ("mode", "statement", "released_after_schema"),
    [
        ("minimal", "FLUSH TABLES WITH READ LOCK", True),
        ("minimal_percona", "LOCK TABLES FOR BACKUP", True),
        ("extended", "FLUSH TABLES WITH READ LOCK", False),
    ],
)
def test_the_lock_each_mode_takes(mode: str, statement: str, released_after_schema: bool) -> None:
    assert snapshot._GLOBAL_LOCK.get(mode, "FLUSH TABLES WITH READ LOCK") == statement
    assert (mode in snapshot._MINIMAL) is released_after_schema
