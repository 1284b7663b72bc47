"""The ``snapshot-writes`` row's per-key comparison (bench/compat/perkey.py) finds a lost key, an extra key, a
wrong final value, a broken before-image, a place streamed twice, a key read twice and a differing or missing
shared event, and accepts a history in which the same change is a read on one side and an update on the
other."""

from __future__ import annotations

import json
from typing import Any

from bench.compat import compare as cmp
from bench.compat import perkey


def _rec(
    op: str,
    row_id: int,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    pos: int = 0,
    snapshot: str = "false",
    prefix: str = "p",
) -> cmp.Record:
    source = {
        "name": prefix,
        "db": "compat_db",
        "snapshot": snapshot,
        "file": "binlog.000001",
        "pos": pos,
        "row": 0,
    }
    env = {
        "schema": {},
        "payload": {"op": op, "before": before, "after": after, "source": source, "ts_ms": 1},
    }
    key = {"schema": {}, "payload": {"id": row_id}}
    return cmp.Record(json.dumps(key).encode(), json.dumps(env).encode())


def _row(row_id: int, n: int | None, s: str) -> dict[str, Any]:
    return {"id": row_id, "n": n, "s": s}


def _table(*rows: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, str]]:
    return {
        (r["id"],): {k: "NULL" if v is None else str(v) for k, v in r.items()}  # the mariadb client's text
        for r in rows
    }


# key 1 read then updated, key 2 read then deleted, key 3 inserted by streaming then updated
GOOD = [
    _rec("r", 1, None, _row(1, 1, "a"), snapshot="first"),
    _rec("r", 2, None, _row(2, 2, "b"), snapshot="last"),
    _rec("u", 1, _row(1, 1, "a"), _row(1, 5, "ua"), pos=100),
    _rec("c", 3, None, _row(3, None, "new"), pos=200),
    _rec("d", 2, _row(2, 2, "b"), None, pos=300),
    cmp.Record(json.dumps({"payload": {"id": 2}}).encode(), None),  # tombstone
    _rec("u", 3, _row(3, None, "new"), _row(3, 7, "unew"), pos=400),
    _rec("r", 1, None, _row(1, 5, "ua"), snapshot="incremental"),
    _rec("r", 3, None, _row(3, 7, "unew"), snapshot="incremental"),
]
FINAL = _table(_row(1, 5, "ua"), _row(3, 7, "unew"))


def _events(records: list[cmp.Record]) -> list[perkey.Event]:
    return perkey.events(records, ("id",))


def test_a_consistent_history_gives_the_final_state_and_no_finding() -> None:
    evs = _events(GOOD)
    assert [e.op for e in evs] == ["r", "r", "u", "c", "d", "u", "r", "r"]
    assert perkey.final_state("cdc", evs, FINAL) == []
    assert perkey.consistency("cdc", evs) == []


def test_a_lost_key_is_found() -> None:
    evs = _events([r for i, r in enumerate(GOOD) if i not in (3, 6, 8)])  # key 3 never seen
    found = perkey.final_state("cdc", evs, FINAL)
    assert found == ["cdc: key (3,) lost (in the table, not in the replayed events)"]


def test_an_extra_key_is_found() -> None:
    evs = _events([r for i, r in enumerate(GOOD) if i != 4])  # key 2's delete lost
    found = perkey.final_state("cdc", evs, FINAL)
    assert len(found) == 1 and found[0].startswith("cdc: key (2,) extra")


def test_a_wrong_final_value_is_found() -> None:
    records = [*GOOD[:-1], _rec("r", 3, None, _row(3, 8, "unew"), snapshot="incremental")]
    found = perkey.final_state("cdc", _events(records), FINAL)
    assert found == ["cdc: key (3,) column n: replayed '8', table '7'"]


def test_a_null_and_its_text_are_told_apart() -> None:
    table = _table(_row(1, 5, "ua"), _row(3, None, "unew"))
    found = perkey.final_state("cdc", _events(GOOD), table)
    assert found == ["cdc: key (3,) column n: replayed '7', table 'NULL'"]


def test_a_broken_before_image_is_found() -> None:
    records = list(GOOD)
    records[6] = _rec("u", 3, _row(3, 0, "new"), _row(3, 7, "unew"), pos=400)  # c left n NULL
    found = perkey.consistency("cdc", _events(records))
    assert len(found) == 1 and "before {'id': 3, 'n': 0, 's': 'new'} is not the state" in found[0]


def test_an_update_after_a_read_is_not_held_to_the_read() -> None:
    """The previous event is a snapshot read: the other side may have read the row after the change."""
    records = list(GOOD)
    records[2] = _rec("u", 1, _row(1, 0, "zz"), _row(1, 5, "ua"), pos=100)
    assert perkey.consistency("cdc", _events(records)) == []


