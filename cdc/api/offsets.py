"""Source partitions and offsets as Connect serializes them.

Keys of the offsets topic are the compact JSON ``["<connector>",{partition}]`` (Jackson's output: no
spaces, keys in insertion order); the same text identifies a partition inside the runtime.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cdc.api.errors import DataError, InvalidOffsetError

__all__ = [
    "check_offset_map",
    "offset_int",
    "offset_key",
    "offset_str",
    "parse_offset_key",
    "partition_key",
]


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def partition_key(partition: Mapping[str, Any]) -> str:
    """The canonical text of a source partition."""
    return _dumps(dict(partition))


def offset_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    """The offsets-topic key: ``["<connector>",{partition}]`` as UTF-8 bytes."""
    return _dumps([connector, dict(partition)]).encode()


def parse_offset_key(key: bytes) -> tuple[str, dict[str, Any]]:
    try:
        parsed = json.loads(key)
    except ValueError as exc:
        raise DataError(f"Offset key is not JSON: {key!r}") from exc
    if not (isinstance(parsed, list) and len(parsed) == 2 and isinstance(parsed[0], str)):
        raise DataError(f"Offset key must be a [connector, partition] pair: {key!r}")
    if parsed[1] is not None and not isinstance(parsed[1], dict):
        raise DataError(f"Offset key's partition must be a map: {key!r}")
    return parsed[0], parsed[1] or {}


def check_offset_map(what: str, value: Mapping[str, Any] | None) -> None:
    """Partitions and offsets may hold only string keys and primitive values (Connect's rule)."""
    if value is None:
        return
    for k, v in value.items():
        if not isinstance(k, str):
            raise DataError(f"{what} keys must be strings, not {type(k).__name__}")
        if v is not None and not isinstance(v, (str, int, float, bool)):
            raise DataError(
                f"{what} values must be primitive (string, number, boolean), not {type(v).__name__}"
            )


def offset_int(
    offset: Mapping[str, Any],
    field: str,
    *,
    required: bool = False,
    minimum: int | None = 0,
    maximum: int | None = None,
) -> int | None:
    """``offset[field]`` as an integer (a JSON number, or digits in a string as Debezium's loader reads
    them); None when absent and not ``required``. :class:`InvalidOffsetError` names the field otherwise."""
    value = offset.get(field)
    if value is None:
        if required:
            raise InvalidOffsetError(field, "is missing")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidOffsetError(field, f"must be an integer, not {_dumps(value)}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InvalidOffsetError(field, f"must be an integer, not {_dumps(value)}") from None
    if minimum is not None and value < minimum:
        raise InvalidOffsetError(field, f"must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise InvalidOffsetError(field, f"must be at most {maximum}, not {value}")
    return value


def offset_str(offset: Mapping[str, Any], field: str, *, required: bool = False) -> str | None:
    """``offset[field]`` as a non-empty string; None when absent and not ``required``."""
    value = offset.get(field)
    if value is None:
        if required:
            raise InvalidOffsetError(field, "is missing")
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidOffsetError(field, f"must be a non-empty string, not {_dumps(value)}")
    return value
