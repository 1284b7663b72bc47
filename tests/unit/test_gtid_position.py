"""cdc.mysql.gtid_position against a scripted server (the queries' answers as MariaDB gives them)."""

from __future__ import annotations

from typing import Any

import pytest

from cdc.mysql.gtid_position import GtidNotFoundError, resume_position
from cdc.mysql.offsets import BinlogOffset

# binlog file → (GTID state at its start, its events as SHOW BINLOG EVENTS rows, end position)
REPLICA = {
    "binlog.000001": ("", [], 330),
    "binlog.000002": ("", [], 330),
    "binlog.000003": (
        "",
        [
            ("binlog.000003", 4, "Format_desc", 2, 256, "Server ver"),
            ("binlog.000003", 371, "Gtid", 1, 413, "BEGIN GTID 0-1-41"),
            ("binlog.000003", 900, "Xid", 1, 931, "COMMIT"),
            ("binlog.000003", 931, "Gtid", 1, 973, "BEGIN GTID 0-1-42"),
            ("binlog.000003", 1500, "Xid", 1, 1531, "COMMIT"),
            ("binlog.000003", 1531, "Gtid", 2, 1573, "BEGIN GTID 0-2-43"),
        ],
        2000,
    ),
}


class Cursor:
    def __init__(
        self, files: dict[str, Any], positions: dict[tuple[str, int], str], connection: Conn
    ) -> None:
        self.files, self.positions, self.result = files, positions, []  # type: list[Any]
        self.connection = connection

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        if sql.startswith("SELECT BINLOG_GTID_POS"):
            file, pos = args
            if pos == 4 and file in self.files:
                self.result = [(self.files[file][0],)]
            else:
                self.result = [(self.positions.get((file, pos)),)]
        elif sql == "SHOW BINARY LOGS":
            self.result = [(f, end) for f, (_, _, end) in self.files.items()]
        elif sql.startswith("SHOW BINLOG EVENTS"):
            self.connection.events_read_as.append(self.connection.encoding)
            start = int(sql.split("LIMIT")[1].split(",")[0])
            self.result = self.files[args[0]][1][start:]
        elif sql == "SHOW MASTER STATUS":
            last = list(self.files)[-1]
            self.result = [(last, self.files[last][2])]

    def fetchone(self) -> Any:
        return self.result[0] if self.result else None

    def fetchall(self) -> list[Any]:
        return self.result


class Conn:
    def __init__(self, files: dict[str, Any], positions: dict[tuple[str, int], str] | None = None) -> None:
        self.files, self.positions = files, positions or {}
        self.encoding = "utf8"  # PyMySQL's: the text columns of the next results are decoded with it
        self.events_read_as: list[str] = []

    def cursor(self) -> Cursor:
        return Cursor(self.files, self.positions, self)


def test_an_offset_of_this_server_is_kept() -> None:
    offset = BinlogOffset("binlog.000003", 931, "0-1-41", event=3)
    assert resume_position(Conn(REPLICA, {("binlog.000003", 931): "0-1-41"}), offset) is offset


def test_another_servers_coordinates_move_to_the_first_transaction_outside_the_set() -> None:
    offset = BinlogOffset("binlog.000001", 116949, "0-1-41", event=12, row=2)
    conn = Conn(REPLICA)
    moved = resume_position(conn, offset)
    # SHOW BINLOG EVENTS quotes statements byte for byte (not UTF-8 when they hold binary literals)
    assert conn.events_read_as and set(conn.events_read_as) == {"latin1"} and conn.encoding == "utf8"
    assert (moved.file, moved.pos, moved.gtids, moved.event, moved.row) == (
        "binlog.000003",
        931,
        "0-1-41",
        12,
        2,
    )


def test_a_set_past_every_transaction_resumes_at_the_end() -> None:
    moved = resume_position(Conn(REPLICA), BinlogOffset("binlog.000009", 77, "0-2-43"))
    assert (moved.file, moved.pos) == ("binlog.000003", 2000)


def test_a_purged_set_fails_with_the_remedy() -> None:
    purged = {"binlog.000007": ("0-1-500", [], 330)}
    with pytest.raises(GtidNotFoundError, match=r"snapshot\.mode=when_needed"):
        resume_position(Conn(purged), BinlogOffset("binlog.000001", 400, "0-1-41"))


def test_an_offset_without_gtids_is_left_alone() -> None:
    offset = BinlogOffset("binlog.000001", 400)
    assert resume_position(Conn({}), offset) is offset
