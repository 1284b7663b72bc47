"""Committed offsets in Debezium's key order (issue #27: connect-offsets differed in bytes).

Debezium builds a MySQL/MariaDB offset in a ``java.util.HashMap`` and Connect writes it as the map
iterates; the reference is an offset the real Debezium 3.5 committed
(``tests/fixtures/mysql/debezium_incremental_offset.json``, recorded from a run, key order kept).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cdc.api.offsets import java_hash_map_order
from cdc.mysql.incremental.context import flag_row
from cdc.mysql.offsets import DEBEZIUM_OFFSET_ORDER, BinlogOffset

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mysql" / "debezium_incremental_offset.json"


# What OpenJDK 17's java.util.HashMap iterates after putting the keys in this order (printed by a
# five-line Java program, `new HashMap<>()` and `String.join(",", m.keySet())`, on this project's machine).
JDK_ORDERS = [
    ("k0,k1,k2,k3,k4,k5,k6,k7,k8,k9,k10,k11,k12", "k0,k1,k2,k3,k4,k5,k11,k6,k10,k7,k8,k12,k9"),
    (
        "ts_sec,file,pos,gtids,server_id,event,row,snapshot",
        "ts_sec,file,pos,gtids,row,server_id,event,snapshot",
    ),
    ("Aa,BB", "Aa,BB"),  # one String.hashCode (2112): one bucket, insertion order kept
    ("BB,Aa", "BB,Aa"),
    (
        "ts_sec,file,pos,gtids,server_id,event,row,snapshot,snapshot_completed,transaction_id,"
        "incremental_snapshot_primary_key,incremental_snapshot_maximum_key,incremental_snapshot_collections,"
        "incremental_snapshot_correlation_id",
        "transaction_id,incremental_snapshot_correlation_id,ts_sec,gtids,server_id,"
        "incremental_snapshot_collections,incremental_snapshot_primary_key,file,pos,"
        "incremental_snapshot_maximum_key,row,event,snapshot,snapshot_completed",  # 14 keys: 32 buckets
    ),
]


@pytest.mark.parametrize(("inserted", "iterated"), JDK_ORDERS)
def test_java_hash_map_order_is_the_jdks(inserted: str, iterated: str) -> None:
    assert java_hash_map_order(inserted.split(",")) == iterated.split(",")


def test_the_offset_debezium_committed_is_reproduced_from_any_insertion_order() -> None:
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))["offset"]
    keys = list(recorded)
    rng = random.Random(7)
    for _ in range(20):
        shuffled = keys[:]
        rng.shuffle(shuffled)
        offset = {k: recorded[k] for k in shuffled}
        assert list(DEBEZIUM_OFFSET_ORDER.apply(offset)) == keys


def test_binlog_offsets_and_flagged_rows_come_in_debezium_order() -> None:
    full = BinlogOffset("binlog.000002", 1234, "0-1-5", event=2, row=3, server_id=1, ts_sec=9, snapshot=True)
    assert list(full.to_dict()) == ["ts_sec", "file", "pos", "gtids", "row", "server_id", "event", "snapshot"]
    plain = BinlogOffset("binlog.000002", 1234, ts_sec=9)
    assert list(plain.to_dict()) == ["ts_sec", "file", "pos"]
    flagged = flag_row({"ts_sec": 1, "file": "f", "pos": 4, "incremental_snapshot_primary_key": "aa"})
    assert list(flagged) == ["ts_sec", "file", "pos", "snapshot", "incremental_snapshot_primary_key"]
