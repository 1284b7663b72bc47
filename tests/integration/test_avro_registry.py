"""AvroConverter against a real Confluent-compatible registry (Apicurio, started by scripts/registry.sh)."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from cdc.api import (
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from cdc.converters import AvroConverter

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def registry_url() -> Iterator[str]:
    """A running registry: $CDC_REGISTRY_URL, or one started here (and stopped after, if we started it)."""
    url = os.environ.get("CDC_REGISTRY_URL")
    script = REPO / "scripts" / "registry.sh"
    started = False
    if url is None:
        started = subprocess.run([str(script), "status"], capture_output=True).returncode != 0
        subprocess.run([str(script), "start"], check=True, timeout=600)
        url = subprocess.run([str(script), "url"], check=True, capture_output=True, text=True).stdout.strip()
    requests.get(url + "/subjects", timeout=5).raise_for_status()
    yield url
    if started:
        subprocess.run([str(script), "stop"], check=False, timeout=60)


def _schema(name: str):
    value = (
        SchemaBuilder.struct()
        .name(f"{name}.Value")
        .optional()
        .field("id", INT32_SCHEMA)
        .field("name", OPTIONAL_STRING_SCHEMA)
        .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
        .field("born", Date.schema(True))
        .field("updated", Timestamp.schema())
        .build()
    )
    envelope = (
        SchemaBuilder.struct()
        .name(f"{name}.Envelope")
        .version(1)
        .field("before", value)
        .field("after", value)
        .field("op", STRING_SCHEMA)
        .build()
    )
    return value, envelope


def test_round_trip_through_registry(registry_url: str) -> None:
    topic = "it-" + uuid.uuid4().hex[:8]
    value_schema, envelope = _schema("mysqlavro.ops.customers")
    after = Struct(value_schema).put("id", 7).put("name", "Kim").put("amount", decimal.Decimal("12.34"))
    after.put("born", dt.date(1990, 5, 17)).put(
        "updated", dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    )
    record = Struct(envelope).put("after", after).put("op", "c")

    producer = AvroConverter()
    producer.configure({"schema.registry.url": registry_url}, False)
    data = producer.from_connect_data(topic, envelope, record)
    assert data is not None and data[0] == 0

    subjects = requests.get(registry_url + "/subjects", timeout=5).json()
    assert f"{topic}-value" in subjects
    schema_id = int.from_bytes(data[1:5], "big")
    registered = requests.get(f"{registry_url}/schemas/ids/{schema_id}", timeout=5).json()["schema"]
    assert '"connect.name":"mysqlavro.ops.customers.Envelope"' in registered.replace(" ", "")

    # the same schema again: same id, no new version
    assert producer.from_connect_data(topic, envelope, record)[1:5] == data[1:5]

    consumer = AvroConverter()  # a fresh instance: the schema must come from the registry
    consumer.configure({"schema.registry.url": "http://127.0.0.1:1/nothing, " + registry_url}, False)
    back = consumer.to_connect_data(topic, data)
    assert back.schema == envelope
    assert back.value == record


def test_key_subject_and_lookup_without_registration(registry_url: str) -> None:
    topic = "it-" + uuid.uuid4().hex[:8]
    key_schema = SchemaBuilder.struct().name("mysqlavro.ops.customers.Key").field("id", INT32_SCHEMA).build()
    conv = AvroConverter()
    conv.configure({"schema.registry.url": registry_url}, True)
    data = conv.from_connect_data(topic, key_schema, Struct(key_schema).put("id", 1))
    assert f"{topic}-key" in requests.get(registry_url + "/subjects", timeout=5).json()

    lookup = AvroConverter()
    lookup.configure({"schema.registry.url": registry_url, "auto.register.schemas": "false"}, True)
    assert lookup.from_connect_data(topic, key_schema, Struct(key_schema).put("id", 1)) == data
