"""The comparison of ``make compat`` (bench/compat/compare.py) can fail: it finds an altered value, a missing
record, a missing header and a schema default, normalises only the names and times it says it ignores, and
reads the intentional differences from the doc's table."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from bench.compat import compare as cmp


def _record(prefix: str, db: str, row_id: int, value: int, default: Any = 5) -> cmp.Record:
    key = {"schema": {"name": f"{prefix}.{db}.t.Key"}, "payload": {"id": row_id}}
    field: dict[str, Any] = {"field": "v", "type": "int32", "optional": True}
    if default is not None:
        field["default"] = default
    env = {
        "schema": {"name": f"{prefix}.{db}.t.Envelope", "fields": [{"field": "after", "fields": [field]}]},
        "payload": {
            "op": "c",
            "after": {"id": row_id, "v": value},
            "source": {"name": prefix, "db": db, "snapshot": "false", "pos": 100 + row_id, "version": prefix},
            "ts_ms": 1000 + len(prefix),
        },
    }
    headers = [("__debezium.context.connectorLogicalName", prefix.encode())]
    return cmp.Record(json.dumps(key).encode(), json.dumps(env).encode(), headers)


def _side(name: str, prefix: str, db: str) -> cmp.Captured:
    side = cmp.Captured(name, prefix, {db: "<db>"})
    side.data[f"{db}.t"] = [_record(prefix, db, i, i * 10) for i in range(1, 4)]
    return side


def test_identical_sides_differ_only_in_ignored_names_and_times() -> None:
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_2")
    assert cmp.compare(dbz, ours) == []


def test_an_altered_value_a_missing_record_a_header_and_a_default_are_found() -> None:
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_1")
    altered = copy.deepcopy(ours)
    records = altered.data["db_1.t"]
    records[0] = _record("cdc_x", "db_1", 1, 11)
    records[1] = _record("cdc_x", "db_1", 2, 20, default=None)
    records[2] = cmp.Record(records[2].key, records[2].value, [])
    altered.data["db_1.t"].append(_record("cdc_x", "db_1", 9, 90))
    kinds = {d.kind for d in cmp.compare(dbz, altered)}
    assert kinds == {
        "data <db>.t value.payload.after.v",
        "data <db>.t value.schema.fields[after].fields[v].default",
        "data <db>.t header.__debezium.context.connectorLogicalName",
        "data <db>.t <record>",
    }


def test_intentional_differences_come_from_the_docs_table(tmp_path: Path) -> None:
    doc = tmp_path / "compat.md"
    doc.write_text(
        "# x\n\n## Intentional differences\n\n| pattern | reason |\n|---|---|\n"
        "| `data * value.payload.after.v` | we round differently |\n\n## Other\n| `data * <record>` | no |\n"
    )
    intentional = cmp.load_intentional(doc)
    assert [(i.pattern, i.reason) for i in intentional] == [
        ("data * value.payload.after.v", "we round differently")
    ]
    dbz, ours = _side("debezium", "dbz_x", "db_1"), _side("cdc", "cdc_x", "db_1")
    ours.data["db_1.t"][0] = _record("cdc_x", "db_1", 1, 11)
    ours.data["db_1.t"].append(_record("cdc_x", "db_1", 9, 90))
    diffs = cmp.compare(dbz, ours)
    left = cmp.unexplained(diffs, intentional)
    assert [d.kind for d in left] == ["data <db>.t <record>"]
    table = cmp.render(diffs, intentional)
    assert "intentional: we round differently" in table and "**UNEXPLAINED**" in table


def test_the_repository_doc_declares_patterns_with_reasons() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "debezium-compatibility.md"
    for item in cmp.load_intentional(doc):
        assert item.pattern and len(item.reason) > 10
