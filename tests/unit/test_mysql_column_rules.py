"""cdc's column rules and converters answer as Debezium 3.5's own classes did on the same cases.

``tests/fixtures/mysql/debezium-column-rules.tsv`` holds what Debezium's ``ColumnMappers`` and
``TinyIntOneToBooleanConverter`` answered (``python -m bench.debezium_columns --record`` runs them on
Debezium's jars); this test runs cdc on the same cases without Java.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.debezium_columns import CASES, cdc_answer
from cdc.mysql.columns import debezium_hash

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "mysql" / "debezium-column-rules.tsv"
RECORDED = [
    line.split("\t") for line in FIXTURE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")
]


def test_the_recorded_cases_are_the_benchmarks() -> None:
    assert [tuple(r[:10]) for r in RECORDED] == CASES


@pytest.mark.parametrize("row", RECORDED, ids=[f"{r[1][:40]}|{r[4]}|{r[9][:12]}" for r in RECORDED])
def test_cdc_answers_as_debezium(row: list[str]) -> None:
    assert cdc_answer(tuple(row[:10])) == "\t".join(row[10:])


def test_hash_versions_differ_and_null_stays_null() -> None:
    v1 = debezium_hash("x", "SHA-256", "s", "v1")
    v2 = debezium_hash("x", "SHA-256", "s", "v2")
    assert v1 != v2 and len(v1 or "") == 64
    assert debezium_hash(None, "SHA-256", "s") is None


def test_a_propagated_geometry_value_carries_the_parameterised_schema() -> None:
    """``column.propagate.source.type`` adds parameters to a geometry column's struct schema: the values
    must be built with that schema, or the converters refuse them ("Mismatching schema")."""
    from cdc.api.schema import SchemaBuilder
    from cdc.api.struct import Struct
    from cdc.history.model import Column, TableId
    from cdc.mysql.columns import ColumnRules
    from cdc.mysql.types import ColumnMapping, _GeometryConverter

    schema = (
        SchemaBuilder.struct()
        .name("io.debezium.data.geometry.Geometry")
        .optional()
        .field("wkb", SchemaBuilder.bytes().build())
        .field("srid", SchemaBuilder.int32().optional().build())
        .build()
    )
    convert = _GeometryConverter(False)
    convert.bind(schema)
    column = Column(name="g", position=1, type_name="GEOMETRY", type_expression="GEOMETRY", jdbc_type=1111)
    mapping = ColumnRules({}, ["db.t.g"], []).apply(
        TableId("db", "t"), ColumnMapping(column, schema, convert)
    )
    assert (
        mapping.schema.parameters and mapping.schema.parameters["__debezium.source.column.type"] == "GEOMETRY"
    )
    assert mapping.convert is not None
    value = mapping.convert(bytes(4) + bytes.fromhex("0101000000000000000000f03f0000000000000040"))
    assert isinstance(value, Struct) and value.schema == mapping.schema
