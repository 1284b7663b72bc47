"""The ``avro`` row of ``make compat``: both workers write Avro in Confluent's wire format (magic byte 0,
the schema's 4-byte id, Avro binary) with the registry ``scripts/registry.sh`` runs (Apicurio Registry 2.6,
its Confluent-compatible API).

cdc runs ``io.confluent.connect.avro.AvroConverter`` (what a Debezium user's config names). Confluent's own
converter is not on Maven Central (only on packages.confluent.io), so the Debezium side runs Apicurio's
Kafka Connect converter (``io.apicurio.registry.utils.converter.AvroConverter``, a port of Confluent's
``AvroData``) in its Confluent mode: the same wire format, the ids the Confluent API serves (content ids).

Each record read back is decoded with the schema its id names, fetched from the registry's Confluent API,
and rewritten as JsonConverter's envelope, ``{"schema": <the registered Avro schema>, "payload": <the
decoded value>}``, so that :mod:`bench.compat.compare` compares both sides' values field by field and their
registered schemas (names, field order, ``connect.*`` properties, defaults) as it compares Connect schemas.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import io
import json
import math
import os
import struct
import uuid
from typing import Any

import fastavro
import requests

__all__ = ["REGISTRY_URL", "Decoder", "converter_props"]

REGISTRY_URL = os.environ.get("CDC_REGISTRY_URL", "http://127.0.0.1:8081/apis/ccompat/v7")
"""The registry's Confluent-compatible API (``scripts/registry.sh url``)."""


def _native_url(ccompat: str) -> str:
    """Apicurio's own v2 API beside its Confluent one (``/apis/ccompat/v7`` -> ``/apis/registry/v2``)."""
    root = ccompat.rstrip("/")
    for tail in ("/apis/ccompat/v7", "/apis/ccompat/v6"):
        if root.endswith(tail):
            return root[: -len(tail)] + "/apis/registry/v2"
    raise ValueError(f"not an Apicurio Confluent-compatible API URL: {ccompat}")


def converter_props(side: str, url: str = REGISTRY_URL) -> dict[str, str]:
    """A worker's ``key.converter``/``value.converter`` keys for Avro with the registry."""
    if side == "debezium":
        each = {
            "": "io.apicurio.registry.utils.converter.AvroConverter",
            ".apicurio.registry.url": _native_url(url),
            ".apicurio.registry.auto-register": "true",
            ".apicurio.registry.find-latest": "true",
            # Confluent's wire format: magic byte 0 and a 4-byte id, the content id the Confluent API serves
            ".apicurio.registry.as-confluent": "true",
            ".apicurio.registry.use-id": "contentId",
            ".apicurio.registry.headers.enabled": "false",
        }
    else:
        each = {"": "io.confluent.connect.avro.AvroConverter", ".schema.registry.url": url}
    return {f"{kind}.converter{suffix}": v for kind in ("key", "value") for suffix, v in each.items()}


def _plain(value: Any) -> Any:
    """A decoded Avro value as JSON: bytes in base64 (as JsonConverter writes them), logical types as text."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


class Decoder:
    """Confluent wire-format Avro -> JsonConverter-shaped JSON bytes; schemas cached by id."""

    def __init__(self, url: str = REGISTRY_URL) -> None:
        self.url = url.rstrip("/")
        self._schemas: dict[int, tuple[bytes, Any]] = {}

    def _schema(self, schema_id: int) -> tuple[bytes, Any]:
        """The registered schema as JSON text (written into every record as is) and parsed for fastavro."""
        if schema_id not in self._schemas:
            got = requests.get(f"{self.url}/schemas/ids/{schema_id}", timeout=10)
            got.raise_for_status()
            text = json.loads(got.text)["schema"]
            raw = json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8")
            self._schemas[schema_id] = (raw, fastavro.parse_schema(json.loads(text)))
        return self._schemas[schema_id]

    def __call__(self, data: bytes | None) -> bytes | None:
        if data is None or len(data) < 5 or data[0] != 0:
            return data  # a tombstone, or not Avro in Confluent's wire format: as written
        (schema_id,) = struct.unpack(">I", data[1:5])
        raw, parsed = self._schema(schema_id)
        value = fastavro.schemaless_reader(io.BytesIO(data[5:]), parsed)
        payload = json.dumps(_plain(value), ensure_ascii=False).encode("utf-8")
        return b'{"schema": ' + raw + b', "payload": ' + payload + b"}"
