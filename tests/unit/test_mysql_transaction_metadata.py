"""The transaction context (``cdc.mysql.transactions``) as Debezium's ``TransactionContext`` keeps it: counts
after each event, a tombstone not counted, offsets carrying the context, a restart continuing it."""

from __future__ import annotations

from cdc.api.records import SourceRecord
from cdc.api.schema import STRING_SCHEMA, SchemaBuilder
from cdc.api.struct import Struct
from cdc.history.model import TableId
from cdc.mysql.config import MySqlSettings
from cdc.mysql.events import TRANSACTION_SCHEMA
from cdc.mysql.transactions import TransactionMetadata, transaction_id

SETTINGS = MySqlSettings.parse({"database.hostname": "h", "database.user": "u", "topic.prefix": "p"})
ENVELOPE = SchemaBuilder.struct().field("op", STRING_SCHEMA).field("transaction", TRANSACTION_SCHEMA).build()


def _record(op: str | None) -> SourceRecord:
    value = Struct(ENVELOPE, [op, None]) if op else None
    return SourceRecord(
        topic="p.db.t",
        kafka_partition=None,
        key_schema=None,
        key=None,
        value_schema=ENVELOPE if op else None,
        value=value,
        source_partition={"server": "p"},
        source_offset={"file": "binlog.000001", "pos": 4, "row": 1},
    )


def test_a_transaction_from_begin_to_end() -> None:
    tx = TransactionMetadata(SETTINGS, {"server": "p"})
    (begin,) = tx.begin("0-1-7", 1000, {"file": "binlog.000001", "pos": 4})
    assert begin.topic == "p.transaction" and begin.value.get("status") == "BEGIN"
    assert begin.source_offset["transaction_id"] == "0-1-7"
    assert tx.begin("0-1-7", 1000, {}) == []  # a restart replaying the transaction: no second BEGIN
    out = tx.data(TableId("db", "t"), [_record("d"), _record(None), _record("c")])
    blocks = [r.value.get("transaction") for r in out if r.value is not None]
    assert [(b.get("id"), b.get("total_order"), b.get("data_collection_order")) for b in blocks] == [
        ("0-1-7", 1, 1),
        ("0-1-7", 2, 2),
    ]
    assert out[0].source_offset["transaction_data_collection_order_db.t"] == 1
    assert out[1].source_offset is out[0].source_offset  # the tombstone: the delete's offset
    assert out[2].source_offset["transaction_data_collection_order_db.t"] == 2
    tx.data(TableId("db", "u"), [_record("c")])
    (end,) = tx.commit(2000, {"file": "binlog.000001", "pos": 4})
    assert end.value.get("event_count") == 3
    assert [(c.get("data_collection"), c.get("event_count")) for c in end.value.get("data_collections")] == [
        ("db.t", 2),
        ("db.u", 1),
    ]
    assert end.source_offset["transaction_data_collection_order_db.u"] == 1
    assert tx.commit(3000, {}) == []  # nothing in progress
    assert tx.store({"file": "f"}) == {"file": "f"}


def test_a_restart_continues_the_counts() -> None:
    tx = TransactionMetadata(SETTINGS, {"server": "p"})
    tx.restore({"transaction_id": "0-1-9", "transaction_data_collection_order_db.t": 4, "file": "f"})
    assert tx.begin("0-1-9", 1, {}) == []
    (record,) = tx.data(TableId("db", "t"), [_record("c")])
    block = record.value.get("transaction")
    assert (block.get("total_order"), block.get("data_collection_order")) == (5, 5)


def test_ids() -> None:
    assert transaction_id("0-1-9", "binlog.000001", 4) == "0-1-9"
    assert transaction_id(None, "binlog.000001", 120) == "file=binlog.000001,pos=120"
