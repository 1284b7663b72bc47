"""A record's approximate size in memory, as Debezium's ``ApproximateStructSizeCalculator`` (3.6) counts it.

``max.queue.size.in.bytes`` bounds the queue between the capture thread and ``poll`` by the sum of these
sizes (Debezium's ``ChangeEventQueue``): the same constants, so a setting tuned for Debezium's heap bounds
about as many records here. Schemas are not counted (they are shared); each partition, offset and header
entry counts 100 bytes.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from cdc.api.records import SourceRecord
from cdc.api.schema import Schema, Type
from cdc.api.struct import Struct

__all__ = ["approximate_size"]

EMPTY_STRUCT, EMPTY_STRING, EMPTY_BYTES, EMPTY_ARRAY, EMPTY_MAP, PRIMITIVE, REFERENCE = (
    56,
    56,
    24,
    64,
    88,
    24,
    8,
)
_PRIMITIVES = frozenset(
    {Type.BOOLEAN, Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64}
)


def approximate_size(record: SourceRecord) -> int:
    size = 100 * (len(record.source_partition or {}) + len(record.source_offset or {}) + len(record.headers))
    size += 8  # the timestamp
    return size + _struct(record.key) + _struct(record.value) + len(record.topic.encode())


def _struct(value: Any) -> int:
    if not isinstance(value, Struct):
        return 0
    size = EMPTY_STRUCT
    for field, item in zip(value.schema.fields or (), value.values, strict=False):
        size += REFERENCE + _value(field.schema, item)
    return size


def _value(schema: Schema, value: Any) -> int:
    kind = schema.type
    if kind in _PRIMITIVES:
        return PRIMITIVE
    if value is None:
        return 0
    if kind == Type.STRING:
        return EMPTY_STRING + len(str(value).encode())
    if kind == Type.BYTES:
        if isinstance(value, Decimal):  # BigDecimal.unscaledValue().toByteArray()
            digits = "".join(map(str, value.as_tuple().digits)) or "0"
            return EMPTY_BYTES + int(digits).bit_length() // 8 + 1
        return EMPTY_BYTES + len(value)
    if kind == Type.STRUCT:
        return _struct(value)
    if kind == Type.ARRAY:
        assert schema.value_schema is not None
        return EMPTY_ARRAY + sum(REFERENCE + _value(schema.value_schema, v) for v in value)
    if kind == Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return EMPTY_MAP + sum(
            2 * REFERENCE + _value(schema.key_schema, k) + _value(schema.value_schema, v)
            for k, v in value.items()
        )
    return 0
