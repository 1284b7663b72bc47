"""RegexRouter, TimestampRouter, Filter, SetSchemaMetadata, and the Java syntaxes they read."""

from __future__ import annotations

import datetime as dt

import pytest

from cdc.api import INT32_SCHEMA, ConfigError, DataError, SchemaBuilder, SourceRecord, Struct
from cdc.transforms._java import JavaDateFormat
from cdc.transforms.routing import Filter, RegexRouter, SetSchemaMetadataValue, TimestampRouter


def rec(topic="db.ops.customers", value=None, schema=None, timestamp=None) -> SourceRecord:
    return SourceRecord(topic, 0, None, None, schema, value, timestamp=timestamp)


def make(cls, **cfg):
    t = cls()
    t.configure(cfg)
    return t


def test_regex_router_java_groups_and_full_match() -> None:
    t = make(RegexRouter, regex=r"(.*)\.(.*)\.(.*)", replacement="$1-$2-$3")
    assert t.apply(rec()).topic == "db-ops-customers"
    plain = rec("plain")
    assert t.apply(plain) is plain  # no whole-topic match: unchanged
    partial = make(RegexRouter, regex="ops", replacement="x")
    assert partial.apply(rec()).topic == "db.ops.customers"  # find() would match, matches() does not
    named = make(RegexRouter, regex=r"(?<db>\w+)\.(.*)", replacement=r"${db}_\$_$2")
    assert named.apply(rec("a.b")).topic == "a_$_b"
    with pytest.raises(ConfigError, match="No group 2"):
        make(RegexRouter, regex="(a)", replacement="$2")
    with pytest.raises(ConfigError, match="regex"):
        make(RegexRouter, regex="(", replacement="x")


def test_timestamp_router() -> None:
    ts = int(dt.datetime(2024, 3, 5, 23, 0, tzinfo=dt.UTC).timestamp() * 1000)
    assert make(TimestampRouter).apply(rec("t", timestamp=ts)).topic == "t-20240305"
    t = make(TimestampRouter, **{"topic.format": "${timestamp}_${topic}", "timestamp.format": "yyyy-MM'w'HH"})
    assert t.apply(rec("t", timestamp=ts)).topic == "2024-03w23_t"
    with pytest.raises(DataError, match="Timestamp missing on record"):
        t.apply(rec("t"))


def test_java_date_format_round_trip() -> None:
    f = JavaDateFormat("EEE, dd MMM yyyy HH:mm:ss.SSS Z")
    when = dt.datetime(2024, 2, 29, 13, 4, 5, 678000, tzinfo=dt.UTC)
    assert f.format(when) == "Thu, 29 Feb 2024 13:04:05.678 +0000"
    assert f.parse(f.format(when)) == when
    assert JavaDateFormat("yyyy-MM-dd'T'HH:mmXXX").parse("2024-01-01T09:00+09:00") == dt.datetime(
        2024, 1, 1, tzinfo=dt.UTC
    )
    with pytest.raises(ValueError):
        JavaDateFormat("yyyy-QQ")


def test_filter_drops_everything() -> None:
    assert make(Filter).apply(rec()) is None


def test_set_schema_metadata() -> None:
    schema = SchemaBuilder.struct().name("old").version(1).field("a", INT32_SCHEMA).build()
    out = make(SetSchemaMetadataValue, **{"schema.name": "new", "schema.version": "7"}).apply(
        rec(value=Struct(schema, [1]), schema=schema)
    )
    assert (out.value_schema.name, out.value_schema.version) == ("new", 7)
    assert out.value.schema is out.value_schema and out.value.values == [1]
    with pytest.raises(DataError, match=r"Schema required for \[updating schema metadata\]"):
        make(SetSchemaMetadataValue, **{"schema.name": "n"}).apply(rec(value={"a": 1}))
    with pytest.raises(ConfigError, match="Neither schema name nor version configured"):
        make(SetSchemaMetadataValue)
