"""The comparison of ``make compat`` (bench/compat/compare.py) can fail: it finds an altered value, a missing
record, a missing header and a schema default, an offset whose fields or value Debezium's records never
carry, a differing snapshot-completed or last offset; it normalises only the names and times it says it
ignores, does not depend on which offsets each worker happened to flush, and reads the intentional
differences from the doc's table."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from bench.compat import compare as cmp


def _record(prefix: str, db: str, row_id: int, value: int, default: Any = 5) -> cmp.Record:
    key = {"schema": {"name": f"{prefix}.{db}.t.Key"}, "payload": {"id": row_id}}
    field: dict[str, Any] = {"field": "v", "type": "int32", "optional": True}
    if default is not None:
        field["default"] = default
    env = {
        "schema": {"name": f"{prefix}.{db}.t.Envelope", "fields": [{"field": "after", "fields": [field]}]},
        "payload": {
            "op": "c",
            "after": {"id": row_id, "v": value},
            "source": {"name": prefix, "db": db, "snapshot": "false", "pos": 100 + row_id, "version": prefix},
            "ts_ms": 1000 + len(prefix),
        },
    }
    headers = [("__debezium.context.connectorLogicalName", prefix.encode())]
    return cmp.Record(json.dumps(key).encode(), json.dumps(env).encode(), headers)


# the offsets of a snapshot at pos 100 (10 for the cdc side, which read the busy server's position later),
# its completed offset, then streaming: a two-row insert, a DDL, a one-row insert
def _snapshot(pos: int) -> list[dict[str, Any]]:
    at = {"file": "binlog.000001", "pos": pos, "gtids": f"0-1-{pos}"}
    return [
        {"ts_sec": 1, **at, "snapshot": "INITIAL"},
        {"ts_sec": 1, **at, "snapshot": "INITIAL"},
        {"ts_sec": 2, **at},
    ]


_STREAMING: list[dict[str, Any]] = [
    {
        "ts_sec": 3,
        "file": "binlog.000001",
        "pos": 500,
        "gtids": "0-1-500",
        "event": 2,
        "row": 1,
        "server_id": 1,
    },
    {
        "ts_sec": 3,
        "file": "binlog.000001",
        "pos": 500,
        "gtids": "0-1-500",
        "event": 2,
        "row": 2,
        "server_id": 1,
    },
    {"ts_sec": 4, "file": "binlog.000001", "pos": 700, "gtids": "0-1-501", "event": 1, "server_id": 1},
    {
        "ts_sec": 5,
        "file": "binlog.000001",
        "pos": 900,
        "gtids": "0-1-502",
        "event": 2,
        "row": 1,
        "server_id": 1,
    },
]


def _offset(prefix: str, value: dict[str, Any]) -> cmp.Record:
    return cmp.Record(json.dumps(["compat", {"server": prefix}]).encode(), json.dumps(value).encode())


def _trace_line(prefix: str, value: dict[str, Any], topic: str | None = None) -> str:
    """A record as Kafka Connect's TransformationChain logs it at TRACE (the start of the line, as seen)."""
    offset = ", ".join(f"{k}={v}" for k, v in value.items())
    return (
        "[2026-11-25 16:50:58,077] TRACE Applying transformation "
        "org.apache.kafka.connect.transforms.Filter to "
        f"SourceRecord{{sourcePartition={{server={prefix}}}, sourceOffset={{{offset}}}}} "
        f"ConnectRecord{{topic='{topic or prefix}', kafkaPartition=0, key=Struct{{databaseName=}}, "
        "(org.apache.kafka.connect.runtime.TransformationChain)"
    )


