"""Connect's data model: schemas, fields and the logical types.

A :class:`Schema` is immutable and hashable, so converters and transforms can cache per schema. Build
one with :class:`SchemaBuilder` (``SchemaBuilder.struct().name("x").field("id", INT32_SCHEMA).build()``)
or use the ready constants (``INT32_SCHEMA``, ``OPTIONAL_STRING_SCHEMA`` …).

Python values per type: INT8…INT64 ``int``, FLOAT32/FLOAT64 ``float``, BOOLEAN ``bool``, STRING ``str``,
BYTES ``bytes``, ARRAY ``list``, MAP ``dict``, STRUCT :class:`cdc.api.struct.Struct`. Logical types keep
their physical type in the schema and use richer Python values: Decimal ``decimal.Decimal``, Date
``datetime.date``, Time ``datetime.time``, Timestamp ``datetime.datetime`` (UTC).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

from cdc.api.errors import DataError

__all__ = [
    "BOOLEAN_SCHEMA",
    "BYTES_SCHEMA",
    "FLOAT32_SCHEMA",
    "FLOAT64_SCHEMA",
    "INT8_SCHEMA",
    "INT16_SCHEMA",
    "INT32_SCHEMA",
    "INT64_SCHEMA",
    "OPTIONAL_BOOLEAN_SCHEMA",
    "OPTIONAL_BYTES_SCHEMA",
    "OPTIONAL_FLOAT32_SCHEMA",
    "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_INT8_SCHEMA",
    "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA",
    "OPTIONAL_INT64_SCHEMA",
    "OPTIONAL_STRING_SCHEMA",
    "STRING_SCHEMA",
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaBuilder",
    "StructValue",
    "Time",
    "Timestamp",
    "Type",
    "validate_value",
]


class Type(str, Enum):
    """The physical types of Connect, spelt as the JSON converter writes them."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float"
    FLOAT64 = "double"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)


class Field:
    """A named, positioned member of a struct schema."""

    __slots__ = ("index", "name", "schema")

    def __init__(self, name: str, index: int, schema: Schema) -> None:
        self.name = name
        self.index = index
        self.schema = schema

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Field)
            and self.name == other.name
            and self.index == other.index
            and self.schema == other.schema
        )

    def __hash__(self) -> int:
        return hash((self.name, self.index))

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, index={self.index}, schema={self.schema!r})"


class Schema:
    """An immutable Connect schema."""

    __slots__ = (
        "_field_map",
        "_hash",
        "default",
        "doc",
        "fields",
        "key_schema",
        "name",
        "optional",
        "parameters",
        "type",
        "value_schema",
        "version",
    )

    def __init__(
        self,
        type: Type,
        *,
        optional: bool = False,
        default: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: Iterable[Field] = (),
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        self.type = type
        self.optional = optional
        self.default = default
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters: Mapping[str, str] | None = dict(parameters) if parameters is not None else None
        self.fields: tuple[Field, ...] = tuple(fields)
        self.key_schema = key_schema
        self.value_schema = value_schema
        self._field_map = {f.name: f for f in self.fields}
        self._hash: int | None = None
        if type is Type.STRUCT and len(self._field_map) != len(self.fields):
            raise DataError(f"Struct schema {name!r} has duplicate field names")

    def field(self, name: str) -> Field | None:
        """The field called ``name`` of a struct schema, or None."""
        if self.type is not Type.STRUCT:
            raise DataError("Cannot look up fields on non-struct type")
        return self._field_map.get(name)

    def _identity(self) -> tuple[Any, ...]:
        params = tuple(sorted(self.parameters.items())) if self.parameters else None
        default = self.default
        if isinstance(default, (list, dict)):
            default = repr(default)
        return (
            self.type,
            self.optional,
            default,
            self.name,
            self.version,
            self.doc,
            params,
            self.fields,
            self.key_schema,
            self.value_schema,
        )

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.type, self.optional, self.name, self.version, len(self.fields)))
        return self._hash

    def __repr__(self) -> str:
        extra = f", name={self.name!r}" if self.name else ""
        opt = ", optional=True" if self.optional else ""
        return f"Schema({self.type.name}{extra}{opt})"


