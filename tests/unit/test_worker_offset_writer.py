"""The offset writer checks offset maps (Connect's rule: primitive values) also when a source reuses one."""

from __future__ import annotations

import decimal

import pytest

from cdc.api.errors import DataError
from cdc.worker.offsets import OffsetWriter
from cdc.worker.stores.memory import MemoryOffsetBackingStore


def test_a_reused_offset_map_changed_in_place_is_checked_again() -> None:
    writer = OffsetWriter("c", MemoryOffsetBackingStore())
    partition, offset = {"server": "s"}, {"file": "binlog.000001", "pos": 4}
    for _ in range(3):
        writer.offset(partition, offset)
    offset["pos"] = decimal.Decimal(5)  # not equal to what was checked: checked again, and refused
    with pytest.raises(DataError, match="primitive"):
        writer.offset(partition, offset)
    with pytest.raises(DataError, match="primitive"):
        writer.offset(partition, {"pos": [1]})
    writer.offset(partition, {"pos": 6})
    assert list(writer.snapshot().values()) == [b'{"pos":6}']