def _side(name: str, prefix: str, db: str, committed: tuple[int, ...] = (2, 4, 6)) -> cmp.Captured:
    """A side's records; its worker committed the offsets at ``committed`` (indexes into the snapshot's and
    the streaming offsets), the snapshot's completed one (2) always, as the harness waits for it."""
    side = cmp.Captured(name, prefix, {db: "<db>"})
    side.data[f"{db}.t"] = [_record(prefix, db, i, i * 10) for i in range(1, 4)]
    offsets = _snapshot(100 if name == "debezium" else 10) + _STREAMING
    side.offsets = [_offset(prefix, offsets[i]) for i in committed]
    side.snapshot_commits = sum(1 for i in committed if i <= 2)
    if name == "debezium":
        log = "\n".join(_trace_line(prefix, o) for o in offsets)
        side.record_offsets = cmp.record_offsets_from_log(
            log + "\n" + _trace_line("other", offsets[0]), prefix
        )
    return side


def test_identical_sides_differ_only_in_ignored_names_and_times() -> None:
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_2")
    assert cmp.compare(dbz, ours) == []


def test_an_altered_value_a_missing_record_a_header_and_a_default_are_found() -> None:
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_1")
    altered = copy.deepcopy(ours)
    records = altered.data["db_1.t"]
    records[0] = _record("cdc_x", "db_1", 1, 11)
    records[1] = _record("cdc_x", "db_1", 2, 20, default=None)
    records[2] = cmp.Record(records[2].key, records[2].value, [])
    altered.data["db_1.t"].append(_record("cdc_x", "db_1", 9, 90))
    kinds = {d.kind for d in cmp.compare(dbz, altered)}
    assert kinds == {
        "data <db>.t value.payload.after.v",
        "data <db>.t value.schema.fields[after].fields[v].default",
        "data <db>.t header.__debezium.context.connectorLogicalName",
        "data <db>.t <record>",
    }


def test_intentional_differences_come_from_the_docs_table(tmp_path: Path) -> None:
    doc = tmp_path / "compat.md"
    doc.write_text(
        "# x\n\n## Intentional differences\n\n| pattern | reason |\n|---|---|\n"
        "| `data * value.payload.after.v` | we round differently |\n\n## Other\n| `data * <record>` | no |\n"
    )
    intentional = cmp.load_intentional(doc)
    assert [(i.pattern, i.reason) for i in intentional] == [
        ("data * value.payload.after.v", "we round differently")
    ]
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_1")
    ours.data["db_1.t"][0] = _record("cdc_x", "db_1", 1, 11)
    ours.data["db_1.t"].append(_record("cdc_x", "db_1", 9, 90))
    diffs = cmp.compare(dbz, ours)
    left = cmp.unexplained(diffs, intentional)
    assert [d.kind for d in left] == ["data <db>.t <record>"]
    table = cmp.render(diffs, intentional)
    assert "intentional: we round differently" in table and "**UNEXPLAINED**" in table


def test_the_repository_doc_declares_patterns_with_reasons() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "debezium-compatibility.md"
    for item in cmp.load_intentional(doc):
        assert item.pattern and len(item.reason) > 10


def test_record_offsets_are_read_from_connects_trace_log() -> None:
    log = "\n".join(
        [
            _trace_line("dbz_x", {"ts_sec": 7, "file": "binlog.000009", "pos": 4, "gtids": "0-1-5,1-2-3"}),
            "[2026-11-25 16:50:58,100] INFO something else (org.apache.kafka.connect.runtime.Worker)",
            _trace_line("dbz_other", {"file": "binlog.000001", "pos": 4}),
            _trace_line("dbz_x", {"file": "binlog.000009", "pos": 9, "snapshot": "INITIAL"}),
        ]
    )
    assert cmp.record_offsets_from_log(log, "dbz_x") == [
        {"ts_sec": "7", "file": "binlog.000009", "pos": "4", "gtids": "0-1-5,1-2-3"},
        {"file": "binlog.000009", "pos": "9", "snapshot": "INITIAL"},
    ]


@pytest.mark.parametrize(
    ("dbz_committed", "cdc_committed"),
    [
        ((2, 6), (0, 2, 3, 5, 6)),  # cdc flushed the in-snapshot offset, a mid-insert and a DDL one
        ((0, 1, 2, 4, 5, 6), (2, 6)),
        ((2, 6), (2, 2, 6)),  # the completed offset committed again
    ],
)
def test_which_offsets_each_worker_flushed_is_no_difference(
    dbz_committed: tuple[int, ...], cdc_committed: tuple[int, ...]
) -> None:
    dbz = _side("debezium", "dbz_x", "db_1", dbz_committed)
    ours = _side("cdc", "cdc_x", "db_2", cdc_committed)
    assert cmp.compare(dbz, ours) == []