def test_an_update_of_a_key_nothing_created_is_found() -> None:
    records = [_rec("u", 9, _row(9, 1, "x"), _row(9, 2, "y"), pos=10)]
    assert perkey.consistency("cdc", _events(records)) == [
        "cdc#0 u key (9,): no earlier event leaves the key existing"
    ]


def test_a_place_streamed_twice_and_a_key_read_twice_are_found() -> None:
    records = [*GOOD, GOOD[6], _rec("r", 3, None, _row(3, 7, "unew"), snapshot="incremental")]
    found = perkey.consistency("cdc", _events(records))
    assert any("streamed twice" in f for f in found)
    assert any("read twice by the incremental snapshot" in f for f in found)


def test_a_create_of_an_existing_key_is_found() -> None:
    records = [*GOOD[:4], _rec("c", 3, None, _row(3, 1, "again"), pos=250)]
    found = perkey.consistency("cdc", _events(records))
    assert len(found) == 1 and "created while event #3 (c) left it existing" in found[0]


def _captured(side: str, prefix: str, records: list[cmp.Record]) -> cmp.Captured:
    return cmp.Captured(side, prefix, {"compat_db": "<db>"}, data={"compat_db.t": records})


def test_shared_places_are_compared_field_by_field_and_a_missing_one_is_found() -> None:
    # Debezium read key 1 after the update at pos 100 (its snapshot started later): a read on its side, an
    # update on cdc's; the events at 200.. are past both starts
    dbz_records = [
        _rec("r", 1, None, _row(1, 5, "ua"), snapshot="last", prefix="dbz"),
        _rec("c", 3, None, _row(3, None, "new"), pos=200, prefix="dbz"),
        _rec("u", 3, _row(3, None, "new"), _row(3, 7, "unew"), pos=400, prefix="dbz"),
    ]
    cdc_records = [
        _rec("r", 1, None, _row(1, 1, "a"), snapshot="last", prefix="cdc"),
        _rec("u", 1, _row(1, 1, "a"), _row(1, 5, "ua"), pos=100, prefix="cdc"),
        _rec("c", 3, None, _row(3, None, "new"), pos=200, prefix="cdc"),
        _rec("u", 3, _row(3, None, "new"), _row(3, 7, "unew"), pos=400, prefix="cdc"),
    ]
    dbz, ours = _captured("debezium", "dbz", dbz_records), _captured("cdc", "cdc", cdc_records)
    start = {"debezium": ("binlog.000001", 150), "cdc": ("binlog.000001", 50)}
    evs_dbz, evs_cdc = _events(dbz_records), _events(cdc_records)
    diffs, missing, pairs = perkey.same_places("<db>.t", evs_dbz, evs_cdc, dbz, ours, start)
    assert (diffs, missing, pairs) == ([], [], 2)

    cdc_records[3] = _rec("u", 3, _row(3, None, "new"), _row(3, 7, "changed"), pos=400, prefix="cdc")
    diffs, _, _ = perkey.same_places("<db>.t", evs_dbz, _events(cdc_records), dbz, ours, start)
    assert [(d.path, d.debezium, d.cdc) for d in diffs] == [("value.payload.after.s", "unew", "changed")]

    diffs, missing, pairs = perkey.same_places("<db>.t", evs_dbz, _events(cdc_records[:3]), dbz, ours, start)
    assert pairs == 1 and missing == [
        "cdc lacks the u of key (3,) at ('binlog.000001', 400, 0) (past both starts)"
    ]


def test_the_rows_self_test_finds_a_dropped_event_and_an_altered_value() -> None:
    from bench.compat.snapshot_writes import _self_test

    dbz_records = [
        _rec("r", 1, None, _row(1, 5, "ua"), snapshot="last", prefix="dbz"),
        _rec("c", 3, None, _row(3, None, "new"), pos=200, prefix="dbz"),
        _rec("u", 3, _row(3, None, "new"), _row(3, 7, "unew"), pos=400, prefix="dbz"),
    ]
    cdc_records = [
        _rec("r", 1, None, _row(1, 5, "ua"), snapshot="last", prefix="cdc"),
        _rec("c", 3, None, _row(3, None, "new"), pos=200, prefix="cdc"),
        _rec("u", 3, _row(3, None, "new"), _row(3, 7, "unew"), pos=400, prefix="cdc"),
    ]
    dbz, ours = _captured("debezium", "dbz", dbz_records), _captured("cdc", "cdc", cdc_records)
    assert _self_test(dbz, ours, FINAL, "compat_db.t") is None
    # a side without an update both carry cannot show the altered value
    ours.data["compat_db.t"] = cdc_records[:2]
    assert _self_test(dbz, ours, FINAL, "compat_db.t") == "no update both sides streamed to alter"
