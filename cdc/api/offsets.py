"""Source partitions and offsets as Connect serializes them.

Keys of the offsets topic are the compact JSON ``["<connector>",{partition}]`` (Jackson's output: no
spaces, keys in insertion order); the same text identifies a partition inside the runtime.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cdc.api.errors import DataError, InvalidOffsetError

__all__ = [
    "JavaHashMapOrder",
    "check_offset_map",
    "java_hash_map_order",
    "offset_int",
    "offset_key",
    "offset_str",
    "parse_offset_key",
    "partition_key",
]


def _java_string_hash(text: str) -> int:
    """``String.hashCode()``: over UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_map_order(keys: Iterable[str], capacity: int = 16) -> list[str]:
    """The order in which a ``java.util.HashMap`` created with ``capacity`` and given ``keys`` (in this
    order) iterates them: by bucket (the hash's high bits folded into the low ones, masked by the table
    size, which doubles whenever the map grows past 3/4 of it), then by insertion within a bucket.

    Connect writes a source offset map as Jackson iterates it, so the bytes of a committed offset follow
    this order when the connector builds its offsets in a ``HashMap`` (Debezium: ``new HashMap<>()``), and a
    drop-in connector writes the same bytes only if it orders its keys the same way.
    """
    keys = list(keys)
    size = 1
    while size < capacity:
        size *= 2
    while len(keys) > size * 3 // 4:
        size *= 2
    buckets: dict[int, list[str]] = {}
    for key in keys:
        h = _java_string_hash(key)
        buckets.setdefault((h ^ (h >> 16)) & (size - 1), []).append(key)
    return [key for index in sorted(buckets) for key in buckets[index]]


class JavaHashMapOrder:
    """Orders offset maps as a Java connector's ``HashMap`` iterates them.

    ``insertion``: the order in which the Java connector puts its keys (it decides the order of keys that
    share a bucket); keys not named come after them, as given. Orders are computed once per key set.
    """

    def __init__(self, insertion: Sequence[str] = (), capacity: int = 16) -> None:
        self._rank = {key: i for i, key in enumerate(insertion)}
        self._capacity = capacity
        self._orders: dict[tuple[str, ...], list[str] | None] = {}

    def order(self, keys: Iterable[str]) -> list[str]:
        keys = list(keys)
        inserted = sorted(keys, key=lambda k: self._rank.get(k, len(self._rank)))  # stable: unknown as given
        return java_hash_map_order(inserted, self._capacity)

    def apply(self, offset: dict[str, Any]) -> dict[str, Any]:
        """``offset`` reordered in place; returns it."""
        keys = tuple(offset)
        if keys not in self._orders:
            order = self.order(keys)
            # None: already in order; the cache is bounded (offsets have a handful of key sets)
            if len(self._orders) < 1024:
                self._orders[keys] = None if list(keys) == order else order
        else:
            order = self._orders[keys]  # type: ignore[assignment]
        if order is not None and list(keys) != order:
            items = [(key, offset[key]) for key in order]
            offset.clear()
            offset.update(items)
        return offset


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


_STR_ONLY = frozenset({str})
_PRIMITIVE_TYPES = frozenset({str, int, float, bool, type(None)})


def check_offset_map(what: str, value: Mapping[str, Any] | None) -> None:
    """Partitions and offsets may hold only string keys and primitive values (Connect's rule)."""
    if value is None:
        return
    # The worker checks every record's offset: the common case (exact str keys, exact primitive values) is
    # decided by two C-level passes over the map's types; anything else goes through the loop below.
    if _STR_ONLY.issuperset(map(type, value)) and _PRIMITIVE_TYPES.issuperset(map(type, value.values())):
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