def _alter(side: cmp.Captured, index: int, **changes: Any) -> None:
    value = side.offsets[index].value_json()
    for key, new in changes.items():
        if new is None:
            value.pop(key)
        else:
            value[key] = new
    side.offsets[index] = cmp.Record(side.offsets[index].key, json.dumps(value).encode())


def _kinds(dbz: cmp.Captured, ours: cmp.Captured) -> set[tuple[str, str]]:
    return {(d.kind, d.index) for d in cmp.compare(dbz, ours)}


def test_an_offset_debeziums_records_never_carry_is_found() -> None:
    dbz = _side("debezium", "dbz_x", "db_1")
    ours = _side("cdc", "cdc_x", "db_1", (0, 2, 4, 6))
    _alter(ours, 0, snapshot=True)  # an older cdc's in-snapshot flag
    _alter(ours, 2, row=None)  # a streaming offset without its row count
    assert _kinds(dbz, ours) == {
        ("offsets <offsets> <not among debezium's offsets>", "cdc#0"),
        ("offsets <offsets> <not among debezium's offsets>", "cdc#2"),
    }


def test_an_altered_completed_or_last_offset_is_found() -> None:
    dbz = _side("debezium", "dbz_x", "db_1")
    ours = _side("cdc", "cdc_x", "db_1")
    _alter(ours, 0, row=1)
    _alter(ours, 2, event=1)  # one lower than Debezium's
    assert _kinds(dbz, ours) == {
        ("offsets <offsets> <not among debezium's offsets>", "cdc#0"),
        ("offsets <offsets> value.row", "completed"),
        ("offsets <offsets> <not among debezium's offsets>", "cdc#2"),
        ("offsets <offsets> value.event", "last"),
    }


def test_a_missing_completed_offset_or_record_offsets_log_is_found() -> None:
    dbz = _side("debezium", "dbz_x", "db_1")
    ours = _side("cdc", "cdc_x", "db_1", (4, 6))
    assert _kinds(dbz, ours) == {("offsets <offsets> <record>", "completed")}
    dbz.record_offsets = []
    assert ("offsets <offsets> <record offsets>", "log") in _kinds(dbz, ours)


def test_two_run_ids_on_one_side_are_found() -> None:
    """The run id's value is ignored record by record; a second run id on one side (say, the Spark
    snapshot's records with an id of their own) is a difference."""
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_1")
    run = "__debezium.context.runId"
    first, second = b"01a21e15-0d7f-73b6-9d30-59d428553d3e", b"01a21e15-0def-71e6-9928-8580a9cfe8fb"
    for side in (dbz, ours):
        for rec in side.data["db_1.t"]:
            rec.headers.append((run, first))
    assert cmp.compare(dbz, ours) == []
    ours.data["db_1.t"][0].headers[-1] = (run, second)
    diffs = cmp.compare(dbz, ours)
    assert [(d.kind, d.debezium, d.cdc) for d in diffs] == [
        (f"data <all topics> header.{run} distinct", "1", "2")
    ]


