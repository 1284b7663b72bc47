"""FileStreamSink: lines written as Java's println writes them, flushed and fsynced."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import struct
from pathlib import Path
from typing import Any

import pytest

from cdc.api.errors import ConnectError
from cdc.api.records import SinkRecord
from cdc.api.schema import (
    FLOAT32_SCHEMA,
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Schema,
    SchemaBuilder,
)
from cdc.api.struct import Struct
from cdc.file._java_text import java_double_to_string, java_float_to_string, java_to_string
from cdc.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from cdc.plugins import registry
from cdc.worker.properties import load_properties

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "seed-configs"


def record(value: Any, schema: Schema | None = STRING_SCHEMA, offset: int = 0) -> SinkRecord:
    return SinkRecord(
        topic="connect-test",
        kafka_partition=0,
        key_schema=None,
        key=None,
        value_schema=schema,
        value=value,
        kafka_offset=offset,
    )


def test_writes_lines_and_flushes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr("os.fsync", lambda fd: synced.append(fd))
    path = tmp_path / "test.sink.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(path), "topics": "connect-test"})
    task.put([record("first message"), record("second"), record("주문 ☕")])
    # Lines reach the file at the end of each put, as Java's PrintStream hands them over at once.
    assert path.read_text(encoding="utf-8") == "first message\nsecond\n주문 ☕\n"
    task.flush({("connect-test", 0): 3})
    assert len(synced) == 1
    task.put([])
    task.put([record(None, OPTIONAL_STRING_SCHEMA)])
    task.flush({})
    task.stop()
    assert path.read_text(encoding="utf-8") == "first message\nsecond\n주문 ☕\nnull\n"


def test_appends_to_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    task.put([record("new")])
    task.stop()
    assert path.read_text() == "old\nnew\n"


def test_unwritable_file(tmp_path: Path) -> None:
    task = FileStreamSinkTask()
    with pytest.raises(ConnectError, match="Couldn't find or create file"):
        task.start({"file": str(tmp_path / "no" / "such" / "dir" / "f.txt")})


def test_given_output_stream() -> None:
    out = io.BytesIO()
    task = FileStreamSinkTask(out)
    task.start({})
    task.put([record("a"), record(7, INT32_SCHEMA)])
    task.flush({})
    task.stop()
    assert out.getvalue() == b"a\n7\n"


def test_stdout(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    task = FileStreamSinkTask()
    task.start({"file": ""})
    task.put([record("to stdout")])
    task.flush({})
    task.stop()
    assert capfdbinary.readouterr().out == b"to stdout\n"


def test_put_before_start() -> None:
    with pytest.raises(ConnectError, match="not started"):
        FileStreamSinkTask().put([record("x")])


def test_struct_map_list_values() -> None:
    address = SchemaBuilder.struct().name("address").field("city", STRING_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .name("customers")
        .field("id", INT32_SCHEMA)
        .field("name", OPTIONAL_STRING_SCHEMA)
        .field("score", FLOAT32_SCHEMA)
        .field("address", address)
        .build()
    )
    value = Struct(schema).put("id", 1).put("score", 0.1).put("address", Struct(address).put("city", "Seoul"))
    # Connect's Struct.toString leaves null fields out and joins with "," (no space).
    assert java_to_string(value, schema) == "Struct{id=1,score=0.1,address=Struct{city=Seoul}}"
    assert java_to_string({"a": 1, "b": None}) == "{a=1, b=null}"
    assert java_to_string(["x", True, 2.0]) == "[x, true, 2.0]"
    assert java_to_string([]) == "[]"
    assert java_to_string(decimal.Decimal("12.340")) == "12.340"
    assert java_to_string(b"raw bytes") == "raw bytes"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (100.0, "100.0"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (0.001, "0.001"),
        (0.00099, "9.9E-4"),
        (1.234e-5, "1.234E-5"),
        (-2.5, "-2.5"),
        (1e23, "1.0E23"),
        (5e-324, "4.9E-324"),
        (1.7976931348623157e308, "1.7976931348623157E308"),
        (1.0 / 3, "0.3333333333333333"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_java_double_to_string(value: float, text: str) -> None:
    # Expected texts are what JDK 21's Double.toString prints.
    assert java_double_to_string(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.1, "0.1"), (1.1, "1.1"), (1.0 / 3, "0.33333334"), (16777216.0, "1.6777216E7"), (1.4e-45, "1.4E-45")],
)
def test_java_float_to_string(value: float, text: str) -> None:
    as_float32 = struct.unpack("f", struct.pack("f", value))[0]
    assert java_float_to_string(as_float32) == text


def test_timestamp_like_java_util_date(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        moment = dt.datetime(2022, 1, 22, 12, 34, 56, tzinfo=dt.UTC)
        assert java_to_string(moment) == "Sat Jan 22 12:34:56 UTC 2022"
        assert java_to_string(dt.date(2022, 1, 22)) == "Sat Jan 22 00:00:00 UTC 2022"
    finally:
        monkeypatch.undo()
        time.tzset()


# -- connector -------------------------------------------------------------------------------------


def test_registered_names() -> None:
    for name in (
        "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "FileStreamSinkConnector",
        "FileStreamSink",
    ):
        assert registry.load(name) is FileStreamSinkConnector


@pytest.mark.parametrize("name", ["local-file-sink.properties", "nginx-accesslog-sink.properties"])
def test_seed_configs_start(name: str) -> None:
    props = load_properties(FIXTURES / name)
    connector = registry.instantiate(props["connector.class"])
    assert isinstance(connector, FileStreamSinkConnector)
    assert all(not v.errors for v in connector.validate(props))
    connector.start(props)
    assert connector.task_configs(int(props["tasks.max"])) == [props]
    assert connector.task_configs(3) == [props, props, props]
    assert connector.task_class() is FileStreamSinkTask
    connector.stop()


def test_config_def_matches_connect() -> None:
    config = FileStreamSinkConnector().config()
    assert config.names() == ["file"]
    assert config["file"].default is None
    assert FileStreamSinkConnector().alter_offsets({}, {}) is True
