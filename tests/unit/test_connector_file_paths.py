"""Files named by connector configs: the file signal channel (incremental, bounded, never truncating a file
it did not create, never logging content), the file history's refusal of other files, SQLite paths and
``ATTACH``, and ``connector.file.allowed.paths`` (symlinks and ``..`` resolved)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path

import pytest

from cdc.api.errors import ConfigError, ConnectError
from cdc.history.errors import SchemaHistoryError
from cdc.history.records import HistoryRecord
from cdc.history.store import FileSchemaHistory
from cdc.jdbc.connector import JdbcSourceConnector
from cdc.jdbc.url import parse_jdbc_url, sqlite_file
from cdc.mysql.connector import MySqlConnector
from cdc.mysql.signals.channels import MAX_LINE_BYTES, MAX_POLL_BYTES, POSITION_SUFFIX, FileChannel
from cdc.mysql.signals.record import SignalRecord
from cdc.worker.file_paths import FilePolicy, check_connector_files, file_violations, parse_allowed

SECRET = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7-unit-canary"


def _signal(i: str) -> str:
    return json.dumps({"id": i, "type": "log", "data": {"message": i}})


def _ack_all(channel: FileChannel, signals: list[SignalRecord]) -> None:
    for s in signals:
        channel.acknowledge(s)


def test_a_file_the_channel_did_not_create_is_read_once_never_changed_nor_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "tls.key"
    victim.write_text(f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n{_signal('a')}\n", encoding="utf-8")
    before = victim.read_bytes()
    caplog.set_level(logging.DEBUG)
    channel = FileChannel(str(victim))
    signals = channel.read()
    assert [s.id for s in signals] == ["a"]
    _ack_all(channel, signals)
    assert channel.read() == [] and channel.read() == []
    channel.close()
    assert victim.read_bytes() == before
    assert SECRET not in caplog.text and "BEGIN PRIVATE" not in caplog.text
    assert "Skipped line 1 of the signal file" in caplog.text and "Skipped line 2" in caplog.text
    # a restarted channel does not act on it again; a new line is read
    with victim.open("a", encoding="utf-8") as f:
        f.write(_signal("b") + "\n")
    again = FileChannel(str(victim))
    assert [s.id for s in again.read()] == ["b"]
    assert victim.read_bytes() == before + (_signal("b") + "\n").encode()


def test_a_signal_not_acted_on_is_read_again_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "signals"
    path.write_text(_signal("a") + "\n" + _signal("b") + "\n", encoding="utf-8")
    channel = FileChannel(str(path))
    first = channel.read()
    channel.acknowledge(first[0])  # "b" read but not acted on when the task stops
    channel.close()
    assert [s.id for s in FileChannel(str(path)).read()] == ["b"]


def test_a_file_the_channel_created_is_emptied_once_its_signals_are_acted_on(tmp_path: Path) -> None:
    path = tmp_path / "signals"
    channel = FileChannel(str(path))
    assert path.exists() and path.read_bytes() == b""
    with path.open("a", encoding="utf-8") as f:
        f.write(_signal("a") + "\n")
    signals = channel.read()
    assert [s.id for s in signals] == ["a"]
    channel.read()
    assert path.read_bytes() != b""  # not acted on yet
    _ack_all(channel, signals)
    channel.read()
    assert path.read_bytes() == b""
    path.write_text(_signal("b") + "\n", encoding="utf-8")  # overwritten, as Debezium users do
    assert [s.id for s in channel.read()] == ["b"]
    # ownership survives a restart (remembered beside the file)
    channel.close()
    restarted = FileChannel(str(path))
    assert json.loads((tmp_path / f"signals{POSITION_SUFFIX}").read_text())["created"] is True
    _ack_all(restarted, restarted.read())
    restarted.read()
    assert path.read_bytes() == b""


def test_a_rewritten_file_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "signals"
    path.write_text(_signal("a") + "\n", encoding="utf-8")
    channel = FileChannel(str(path))
    _ack_all(channel, channel.read())
    path.write_text(_signal("z") + "\n" + _signal("y") + "\n", encoding="utf-8")  # same inode, new content
    assert [s.id for s in channel.read()] == ["z", "y"]
    os.replace(_write(tmp_path / "new", _signal("n") + "\n"), path)  # another file under the name
    assert [s.id for s in channel.read()] == ["n"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_are_bounded_and_long_lines_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "signals"
    long_line = "x" * (MAX_LINE_BYTES + 10)
    path.write_text(long_line + "\n" + _signal("after") + "\n", encoding="utf-8")
    channel = FileChannel(str(path))
    assert [s.id for s in channel.read()] == ["after"]
    assert "Skipped line 1 of the signal file" in caplog.text and "x" * 100 not in caplog.text
    # longer than a poll reads: skipped without being held, then the next line
    path.write_text(_signal("a") + "\n" + "y" * (MAX_POLL_BYTES + 10) + "\n" + _signal("b") + "\n")
    assert [s.id for s in channel.read()] == ["a"]  # and the long line's first bytes, dropped
    assert [s.id for s in channel.read()] == ["b"]
    assert "Skipped line 2 of the signal file" in caplog.text
    big = tmp_path / "big"
    lines = [_signal(str(i)) for i in range(3 * MAX_POLL_BYTES // 60)]
    big.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reader = FileChannel(str(big))
    counts = []
    while batch := reader.read():
        counts.append(len(batch))
        _ack_all(reader, batch)
    assert sum(counts) == len(lines) and len(counts) >= 3


def test_a_last_line_without_newline_is_taken_once_whole(tmp_path: Path) -> None:
    path = tmp_path / "signals"
    path.write_text(_signal("a")[:10], encoding="utf-8")
    channel = FileChannel(str(path))
    assert channel.read() == []  # a writer mid-line
    path.write_text(_signal("a"), encoding="utf-8")
    assert [s.id for s in channel.read()] == ["a"]
    with path.open("a", encoding="utf-8") as f:
        f.write("\n" + _signal("b") + "\n")
    assert [s.id for s in channel.read()] == ["b"]


def test_a_foreign_position_file_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "signals"
    state = tmp_path / f"signals{POSITION_SUFFIX}"
    state.write_text("user=password\n", encoding="utf-8")
    with pytest.raises(ConnectError, match="is not the signal position file"):
        FileChannel(str(path))
    assert state.read_text(encoding="utf-8") == "user=password\n"


def _record(n: int) -> HistoryRecord:
    return HistoryRecord(source={"server": "s"}, position={"pos": n}, ddl=f"CREATE TABLE t{n} (id INT)")


def test_the_file_history_refuses_a_file_that_is_not_a_history(tmp_path: Path) -> None:
    users = tmp_path / "users.properties"
    users.write_text("alice=s3cret\n", encoding="utf-8")
    history = FileSchemaHistory(users)
    with pytest.raises(SchemaHistoryError, match="is not a schema history") as info:
        history.initialize_storage()
    assert "s3cret" not in str(info.value)
    with pytest.raises(SchemaHistoryError):
        history.record(_record(1))
    with pytest.raises(SchemaHistoryError):
        history.exists()
    assert users.read_text(encoding="utf-8") == "alice=s3cret\n"


def test_the_file_history_appends_to_its_own_file(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "history.dat"
    history = FileSchemaHistory(path)
    history.initialize_storage()
    history.record(_record(1))
    history.record(_record(2))
    again = FileSchemaHistory(path)
    again.initialize_storage()
    again.record(_record(3))
    assert [json.loads(line)["position"]["pos"] for line in path.read_text().splitlines()] == [1, 2, 3]
    with path.open("a", encoding="utf-8") as f:  # someone else writes into it
        f.write("not a record\n")
    with pytest.raises(SchemaHistoryError, match="line 4"):
        again.record(_record(4))


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("jdbc:sqlite:/var/db/a.db", "/var/db/a.db"),
        ("jdbc:sqlite:rel.db", "rel.db"),
        ("jdbc:sqlite:", None),
        ("jdbc:sqlite::memory:", None),
        ("jdbc:sqlite:file:/d/%2e%2e/x.db?mode=rwc", "/d/../x.db"),
        ("jdbc:sqlite:file:///etc/x.db", "/etc/x.db"),
        ("jdbc:sqlite:file://localhost/etc/y.db", "/etc/y.db"),
        ("jdbc:sqlite:file::memory:?cache=shared", None),
        ("jdbc:sqlite:file:m1?mode=memory&cache=shared", None),
    ],
)
def test_sqlite_files(url: str, path: str | None) -> None:
    assert sqlite_file(parse_jdbc_url(url).database) == path


def test_sqlite_attach_and_vacuum_into_are_denied(tmp_path: Path) -> None:
    from cdc.jdbc.config import JdbcSourceSettings
    from cdc.jdbc.task import make_dialect

    settings = JdbcSourceSettings.parse(
        {"connection.url": f"jdbc:sqlite:{tmp_path}/db.sqlite", "mode": "bulk", "topic.prefix": "p"}
    )
    conn = make_dialect(settings).connect()
    conn.execute("CREATE TABLE t (x)")
    for sql in (f"ATTACH DATABASE '{tmp_path}/other.db' AS o", f"VACUUM INTO '{tmp_path}/copy.db'"):
        with pytest.raises(sqlite3.DatabaseError, match="authoriz"):
            conn.execute(sql)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.sqlite"]


def test_the_policy_resolves_symlinks_and_dots(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (tmp_path / "allowedx").mkdir()
    (allowed / "out").symlink_to(tmp_path)
    policy = FilePolicy(parse_allowed(str(allowed)))
    assert policy.refusal(str(allowed / "sub" / "new" / "h.dat")) is None
    assert policy.refusal(str(allowed)) is None
    outside = (allowed / ".." / "x", allowed / "out" / "x", tmp_path / "allowedx" / "f", Path("/etc/passwd"))
    for path in outside:
        assert "is not allowed to be accessed" in (policy.refusal(str(path)) or "")
    assert "lists none" in (FilePolicy(()).refusal(str(allowed / "f")) or "")
    assert FilePolicy(None).refusal("/etc/passwd") is None
    with pytest.raises(ConfigError, match="not absolute"):
        parse_allowed("relative/dir")
    with pytest.raises(ConfigError, match="does not exist"):
        parse_allowed(str(tmp_path / "missing"))


def test_connectors_name_their_files(tmp_path: Path) -> None:
    mysql = MySqlConnector()
    config = {
        "signal.enabled.channels": "source, FILE",
        "signal.file": "/etc/cdc/users.properties",
        "database.history": "io.debezium.relational.history.FileDatabaseHistory",
        "database.history.file.filename": "/etc/h.dat",
        "snapshot.spark.state.dir": "/var/state",
    }
    assert [(u.key, u.path) for u in mysql.files(config)] == [
        ("signal.file", "/etc/cdc/users.properties"),
        ("database.history.file.filename", "/etc/h.dat"),
        ("snapshot.spark.state.dir", "/var/state"),
    ]
    assert mysql.files({"signal.file": "/etc/x"}) == []  # the file channel is off
    jdbc = JdbcSourceConnector()
    assert [u.key for u in jdbc.files({"connection.url": "jdbc:sqlite:/etc/x.db"})] == ["connection.url"]
    assert jdbc.files({"connection.url": "jdbc:mysql://h/db"}) == []
    assert jdbc.files({"connection.url": "not a url"}) == []
    worker = {"connector.file.allowed.paths": [str(tmp_path)]}
    assert [k for k, _ in file_violations(mysql, config, FilePolicy.from_worker(worker))] == [
        "signal.file",
        "database.history.file.filename",
        "snapshot.spark.state.dir",
    ]
    with pytest.raises(ConnectError, match=r"^signal\.file: The path /etc/cdc/users\.properties"):
        check_connector_files(mysql, [config], FilePolicy.from_worker(worker))
    check_connector_files(mysql, [config], FilePolicy.from_worker({"connector.file.allowed.paths": None}))