class SchemaBuilder:
    """A fluent builder, the counterpart of Connect's ``SchemaBuilder``."""

    def __init__(self, type: Type) -> None:
        self._type = type
        self._optional = False
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: list[Field] = []
        self._key: Schema | None = None
        self._value: Schema | None = None

    # -- constructors for each type ------------------------------------------------------------
    @classmethod
    def type(cls, type: Type) -> SchemaBuilder:
        return cls(type)

    @classmethod
    def int8(cls) -> SchemaBuilder:
        return cls(Type.INT8)

    @classmethod
    def int16(cls) -> SchemaBuilder:
        return cls(Type.INT16)

    @classmethod
    def int32(cls) -> SchemaBuilder:
        return cls(Type.INT32)

    @classmethod
    def int64(cls) -> SchemaBuilder:
        return cls(Type.INT64)

    @classmethod
    def float32(cls) -> SchemaBuilder:
        return cls(Type.FLOAT32)

    @classmethod
    def float64(cls) -> SchemaBuilder:
        return cls(Type.FLOAT64)

    @classmethod
    def bool(cls) -> SchemaBuilder:
        return cls(Type.BOOLEAN)

    @classmethod
    def string(cls) -> SchemaBuilder:
        return cls(Type.STRING)

    @classmethod
    def bytes(cls) -> SchemaBuilder:
        return cls(Type.BYTES)

    @classmethod
    def struct(cls) -> SchemaBuilder:
        return cls(Type.STRUCT)

    @classmethod
    def array(cls, value_schema: Schema) -> SchemaBuilder:
        b = cls(Type.ARRAY)
        b._value = value_schema
        return b

    @classmethod
    def map(cls, key_schema: Schema, value_schema: Schema) -> SchemaBuilder:
        b = cls(Type.MAP)
        b._key = key_schema
        b._value = value_schema
        return b

    @classmethod
    def from_schema(cls, schema: Schema) -> SchemaBuilder:
        """A builder pre-filled with everything ``schema`` has (fields included)."""
        b = cls(schema.type)
        b._optional = schema.optional
        b._default = schema.default
        b._name = schema.name
        b._version = schema.version
        b._doc = schema.doc
        b._parameters = dict(schema.parameters) if schema.parameters is not None else None
        b._fields = list(schema.fields)
        b._key = schema.key_schema
        b._value = schema.value_schema
        return b

    # -- properties ---------------------------------------------------------------------------
    def optional(self) -> SchemaBuilder:
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        self._default = value
        return self

    def name(self, name: str | None) -> SchemaBuilder:
        self._name = name
        return self

    def version(self, version: int | None) -> SchemaBuilder:
        self._version = version
        return self

    def doc(self, doc: str | None) -> SchemaBuilder:
        self._doc = doc
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        self._parameters[key] = value
        return self

    def parameters(self, params: Mapping[str, str]) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        self._parameters.update(params)
        return self

    def field(self, name: str, schema: Schema) -> SchemaBuilder:
        if self._type is not Type.STRUCT:
            raise DataError("Cannot create fields on type " + self._type.value)
        if any(f.name == name for f in self._fields):
            raise DataError(f"Cannot create field because of field name duplication {name}")
        self._fields.append(Field(name, len(self._fields), schema))
        return self

    def build(self) -> Schema:
        schema = Schema(
            self._type,
            optional=self._optional,
            default=self._default,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=self._parameters,
            fields=self._fields,
            key_schema=self._key,
            value_schema=self._value,
        )
        if self._default is not None:
            validate_value(schema, self._default)
        return schema


def _primitive(type: Type, optional: bool) -> Schema:
    return Schema(type, optional=optional)


