"""``StreamPosition``: every offset map cdc writes, with Debezium's skip rules and key order."""

from __future__ import annotations

import itertools

from cdc.mysql.offsets import DEBEZIUM_OFFSET_ORDER, BinlogOffset, StreamPosition


def _reference(gtids: str | None, event: int, row: int, server_id: int, snapshot: bool) -> dict[str, object]:
    """The map written out key by key, then put in Debezium's order."""
    out: dict[str, object] = {"ts_sec": 17, "file": "bin.000002", "pos": 200}
    for key, value in (("gtids", gtids), ("event", event), ("row", row), ("server_id", server_id)):
        if value:
            out[key] = value
    if snapshot:
        out["snapshot"] = "INITIAL"
    return DEBEZIUM_OFFSET_ORDER.apply(out)


def test_every_key_set_is_built_in_debezium_order_without_zero_keys() -> None:
    for gtids, event, row, server_id, snapshot in itertools.product(
        [None, "", "0-1-5"], [0, 3], [0, 2], [0, 11], [False, True]
    ):
        position = StreamPosition("bin.000002", 200, gtids, server_id, 17)
        expected = _reference(gtids, event, row, server_id, snapshot)
        built = position.offset(event, row, snapshot)
        assert list(built.items()) == list(expected.items())
        stored = BinlogOffset("bin.000002", 200, gtids, event, row, server_id, 17, snapshot)
        assert list(stored.to_dict().items()) == list(expected.items())
        if row and not snapshot:  # a rows event's offsets never carry the snapshot flag
            assert list(StreamPosition.row_offsets(*position, event)(row).items()) == list(expected.items())


def test_row_offsets_differ_in_row_only_and_resume_gives_the_stored_offset() -> None:
    position = StreamPosition("bin.000002", 200, "0-1-5", 11, 17)
    offsets = StreamPosition.row_offsets(*position, 2)
    first, second = offsets(1), offsets(2)
    assert first is not second
    assert list(first) == ["ts_sec", "file", "pos", "gtids", "row", "server_id", "event"]
    assert {**first, "row": 2} == second
    assert position.resume(2, 1) == BinlogOffset.from_dict(first)