def test_incremental_snapshot_offsets_are_compared_without_their_binlog_coordinates() -> None:
    """An incremental snapshot's row offsets hold JSON (braces inside the logged map) and sit at each side's
    own watermark: compared with file/pos/gtids aside, every other field (the flag included) must match."""
    collections = (
        '[{"incremental_snapshot_collections_id":"db_1.t",'
        '"incremental_snapshot_collections_additional_condition":null}]'
    )
    row = {
        "ts_sec": 6,
        "file": "binlog.000001",
        "pos": 950,
        "gtids": "0-1-503",
        "event": 2,
        "row": 1,
        "server_id": 1,
        "incremental_snapshot_collections": collections,
        "incremental_snapshot_primary_key": "aced0005",
        "incremental_snapshot_correlation_id": "s1",
        "snapshot": "INCREMENTAL",
    }
    dbz = _side("debezium", "dbz_x", "db_1")
    log = "\n".join(_trace_line("dbz_x", o) for o in [*_snapshot(100), *_STREAMING, row])
    dbz.record_offsets = cmp.record_offsets_from_log(log, "dbz_x")
    assert dbz.record_offsets[-1]["incremental_snapshot_collections"] == collections
    ours = _side("cdc", "cdc_x", "db_1")
    at_own_watermark = {**row, "pos": 990, "gtids": "0-1-504"}
    ours.offsets.insert(2, _offset("cdc_x", at_own_watermark))
    assert cmp.compare(dbz, ours) == []
    unflagged = {k: v for k, v in at_own_watermark.items() if k != "snapshot"}
    ours.offsets[2] = _offset("cdc_x", unflagged)
    assert _kinds(dbz, ours) == {("offsets <offsets> <not among debezium's offsets>", "cdc#2")}


def _heartbeat(prefix: str, ts: int, server: str | None = None) -> cmp.Record:
    key = {
        "schema": {"name": "io.debezium.connector.common.ServerNameKey"},
        "payload": {"serverName": prefix},
    }
    payload: dict[str, Any] = {"ts_ms": ts}
    if server is not None:
        payload["server"] = server
    value = {"schema": {"name": "io.debezium.connector.common.Heartbeat"}, "payload": payload}
    return cmp.Record(json.dumps(key).encode(), json.dumps(value).encode())


def test_heartbeats_are_compared_once_each_however_many_each_worker_wrote() -> None:
    dbz, ours = _side("debezium", "dbz_1", "db_1"), _side("cdc", "cdc_1", "db_2")
    dbz.data[cmp.HEARTBEAT_TOPIC] = [_heartbeat("dbz_1", t) for t in range(5)]
    ours.data[cmp.HEARTBEAT_TOPIC] = [_heartbeat("cdc_1", t) for t in range(2)]
    assert [d for d in cmp.compare(dbz, ours, ("data",)) if d.topic == cmp.HEARTBEAT_TOPIC] == []
    ours.data[cmp.HEARTBEAT_TOPIC].append(_heartbeat("cdc_1", 9, server="x"))  # a heartbeat of another shape
    found = [d for d in cmp.compare(dbz, ours, ("data",)) if d.topic == cmp.HEARTBEAT_TOPIC]
    assert found, "a heartbeat Debezium never writes was not reported"


def test_a_heartbeats_offset_is_checked_by_its_fields_not_by_its_position() -> None:
    """A heartbeat names the binlog position when it was due (timing): cdc's committed heartbeat offset
    must have the fields Debezium's heartbeats carried; without such heartbeats it is reported."""
    dbz, ours = _side("debezium", "dbz_1", "db_1"), _side("cdc", "cdc_1", "db_2")
    beat = {"ts_sec": 9, "file": "binlog.000001", "pos": 800, "gtids": "0-1-501", "server_id": 1}
    ours.offsets.insert(len(ours.offsets) - 1, _offset("cdc_1", beat))

    def unfound() -> list[cmp.Difference]:
        return [d for d in cmp.compare(dbz, ours, ("offsets",)) if d.path == "<not among debezium's offsets>"]

    assert unfound()
    log = _trace_line("dbz_1", {**beat, "pos": 600}, topic=f"{cmp.HEARTBEAT_TOPIC}.dbz_1")
    log += "\n" + _trace_line("dbz_1", _STREAMING[0])  # a change record's offset is no heartbeat's
    dbz.heartbeat_offsets = cmp.heartbeat_offsets_from_log(log, "dbz_1")
    assert len(dbz.heartbeat_offsets) == 1
    assert not unfound()


def _signal(gtid: str) -> cmp.Record:
    value = {"payload": {"op": "c", "after": {"id": "w"}, "source": {"gtid": gtid}}}
    return cmp.Record(b'{"id": "w"}', json.dumps(value).encode())