INT8_SCHEMA = _primitive(Type.INT8, False)
INT16_SCHEMA = _primitive(Type.INT16, False)
INT32_SCHEMA = _primitive(Type.INT32, False)
INT64_SCHEMA = _primitive(Type.INT64, False)
FLOAT32_SCHEMA = _primitive(Type.FLOAT32, False)
FLOAT64_SCHEMA = _primitive(Type.FLOAT64, False)
BOOLEAN_SCHEMA = _primitive(Type.BOOLEAN, False)
STRING_SCHEMA = _primitive(Type.STRING, False)
BYTES_SCHEMA = _primitive(Type.BYTES, False)
OPTIONAL_INT8_SCHEMA = _primitive(Type.INT8, True)
OPTIONAL_INT16_SCHEMA = _primitive(Type.INT16, True)
OPTIONAL_INT32_SCHEMA = _primitive(Type.INT32, True)
OPTIONAL_INT64_SCHEMA = _primitive(Type.INT64, True)
OPTIONAL_FLOAT32_SCHEMA = _primitive(Type.FLOAT32, True)
OPTIONAL_FLOAT64_SCHEMA = _primitive(Type.FLOAT64, True)
OPTIONAL_BOOLEAN_SCHEMA = _primitive(Type.BOOLEAN, True)
OPTIONAL_STRING_SCHEMA = _primitive(Type.STRING, True)
OPTIONAL_BYTES_SCHEMA = _primitive(Type.BYTES, True)


_EPOCH_DATE = _dt.date(1970, 1, 1)
# Decimal arithmetic wide enough for any DECIMAL(65, 30) or Java BigDecimal we meet: exact, no rounding.
_EXACT = _decimal.Context(prec=1000, Emax=_decimal.MAX_EMAX, Emin=_decimal.MIN_EMIN)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


class Decimal:
    """``org.apache.kafka.connect.data.Decimal``: BYTES holding the unscaled two's-complement value."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return (
            SchemaBuilder.bytes()
            .name(Decimal.LOGICAL_NAME)
            .parameter(Decimal.SCALE_FIELD, str(scale))
            .version(1)
        )

    @staticmethod
    def schema(scale: int, optional: bool = False) -> Schema:
        b = Decimal.builder(scale)
        return (b.optional() if optional else b).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        params = schema.parameters or {}
        if Decimal.SCALE_FIELD not in params:
            raise DataError("Invalid Decimal schema: scale parameter not found.")
        return int(params[Decimal.SCALE_FIELD])

    @staticmethod
    def from_logical(schema: Schema, value: _decimal.Decimal) -> bytes:
        scale = Decimal.scale(schema)
        sign, digits, exponent = value.as_tuple()
        if not isinstance(exponent, int):
            raise DataError(f"Cannot encode non-finite decimal {value}")
        if -exponent != scale:
            value = value.quantize(_decimal.Decimal(1).scaleb(-scale, _EXACT), context=_EXACT)
            sign, digits, exponent = value.as_tuple()
            if -int(exponent) != scale:
                raise DataError(f"Decimal value has mismatching scale for given Decimal schema: {value}")
        unscaled = int("".join(map(str, digits)) or "0")
        if sign:
            unscaled = -unscaled
        length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
        return unscaled.to_bytes(length, "big", signed=True)

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> _decimal.Decimal:
        unscaled = int.from_bytes(value, "big", signed=True)
        return _decimal.Decimal(unscaled).scaleb(-Decimal.scale(schema), _EXACT)


class Date:
    """``org.apache.kafka.connect.data.Date``: INT32 days since the epoch."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Date"

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def schema(optional: bool = False) -> Schema:
        b = Date.builder()
        return (b.optional() if optional else b).build()

    @staticmethod
    def from_logical(schema: Schema, value: _dt.date) -> int:
        if isinstance(value, _dt.datetime):
            if value.time() != _dt.time(0) or (value.tzinfo and value.utcoffset()):
                raise DataError(
                    "Kafka Connect Date type should not have any time fields set to non-zero values."
                )
            value = value.date()
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.date:
        return _EPOCH_DATE + _dt.timedelta(days=value)


