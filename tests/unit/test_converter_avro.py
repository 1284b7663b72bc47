"""AvroConverter: Confluent's wire format and AvroData's schema mapping, against hand-written fixtures.

The registry here is an in-process fake (unit tests do no I/O); tests/integration/test_avro_registry.py
runs the same converter against a real registry.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from cdc.api import (
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    DataError,
    Date,
    Decimal,
    RetriableError,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from cdc.converters import AvroConverter, SchemaRegistryClient
from cdc.converters.avro_schema import from_connect, to_connect, to_json

EXPECTED: dict[str, str] = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "converters" / "avro_expected.json").read_text()
)


class FakeRegistry:
    """Confluent's REST API in memory: ids start at ``first_id``; same schema text → same id."""

    def __init__(self, first_id: int = 42) -> None:
        self.schemas: dict[int, str] = {}
        self.subjects: dict[str, list[int]] = {}
        self.next_id = first_id
        self.calls: list[tuple[str, str]] = []

    def __call__(
        self, method: str, url: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        path = url.split("://", 1)[1].split("/", 1)[1]
        self.calls.append((method, path))
        if "down" in url:
            raise OSError("connection refused")
        payload: Any = orjson.loads(body) if body else None
        if method == "POST" and path.startswith("subjects/"):
            subject = path.split("/")[1]
            text = payload["schema"]
            found = next((i for i, s in self.schemas.items() if s == text), None)
            if path.endswith("/versions"):
                if found is None:
                    found, self.next_id = self.next_id, self.next_id + 1
                    self.schemas[found] = text
                self.subjects.setdefault(subject, []).append(found)
                return 200, orjson.dumps({"id": found})
            if found is None or found not in self.subjects.get(subject, []):
                return 404, b'{"error_code":40403,"message":"Schema not found"}'
            return 200, orjson.dumps({"subject": subject, "version": 1, "id": found, "schema": text})
        if method == "GET" and path.startswith("schemas/ids/"):
            schema_id = int(path.rsplit("/", 1)[1])
            if schema_id not in self.schemas:
                return 404, b'{"error_code":40403,"message":"Schema not found"}'
            return 200, orjson.dumps({"schema": self.schemas[schema_id]})
        return 404, b'{"error_code":404,"message":"HTTP 404 Not Found"}'


def key_schema() -> Schema:
    return SchemaBuilder.struct().name("mysqlavro.ops.customers.Key").field("id", INT32_SCHEMA).build()


def value_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("mysqlavro.ops.customers.Value")
        .field("id", INT32_SCHEMA)
        .field("name", OPTIONAL_STRING_SCHEMA)
        .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
        .field("price", Decimal.schema(3, optional=True))
        .field("born", Date.schema(optional=True))
        .field("at", Time.schema())
        .field("updated", Timestamp.schema())
        .field("small", INT16_SCHEMA)
        .field("status", SchemaBuilder.string().optional().default_value("new").build())
        .build()
    )


def value_record(schema: Schema) -> Struct:
    s = Struct(schema).put("id", 5).put("name", "Kim").put("amount", decimal.Decimal("12.34"))
    s.put("at", dt.time(0)).put("updated", dt.datetime(1970, 1, 1, tzinfo=dt.UTC)).put("small", 4)
    return s.put("status", "abc")


def converter(
    fake: FakeRegistry, *, is_key: bool = False, props: dict[str, str] | None = None
) -> AvroConverter:
    conv = AvroConverter(transport=fake)
    conv.configure({"schema.registry.url": "http://registry:8081", **(props or {})}, is_key)
    return conv


def test_key_schema_and_wire_bytes() -> None:
    fake = FakeRegistry()
    data = converter(fake, is_key=True).from_connect_data(
        "mysqlavro-ops-customers", key_schema(), Struct(key_schema()).put("id", 1)
    )
    assert data == bytes.fromhex(EXPECTED["key_id_42_value_1_hex"])
    assert fake.schemas[42] == EXPECTED["key_schema"]
    assert fake.subjects == {"mysqlavro-ops-customers-key": [42]}


def test_value_schema_and_wire_bytes() -> None:
    fake = FakeRegistry()
    schema = value_schema()
    data = converter(fake).from_connect_data("t", schema, value_record(schema))
    assert fake.schemas[42] == EXPECTED["value_schema"]
    assert data == bytes.fromhex(EXPECTED["value_id_42_hex"])
    assert "t-value" in fake.subjects


def test_unnamed_struct_map_entries_and_int8() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("m", SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build())
        .field("s", SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build())
        .field("b", INT8_SCHEMA)
        .build()
    )
    assert to_json(from_connect(schema)) == EXPECTED["unnamed_schema"]


