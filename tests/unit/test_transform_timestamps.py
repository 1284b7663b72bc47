"""TimestampConverter between string, unix, Date, Time and Timestamp."""

from __future__ import annotations

import datetime as dt

import pytest

from cdc.api import (
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    ConfigError,
    DataError,
    Date,
    SchemaBuilder,
    SourceRecord,
    Struct,
    Time,
    Timestamp,
)
from cdc.transforms.timestamps import TimestampConverterValue

WHEN = dt.datetime(2024, 3, 5, 7, 8, 9, 123000, tzinfo=dt.UTC)
MS = 1709622489123


def make(**cfg) -> TimestampConverterValue:
    t: TimestampConverterValue = TimestampConverterValue()
    t.configure(cfg)
    return t


def rec(value, schema=None) -> SourceRecord:
    return SourceRecord("t", 0, None, None, schema, value)


def test_whole_value_conversions() -> None:
    out = make(**{"target.type": "unix"}).apply(rec(WHEN, Timestamp.schema()))
    assert out.value == MS and out.value_schema == INT64_SCHEMA
    assert make(**{"target.type": "Timestamp"}).apply(rec(MS, INT64_SCHEMA)).value == WHEN
    assert make(**{"target.type": "Date"}).apply(rec(MS)).value == dt.date(2024, 3, 5)
    t = make(**{"target.type": "Time"}).apply(rec(MS, INT64_SCHEMA))
    assert t.value == dt.time(7, 8, 9, 123000) and t.value_schema == Time.schema()
    s = make(**{"target.type": "string", "format": "yyyy-MM-dd HH:mm:ss.SSS"}).apply(
        rec(WHEN, Timestamp.schema())
    )
    assert s.value == "2024-03-05 07:08:09.123"
    back = make(**{"target.type": "unix", "format": "yyyy-MM-dd HH:mm:ss.SSS", "unix.precision": "seconds"})
    assert back.apply(rec("2024-03-05 07:08:09.123")).value == MS // 1000


def test_field_conversion_with_schema_and_schemaless() -> None:
    schema = SchemaBuilder.struct().field("id", INT64_SCHEMA).field("at", OPTIONAL_STRING_SCHEMA).build()
    t = make(field="at", **{"target.type": "Date", "format": "yyyyMMdd"})
    out = t.apply(rec(Struct(schema, [1, "20240305"]), schema))
    assert out.value.as_dict() == {"id": 1, "at": dt.date(2024, 3, 5)}
    assert out.value_schema.field("at").schema == Date.schema(optional=True)
    assert t.apply(rec({"at": "20240306", "x": 1})).value == {"at": dt.date(2024, 3, 6), "x": 1}


def test_errors() -> None:
    with pytest.raises(ConfigError, match="Unknown timestamp type in TimestampConverter: bogus"):
        make(**{"target.type": "bogus"})
    with pytest.raises(ConfigError, match="requires format option"):
        make(**{"target.type": "string"})
    with pytest.raises(DataError, match=r"Could not parse timestamp: value \(nope\) does not match pattern"):
        make(**{"target.type": "unix", "format": "yyyy"}).apply(rec("nope"))
    with pytest.raises(DataError, match="does not correspond to a known timestamp type"):
        make(**{"target.type": "unix"}).apply(rec(True, SchemaBuilder.bool().build()))
