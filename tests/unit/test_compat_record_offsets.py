"""The per-record offset comparison of ``make compat`` (bench/compat/record_offsets.py) reads both workers'
logs and finds an offset that differs, a missing record's offset and a snapshot offset of another shape, while
each side's own binlog coordinates in its signal table and its snapshot position are no difference; cdc's
send loop writes the log line it reads (cdc/worker/record_trace.py)."""

from __future__ import annotations

import logging

import pytest

from bench.compat import compare as cmp
from bench.compat.record_offsets import cdc_traced, compare_traced, connect_traced
from cdc.api.records import SourceRecord
from cdc.worker import record_trace

DBZ, CDC = "dbz_1", "cdc_1"


def _side(prefix: str, signal: str) -> cmp.Captured:
    return cmp.Captured(prefix, prefix, {"compat_1": "<db>", signal: "<signal>"})


def _connect_line(prefix: str, topic: str, offset: str, transform: str = "Unwrap") -> str:
    return (
        f"[2026-11-28 07:00:00,000] TRACE [c|task-0] Applying transformation {transform} to "
        f"SourceRecord{{sourcePartition={{server={prefix}}}, sourceOffset={{{offset}}}}} "
        f"ConnectRecord{{topic='{topic}', kafkaPartition=null, key=Struct{{id=1}}}} "
        "(org.apache.kafka.connect.runtime.TransformationChain:47)"
    )


STREAM = '"file":"binlog.000001","pos":500,"gtids":"0-1-7","event":2,"row":1,"server_id":1'
STREAM_JAVA = "ts_sec=3, file=binlog.000001, pos=500, gtids=0-1-7, event=2, row=1, server_id=1"


SNAP_JAVA = "ts_sec=1, file=binlog.000001, pos=100, snapshot=INITIAL"
SIGNAL_JAVA = "ts_sec=4, file=binlog.000001, pos=700, event=1, row=1"


def _logs(cdc_offset: str = STREAM, cdc_signal_pos: int = 900) -> tuple[str, str]:
    dbz = "\n".join(
        [
            _connect_line(DBZ, f"{DBZ}.compat_1.t", SNAP_JAVA),
            _connect_line(DBZ, f"{DBZ}.compat_1.t", SNAP_JAVA, "B"),
            _connect_line(DBZ, f"{DBZ}.compat_1.t", STREAM_JAVA),
            _connect_line(DBZ, f"{DBZ}.compat_1.dbz_signal", SIGNAL_JAVA),
            _connect_line(DBZ, DBZ, "ts_sec=5, file=binlog.000001, pos=800"),  # a schema change: not compared
            _connect_line("other", "other.compat_1.t", STREAM_JAVA),  # another connector's record
        ]
    )
    lines = [
        f'record topic={CDC}.compat_1.t partition={{"server":"{CDC}"}} '
        '"offset={"ts_sec":1,"file":"binlog.000001","pos":120,"snapshot":"INITIAL"}',
        f'record topic={CDC}.compat_1.t partition={{"server":"{CDC}"}} offset={{"ts_sec":9,{cdc_offset}}} '
        "(org.apache.kafka.connect.runtime.TransformationChain)",
        f'record topic={CDC}.compat_1.cdc_signal partition={{"server":"{CDC}"}} '
        f'offset={{"ts_sec":4,"file":"binlog.000001","pos":{cdc_signal_pos},"event":1,"row":1}}',
    ]
    lines[0] = lines[0].replace('"offset=', "offset=")
    return dbz, "\n".join(lines)


def _compare(dbz_log: str, cdc_log: str) -> list[cmp.Difference]:
    dbz, ours = _side(DBZ, "dbz_signal"), _side(CDC, "cdc_signal")
    return compare_traced(dbz, ours, connect_traced(dbz_log, DBZ), cdc_traced(cdc_log, CDC))


