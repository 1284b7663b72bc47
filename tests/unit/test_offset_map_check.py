"""``check_offset_map``: Connect's rule (string keys, primitive values) with its fast path for plain maps."""

from __future__ import annotations

import enum
from typing import Any

import pytest

from cdc.api.errors import DataError
from cdc.api.offsets import check_offset_map


class _Kind(enum.IntEnum):
    A = 1


class _Name(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        None,
        {},
        {"file": "mysql-bin.000003", "pos": 4, "ts": 1.5, "snapshot": True, "gtids": None},
        {_Name("file"): "f", "kind": _Kind.A, "name": _Name("x")},  # subclasses take the slow path
    ],
)
def test_accepted(value: Any) -> None:
    check_offset_map("Offset", value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1: "x"}, "Offset keys must be strings, not int"),
        ({"a": 1, b"k": 2}, "Offset keys must be strings, not bytes"),
        ({"a": [1]}, "Offset values must be primitive (string, number, boolean), not list"),
        ({"a": 1, "b": {"c": 1}}, "Offset values must be primitive (string, number, boolean), not dict"),
        ({"a": b"x"}, "Offset values must be primitive (string, number, boolean), not bytes"),
    ],
)
def test_refused(value: Any, message: str) -> None:
    with pytest.raises(DataError) as info:
        check_offset_map("Offset", value)
    assert str(info.value) == message
