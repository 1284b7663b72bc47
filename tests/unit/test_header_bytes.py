"""The header bytes cache gives what a fresh conversion gives, and converts again what may have changed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.api.plugins import HeaderConverter
from cdc.api.records import Header, Headers, SchemaAndValue
from cdc.api.schema import INT32_SCHEMA, STRING_SCHEMA, Schema, SchemaBuilder
from cdc.api.struct import Struct
from cdc.converters.header import SimpleHeaderConverter
from cdc.converters.header_bytes import MAX_ENTRIES, HeaderBytes


class _Counting(HeaderConverter):
    """The topic in the bytes (a converter may depend on it), and a count of conversions."""

    def __init__(self) -> None:
        self.calls = 0

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes:
        self.calls += 1
        return f"{topic}/{header_key}={value}".encode()

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        raise NotImplementedError


def test_constant_headers_are_converted_once_per_topic_with_the_same_bytes() -> None:
    conv = _Counting()
    cache = HeaderBytes(conv)
    constant = [Header("a", STRING_SCHEMA, "x"), Header("n", INT32_SCHEMA, 7)]
    for _ in range(3):
        assert cache.encode("t1", Headers(constant)) == [("a", b"t1/a=x"), ("n", b"t1/n=7")]
    assert conv.calls == 2
    assert cache.encode("t2", Headers(constant)) == [("a", b"t2/a=x"), ("n", b"t2/n=7")]
    assert conv.calls == 4


def test_an_equal_but_new_header_and_a_struct_value_are_converted_each_time() -> None:
    conv = _Counting()
    cache = HeaderBytes(conv)
    schema = SchemaBuilder.struct().field("id", INT32_SCHEMA).build()
    key = Struct(schema, [1])
    header = Header("k", schema, key)
    assert cache.encode("t", Headers([header])) == [("k", b"t/k=Struct{id=1}")]
    key.values[0] = 2  # a Struct is mutable: the same header object now says something else
    assert cache.encode("t", Headers([header])) == [("k", b"t/k=Struct{id=2}")]
    cache.encode("t", Headers([Header("a", STRING_SCHEMA, "x")]))
    cache.encode("t", Headers([Header("a", STRING_SCHEMA, "x")]))
    assert conv.calls == 4


def test_the_bytes_are_the_simple_header_converters_and_the_cache_stays_bounded() -> None:
    simple = SimpleHeaderConverter()
    cache = HeaderBytes(simple)
    headers = [Header(f"h{i}", STRING_SCHEMA, f"v{i}") for i in range(MAX_ENTRIES + 10)]
    for h in headers:
        expected = [(h.key, simple.from_connect_header("t", h.key, h.schema, h.value))]
        assert cache.encode("t", Headers([h])) == expected
        assert cache.encode("t", Headers([h])) == expected
    assert cache._entries <= MAX_ENTRIES
