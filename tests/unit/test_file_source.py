"""FileStreamSource: the task driven with a fake context, and the connector's config handling."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cdc.api.connector import ExactlyOnceSupport, OffsetStorageReader, SourceTaskContext
from cdc.api.errors import ConfigError, ConnectError
from cdc.api.offsets import partition_key
from cdc.api.records import SourceRecord
from cdc.api.schema import STRING_SCHEMA
from cdc.file.source import SINGLE_TOPIC_MESSAGE, FileStreamSourceConnector, FileStreamSourceTask
from cdc.plugins import registry
from cdc.worker.properties import load_properties

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "seed-configs"


class FakeOffsetReader(OffsetStorageReader):
    def __init__(self, stored: dict[str, dict[str, Any]] | None = None) -> None:
        self.stored = stored or {}
        self.asked: list[dict[str, Any]] = []

    def offsets(self, partitions: Sequence[Any]) -> dict[str, dict[str, Any]]:
        self.asked.extend(dict(p) for p in partitions)
        keys = (partition_key(p) for p in partitions)
        return {k: self.stored[k] for k in keys if k in self.stored}


class FakeContext(SourceTaskContext):
    def __init__(self, reader: FakeOffsetReader) -> None:
        self.reader = reader

    def configs(self) -> dict[str, str]:
        return {}

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def make_task(
    path: Path, stored_position: int | None = None, batch_size: int | None = None, wait: float = 0.01
) -> tuple[FileStreamSourceTask, FakeOffsetReader]:
    stored = {}
    if stored_position is not None:
        stored[partition_key({"filename": str(path)})] = {"position": stored_position}
    reader = FakeOffsetReader(stored)
    task = FileStreamSourceTask(poll_wait_s=wait, clock=lambda: 1700000000.123)
    task.initialize(FakeContext(reader))
    props = {"file": str(path), "topic": "connect-test"}
    if batch_size is not None:
        props["batch.size"] = str(batch_size)
    task.start(props)
    return task, reader


def drain(task: FileStreamSourceTask, polls: int = 5) -> list[SourceRecord]:
    out: list[SourceRecord] = []
    for _ in range(polls):
        batch = task.poll()
        if batch:
            out.extend(batch)
    return out


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def test_reads_lines_with_exact_byte_positions(tmp_path: Path) -> None:
    path = tmp_path / "test.txt"
    path.write_bytes("first message\nsecond\r\nthird\rcafé ☕\n\nlast\n".encode())
    task, reader = make_task(path)
    records = drain(task)
    assert [r.value for r in records] == ["first message", "second", "third", "café ☕", "", "last"]
    assert [r.source_offset for r in records] == [
        {"position": 14},
        {"position": 22},
        {"position": 28},
        {"position": 38},  # "é" is 2 bytes and "☕" 3: positions count bytes
        {"position": 39},
        {"position": 44},
    ]
    assert records[-1].source_offset == {"position": path.stat().st_size}
    first = records[0]
    assert first.topic == "connect-test"
    assert first.kafka_partition is None
    assert first.key is None and first.key_schema is None
    assert first.value_schema == STRING_SCHEMA
    assert first.source_partition == {"filename": str(path)}
    assert first.timestamp == 1700000000123
    assert reader.asked == [{"filename": str(path)}]
    task.stop()


def test_restart_from_stored_offset_resends_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"a\nbb\nccc\n")
    task, _ = make_task(path)
    first = drain(task)
    task.stop()
    assert [r.value for r in first] == ["a", "bb", "ccc"]
    committed = first[-1].source_offset
    assert committed is not None

    restarted, _ = make_task(path, stored_position=committed["position"])
    assert drain(restarted) == []
    append(path, b"dddd\n")
    again = drain(restarted)
    assert [r.value for r in again] == ["dddd"]
    assert again[0].source_offset == {"position": 14}
    restarted.stop()


def test_restart_from_middle_offset(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"a\nbb\nccc\n")
    task, _ = make_task(path, stored_position=2)
    assert [(r.value, r.source_offset) for r in drain(task)] == [
        ("bb", {"position": 5}),
        ("ccc", {"position": 9}),
    ]
    task.stop()


def test_stored_offset_of_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"a\n")
    reader = FakeOffsetReader({partition_key({"filename": str(path)}): {"position": "12"}})
    task = FileStreamSourceTask(poll_wait_s=0.01)
    task.initialize(FakeContext(reader))
    task.start({"file": str(path), "topic": "t"})
    with pytest.raises(ConnectError, match="Offset position is the incorrect type"):
        task.poll()


def test_appended_lines_are_picked_up(tmp_path: Path) -> None:
    path = tmp_path / "access.log"
    path.write_bytes(b"GET /\n")
    task, _ = make_task(path)
    assert [r.value for r in drain(task)] == ["GET /"]
    assert task.poll() is None
    append(path, b"GET /a\nGET /b\n")
    assert [r.value for r in drain(task)] == ["GET /a", "GET /b"]
    task.stop()


def test_partial_last_line_is_held_until_completed(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"done\nhalf")
    task, _ = make_task(path)
    records = drain(task)
    assert [r.value for r in records] == ["done"]
    append(path, b" a line")
    assert drain(task) == []
    append(path, b"\n")
    records = drain(task)
    assert [(r.value, r.source_offset) for r in records] == [("half a line", {"position": 17})]
    task.stop()


def test_carriage_return_at_end_waits_for_possible_line_feed(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"one\r")
    task, _ = make_task(path)
    assert drain(task) == []  # "\r" alone could still become "\r\n"
    append(path, b"\ntwo\r")
    records = drain(task)
    assert [(r.value, r.source_offset) for r in records] == [("one", {"position": 5})]
    append(path, b"three\n")
    records = drain(task)
    assert [(r.value, r.source_offset) for r in records] == [
        ("two", {"position": 9}),
        ("three", {"position": 15}),
    ]
    task.stop()


def test_batch_size_limits_each_poll(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"".join(b"line%d\n" % i for i in range(5)))
    task, _ = make_task(path, batch_size=2)
    sizes = []
    for _ in range(4):
        batch = task.poll()
        sizes.append(len(batch) if batch else 0)
    assert sizes == [2, 2, 1, 0]
    task.stop()


def test_large_file_in_many_chunks(tmp_path: Path) -> None:
    path = tmp_path / "big"
    lines = [("x" * (i % 300)) + str(i) for i in range(5000)]
    path.write_bytes("".join(f"{line}\n" for line in lines).encode())
    task, _ = make_task(path)
    records = drain(task, polls=10)
    assert [r.value for r in records] == lines
    assert records[-1].source_offset == {"position": path.stat().st_size}
    task.stop()


def test_missing_file_is_waited_for(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "later.txt"
    task, _ = make_task(path)
    assert task.poll() is None
    assert task.poll() is None
    assert "Couldn't find file" in caplog.text
    path.write_bytes(b"hello\n")
    assert [r.value for r in drain(task)] == ["hello"]
    task.stop()


def test_stop_makes_poll_return_promptly(tmp_path: Path) -> None:
    path = tmp_path / "idle"
    path.write_bytes(b"")
    task, _ = make_task(path, wait=30.0)
    result: list[object] = []

    def run() -> None:
        started = time.monotonic()
        result.append(task.poll())
        result.append(time.monotonic() - started)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.1)
    task.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert result[0] is None
    assert isinstance(result[1], float) and result[1] < 2.0
    assert task.poll() is None  # after stop, nothing more


def test_stop_while_waiting_for_missing_file(tmp_path: Path) -> None:
    task, _ = make_task(tmp_path / "never", wait=30.0)
    timer = threading.Timer(0.1, task.stop)
    timer.start()
    started = time.monotonic()
    assert task.poll() is None
    assert time.monotonic() - started < 2.0
    timer.join()


def test_default_poll_wait_is_about_a_second(tmp_path: Path) -> None:
    path = tmp_path / "idle"
    path.write_bytes(b"")
    task = FileStreamSourceTask()
    task.initialize(FakeContext(FakeOffsetReader()))
    task.start({"file": str(path), "topic": "t"})
    started = time.monotonic()
    assert task.poll() is None
    assert 0.5 <= time.monotonic() - started < 3.0
    task.stop()


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    read_fd, write_fd = os.pipe()
    try:

        class FakeStdin:
            def fileno(self) -> int:
                return read_fd

        monkeypatch.setattr("sys.stdin", FakeStdin())
        task = FileStreamSourceTask(poll_wait_s=0.01)
        task.initialize(FakeContext(FakeOffsetReader()))
        task.start({"topic": "t", "file": ""})
        assert task.poll() is None
        os.write(write_fd, b"from stdin\npartial")
        records = drain(task)
        assert [r.value for r in records] == ["from stdin"]
        assert records[0].source_partition is None and records[0].source_offset is None
        os.close(write_fd)
        write_fd = -1
        assert drain(task) == []  # EOF: the partial line never completes
        task.stop()
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


# -- connector -------------------------------------------------------------------------------------


def test_registered_names() -> None:
    for name in (
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "FileStreamSourceConnector",
        "FileStreamSource",
    ):
        assert registry.load(name) is FileStreamSourceConnector
    from cdc.file import PLUGINS
    from cdc.file import FileStreamSourceTask as Lazy

    assert Lazy is FileStreamSourceTask
    assert len(PLUGINS) == 6


@pytest.mark.parametrize("name", ["local-file-source.properties", "nginx-accesslog-source.properties"])
def test_seed_configs_start(name: str) -> None:
    props = load_properties(FIXTURES / name)
    connector = registry.instantiate(props["connector.class"])
    assert isinstance(connector, FileStreamSourceConnector)
    assert all(not v.errors for v in connector.validate(props))
    connector.start(props)
    configs = connector.task_configs(int(props["tasks.max"]))
    assert configs == [props]
    assert connector.task_class() is FileStreamSourceTask
    assert connector.exactly_once_support(props) is ExactlyOnceSupport.SUPPORTED
    connector.stop()


def test_task_configs_is_one_task_whatever_max_tasks() -> None:
    connector = FileStreamSourceConnector()
    connector.start({"file": "/tmp/x", "topic": "t"})
    assert connector.task_configs(10) == [{"file": "/tmp/x", "topic": "t"}]


def test_topic_must_be_single() -> None:
    connector = FileStreamSourceConnector()
    with pytest.raises(ConfigError) as info:
        connector.start({"file": "/tmp/x", "topic": "a,b"})
    assert str(info.value) == SINGLE_TOPIC_MESSAGE
    by_name = {v.name: v for v in connector.validate({"topic": "a, b"})}
    assert by_name["topic"].errors == [SINGLE_TOPIC_MESSAGE]
    with pytest.raises(ConfigError, match="single topic"):
        FileStreamSourceTask().start({"topic": "a,b"})


def test_validate_missing_and_empty_topic_and_bad_batch_size() -> None:
    by_name = {v.name: v for v in FileStreamSourceConnector().validate({"batch.size": "lots"})}
    assert by_name["topic"].errors == ['Missing required configuration "topic" which has no default value.']
    assert by_name["batch.size"].errors
    assert by_name["file"].errors == [] and by_name["file"].value is None
    by_name = {v.name: v for v in FileStreamSourceConnector().validate({"topic": ""})}
    assert by_name["topic"].errors == ["Invalid value  for configuration topic: String must be non-empty"]
    with pytest.raises(ConfigError, match="Missing required configuration"):
        FileStreamSourceConnector().start({"file": "/x"})


def test_config_def_matches_connect() -> None:
    config = FileStreamSourceConnector().config()
    assert config.names() == ["file", "topic", "batch.size"]
    assert config["batch.size"].default == 2000
    assert config["topic"].has_default is False
    assert config["file"].default is None


def test_exactly_once_support_without_file() -> None:
    assert FileStreamSourceConnector().exactly_once_support({"topic": "t"}) is ExactlyOnceSupport.UNSUPPORTED


def test_alter_offsets() -> None:
    c = FileStreamSourceConnector()
    props = {"file": "/tmp/x", "topic": "t"}
    key = partition_key({"filename": "/tmp/x"})
    assert c.alter_offsets(props, {key: {"position": 10}, partition_key({"garbage": 1}): None})
    with pytest.raises(ConnectError, match="stdin is used for input"):
        c.alter_offsets({"topic": "t"}, {key: {"position": 1}})
    with pytest.raises(ConnectError, match="contain the key 'position'"):
        c.alter_offsets(props, {key: {"pos": 1}})
    with pytest.raises(ConnectError, match="expected to be a Long value"):
        c.alter_offsets(props, {key: {"position": "1"}})
    with pytest.raises(ConnectError, match="non-negative"):
        c.alter_offsets(props, {key: {"position": -1}})
    with pytest.raises(ConnectError, match="contain the key 'filename'"):
        c.alter_offsets(props, {partition_key({"file": "/tmp/x"}): {"position": 1}})
