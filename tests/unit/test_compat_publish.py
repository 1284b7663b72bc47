"""``make compat --publish`` (bench/compat/publish.py) and the avro row's decoding (bench/compat/avro.py)."""

from __future__ import annotations

import decimal
import io
import json
import struct
from pathlib import Path

import fastavro
import pytest

from bench.compat import avro
from bench.compat.publish import BEGIN, END, publish

TABLE = ["| row | family | differences | status |", "|---|---|---|---|", "| base | d | 3 differences | ok |"]
BASE = "row: base\n\n3 differences in 1 kinds; 0 unexplained in 0 kinds; self-test: ok"
BAD = "row: x\n| `data` |\n\n2 differences in 1 kinds; 2 unexplained in 1 kinds; self-test: ok"


def _page(tmp_path: Path, text: str) -> Path:
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "page.md"
    doc.write_text(text, encoding="utf-8")
    return doc


def test_publish_puts_the_output_under_its_heading_then_replaces_only_it(tmp_path: Path) -> None:
    doc = _page(
        tmp_path, "# t\n\n## Intentional differences\n\nkept\n\n## The last runs' output\n\nold text\n"
    )
    publish(doc, TABLE, {"base": BASE, "x": BAD}, 12.0)
    first = doc.read_text(encoding="utf-8")
    assert (
        first.index("## The last runs' output") < first.index(BEGIN) < first.index(END) < first.index("old")
    )
    block = first[first.index(BEGIN) : first.index(END)]
    assert TABLE[2] in block and "12 minutes" in block
    assert "The base row's report" in block and BASE in block  # the base row, always in full
    assert "The x row's report" in block and "2 unexplained" in block  # a row that is not ok, in full
    publish(doc, TABLE[:2], {"base": BASE}, 5.0)
    second = doc.read_text(encoding="utf-8")
    assert second.count(BEGIN) == 1 and "The x row" not in second and "5 minutes" in second
    assert "kept" in second and "old text" in second


def test_publish_refuses_a_page_without_the_section(tmp_path: Path) -> None:
    doc = _page(tmp_path, "# t\n")
    with pytest.raises(SystemExit):
        publish(doc, TABLE, {"base": BASE}, 1.0)


def test_the_decoder_writes_a_confluent_avro_record_as_jsonconverter_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = {
        "type": "record",
        "name": "Value",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "b", "type": ["null", "bytes"], "default": None},
            {
                "name": "d",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
            },
        ],
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out, fastavro.parse_schema(schema), {"id": 7, "b": b"\x00\xff", "d": decimal.Decimal("1.50")}
    )
    decoder = avro.Decoder("http://registry.invalid/apis/ccompat/v7")
    asked: list[int] = []

    def fetch(schema_id: int) -> tuple[bytes, object]:
        asked.append(schema_id)
        return json.dumps(schema).encode(), fastavro.parse_schema(schema)

    monkeypatch.setattr(decoder, "_schema", fetch)
    got = decoder(b"\x00" + struct.pack(">I", 42) + out.getvalue())
    assert got is not None and asked == [42]
    assert json.loads(got) == {"schema": schema, "payload": {"id": 7, "b": "AP8=", "d": "1.50"}}
    assert decoder(None) is None and decoder(b"{}") == b"{}"  # tombstones and JSON pass as written


def test_the_debezium_side_writes_confluent_wire_format_through_apicurios_api() -> None:
    props = avro.converter_props("debezium", "http://127.0.0.1:8081/apis/ccompat/v7")
    assert props["value.converter"] == "io.apicurio.registry.utils.converter.AvroConverter"
    assert props["key.converter.apicurio.registry.url"] == "http://127.0.0.1:8081/apis/registry/v2"
    assert props["value.converter.apicurio.registry.as-confluent"] == "true"
    assert avro.converter_props("cdc", "http://r/apis/ccompat/v7") == {
        "key.converter": "io.confluent.connect.avro.AvroConverter",
        "key.converter.schema.registry.url": "http://r/apis/ccompat/v7",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": "http://r/apis/ccompat/v7",
    }
