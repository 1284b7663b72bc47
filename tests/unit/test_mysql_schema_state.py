"""What the MySQL connector's schema history records, as Debezium 3.5 records it (seen in make compat)."""

from __future__ import annotations

import json

from cdc.history.store import MemorySchemaHistory
from cdc.mysql.config import MySqlSettings
from cdc.mysql.filters import Filters
from cdc.mysql.schema import SchemaState

CONFIG = {
    "database.hostname": "unused",
    "database.user": "u",
    "database.server.id": "5400",
    "topic.prefix": "p",
    "database.include.list": "db",
    "schema.history.internal.kafka.topic": "h",
    "schema.history.internal.store.only.captured.databases.ddl": "true",
}


def _recorded(history: MemorySchemaHistory) -> list[dict[str, object]]:
    return [json.loads(line) for line in history._lines]


def test_a_table_statement_is_filed_under_the_tables_database() -> None:
    settings = MySqlSettings.parse(CONFIG)
    history = MemorySchemaHistory()
    state = SchemaState(settings, Filters(settings), history)
    position = {"file": "b.000001", "pos": 4}
    # run in another session database (or none), naming the table's database: filed by the table's
    state.apply_ddl("CREATE TABLE db.t (id INT PRIMARY KEY, v INT)", "elsewhere", position)
    state.apply_ddl("CREATE TABLE other.t (id INT PRIMARY KEY)", None, position)
    state.apply_ddl("CREATE TABLE other.u (id INT PRIMARY KEY)", "db", position)
    state.apply_ddl("DROP TABLE IF EXISTS db.gone", "db", position)
    records = _recorded(history)
    assert [(r["databaseName"], r["ddl"]) for r in records] == [
        ("db", "CREATE TABLE db.t (id INT PRIMARY KEY, v INT)"),
        ("db", "DROP TABLE IF EXISTS db.gone"),
    ]
    (change,) = records[0]["tableChanges"]  # type: ignore[misc]
    # a nullable column without a DEFAULT clause has a default (NULL) to Debezium
    assert [c["hasDefaultValue"] for c in change["table"]["columns"]] == [False, True]
    assert records[1]["tableChanges"] == [{"type": "DROP", "id": '"db"."gone"'}]