def test_an_incremental_offset_named_by_the_other_sides_watermark_is_checked_as_incremental() -> None:
    """An offset's gtids name the transaction before it: the signal record it points to is the side's own
    only when the other side wrote nothing in between (timing). A window row's offset Debezium's records
    carried elsewhere, positions aside, is found; one no record carried is still reported."""
    dbz, ours = _side("debezium", "dbz_1", "db_1"), _side("cdc", "cdc_1", "db_2")
    for side, db in ((dbz, "db_1"), (ours, "db_2")):
        side.names["sig_t"] = "<signal>"
        side.data[f"{db}.sig_t"] = [_signal("0-1-600")]
    window = {"event": "2", "row": "1", "server_id": "1", "snapshot": "INCREMENTAL"}
    assert dbz.record_offsets is not None
    dbz.record_offsets += [
        {
            "file": "binlog.000001",
            "pos": "800",
            "gtids": "0-1-600",
            **window,
            "incremental_snapshot_primary_key": "k746",
        },
        {
            "file": "binlog.000001",
            "pos": "850",
            "gtids": "0-1-700",
            **window,
            "incremental_snapshot_primary_key": "k748",
        },
    ]

    def unfound(key: str) -> list[cmp.Difference]:
        mine = {
            "file": "binlog.000001",
            "pos": 820,
            "gtids": "0-1-600",
            **window,
            "incremental_snapshot_primary_key": key,
        }
        altered = copy.deepcopy(ours)
        altered.offsets.insert(len(altered.offsets) - 1, _offset("cdc_1", mine))
        return [
            d for d in cmp.compare(dbz, altered, ("offsets",)) if d.path == "<not among debezium's offsets>"
        ]

    assert not unfound("k748")
    assert unfound("k750")


def test_an_offset_among_the_sides_own_watermarks_is_compared_without_its_place() -> None:
    """The last watermarks (after the incremental snapshot's end) carry no incremental keys, at each side's
    own binlog place: such an offset is found when Debezium's signal records carried it, place aside."""
    dbz, ours = _side("debezium", "dbz_1", "db_1"), _side("cdc", "cdc_1", "db_2")
    for side, db in ((dbz, "db_1"), (ours, "db_2")):
        side.names["sig_t"] = "<signal>"
        side.data[f"{db}.sig_t"] = [_signal("0-1-600"), _signal("0-1-604")]
    assert dbz.record_offsets is not None
    for gtids in ("0-1-600", "0-1-700"):  # a signal record's, a later record's
        place = {"file": "binlog.000001", "pos": "990", "gtids": gtids}
        dbz.record_offsets.append({**place, "event": "2", "row": "1", "server_id": "1"})

    def unfound(gtids: str) -> list[cmp.Difference]:
        mine = {"file": "binlog.000001", "pos": 777, "gtids": gtids, "event": 2, "row": 1, "server_id": 1}
        altered = copy.deepcopy(ours)
        altered.offsets.insert(len(altered.offsets) - 1, _offset("cdc_1", mine))
        return [
            d for d in cmp.compare(dbz, altered, ("offsets",)) if d.path == "<not among debezium's offsets>"
        ]

    assert not unfound("0-1-602")  # among its own watermarks' transactions
    assert unfound("0-1-550")  # elsewhere: its place is compared


# -- rows transaction-metadata and notifications --------------------------------------------------------


def _tx(
    prefix: str, status: str, tx_id: str, counts: dict[str, int] | None = None, ts: int = 7000
) -> cmp.Record:
    """A BEGIN/END record of ``<prefix>.transaction`` as JsonConverter writes it (schemas aside)."""
    collections = [{"data_collection": t, "event_count": n} for t, n in (counts or {}).items()]
    payload = {
        "status": status,
        "id": tx_id,
        "event_count": sum((counts or {}).values()) if status == "END" else None,
        "data_collections": collections if status == "END" else None,
        "ts_ms": ts,
    }
    key = {
        "schema": {"name": "io.debezium.connector.common.TransactionMetadataKey"},
        "payload": {"id": tx_id},
    }
    value = {"schema": {"name": "io.debezium.connector.common.TransactionMetadataValue"}, "payload": payload}
    return cmp.Record(json.dumps(key).encode(), json.dumps(value).encode())


