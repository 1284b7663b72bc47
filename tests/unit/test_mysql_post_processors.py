"""post.processors with Debezium's ReselectColumnsPostProcessor: validation, which columns are read again,
the key used, and the error handling mode (the database is a fake here; tests/integration/
test_mysql_bad_day.py runs it on the stack's MariaDB)."""

from __future__ import annotations

from typing import Any

import pytest

from cdc.api.errors import ConnectError
from cdc.history.store import MemorySchemaHistory
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import EventFactory, SourcePosition
from cdc.mysql.filters import Filters
from cdc.mysql.post_processors import RESELECT, ProcessedEmit
from cdc.mysql.schema import SchemaState
from cdc.mysql.validation import validate_mysql

BASE = {
    "database.hostname": "localhost",
    "database.user": "u",
    "database.password": "p",
    "topic.prefix": "p",
    "schema.history.internal.kafka.topic": "h",
    "post.processors": "rs",
    "rs.type": RESELECT,
}
PH = "__debezium_unavailable_value"


class _Conn:
    """Answers each SELECT with ``rows`` and remembers it."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows, self.queries = rows, []

    def cursor(self) -> _Conn:
        return self

    def execute(self, sql: str, params: Any = None) -> None:
        self.queries.append((sql, list(params or ())))

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def close(self) -> None:
        pass


def _run(options: dict[str, str], after_row: list[Any], rows: list[tuple[Any, ...]]) -> tuple[Any, _Conn]:
    props = {**BASE, **{f"rs.{k}": v for k, v in options.items()}}
    settings = MySqlSettings.parse(props)
    state = SchemaState(settings, Filters(settings), MemorySchemaHistory())
    (change,) = state.apply_ddl(
        "CREATE TABLE db.t (id INT PRIMARY KEY, code VARCHAR(5), body TEXT, note VARCHAR(9))", "db", {}
    )
    events = EventFactory(settings)
    ts = events.schema_for(change.table)
    pos = SourcePosition("binlog.000001", 4, 1, 1)
    source = events.source(pos, change.table.id, 1000, None, "db")
    (record,) = events.update(ts, [1, "k", PH, "x"], after_row, source, {})
    conn = _Conn(rows)
    out: list[Any] = []
    emit = ProcessedEmit(lambda rs: out.extend(rs) or True)
    emit.install(props, PH, state, events, lambda: conn, None)
    emit([record])
    return out[0].value.get("after"), conn


@pytest.mark.honours("post.processors")
def test_placeholders_and_nulls_are_read_again_for_the_selected_columns() -> None:
    after, conn = _run({}, [1, "k", PH, None], [("fresh body", "fresh note")])
    assert after.values == [1, "k", "fresh body", "fresh note"]
    assert conn.queries == [("SELECT `body`,`note` FROM `db`.`t` WHERE `id`=%s", [1])]
    # reselect.null.values=false, and an include list naming only body
    after, conn = _run(
        {"reselect.null.values": "false", "reselect.columns.include.list": r"db\.t:BODY"},
        [1, "k", PH, None],
        [("b",)],
    )
    assert after.values == [1, "k", "b", None]
    # the exclude list, and reselect.unavailable.values=false
    after, conn = _run(
        {"reselect.unavailable.values": "false", "reselect.columns.exclude.list": r"db\.t:body"},
        [1, "k", PH, None],
        [("n",)],
    )
    assert after.values == [1, "k", PH, "n"] and conn.queries[0][0].startswith("SELECT `note` ")


@pytest.mark.honours("post.processors")
def test_the_event_key_and_missing_rows() -> None:
    _, conn = _run({"reselect.use.event.key": "true"}, [1, "k", PH, "x"], [("b",)])
    assert conn.queries[0][0].endswith("WHERE `id`=%s")
    after, _ = _run({}, [1, "k", PH, "x"], [])  # the row is gone: warn, the event as it was
    assert after.values == [1, "k", PH, "x"]
    with pytest.raises(ConnectError, match=r"Failed to find row in table db.t with key Struct\{id=1\}"):
        _run({"reselect.error.handling.mode": "fail"}, [1, "k", PH, "x"], [])


def test_only_debeziums_reselect_processor_is_accepted() -> None:
    def errors(props: dict[str, str]) -> dict[str, list[str]]:
        return {v.name: v.errors for v in validate_mysql({**BASE, **props}) if v.errors}

    assert errors({}) == {}
    assert "cannot run in cdc" in errors({"rs.type": "com.acme.Mine"})["rs.type"][0]
    assert "has no 'x.type'" in errors({"post.processors": "x"})["post.processors"][0]
    assert (
        "either true or false" in errors({"rs.reselect.null.values": "maybe"})["rs.reselect.null.values"][0]
    )
