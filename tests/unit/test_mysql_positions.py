"""GTID sets and Debezium's binlog position comparison."""

from __future__ import annotations

import pytest

from cdc.mysql.gtids import GtidSet, gtid_source_filter
from cdc.mysql.positions import BinlogPositionComparator

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "4f22fb58-82db-22f2-af44-d91bb0530673"


def test_mysql_gtid_set_parse_render_contains():
    s = GtidSet(f"{U2}:1-3,\n{U1.upper()}:1-5:7:6")
    assert str(s) == f"{U1}:1-7,{U2}:1-3"
    assert f"{U1}:6" in s and f"{U2}:4" not in s
    s.add(f"{U2}:4").add(f"{U2}:9")
    assert str(s) == f"{U1}:1-7,{U2}:1-4:9"
    assert GtidSet(f"{U1}:2-3").is_contained_within(s)
    assert not GtidSet(f"{U1}:2-8").is_contained_within(s)
    assert not GtidSet(f"{U2}:1-3,{U1}:1").is_contained_within(GtidSet(f"{U2}:1-3"))
    assert GtidSet("").is_empty() and GtidSet("").is_contained_within(s)


def test_mariadb_gtid_set():
    s = GtidSet("0-1-100,1-2-7")
    assert s.mariadb and str(s) == "0-1-100,1-2-7"
    assert "0-1-50" in s and "0-1-101" not in s
    s.add("0-3-101")  # a new server in domain 0 continues its sequence
    assert str(s) == "0-3-101,1-2-7"
    assert GtidSet("0-1-90").is_contained_within(s)
    assert not GtidSet("0-1-90,2-1-1").is_contained_within(s)
    assert GtidSet("", mariadb=True).add("0-1-1").mariadb


def test_source_filter():
    s = GtidSet(f"{U1}:1-5,{U2}:1-3")
    only = gtid_source_filter(includes=U1.replace("3e11", "3e1."))
    assert only is not None and str(s.retain_all(only)) == f"{U1}:1-5"
    excl = gtid_source_filter(excludes=U1)
    assert excl is not None and str(s.retain_all(excl)) == f"{U2}:1-3"
    assert gtid_source_filter() is None


def pos(file="mysql-bin.000003", p=100, **kw):
    return {"file": file, "pos": p, **kw}


CASES = [
    # no GTIDs: file index, pos, event, row
    (pos(), pos(), True),
    (pos(p=99), pos(), True),
    (pos(p=101), pos(), False),
    (pos(file="mysql-bin.000002", p=9999), pos(), True),
    (pos(file="mysql-bin.000010"), pos(file="mysql-bin.000009", p=5000), False),  # index, not text order
    (pos(event=2), pos(event=3), True),
    (pos(event=3), pos(event=2), False),
    (pos(event=1, row=4), pos(event=1, row=4), True),
    (pos(event=1, row=5), pos(event=1, row=4), False),
    # different servers: ts_sec
    (pos(server_id=1, ts_sec=10), pos(server_id=2, ts_sec=11, p=1), True),
    (pos(server_id=1, ts_sec=12), pos(server_id=2, ts_sec=11, p=999), False),
    # GTIDs
    (pos(gtids=f"{U1}:1-5"), pos(gtids=f"{U1}:1-7"), True),
    (pos(gtids=f"{U1}:1-8"), pos(gtids=f"{U1}:1-7"), False),
    (pos(gtids=f"{U1}:1-5", p=999999), pos(gtids=f"{U1}:1-5", p=1), True),
    (pos(gtids=f"{U1}:1-5", event=2), pos(gtids=f"{U1}:1-5", event=1), False),
    (pos(gtids=f"{U1}:1-5"), pos(gtids=f"{U1}:1-5", snapshot=True), False),
    (pos(gtids=f"{U1}:1-5", snapshot=True), pos(gtids=f"{U1}:1-5", snapshot=True), True),
    (pos(gtids=f"{U1}:1-5", snapshot=True), pos(gtids=f"{U1}:1-5"), True),
    # mixed: GTIDs only on the offset → before; only on the record → after
    (pos(p=999999), pos(gtids=f"{U1}:1"), True),
    (pos(gtids=f"{U1}:1", p=1), pos(p=999999), False),
    # MariaDB
    (pos(gtids="0-1-10"), pos(gtids="0-1-12"), True),
    (pos(gtids="0-1-13"), pos(gtids="0-1-12"), False),
]


@pytest.mark.parametrize(("recorded", "desired", "expected"), CASES)
def test_comparator(recorded, desired, expected):
    assert BinlogPositionComparator().is_at_or_before(recorded, desired) is expected


def test_comparator_applies_the_gtid_filter():
    recorded = pos(gtids=f"{U1}:1-5,{U2}:1-9")
    desired = pos(gtids=f"{U1}:1-6,{U2}:1-2")
    assert BinlogPositionComparator().is_at_or_before(recorded, desired) is False
    assert (
        BinlogPositionComparator(gtid_source_filter(excludes=U2)).is_at_or_before(recorded, desired) is True
    )


def test_comparator_rejects_different_binlog_base_names():
    with pytest.raises(ValueError, match="different base names"):
        BinlogPositionComparator().is_at_or_before(pos(file="a.000001"), pos(file="b.000001"))
