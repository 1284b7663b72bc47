"""topic.naming.strategy, topic.delimiter, topic.heartbeat.prefix, topic.transaction and the Avro name
adjusters: Debezium 3.6.1's answers (``python -m bench.debezium_naming --record``, run with its jars)
and the records and validate answers that follow from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc.api.errors import ConnectError
from cdc.history.model import Column, Table, TableId
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import EventFactory
from cdc.mysql.naming import NameAdjuster, TopicNaming, adjust_name, transaction_topic
from cdc.mysql.schema_events import SchemaChangeEvents
from cdc.mysql.validation import validate_mysql

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mysql" / "debezium-naming.tsv"
CASES = [
    line.split("\t|\t")
    for line in FIXTURE.read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]
BASE = {
    "database.hostname": "localhost",
    "database.user": "u",
    "database.password": "p",
    "database.server.id": "1",
    "topic.prefix": "server1",
    "schema.history.internal.kafka.topic": "h",
}


@pytest.mark.honours(
    "topic.naming.strategy",
    "topic.delimiter",
    "topic.heartbeat.prefix",
    "topic.transaction",
    "schema.name.adjustment.mode",
    "field.name.adjustment.mode",
)
@pytest.mark.parametrize(("case", "debezium"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_names_are_debeziums(case: str, debezium: str) -> None:
    fields = case.split("\t")
    if fields[0] == "topic":
        _, strategy, prefix, delimiter, heartbeat, transaction, db, table = fields
        settings = MySqlSettings.parse(
            {
                **BASE,
                "topic.prefix": prefix,
                "topic.naming.strategy": strategy,
                "topic.delimiter": delimiter,
                "topic.heartbeat.prefix": heartbeat,
                "topic.transaction": transaction,
            }
        )
        n = settings.naming
        topic = n.data_change_topic(TableId(db, table))
        ours = [topic, topic, n.schema_change_topic(), n.heartbeat_topic(), transaction_topic(settings)]
        assert ours == debezium.split("\t")
    else:
        kind, mode, name = fields
        assert adjust_name(name, mode, field_name=kind == "field") == debezium


def _table(*columns: str) -> Table:
    cols = tuple(Column(c, i + 1, "INT", "INT", 4, optional=i > 0) for i, c in enumerate(columns))
    return Table(TableId("my-db", "order_items"), cols, primary_key=(columns[0],))


@pytest.mark.honours(
    "topic.naming.strategy", "topic.delimiter", "field.name.adjustment.mode", "schema.name.adjustment.mode"
)
def test_records_take_the_strategys_topic_and_schema_names_and_adjusted_field_names() -> None:
    settings = MySqlSettings.parse(
        {
            **BASE,
            "topic.naming.strategy": "io.debezium.schema.DefaultUnicodeTopicNamingStrategy",
            "topic.delimiter": "-",
            "field.name.adjustment.mode": "avro",
        }
    )
    ts = EventFactory(settings).schema_for(_table("order-id", "1st col"))
    assert ts.topic == "server1-my-db-order_u005fitems"
    assert ts.value_schema.name == "server1-my-db-order_u005fitems.Value"
    assert ts.envelope.name == "server1-my-db-order_u005fitems.Envelope"
    unicode = MySqlSettings.parse({**dict(settings.raw), "schema.name.adjustment.mode": "avro_unicode"})
    named = EventFactory(unicode).schema_for(_table("order-id"))
    assert named.value_schema.name == "server1_u002dmy_u002ddb_u002dorder_u005fu005fitems.Value"
    assert named.topic == ts.topic  # topics are never adjusted, only schema names
    assert [f.name for f in ts.value_schema.fields] == ["order_id", "_1st_col"]
    assert [f.name for f in ts.key_schema.fields] == ["order_id"]  # type: ignore[union-attr]
    schema_topic = MySqlSettings.parse(
        {**BASE, "topic.naming.strategy": "io.debezium.schema.SchemaTopicNamingStrategy"}
    )
    assert EventFactory(schema_topic).schema_for(_table("id")).topic == "server1.order_items"
    # the default: Debezium's binlog connectors' DefaultTopicNamingStrategy, fields as the columns
    plain = EventFactory(MySqlSettings.parse(BASE)).schema_for(_table("order-id"))
    assert (plain.topic, plain.value_schema.fields[0].name) == ("server1.my-db.order_items", "order-id")


@pytest.mark.honours("topic.heartbeat.prefix", "topic.delimiter")
def test_heartbeat_and_schema_change_topics_follow_the_strategy() -> None:
    settings = MySqlSettings.parse({**BASE, "topic.delimiter": "_", "topic.heartbeat.prefix": "hb"})
    events = SchemaChangeEvents(settings, EventFactory(settings))
    assert (events.heartbeat_topic, events.topic) == ("hb_server1", "server1")
    assert TopicNaming.of(settings).transaction_topic() == "server1_transaction"


@pytest.mark.honours("topic.cache.size")
def test_topic_cache_size_is_accepted_and_other_strategies_refused_with_the_fix() -> None:
    errors = {v.name: v.errors for v in validate_mysql({**BASE, "topic.cache.size": "50"}) if v.errors}
    assert errors == {}
    errors = {
        v.name: v.errors
        for v in validate_mysql({**BASE, "topic.naming.strategy": "com.acme.MyStrategy"})
        if v.errors
    }
    assert "RegexRouter" in errors["topic.naming.strategy"][0]


@pytest.mark.honours("schema.name.adjustment.mode", "field.name.adjustment.mode")
def test_two_names_adjusted_to_one_fail_as_debezium_does() -> None:
    adjust = NameAdjuster("avro", field_names=True)
    assert adjust("a-b") == "a_b"
    assert adjust("a_b") == "a_b"  # valid as it is: no conflict
    with pytest.raises(ConnectError, match="conflicts with another different field 'a-b'"):
        adjust("a b")


COMMENT_CASES = [
    line.split("\t|\t")
    for line in (FIXTURE.with_name("debezium-comments.tsv")).read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]


@pytest.mark.honours("include.schema.comments")
@pytest.mark.parametrize(("case", "debezium"), COMMENT_CASES)
def test_ddl_comments_are_kept_only_with_include_schema_comments_as_debezium_keeps_them(
    case: str, debezium: str
) -> None:
    from bench.debezium_naming import cdc_comments

    include, ddl = case.split("\t", 1)
    assert cdc_comments(ddl, include == "true") == debezium
    settings = MySqlSettings.parse({**BASE, "include.schema.comments": include})
    assert settings.include_schema_comments is (include == "true")


@pytest.mark.honours("include.schema.comments")
def test_column_comments_become_field_docs_and_history_comments() -> None:
    from cdc.history.store import MemorySchemaHistory
    from cdc.mysql.filters import Filters
    from cdc.mysql.schema import SchemaState

    ddl = "CREATE TABLE db.t (id INT PRIMARY KEY COMMENT 'the key', v INT COMMENT 'a value') COMMENT 'rows'"
    docs = {}
    for include in ("true", "false"):
        settings = MySqlSettings.parse({**BASE, "include.schema.comments": include})
        history = MemorySchemaHistory()
        state = SchemaState(settings, Filters(settings), history)
        (change,) = state.apply_ddl(ddl, "db", {"file": "b.000001", "pos": 4})
        ts = EventFactory(settings).schema_for(change.table)
        docs[include] = (
            [f.schema.doc for f in ts.value_schema.fields],
            [f.schema.doc for f in ts.key_schema.fields],  # type: ignore[union-attr]
            change.table.comment,
            history._lines[0].count('"comment":null'),
        )
    assert docs["true"] == (["the key", "a value"], ["the key"], "rows", 0)
    assert docs["false"] == ([None, None], [None], None, 3)  # table and both columns: null, as Debezium
