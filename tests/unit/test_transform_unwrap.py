"""ExtractNewRecordState and the seed chain (RegexRouter → unwrap) on hand-built Debezium envelopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdc.api import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    SchemaBuilder,
    SourceRecord,
    Struct,
)
from cdc.transforms import build_chain
from cdc.transforms.debezium import ExtractNewRecordState

SEED = Path(__file__).resolve().parents[1] / "fixtures/seed-configs/debezium-mysql-avro.json"
TOPIC = "mysqlavro.ops.customers"

ROW = (
    SchemaBuilder.struct()
    .name("mysqlavro.ops.customers.Value")
    .field("id", INT32_SCHEMA)
    .field("name", OPTIONAL_STRING_SCHEMA)
    .optional()
    .build()
)
KEY = SchemaBuilder.struct().name("mysqlavro.ops.customers.Key").field("id", INT32_SCHEMA).build()
SOURCE = (
    SchemaBuilder.struct()
    .name("io.debezium.connector.mysql.Source")
    .field("version", STRING_SCHEMA)
    .field("connector", STRING_SCHEMA)
    .field("name", STRING_SCHEMA)
    .field("ts_ms", INT64_SCHEMA)
    .field("db", STRING_SCHEMA)
    .field("table", OPTIONAL_STRING_SCHEMA)
    .field("file", STRING_SCHEMA)
    .field("pos", INT64_SCHEMA)
    .build()
)
ENVELOPE = (
    SchemaBuilder.struct()
    .name("mysqlavro.ops.customers.Envelope")
    .version(2)
    .field("before", ROW)
    .field("after", ROW)
    .field("source", SOURCE)
    .field("op", STRING_SCHEMA)
    .field("ts_ms", OPTIONAL_INT64_SCHEMA)
    .build()
)


def row(id: int, name: str | None) -> Struct:
    return Struct(ROW, [id, name])


def event(op: str, before: Struct | None, after: Struct | None) -> SourceRecord:
    source = Struct(
        SOURCE, ["2.7.0", "mysql", "mysqlavro", 1700000000000, "ops", "customers", "bin.000003", 154]
    )
    value = Struct(ENVELOPE, [before, after, source, op, 1700000000123])
    value.validate()
    image = after or before
    key = Struct(KEY, [image.values[0]]) if image is not None else None
    return SourceRecord(
        TOPIC,
        None,
        KEY,
        key,
        ENVELOPE,
        value,
        timestamp=1700000000123,
        source_partition={"server": "mysqlavro"},
        source_offset={"pos": 154},
    )


def tombstone() -> SourceRecord:
    return SourceRecord(TOPIC, None, KEY, Struct(KEY, [1]), None, None)


def unwrap(**cfg: str) -> ExtractNewRecordState:
    t: ExtractNewRecordState = ExtractNewRecordState()
    t.configure(cfg)
    return t


# -- the seed chain, config read unchanged from our copy of the users' seed file -----------------------


@pytest.fixture
def seed_chain():
    props = json.loads(SEED.read_text())["config"]
    chain = build_chain(props)
    yield chain
    chain.close()


def test_seed_chain_create_update(seed_chain) -> None:
    for op, before in (("c", None), ("r", None), ("u", row(1, "old"))):
        out = seed_chain.apply(event(op, before, row(1, "Kim")))
        assert out.topic == "mysqlavro-ops-customers"
        assert out.value_schema is ROW and out.value_schema.name == "mysqlavro.ops.customers.Value"
        assert out.value.as_dict() == {"id": 1, "name": "Kim"}
        assert out.key.as_dict() == {"id": 1}
        assert out.source_offset == {"pos": 154}


def test_seed_chain_delete_is_dropped_and_tombstone_kept(seed_chain) -> None:
    assert seed_chain.apply(event("d", row(1, "Kim"), None)) is None  # delete.handling.mode=drop (default)
    out = seed_chain.apply(tombstone())
    assert out is not None and out.value is None and out.topic == "mysqlavro-ops-customers"


def test_seed_chain_does_not_mutate_input(seed_chain) -> None:
    rec = event("c", None, row(2, "Lee"))
    seed_chain.apply(rec)
    assert rec.topic == TOPIC and rec.value_schema is ENVELOPE


# -- legacy options ------------------------------------------------------------------------------------------


def test_defaults_drop_tombstones_and_deletes() -> None:
    t = unwrap()
    assert t.apply(tombstone()) is None
    assert t.apply(event("d", row(1, "a"), None)) is None
    assert t.apply(event("c", None, row(1, "a"))).value == row(1, "a")


def test_delete_handling_none_keeps_null_value_with_row_schema() -> None:
    out = unwrap(**{"delete.handling.mode": "none"}).apply(event("d", row(1, "a"), None))
    assert out.value is None and out.value_schema is ROW


def test_delete_handling_rewrite_adds_deleted_flag_and_fields() -> None:
    t = unwrap(**{"delete.handling.mode": "rewrite", "add.fields": "op,table,source.ts_ms"})
    d = t.apply(event("d", row(1, "a"), None))
    assert d.value.as_dict() == {
        "id": 1,
        "name": "a",
        "__op": "d",
        "__table": "customers",
        "__source_ts_ms": 1700000000000,
        "__deleted": "true",
    }
    assert d.value_schema.name == "mysqlavro.ops.customers.Value"
    assert [f.name for f in d.value_schema.fields][-1] == "__deleted"
    assert all(f.schema.optional for f in d.value_schema.fields[2:])
    c = t.apply(event("c", None, row(2, "b")))
    assert c.value.as_dict()["__deleted"] == "false" and c.value.as_dict()["__op"] == "c"
    assert t.apply(event("u", row(2, "a"), row(2, "b"))).value_schema is c.value_schema  # cached


def test_add_fields_prefix_rename_and_headers() -> None:
    t = unwrap(**{"add.fields": "op:OPERATION,ts_ms", "add.fields.prefix": "_", "add.headers": "db,op"})
    out = t.apply(event("u", row(1, "a"), row(1, "b")))
    assert out.value.as_dict() == {"id": 1, "name": "b", "_OPERATION": "u", "_ts_ms": 1700000000123}
    assert out.headers.last_with_name("__db").value == "ops"
    assert out.headers.last_with_name("__op").value == "u"
    tomb = unwrap(**{"drop.tombstones": "false", "add.headers": "op"}).apply(tombstone())
    assert tomb.headers.last_with_name("__op").value == "d"


def test_route_by_field() -> None:
    t = unwrap(**{"route.by.field": "name", "delete.handling.mode": "rewrite"})
    assert t.apply(event("c", None, row(1, "dest"))).topic == "dest"
    assert t.apply(event("d", row(1, "gone"), None)).topic == "gone"


def test_non_envelopes_pass_through_and_truncates_drop() -> None:
    heartbeat_schema = (
        SchemaBuilder.struct()
        .name("io.debezium.connector.common.Heartbeat")
        .field("ts_ms", INT64_SCHEMA)
        .build()
    )
    hb = SourceRecord(
        "__debezium-heartbeat.mysqlavro", None, None, None, heartbeat_schema, Struct(heartbeat_schema, [1])
    )
    t = unwrap()
    assert t.apply(hb) is hb
    schemaless = SourceRecord(TOPIC, None, None, None, None, {"after": {"id": 1}})
    assert t.apply(schemaless) is schemaless
    assert t.apply(event("t", None, None)) is None


# -- delete.tombstone.handling.mode (2.5+) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "delete", "tomb_kept", "flag"),
    [
        ("drop", None, False, None),
        ("tombstone", "null-with-schema", False, None),
        ("rewrite", "rewritten", False, "false"),
        ("rewrite-with-tombstone", "rewritten", True, "false"),
        ("delete-to-tombstone", "tombstone", False, None),
    ],
)
def test_delete_tombstone_handling_mode(
    mode: str, delete: str | None, tomb_kept: bool, flag: str | None
) -> None:
    # the legacy keys are ignored once the new one is set
    t = unwrap(
        **{"delete.tombstone.handling.mode": mode, "drop.tombstones": "false", "delete.handling.mode": "none"}
    )
    out = t.apply(event("d", row(1, "a"), None))
    if delete is None:
        assert out is None
    elif delete == "null-with-schema":
        assert out.value is None and out.value_schema is ROW
    elif delete == "tombstone":
        assert out.value is None and out.value_schema is None
    else:
        assert out.value.as_dict() == {"id": 1, "name": "a", "__deleted": "true"}
    assert (t.apply(tombstone()) is not None) is tomb_kept
    c = t.apply(event("c", None, row(1, "a"))).value.as_dict()
    assert c.get("__deleted") == flag


def test_bad_mode_is_a_config_error() -> None:
    from cdc.api import ConfigError

    with pytest.raises(ConfigError, match=r"delete\.handling\.mode"):
        unwrap(**{"delete.handling.mode": "keep"})