class Time:
    """``org.apache.kafka.connect.data.Time``: INT32 milliseconds since midnight."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Time"

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def schema(optional: bool = False) -> Schema:
        b = Time.builder()
        return (b.optional() if optional else b).build()

    @staticmethod
    def from_logical(schema: Schema, value: _dt.time | _dt.timedelta) -> int:
        if isinstance(value, _dt.timedelta):
            ms = int(value.total_seconds() * 1000)
        else:
            ms = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        if not 0 <= ms < 86_400_000:
            raise DataError("Kafka Connect Time type should not have any date fields set to non-zero values.")
        return ms

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.time:
        if not 0 <= value < 86_400_000:
            raise DataError(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        seconds, ms = divmod(value, 1000)
        minutes, sec = divmod(seconds, 60)
        hours, minute = divmod(minutes, 60)
        return _dt.time(hours, minute, sec, ms * 1000)


class Timestamp:
    """``org.apache.kafka.connect.data.Timestamp``: INT64 milliseconds since the epoch (UTC)."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def schema(optional: bool = False) -> Schema:
        b = Timestamp.builder()
        return (b.optional() if optional else b).build()

    @staticmethod
    def from_logical(schema: Schema, value: _dt.datetime) -> int:
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        delta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.datetime:
        return _EPOCH + _dt.timedelta(milliseconds=value)


LOGICAL_TYPES: dict[str, Any] = {
    Decimal.LOGICAL_NAME: Decimal,
    Date.LOGICAL_NAME: Date,
    Time.LOGICAL_NAME: Time,
    Timestamp.LOGICAL_NAME: Timestamp,
}

_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}


class StructValue:
    """What :func:`validate_value` knows of a STRUCT value (:class:`cdc.api.struct.Struct`), declared here
    so that the schema module does not import the struct module that builds on it. A plain base class, not
    an ABC: ``isinstance`` on it stays a type check on the converters' hot path."""

    __slots__ = ()

    schema: Schema

    def validate(self) -> None:
        """Raise :class:`DataError` if a required field is missing."""
        raise NotImplementedError


_LOGICAL_PY: dict[str, type | tuple[type, ...]] = {
    Decimal.LOGICAL_NAME: _decimal.Decimal,
    Date.LOGICAL_NAME: _dt.date,
    Time.LOGICAL_NAME: (_dt.time, _dt.timedelta),
    Timestamp.LOGICAL_NAME: _dt.datetime,
}


def validate_value(schema: Schema, value: Any, field_name: str | None = None) -> None:
    """Raise :class:`DataError` unless ``value`` is valid for ``schema`` (Connect's ``validateValue``)."""
    where = f' for field: "{field_name}"' if field_name else ""
    if value is None:
        if not schema.optional and schema.default is None:
            raise DataError(
                f"Invalid value: null used for required field{where}, schema type: {schema.type.name}"
            )
        return
    if schema.name in _LOGICAL_PY:
        expected = _LOGICAL_PY[schema.name]
        if not isinstance(value, expected) or (
            schema.name == Date.LOGICAL_NAME
            and isinstance(value, _dt.datetime)
            and value.time() != _dt.time(0)
        ):
            raise DataError(
                f'Invalid Java object for schema "{schema.name}" with type {schema.type.name}: '
                f"{type(value).__name__}{where}"
            )
        return
    t = schema.type
    ok: bool
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
    elif t in (Type.FLOAT32, Type.FLOAT64):
        ok = isinstance(value, (float, int)) and not isinstance(value, bool)
    elif t is Type.BOOLEAN:
        ok = isinstance(value, bool)
    elif t is Type.STRING:
        ok = isinstance(value, str)
    elif t is Type.BYTES:
        ok = isinstance(value, (bytes, bytearray, memoryview))
    elif t is Type.ARRAY:
        ok = isinstance(value, (list, tuple))
        if ok and schema.value_schema is not None:
            for item in value:
                validate_value(schema.value_schema, item, field_name)
    elif t is Type.MAP:
        ok = isinstance(value, dict)
        if ok and schema.key_schema is not None and schema.value_schema is not None:
            for k, v in value.items():
                validate_value(schema.key_schema, k, field_name)
                validate_value(schema.value_schema, v, field_name)
    else:
        ok = isinstance(value, StructValue)
        if ok and value.schema != schema:
            raise DataError(f"Struct schemas do not match{where}.")
        if ok:
            value.validate()
    if not ok:
        raise DataError(f"Invalid Java object for schema with type {t.name}: {type(value).__name__}{where}")
