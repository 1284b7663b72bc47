"""``provide.transaction.metadata``: Debezium's transaction topic and the ``transaction`` block of events.

Debezium's ``TransactionMonitor`` (3.6), as the binlog connectors drive it:

* every transaction start (a GTID event, or ``BEGIN``) writes a BEGIN record to
  ``<prefix>.<topic.transaction>``, whether or not the transaction touches a captured table; its id is
  the GTID, else ``file=F,pos=P`` of the transaction's start (``BinlogOffsetContext.setTransactionId``).
  A start with the id already in progress (a restart replaying the transaction) writes nothing;
* every change record of a captured table gets ``transaction = {id, total_order, data_collection_order}``
  (counts taken *after* the record is counted; a tombstone is not counted);
* the commit (XID or ``COMMIT``) writes an END record with ``event_count`` and ``data_collections`` (the
  per-table counts, in the iteration order of Debezium's ``HashMap``); a DDL's transaction (MariaDB writes a
  standalone GTID before it) has no commit, so it gets a BEGIN and no END, and stays "in progress" until the
  next start;
* BEGIN's and END's ``ts_ms`` are the time of the binlog event read *before* the GTID/XID event (Debezium's
  ``eventTimestamp`` is set by a listener that runs after the event's handler); their offsets' ``ts_sec`` is
  Debezium's source time, set by the last change of a captured table or DDL (the snapshot's, at first);
* while a transaction is in progress every offset carries ``transaction_id`` and
  ``transaction_data_collection_order_<db.table>`` (``TransactionContext.store``), which a restart reads back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.api.offsets import java_hash_map_order
from cdc.api.records import SourceRecord
from cdc.api.schema import INT64_SCHEMA, OPTIONAL_INT64_SCHEMA, STRING_SCHEMA, Schema, SchemaBuilder
from cdc.api.struct import Struct
from cdc.history.model import TableId
from cdc.mysql.config import MySqlSettings
from cdc.mysql.offsets import DEBEZIUM_OFFSET_ORDER, BinlogOffset
from cdc.mysql.schemanames import adjust_schema_name

__all__ = ["TransactionMetadata", "transaction_id", "transaction_topic"]

OFFSET_ID = "transaction_id"
OFFSET_COUNT = "transaction_data_collection_order_"

COLLECTION_SCHEMA = (
    SchemaBuilder.struct()
    .optional()
    .name("event.collection")
    .version(1)
    .field("data_collection", STRING_SCHEMA)
    .field("event_count", INT64_SCHEMA)
    .build()
)


def transaction_topic(settings: MySqlSettings) -> str:
    """Debezium's ``DefaultTopicNamingStrategy.transactionTopic``:
    ``<prefix><delimiter><topic.transaction>``."""
    return settings.topic_delimiter.join((settings.prefix, settings.topic_transaction))


def _key_schema(mode: str) -> Schema:
    return (
        SchemaBuilder.struct()
        .name(adjust_schema_name("io.debezium.connector.common.TransactionMetadataKey", mode))
        .version(1)
        .field("id", STRING_SCHEMA)
        .build()
    )


def _value_schema(mode: str) -> Schema:
    return (
        SchemaBuilder.struct()
        .name(adjust_schema_name("io.debezium.connector.common.TransactionMetadataValue", mode))
        .version(1)
        .field("status", STRING_SCHEMA)
        .field("id", STRING_SCHEMA)
        .field("event_count", OPTIONAL_INT64_SCHEMA)
        .field("data_collections", SchemaBuilder.array(COLLECTION_SCHEMA).optional().build())
        .field("ts_ms", INT64_SCHEMA)
        .build()
    )


class TransactionMetadata:
    """The transaction context of the binlog stream (Debezium's ``TransactionContext`` and monitor)."""

    def __init__(self, settings: MySqlSettings, partition: Mapping[str, Any]) -> None:
        self.topic = transaction_topic(settings)
        self.partition = dict(partition)
        mode = settings.schema_name_adjustment_mode
        self.key_schema = _key_schema(mode)
        self.value_schema = _value_schema(mode)
        self.tx_id: str | None = None
        self.counts: dict[
            str, int
        ] = {}  # per table, in first-event order (HashMap order is applied on output)
        self.total = 0

    # -- restart ------------------------------------------------------------------------------------------
    def restore(self, offset: Mapping[str, Any]) -> None:
        """The context a committed offset carries (``TransactionContext.load``)."""
        tx_id = offset.get(OFFSET_ID)
        self.tx_id = str(tx_id) if tx_id is not None else None
        self.counts = {
            k[len(OFFSET_COUNT) :]: int(v) for k, v in offset.items() if k.startswith(OFFSET_COUNT)
        }
        self.total = sum(self.counts.values())

    # -- events -------------------------------------------------------------------------------------------
    def begin(self, tx_id: str, ts_ms: int, offset: dict[str, Any]) -> list[SourceRecord]:
        """A transaction starts: its BEGIN record (none when a restart replays the one in progress)."""
        if self.tx_id is not None and self.tx_id == tx_id:
            return []
        self.tx_id, self.counts, self.total = tx_id, {}, 0
        value = Struct(self.value_schema, ["BEGIN", tx_id, None, None, ts_ms])
        return [self._record(value, offset)]

    def begin_at(
        self, tx_id: str, previous_ts_ms: int, source_ts_sec: int, checkpoint: BinlogOffset
    ) -> list[SourceRecord]:
        """:meth:`begin` at the streamer's ``checkpoint`` (the transaction's start, no event done yet);
        ``previous_ts_ms``: the time of the event read before this one (0: none yet, this one's);
        ``source_ts_sec``: the offset's ``ts_sec``, Debezium's source time (its last captured change)."""
        ts_ms = previous_ts_ms or checkpoint.ts_sec * 1000
        return self.begin(tx_id, ts_ms, checkpoint.with_(event=0, ts_sec=source_ts_sec).to_dict())

    def commit_at(
        self, previous_ts_ms: int, source_ts_sec: int, checkpoint: BinlogOffset
    ) -> list[SourceRecord]:
        """:meth:`commit` at the streamer's ``checkpoint`` (still inside the transaction, as Debezium's END
        is built before its offset moves past the commit)."""
        ts_ms = previous_ts_ms or checkpoint.ts_sec * 1000
        return self.commit(ts_ms, checkpoint.with_(ts_sec=source_ts_sec).to_dict())

    def commit(self, ts_ms: int, offset: dict[str, Any]) -> list[SourceRecord]:
        """The transaction commits: its END record (none when no transaction is in progress)."""
        if self.tx_id is None:
            return []
        collections = [
            Struct(COLLECTION_SCHEMA, [table, self.counts[table]])
            for table in java_hash_map_order(self.counts)
        ]
        value = Struct(self.value_schema, ["END", self.tx_id, self.total, collections, ts_ms])
        record = self._record(value, offset)
        self.tx_id, self.counts, self.total = None, {}, 0
        return [record]

    def data(self, table_id: TableId, records: list[SourceRecord]) -> list[SourceRecord]:
        """The change records of one row event, each with its ``transaction`` block and an offset of its
        own carrying the counts after it (a tombstone shares the offset of the record it follows)."""
        if self.tx_id is None:
            return records
        table = str(table_id)
        out: list[SourceRecord] = []
        offset: dict[str, Any] | None = None
        for record in records:
            value = record.value
            if isinstance(value, Struct) and value.schema.field("transaction") is not None:
                self.total += 1
                order = self.counts[table] = self.counts.get(table, 0) + 1
                block_schema = value.schema.field("transaction").schema  # type: ignore[union-attr]
                value.put("transaction", Struct(block_schema, [self.tx_id, self.total, order]))
                offset = self.store(dict(record.source_offset or {}))
            if offset is not None:
                record = record.new_record(source_offset=offset)
            out.append(record)
        return out

    def store(self, offset: dict[str, Any]) -> dict[str, Any]:
        """``offset`` with the transaction in progress (``TransactionContext.store``), in Debezium's key
        order; unchanged when none is."""
        if self.tx_id is None:
            return offset
        offset[OFFSET_ID] = self.tx_id
        for table in java_hash_map_order(self.counts):
            offset[OFFSET_COUNT + table] = self.counts[table]
        return DEBEZIUM_OFFSET_ORDER.apply(offset)

    def _record(self, value: Struct, offset: dict[str, Any]) -> SourceRecord:
        key = Struct(self.key_schema, [value.get("id")])
        return SourceRecord(
            topic=self.topic,
            kafka_partition=None,
            key_schema=self.key_schema,
            key=key,
            value_schema=self.value_schema,
            value=value,
            source_partition=self.partition,
            source_offset=self.store(offset),
        )


def transaction_id(gtid: str | None, file: str, pos: int) -> str:
    """Debezium's id of a binlog transaction: its GTID, else ``file=F,pos=P`` of its start."""
    return gtid if gtid else f"file={file},pos={pos}"
