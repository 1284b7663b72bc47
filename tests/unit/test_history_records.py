"""History records: JSON exactly as Debezium writes it (written by hand from reference §8.2)."""

from __future__ import annotations

import json

from cdc.history import (
    CHANGE_SCHEMA,
    HistoryRecord,
    TableChange,
    TableChangeType,
    TableId,
    Tables,
    table_change_struct,
    table_changes_from_model,
)
from cdc.mysql.ddl import DdlParser

GOLDEN = (
    '{"source":{"server":"dbserver1"},'
    '"position":{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154,"snapshot":true},'
    '"ts_ms":1700000000123,"databaseName":"inventory","ddl":"CREATE TABLE customers (id INT NOT NULL '
    "AUTO_INCREMENT PRIMARY KEY, email VARCHAR(255) DEFAULT 'x', status ENUM('on','it''s') NULL, "
    'price DECIMAL(10,2))",'
    '"tableChanges":[{"type":"CREATE","id":"\\"inventory\\".\\"customers\\"",'
    '"table":{"defaultCharsetName":"utf8mb4","primaryKeyColumnNames":["id"],"columns":['
    '{"name":"id","jdbcType":4,"typeName":"INT","typeExpression":"INT","charsetName":null,"position":1,'
    '"optional":false,"autoIncremented":true,"generated":true,"comment":null,"hasDefaultValue":false,'
    '"enumValues":[]},'
    '{"name":"email","jdbcType":12,"typeName":"VARCHAR","typeExpression":"VARCHAR","charsetName":"utf8mb4",'
    '"length":255,"position":2,"optional":true,"autoIncremented":false,"generated":false,"comment":null,'
    '"hasDefaultValue":true,"defaultValueExpression":"x","enumValues":[]},'
    '{"name":"status","jdbcType":1,"typeName":"ENUM","typeExpression":"ENUM","charsetName":"utf8mb4",'
    '"length":1,"position":3,"optional":true,"autoIncremented":false,"generated":false,"comment":null,'
    '"hasDefaultValue":true,"enumValues":["\'on\'","\'it\'\'s\'"]},'
    '{"name":"price","jdbcType":3,"typeName":"DECIMAL","typeExpression":"DECIMAL","charsetName":null,'
    '"length":10,"scale":2,"position":4,"optional":true,"autoIncremented":false,"generated":false,'
    '"comment":null,"hasDefaultValue":false,"enumValues":[]}'
    '],"attributes":[]},"comment":null}]}'
)


def _record() -> HistoryRecord:
    ddl = json.loads(GOLDEN)["ddl"]
    tables = Tables()
    changes = DdlParser("inventory", server_charset="utf8mb4").apply(tables, ddl)
    return HistoryRecord(
        source={"server": "dbserver1"},
        position={"ts_sec": 1700000000, "file": "mysql-bin.000003", "pos": 154, "snapshot": True},
        ts_ms=1700000000123,
        database_name="inventory",
        ddl=ddl,
        table_changes=changes,
    )


def test_record_json_is_debeziums():
    assert _record().to_text() == GOLDEN


def test_record_round_trip():
    rec = HistoryRecord.from_text(GOLDEN)
    assert rec == _record()
    assert rec.to_text() == GOLDEN
    assert rec.table_changes[0].table.column("status").enum_values == ("on", "it's")  # type: ignore[union-attr]


def test_unset_fields_are_left_out():
    rec = HistoryRecord({"server": "s"}, {"file": "f.000001", "pos": 4}, ts_ms=1, ddl="SET x=1")
    assert (
        rec.to_text() == '{"source":{"server":"s"},"position":{"file":"f.000001","pos":4},"ts_ms":1,'
        '"ddl":"SET x=1","tableChanges":[]}'
    )


def test_rename_and_drop_changes():
    tables = Tables()
    p = DdlParser("d")
    p.apply(tables, "CREATE TABLE a (x BIGINT UNSIGNED NOT NULL, PRIMARY KEY (x)) COMMENT 'tbl'")
    (rename,) = p.apply(tables, "RENAME TABLE a TO b")
    doc = rename.to_json()
    assert list(doc) == ["type", "id", "previousId", "table", "comment"]
    assert (doc["id"], doc["previousId"], doc["comment"]) == ('"d"."b"', '"d"."a"', "tbl")
    assert TableChange.from_json(doc) == rename
    (drop,) = p.apply(tables, "DROP TABLE b")
    back = TableChange.from_json(json.loads(json.dumps(drop.to_json())))
    assert back.type is TableChangeType.DROP and back.id == TableId("d", "b")


def test_reading_debezium_records_without_optional_fields():
    doc = {
        "source": {"server": "s"},
        "position": {"file": "b.000001", "pos": 1},
        "databaseName": "d",
        "ddl": "ALTER TABLE t ADD c INT",
        "tableChanges": [
            {
                "type": "ALTER",
                "id": '"d"."t"',
                "table": {
                    "defaultCharsetName": "latin1",
                    "primaryKeyColumnNames": [],
                    "columns": [
                        {
                            "name": "c",
                            "jdbcType": 4,
                            "typeName": "INT",
                            "typeExpression": "INT",
                            "charsetName": None,
                            "position": 1,
                            "optional": True,
                            "autoIncremented": False,
                            "generated": False,
                        }
                    ],
                },
            }
        ],
    }
    rec = HistoryRecord.from_json(doc)
    col = rec.table_changes[0].table.columns[0]
    assert (col.name, col.has_default, col.enum_values, col.comment) == ("c", False, (), None)
    assert rec.ts_ms is None and rec.to_json()["tableChanges"][0]["table"]["attributes"] == []


def test_schema_change_topic_shape():
    rec = _record()
    (doc,) = table_changes_from_model(rec.table_changes)
    assert list(doc) == ["type", "id", "table"]
    assert list(doc["table"]) == ["defaultCharsetName", "primaryKeyColumnNames", "columns", "comment"]
    status = doc["table"]["columns"][2]
    assert list(status) == [
        "name",
        "jdbcType",
        "nativeType",
        "typeName",
        "typeExpression",
        "charsetName",
        "length",
        "scale",
        "position",
        "optional",
        "autoIncremented",
        "generated",
        "comment",
        "defaultValueExpression",
        "enumValues",
    ]
    assert status["enumValues"] == ["'on'", "'it''s'"] and doc["table"]["columns"][0]["enumValues"] is None
    struct = table_change_struct(rec.table_changes[0])
    struct.validate()
    assert struct.schema == CHANGE_SCHEMA and struct.get("id") == '"inventory"."customers"'
