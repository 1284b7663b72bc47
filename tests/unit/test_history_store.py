"""Memory and file stores, recovery up to an offset, config."""

from __future__ import annotations

import pytest

from cdc.history import (
    FileSchemaHistory,
    HistoryRecord,
    HistorySettings,
    MemorySchemaHistory,
    SchemaHistory,
    TableId,
    Tables,
    UnparseableDdlError,
    history_config_def,
    history_from_config,
)
from cdc.mysql.ddl import DdlParser
from cdc.mysql.positions import BinlogPositionComparator

SOURCE = {"server": "srv"}


def write(history: SchemaHistory, statements: list[tuple[int, str]], with_changes: bool = True) -> None:
    """Record each (pos, ddl) as the connector would: parse, then store the DDL and its changes."""
    tables = Tables()
    parser = DdlParser("db", server_charset="utf8mb4")
    for p, ddl in statements:
        changes = parser.apply(tables, ddl, "db")
        history.record(
            HistoryRecord(
                SOURCE,
                {"file": "bin.000001", "pos": p},
                ts_ms=p,
                database_name="db",
                ddl=ddl,
                table_changes=changes if with_changes else [],
            )
        )


STATEMENTS = [
    (100, "CREATE TABLE a (id INT PRIMARY KEY, x INT)"),
    (200, "ALTER TABLE a ADD COLUMN y TEXT AFTER id"),
    (300, "RENAME TABLE a TO b"),
    (400, "CREATE TABLE c (z INT)"),
    (500, "DROP TABLE c"),
]


def recover(history: SchemaHistory, p: int, **kw) -> Tables:
    return history.recover(
        {"file": "bin.000001", "pos": p},
        Tables(),
        DdlParser("db"),
        BinlogPositionComparator(),
        source=SOURCE,
        **kw,
    )


@pytest.mark.parametrize("with_changes", [True, False])
def test_recovery_up_to_an_offset(with_changes):
    history = MemorySchemaHistory()
    write(history, STATEMENTS, with_changes)
    assert recover(history, 50).ids() == []
    t = recover(history, 100)
    assert t.get(TableId("db", "a")).column_names() == ["id", "x"]  # type: ignore[union-attr]
    t = recover(history, 250)
    assert t.get(TableId("db", "a")).column_names() == ["id", "y", "x"]  # type: ignore[union-attr]
    assert [str(i) for i in recover(history, 300).ids()] == ["db.b"]
    assert [str(i) for i in recover(history, 450).ids()] == ["db.b", "db.c"]
    assert [str(i) for i in recover(history, 10_000).ids()] == ["db.b"]


def test_recovery_skips_other_sources_and_invalid_records():
    history = MemorySchemaHistory()
    history.record(
        HistoryRecord(
            {"server": "other"},
            {"file": "bin.000001", "pos": 1},
            ddl="CREATE TABLE o (x INT)",
            database_name="db",
        )
    )
    history.record(HistoryRecord({}, {}, ddl="CREATE TABLE bad (x INT)"))
    write(history, STATEMENTS[:1])
    assert [str(i) for i in recover(history, 10_000).ids()] == ["db.a"]


def test_unparseable_ddl_in_history():
    history = MemorySchemaHistory()
    history.record(HistoryRecord(SOURCE, {"file": "bin.000001", "pos": 1}, ddl="FROB x", database_name="db"))
    write(history, STATEMENTS[:1])
    with pytest.raises(UnparseableDdlError):
        recover(history, 10_000)
    skipping = MemorySchemaHistory(HistorySettings(skip_unparseable_ddl=True))
    for rec in history._records():
        skipping.record(rec)
    assert [str(i) for i in recover(skipping, 10_000).ids()] == ["db.a"]


def test_file_store_round_trip(tmp_path):
    path = tmp_path / "sub" / "history.dat"
    history = FileSchemaHistory(path)
    assert not history.storage_exists() and not history.exists()
    history.initialize_storage()
    assert history.storage_exists() and not history.exists()
    write(history, STATEMENTS)
    assert history.exists()
    lines = path.read_text().splitlines()
    assert len(lines) == 5 and lines[0].startswith(
        '{"source":{"server":"srv"},"position":{"file":"bin.000001"'
    )
    again = FileSchemaHistory(path)
    assert [str(i) for i in recover(again, 10_000).ids()] == ["db.b"]
    assert [r.to_text() for r in again._records()] == lines


@pytest.mark.honours(
    "schema.history.internal",
    "schema.history.internal.file.filename",
    "schema.history.internal.skip.unparseable.ddl",
    "schema.history.internal.kafka.recovery.attempts",
    "schema.history.internal.producer.acks",
    "database.history.consumer.fetch.min.bytes",
)
def test_history_from_config(tmp_path):
    f = history_from_config(
        {
            "database.history": "io.debezium.relational.history.FileDatabaseHistory",
            "database.history.file.filename": str(tmp_path / "h.dat"),
            "database.history.skip.unparseable.ddl": "true",
        }
    )
    assert isinstance(f, FileSchemaHistory) and f.settings.skip_unparseable_ddl is True
    m = history_from_config({"schema.history.internal": "io.debezium.relational.history.MemorySchemaHistory"})
    assert isinstance(m, MemorySchemaHistory)
    s = HistorySettings.from_props(
        {
            "schema.history.internal.kafka.topic": "h",
            "schema.history.internal.kafka.bootstrap.servers": "b:9092",
            "schema.history.internal.producer.acks": "all",
            "database.history.consumer.fetch.min.bytes": "1",
        }
    )
    assert (s.kafka_topic, s.recovery_attempts, s.recovery_poll_interval_ms) == ("h", 100, 100)
    assert s.producer == {"acks": "all"} and s.consumer == {"fetch.min.bytes": "1"}
    names = history_config_def().names()
    assert "schema.history.internal.kafka.recovery.attempts" in names
    assert history_config_def()["schema.history.internal.kafka.topic"].aliases == (
        "database.history.kafka.topic",
    )
