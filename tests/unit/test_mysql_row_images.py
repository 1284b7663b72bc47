"""Partial row images from the columns-present bitmaps, and statement-based DML's target table."""

from __future__ import annotations

from types import SimpleNamespace

from pymysqlreplication.constants import FIELD_TYPE

from cdc.history.model import TableId
from cdc.mysql.row_images import check_images, fill_unavailable, partial_error
from cdc.mysql.statements import dml_table

COLUMNS = [
    SimpleNamespace(name="id", type=FIELD_TYPE.LONG),
    SimpleNamespace(name="name", type=FIELD_TYPE.VARCHAR),
    SimpleNamespace(name="notes", type=FIELD_TYPE.BLOB),
    SimpleNamespace(name="doc", type=FIELD_TYPE.JSON),
]


def test_full_images_are_not_checked_further() -> None:
    assert check_images("u", b"\x0f", b"\x0f", COLUMNS) is None
    assert check_images("c", b"\x0f", b"", COLUMNS) is None
    assert check_images("d", b"\x0f", b"", COLUMNS) is None


def test_minimal_images_are_partial_and_name_what_is_missing() -> None:
    check = check_images("u", b"\x01", b"\x02", COLUMNS)  # key before, changed column after
    assert check is not None
    assert check.before == (1, 2, 3) and check.after == (0, 2, 3)
    assert check.partial == ("id", "name")
    names = [c.name for c in COLUMNS]
    assert check.describe(names) == (
        "name, notes, doc missing from the before image; id, notes, doc missing from the after image"
    )
    message = str(partial_error(check, "db.t", "binlog.000007", 1234, names, "fail"))
    assert "db.t" in message and "binlog.000007:1234" in message and "binlog_row_image=FULL" in message
    deleted = check_images("d", b"\x01", b"", COLUMNS)
    assert deleted is not None and deleted.before == (1, 2, 3) and deleted.after == ()


def test_noblob_images_get_the_placeholder_in_place_of_the_left_out_values() -> None:
    check = check_images("u", b"\x03", b"\x03", COLUMNS)
    assert check is not None and check.partial == ()
    # The streamer's order differs from the table map's and excludes "doc".
    images = [["a", 1, None], ["b", 1, None]]  # name, id, notes: before, after
    replaced = fill_unavailable(images, True, check, [1, 0, 2, None], [False, False, True, False], "P")
    assert images == [["a", 1, b"P"], ["b", 1, b"P"]] and replaced == 2
    created = check_images("c", b"\x0b", b"", COLUMNS)  # notes left out of an insert
    assert created is not None and created.after == (2,)
    rows = [[1, "x", None, "{}"]]
    fill_unavailable(rows, False, created, [0, 1, 2, 3], [False, False, False, False], "P")
    assert rows == [[1, "x", "P", "{}"]]


def test_the_target_table_of_statement_based_dml() -> None:
    def target(query: str) -> TableId | bool | None:
        return dml_table(query, "d")

    assert target("UPDATE customers SET name='Bo' WHERE id=2") == TableId("d", "customers")
    assert target("insert ignore into `a`.`b``c` values (1)") == TableId("a", "b`c")
    assert target("DELETE QUICK FROM x.y WHERE 1") == TableId("x", "y")
    assert target("/* app */ REPLACE t VALUES (1)") == TableId("d", "t")
    assert target("CREATE TABLE t (a INT)") is False
    assert target("UPDATEx") is False
    assert dml_table("UPDATE t SET a=1", None) is None  # DML, but on a table of no known database