def _touching(ids: list[str]) -> list[cmp.Record]:
    """Change records, the same on both sides, in the transactions ``ids``."""
    values = [{"payload": {"op": "c", "transaction": {"id": i, "total_order": 1}}} for i in ids]
    return [cmp.Record(b"k", json.dumps(v).encode()) for v in values]


def _tx_side(name: str, prefix: str, db: str, ids: list[str]) -> cmp.Captured:
    side = _side(name, prefix, db)
    side.data[f"{db}.u"] = _touching([f"0-1-{n}" for n in range(10, 16)])
    side.data[cmp.TRANSACTION_TOPIC] = [
        r for i in ids for r in (_tx(prefix, "BEGIN", i), _tx(prefix, "END", i, {f"{db}.t": 1}))
    ]
    return side


def test_the_transaction_topic_is_compared_over_the_range_both_sides_streamed() -> None:
    """Each side streams from its own snapshot's position to its own stop: the server's other transactions
    before or after the other side's range are left out (and counted); inside it every record counts."""
    dbz = _tx_side("debezium", "dbz_x", "db_1", ["0-1-10", "0-1-11", "0-1-12", "0-1-13", "0-1-14"])
    ours = _tx_side("cdc", "cdc_x", "db_1", ["0-1-12", "0-1-13", "0-1-14", "0-1-15"])
    assert cmp.compare(dbz, ours, ("data",)) == []
    # the server's other transactions (no captured change on either side) are not compared either
    busy_dbz, busy_ours = copy.deepcopy(dbz), copy.deepcopy(ours)
    for side, extra in ((busy_dbz, "0-1-90"), (busy_ours, "0-1-91")):
        side.data["transaction"][2:2] = [_tx(side.prefix, "BEGIN", extra), _tx(side.prefix, "END", extra)]
    assert cmp.compare(busy_dbz, busy_ours, ("data",)) == []
    assert cmp.transactions_left_out(busy_dbz, busy_dbz, busy_ours) == 6
    assert cmp.transactions_left_out(busy_ours, busy_dbz, busy_ours) == 4

    def kinds(change: Any) -> set[str]:
        altered = copy.deepcopy(ours)
        change(altered.data["transaction"])
        return {d.kind for d in cmp.compare(dbz, altered, ("data",))}

    def count(records: list[cmp.Record]) -> None:  # an END with another per-table count
        records[1] = _tx("cdc_x", "END", "0-1-12", {"db_1.t": 2})

    def header(records: list[cmp.Record]) -> None:  # a context header Debezium's BEGIN does not carry
        records[0].headers.append(("__debezium.context.connectorLogicalName", b"cdc_x"))

    def later(records: list[cmp.Record]) -> None:  # a BEGIN's ts_ms is its binlog event's time: compared
        records[2] = _tx("cdc_x", "BEGIN", "0-1-13", ts=7001)

    def missing(records: list[cmp.Record]) -> None:  # a transaction inside the common range written once
        del records[2:4]

    assert kinds(count) == {
        "data transaction value.payload.event_count",
        "data transaction value.payload.data_collections[].event_count",
    }
    assert kinds(header) == {"data transaction header.__debezium.context.connectorLogicalName"}
    assert kinds(later) == {"data transaction value.payload.ts_ms"}
    assert kinds(missing) == {"data transaction <record>"}


