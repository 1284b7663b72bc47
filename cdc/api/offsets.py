"""Source partitions and offsets as Connect serializes them.

Keys of the offsets topic are the compact JSON ``["<connector>",{partition}]`` (Jackson's output: no
spaces, keys in insertion order); the same text identifies a partition inside the runtime.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cdc.api.errors import DataError

__all__ = ["check_offset_map", "offset_key", "parse_offset_key", "partition_key"]


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