def test_round_trip_restores_schema_and_value() -> None:
    fake = FakeRegistry()
    schema = value_schema()
    envelope = (
        SchemaBuilder.struct()
        .name("mysqlavro.ops.customers.Envelope")
        .version(1)
        .field("before", SchemaBuilder.from_schema(schema).optional().build())
        .field("after", SchemaBuilder.from_schema(schema).optional().build())
        .field("op", STRING_SCHEMA)
        .build()
    )
    after_schema = envelope.field("after").schema  # type: ignore[union-attr]
    after = Struct(after_schema, list(value_record(schema).values))
    after.put("born", dt.date(1990, 5, 17)).put("price", decimal.Decimal("-0.500"))
    record = Struct(envelope).put("after", after).put("op", "c")
    data = converter(fake).from_connect_data("t", envelope, record)
    text = fake.schemas[42]
    assert '"name":"after","type":["null","Value"],"default":null' in text  # second use is a reference
    back = converter(fake).to_connect_data("t", data)  # a fresh converter: schema from the registry
    assert back.schema == envelope
    assert back.value == record


def test_to_connect_schema_from_plain_avro() -> None:
    avro = {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "qty", "type": "int", "default": 1},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "tags", "type": {"type": "map", "values": "string"}},
        ],
    }
    schema = to_connect(avro)
    assert schema.name == "shop.Order"
    assert [f.name for f in schema.fields] == ["id", "note", "qty", "kind", "tags"]
    assert schema.field("note").schema.optional  # type: ignore[union-attr]
    qty = schema.field("qty").schema  # type: ignore[union-attr]
    assert qty.default == 1 and qty.parameters == {"io.confluent.connect.avro.field.default": "true"}
    kind = schema.field("kind").schema  # type: ignore[union-attr]
    assert kind.type.value == "string" and kind.parameters == {
        "io.confluent.connect.avro.Enum": "shop.Kind",
        "io.confluent.connect.avro.Enum.A": "A",
        "io.confluent.connect.avro.Enum.B": "B",
    }


def test_lookup_without_auto_register() -> None:
    fake = FakeRegistry()
    conv = converter(fake, props={"auto.register.schemas": "false"})
    with pytest.raises(DataError, match="Schema not found"):
        conv.from_connect_data("t", key_schema(), Struct(key_schema()).put("id", 1))
    converter(fake).from_connect_data("t", key_schema(), Struct(key_schema()).put("id", 1))
    assert conv.from_connect_data("t", key_schema(), Struct(key_schema()).put("id", 1))


def test_registry_failover_cache_and_auth() -> None:
    fake = FakeRegistry()
    client = SchemaRegistryClient("http://down:1, http://u%40x:p@registry:8081/", transport=fake)
    assert client.urls == ["http://down:1", "http://registry:8081"]
    schema_id = client.register("s", '"string"')
    assert client.register("s", '"string"') == schema_id
    assert sum(1 for m, _ in fake.calls if m == "POST") == 2  # once per URL tried, then cached
    assert client.schema_by_id(schema_id) == '"string"'
    with pytest.raises(RetriableError):
        SchemaRegistryClient("http://down:1", transport=fake).schema_by_id(1)


def test_bad_magic_byte_and_null() -> None:
    conv = converter(FakeRegistry())
    with pytest.raises(DataError, match="Unknown magic byte"):
        conv.to_connect_data("t", b"\x01\x00\x00\x00\x01\x02")
    assert conv.to_connect_data("t", None).value is None
    assert conv.from_connect_data("t", key_schema(), None) is None


STRATEGY = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"


def test_subject_strategies() -> None:
    fake = FakeRegistry()
    conv = converter(fake, props={"value.subject.name.strategy": STRATEGY})
    conv.from_connect_data("t", key_schema(), Struct(key_schema()).put("id", 1))
    assert list(fake.subjects) == ["t-mysqlavro.ops.customers.Key"]


def test_registry_settings_we_do_not_support_are_refused() -> None:
    from cdc.api.errors import ConfigError

    for key in ("schema.registry.ssl.protocol", "bearer.auth.token"):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            AvroConverter().configure({"schema.registry.url": "http://localhost:8081", key: "x"}, False)


def test_ignore_default_for_nullables() -> None:
    """Confluent's AvroData writes a null whose schema has a default as the default, unless
    ``ignore.default.for.nullables=true`` (then a nullable field keeps its null)."""
    schema = SchemaBuilder.struct().field("s", SchemaBuilder.string().optional().default_value("abc").build())
    value_schema = schema.build()
    out = {}
    for ignore in ("false", "true"):
        converter = AvroConverter(FakeRegistry())
        converter.configure(
            {"schema.registry.url": "http://r", "ignore.default.for.nullables": ignore}, False
        )
        data = converter.from_connect_data("t", value_schema, Struct(value_schema).put("s", None))
        out[ignore] = converter.to_connect_data("t", data).value.get_without_default("s")
    assert out == {"false": "abc", "true": None}