def test_signal_table_transactions_are_each_sides_own() -> None:
    """Each side captures only its own signal table: the other side's watermark transactions (empty on one
    side) are left out; its own are compared in their order with their GTID blanked."""
    dbz = _tx_side("debezium", "dbz_x", "db_1", ["0-1-10", "0-1-13"])
    ours = _tx_side("cdc", "cdc_x", "db_1", ["0-1-10", "0-1-13"])
    for side, own, other in ((dbz, "0-1-11", "0-1-12"), (ours, "0-1-12", "0-1-11")):
        side.names["sig_t"] = "<signal>"
        value = {"schema": {}, "payload": {"op": "c", "after": {"id": "w"}, "source": {"gtid": own}}}
        side.data["db_1.sig_t"] = [cmp.Record(b'{"id": "w"}', json.dumps(value).encode())]
        records = side.data[cmp.TRANSACTION_TOPIC]
        at = 7000 if side is dbz else 9000  # each side writes its own watermarks at its own time
        mine = [_tx(side.prefix, "BEGIN", own, ts=at), _tx(side.prefix, "END", own, {"db_1.sig_t": 1}, at)]
        theirs = [_tx(side.prefix, "BEGIN", other), _tx(side.prefix, "END", other)]
        records[2:2] = sorted([*mine, *theirs], key=lambda r: json.loads(r.key or b"")["payload"]["id"])
    assert cmp.compare(dbz, ours, ("data",)) == []
    altered = copy.deepcopy(ours)
    altered.data[cmp.TRANSACTION_TOPIC][5] = _tx("cdc_x", "END", "0-1-12", {"db_1.sig_t": 2})  # its own END
    kinds = {d.kind for d in cmp.compare(dbz, altered, ("data",))}
    assert kinds == {
        "data transaction <own signal> value.payload.event_count",
        "data transaction <own signal> value.payload.data_collections[].event_count",
    }


def _note(prefix: str, aggregate: str, kind: str, note_id: str, data: dict[str, str], ts: int) -> cmp.Record:
    key = {"schema": {"name": "io.debezium.connector.common.NotificationKey"}, "payload": {"id": note_id}}
    payload = {
        "id": note_id,
        "type": kind,
        "aggregate_type": aggregate,
        "additional_data": data,
        "timestamp": ts,
    }
    value = {"schema": {"name": "io.debezium.connector.common.Notification"}, "payload": payload}
    return cmp.Record(json.dumps(key).encode(), json.dumps(value).encode())


def _notes(prefix: str, db: str, ts: int, reverse: bool = False) -> list[cmp.Record]:
    started = {"connector_name": prefix, "data_collections": f"{db}.t"}
    if reverse:  # the same entries in another order (Java's per-JVM order of bucket-sharing keys)
        started = dict(reversed(list(started.items())))
    return [
        _note(prefix, "Initial Snapshot", "STARTED", str(uuid.uuid4()), started, ts),
        _note(prefix, "Initial Snapshot", "COMPLETED", str(uuid.uuid4()), {"connector_name": prefix}, ts + 1),
        _note(prefix, "Incremental Snapshot", "STARTED", "compat-incremental", started, ts + 2),
    ]


def test_notifications_are_compared_without_their_uuids_and_timestamps() -> None:
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_2")
    dbz.data[cmp.NOTIFICATION_TOPIC] = _notes("dbz_x", "db_1", 1000)
    ours.data[cmp.NOTIFICATION_TOPIC] = _notes("cdc_x", "db_2", 5000, reverse=True)
    assert cmp.compare(dbz, ours, ("data",)) == []

    def kinds(index: int, record: cmp.Record) -> set[str]:
        altered = copy.deepcopy(ours)
        altered.data[cmp.NOTIFICATION_TOPIC][index] = record
        return {d.kind for d in cmp.compare(dbz, altered, ("data",))}

    # an incremental snapshot's id is the signal's: compared
    other_id = _note("cdc_x", "Incremental Snapshot", "STARTED", "another", {"connector_name": "cdc_x"}, 1)
    assert "data __notifications value.payload.id" in kinds(2, other_id)
    assert "data __notifications key<bytes>" in kinds(2, other_id)
    wrong = _note("cdc_x", "Initial Snapshot", "COMPLETED", str(uuid.uuid4()), {"connector_name": "x"}, 1)
    assert kinds(1, wrong) == {"data __notifications value.payload.additional_data.connector_name"}
    headed = copy.deepcopy(ours.data[cmp.NOTIFICATION_TOPIC][0])
    headed.headers.append(("__debezium.context.taskId", b"0"))
    assert kinds(0, headed) == {"data __notifications header.__debezium.context.taskId"}
