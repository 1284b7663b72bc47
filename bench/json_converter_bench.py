"""Micro benchmark of JsonConverter.from_connect_data on a 10-field struct (records/s, not asserted).

PYTHONPATH=. python -m bench.json_converter_bench [records]
"""

from __future__ import annotations

import datetime as dt
import decimal
import sys
import time

from cdc.api import (
    BOOLEAN_SCHEMA,
    FLOAT64_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from cdc.converters.json_converter import JsonConverter


def ten_field_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("bench.customers.Value")
        .field("id", INT64_SCHEMA)
        .field("name", STRING_SCHEMA)
        .field("email", OPTIONAL_STRING_SCHEMA)
        .field("age", INT32_SCHEMA)
        .field("active", BOOLEAN_SCHEMA)
        .field("score", FLOAT64_SCHEMA)
        .field("balance", Decimal.schema(2))
        .field("city", OPTIONAL_STRING_SCHEMA)
        .field("visits", INT32_SCHEMA)
        .field("updated", Timestamp.schema())
        .build()
    )


def run(n: int = 200_000, schemas_enable: bool = True, plain_types_only: bool = False) -> float:
    schema = ten_field_schema()
    conv = JsonConverter()
    conv.configure({"schemas.enable": str(schemas_enable).lower()}, False)
    now = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    records = [
        Struct(
            schema,
            [
                i,
                f"name-{i}",
                None if i % 3 else f"u{i}@x.io",
                30 + i % 50,
                bool(i % 2),
                i * 0.5 + 0.25,
                decimal.Decimal(f"{i}.25"),
                "Seoul",
                i % 7,
                now,
            ],
        )
        for i in range(1000)
    ]
    convert = conv.from_connect_data
    start = time.perf_counter()
    for i in range(n):
        convert("t", schema, records[i % 1000])
    return n / (time.perf_counter() - start)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    print(f"JsonConverter 10-field struct, schemas.enable=true : {run(n, True):,.0f} records/s")
    print(f"JsonConverter 10-field struct, schemas.enable=false: {run(n, False):,.0f} records/s")


if __name__ == "__main__":
    main()