def test_the_logs_are_read_once_per_record_and_only_the_connectors_own() -> None:
    dbz_log, cdc_log = _logs()
    traced = connect_traced(dbz_log, DBZ)
    assert [t for t, _ in traced] == [f"{DBZ}.compat_1.t"] * 2 + [f"{DBZ}.compat_1.dbz_signal", DBZ]
    assert traced[1][1]["gtids"] == "0-1-7"
    ours = cdc_traced(cdc_log, CDC)
    assert len(ours) == 3
    assert ours[1][1] == {
        "ts_sec": "9",
        "file": "binlog.000001",
        "pos": "500",
        "gtids": "0-1-7",
        "event": "2",
        "row": "1",
        "server_id": "1",
    }


def test_equal_offsets_and_each_sides_own_positions_are_no_difference() -> None:
    assert _compare(*_logs()) == []


@pytest.mark.parametrize(
    "cdc_offset",
    [
        STREAM.replace('"event":2', '"event":3'),  # one event off
        STREAM.replace('"gtids":"0-1-7"', '"gtids":"0-1-6"'),
        STREAM + ',"extra":1',
    ],
)
def test_an_offset_that_differs_is_found(cdc_offset: str) -> None:
    diffs = _compare(*_logs(cdc_offset))
    assert [(d.topic, d.index) for d in diffs] == [("<record offsets> <db>.t", "#0")]


def test_a_missing_record_and_another_snapshot_shape_are_found() -> None:
    dbz_log, cdc_log = _logs()
    lines = cdc_log.splitlines()
    diffs = _compare(dbz_log, "\n".join(lines[:1] + lines[2:]))
    assert [(d.index, d.cdc) for d in diffs] == [("#0", "<none>")]
    diffs = _compare(dbz_log, cdc_log.replace('"snapshot":"INITIAL"', '"snapshot":"true"'))
    assert [d.index for d in diffs] == ["snapshot"]


def test_cdc_logs_every_polled_record_at_trace(caplog: pytest.LogCaptureFixture) -> None:
    offset = {"file": "binlog.000001", "pos": 500, "snapshot": True}
    record = SourceRecord(
        "t", None, None, None, None, 1, source_partition={"server": CDC}, source_offset=offset
    )
    assert not record_trace.enabled()
    logging.getLogger(record_trace.LOGGER).setLevel(record_trace.TRACE)
    try:
        with caplog.at_level(record_trace.TRACE, logger=record_trace.LOGGER):
            assert record_trace.enabled()
            record_trace.log_records([record])
    finally:
        logging.getLogger(record_trace.LOGGER).setLevel(logging.NOTSET)
    traced = cdc_traced(caplog.text, CDC)
    assert traced == [("t", {"file": "binlog.000001", "pos": "500", "snapshot": "true"})]


def test_incremental_reads_are_compared_in_order_and_the_completed_offset_by_its_shape() -> None:
    dbz, ours = _side(DBZ, "dbz_signal"), _side(CDC, "cdc_signal")
    completed = {"ts_sec": "1", "file": "binlog.000001", "pos": "100", "gtids": "0-1-5"}
    read = {"file": "binlog.000001", "pos": "700", "event": "2", "row": "1", "snapshot": "INCREMENTAL"}
    key = {"incremental_snapshot_primary_key": "aced000570"}
    a = [(f"{DBZ}.compat_1.t", completed), (f"{DBZ}.compat_1.t", {**read, **key})]
    # the other side's completed offset at its own position, its read at its own watermark's: no difference
    b = [
        (f"{CDC}.compat_1.t", {**completed, "pos": "180", "gtids": "0-1-6"}),
        (f"{CDC}.compat_1.t", {**read, **key, "pos": "900"}),
    ]
    assert compare_traced(dbz, ours, a, b) == []
    b[1] = (f"{CDC}.compat_1.t", {**read, "pos": "900", "incremental_snapshot_primary_key": "aced0005757200"})
    assert [d.index for d in compare_traced(dbz, ours, a, b)] == ["#0"]
