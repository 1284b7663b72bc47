"""``provide.transaction.metadata``: the transaction topic and the ``transaction`` block, via a real worker.

Checked field by field against what Debezium 3.6's ``TransactionMonitor`` writes (its sources:
``AbstractTransactionStructMaker``, ``SchemaFactory``, ``BinlogOffsetContext``); the side-by-side run with the
real Debezium is ``tests/integration/test_debezium_transactions.py``.
"""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from cdc.api.offsets import java_hash_map_order
from cdc.worker.runtime import ConnectRuntime
from tests.integration.test_mysql_events import _json, _start_connector, _wait_for, _wait_for_offsets, worker

pytestmark = pytest.mark.integration
__all__ = ["worker"]


def _gtid(conn: Any) -> str:
    with conn.cursor() as cur:
        cur.execute("SELECT @@last_gtid")
        return str(cur.fetchone()[0])


@pytest.mark.honours("provide.transaction.metadata")
def test_transaction_topic_and_blocks(mysql_db: Any, kafka: Any, worker: ConnectRuntime) -> None:
    db = mysql_db.name
    with mysql_db.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(10))")
        cur.execute("CREATE TABLE b (id INT PRIMARY KEY)")
    prefix = kafka.topic("tx")
    _start_connector(
        worker, "tx", mysql_db, prefix, **{"provide.transaction.metadata": "true", "snapshot.mode": "no_data"}
    )
    assert _wait_for_offsets(worker, "tx"), "no streaming start position after 30 s"
    conn = pymysql.connect(
        host=mysql_db.host, port=mysql_db.port, user=mysql_db.user, password=mysql_db.password, database=db
    )
    try:
        with conn.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("INSERT INTO a VALUES (1, 'x')")
            cur.execute("INSERT INTO b VALUES (1)")
            cur.execute("INSERT INTO a VALUES (2, 'y'), (3, 'z')")
            cur.execute("COMMIT")
            first = _gtid(conn)
            cur.execute("UPDATE a SET v = 'w' WHERE id = 1")
            conn.commit()
            second = _gtid(conn)
    finally:
        conn.close()

    records = _wait_for(kafka, f"{prefix}.{db}.a", 4)
    values = [_json(m.value()) for m in records]
    envelope = values[0]["schema"]
    names = [f["field"] for f in envelope["fields"]]
    assert names[:5] == ["before", "after", "source", "transaction", "op"]
    block = envelope["fields"][3]
    assert block == {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "id"},
            {"type": "int64", "optional": False, "field": "total_order"},
            {"type": "int64", "optional": False, "field": "data_collection_order"},
        ],
        "optional": True,
        "name": "event.block",
        "version": 1,
        "field": "transaction",
    }
    blocks = [v["payload"]["transaction"] for v in values]
    assert blocks == [
        {"id": first, "total_order": 1, "data_collection_order": 1},
        {"id": first, "total_order": 3, "data_collection_order": 2},
        {"id": first, "total_order": 4, "data_collection_order": 3},
        {"id": second, "total_order": 1, "data_collection_order": 1},
    ]
    b = _json(_wait_for(kafka, f"{prefix}.{db}.b", 1)[0].value())
    assert b["payload"]["transaction"] == {"id": first, "total_order": 2, "data_collection_order": 1}

    tx = _wait_for(kafka, f"{prefix}.transaction", 4)
    # As Debezium's: the __debezium.context.* headers are on change records, not on BEGIN/END
    assert [m.headers() for m in tx] == [None] * len(tx)
    assert all("__debezium.context.runId" in dict(m.headers() or []) for m in records)
    ours = [(_json(m.key()), _json(m.value())) for m in tx]
    ours = [(k, v) for k, v in ours if v["payload"]["id"] in (first, second)]
    assert [v["payload"]["status"] for _, v in ours] == ["BEGIN", "END", "BEGIN", "END"]
    key, begin = ours[0]
    assert key == {
        "schema": {
            "type": "struct",
            "fields": [{"type": "string", "optional": False, "field": "id"}],
            "optional": False,
            "name": "io.debezium.connector.common.TransactionMetadataKey",
            "version": 1,
        },
        "payload": {"id": first},
    }
    assert [f["field"] for f in begin["schema"]["fields"]] == [
        "status",
        "id",
        "event_count",
        "data_collections",
        "ts_ms",
    ]
    assert begin["schema"]["name"] == "io.debezium.connector.common.TransactionMetadataValue"
    collections = begin["schema"]["fields"][3]
    assert collections["type"] == "array" and collections["optional"] is True
    assert collections["items"]["name"] == "event.collection"
    assert begin["payload"]["event_count"] is None and begin["payload"]["data_collections"] is None
    end = ours[1][1]["payload"]
    order = java_hash_map_order([f"{db}.a", f"{db}.b"])
    counts = {f"{db}.a": 3, f"{db}.b": 1}
    assert end["event_count"] == 4
    assert end["data_collections"] == [{"data_collection": t, "event_count": counts[t]} for t in order]
    assert isinstance(end["ts_ms"], int) and end["ts_ms"] % 1000 == 0
    assert ours[3][1]["payload"]["data_collections"] == [{"data_collection": f"{db}.a", "event_count": 1}]
