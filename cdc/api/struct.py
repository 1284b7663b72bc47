"""``Struct``: a value of a STRUCT schema, checked against it."""

from __future__ import annotations

from typing import Any

from cdc.api.errors import DataError
from cdc.api.schema import Field, Schema, StructValue, Type, validate_value

__all__ = ["Struct"]

# Every change event builds several structs: a module constant, not an Enum attribute look-up per struct.
_STRUCT = Type.STRUCT


class Struct(StructValue):
    """A record of values, one per field of its struct schema.

    ``put`` validates each value as it is set; ``validate`` checks required fields before the struct
    leaves a connector or transform. Values are kept in field order, so building a struct costs one
    list, and converters walk ``schema.fields`` and ``values`` side by side.
    """

    __slots__ = ("schema", "values")

    def __init__(self, schema: Schema, values: list[Any] | None = None) -> None:
        if schema.type is not _STRUCT:
            raise DataError("Not a struct schema: " + repr(schema))
        self.schema = schema
        if values is None:
            self.values: list[Any] = [None] * len(schema.fields)
        else:
            if len(values) != len(schema.fields):
                raise DataError("Struct values do not match the schema's field count")
            self.values = values

    @classmethod
    def trusted(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct of a STRUCT ``schema`` and exactly one value per field, which the caller guarantees
        (a converter's compiled decoder): no checks, for the per-record hot paths."""
        out = cls.__new__(cls)
        out.schema = schema
        out.values = values
        return out

    def _lookup(self, name: str) -> Field:
        f = self.schema.field(name)
        if f is None:
            raise DataError(f"{name} is not a valid field name")
        return f

    def put(self, field: str | Field, value: Any) -> Struct:
        f = self._lookup(field) if isinstance(field, str) else field
        validate_value(f.schema, value, f.name)
        self.values[f.index] = value
        return self

    def get(self, field: str | Field) -> Any:
        f = self._lookup(field) if isinstance(field, str) else field
        value = self.values[f.index]
        if value is None and f.schema.default is not None:
            return f.schema.default
        return value

    def get_without_default(self, name: str) -> Any:
        return self.values[self._lookup(name).index]

    def validate(self) -> None:
        for f in self.schema.fields:
            value = self.values[f.index]
            if value is None and not f.schema.optional and f.schema.default is None:
                raise DataError(
                    f'Invalid value: null used for required field: "{f.name}", '
                    f"schema type: {f.schema.type.name}"
                )

    def as_dict(self) -> dict[str, Any]:
        """The values by field name, nested structs turned into dicts too."""
        out: dict[str, Any] = {}
        for f, v in zip(self.schema.fields, self.values, strict=True):
            out[f.name] = v.as_dict() if isinstance(v, Struct) else v
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and self.schema == other.schema and self.values == other.values

    def __hash__(self) -> int:
        return hash((self.schema, tuple(repr(v) for v in self.values)))

    def __repr__(self) -> str:
        inner = ",".join(f"{f.name}={v!r}" for f, v in zip(self.schema.fields, self.values, strict=True))
        return f"Struct{{{inner}}}"
