"""Partial row images: what a rows event's columns-present bitmaps say, and what cdc does about it.

A rows event carries one columns-present bitmap per image (the before image of updates and deletes, the
after image of writes and updates). With ``binlog_row_image=FULL`` every bit is set. A session (or the
server) on ``MINIMAL`` logs only the key columns in the before image and only the changed columns in the
after image; on ``NOBLOB`` it leaves out the BLOB/TEXT columns that are neither changed nor part of the
key. Decoding such an image as if it were a row gives NULLs or zeros where the row holds values — an
update becomes a key change (delete, tombstone, create of id 0) that a sink applies to a live row.

So every rows event is checked before anything of it is emitted (:func:`check_images`):

- all bits set: a full image, the only case on the hot path (one ``bytes`` comparison per bitmap);
- only BLOB/TEXT/JSON columns missing (``NOBLOB``): as Debezium does since it supports ``NOBLOB``
  (debezium/dbz#473), each missing value is Debezium's ``unavailable.value.placeholder`` (bytes for binary
  columns, text otherwise), never NULL or empty as if it were the value;
- any other column missing (``MINIMAL``): the event cannot be turned into Debezium's change events.
  :class:`PartialRowImageError` names the table, the binlog position and the fix; the streamer fails the
  task with it, or skips the event under ``event.processing.failure.handling.mode=warn|skip``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE

from cdc.api.errors import ConnectError

__all__ = ["ImageCheck", "PartialRowImageError", "check_images", "fill_unavailable", "partial_error"]

# Column types the server leaves out under NOBLOB (in the binlog every BLOB/TEXT is MYSQL_TYPE_BLOB; JSON is
# a blob in MySQL's storage). GEOMETRY is a blob too, but a placeholder cannot stand for a geometry struct:
# a missing GEOMETRY is treated as a partial image.
_BLOB_TYPES = frozenset(
    {FIELD_TYPE.BLOB, FIELD_TYPE.TINY_BLOB, FIELD_TYPE.MEDIUM_BLOB, FIELD_TYPE.LONG_BLOB, FIELD_TYPE.JSON}
)
_FULL: dict[int, bytes] = {}


def _full(ncols: int) -> bytes:
    full = _FULL.get(ncols)
    if full is None:
        nbytes = (ncols + 7) >> 3
        value = (1 << ncols) - 1
        full = _FULL[ncols] = value.to_bytes(nbytes, "little") if nbytes else b""
    return full


def _missing(bitmap: bytes, ncols: int) -> list[int]:
    return [i for i in range(ncols) if not bitmap[i >> 3] & (1 << (i & 7))]


class PartialRowImageError(ConnectError):
    """A rows event whose images lack columns other than BLOB/TEXT ones (``binlog_row_image=MINIMAL``)."""


@dataclass(frozen=True)
class ImageCheck:
    """Columns (by table map index) missing from the before and the after images; ``partial``: some of
    them are not BLOB/TEXT columns, so no placeholder can stand for them."""

    before: tuple[int, ...]
    after: tuple[int, ...]
    partial: tuple[str, ...]

    def describe(self, names: Sequence[str]) -> str:
        parts = []
        for label, missing in (("before", self.before), ("after", self.after)):
            if missing:
                parts.append(f"{', '.join(names[i] for i in missing)} missing from the {label} image")
        return "; ".join(parts)


def check_images(kind: str, bitmap: bytes, bitmap2: bytes, columns: Sequence[Any]) -> ImageCheck | None:
    """None for full images (the usual case); else which columns are missing and whether a placeholder may
    stand for them. ``kind`` is c/u/d; ``bitmap2`` is the after image's bitmap of an update; ``columns``
    are the library table map's columns (``type``, ``name``)."""
    ncols = len(columns)
    full = _full(ncols)
    if bitmap == full and (kind != "u" or bitmap2 == full):
        return None
    first = _missing(bitmap, ncols) if len(bitmap) * 8 >= ncols else list(range(ncols))
    second: list[int] = []
    if kind == "u":
        second = _missing(bitmap2, ncols) if len(bitmap2) * 8 >= ncols else list(range(ncols))
    before, after = (first, second) if kind == "u" else (([], first) if kind == "c" else (first, []))
    partial = sorted(
        {str(columns[i].name) for i in (*before, *after) if int(columns[i].type) not in _BLOB_TYPES}
    )
    return ImageCheck(tuple(before), tuple(after), tuple(partial))


def partial_error(
    check: ImageCheck, table: str, file: str, pos: int, names: Sequence[str], mode: str
) -> PartialRowImageError:
    return PartialRowImageError(
        f"Partial row image in the binlog event at {file}:{pos} for table {table}: "
        f"{check.describe(names)}. The writing session or the server uses binlog_row_image=MINIMAL (or "
        "NOBLOB with other columns left out), and such an event cannot be turned into change events "
        "without emitting wrong values. Set binlog_row_image=FULL (SET GLOBAL binlog_row_image=FULL, in the "
        "server's configuration file, and in any session that sets it), then restart the task; to skip "
        "such events instead, set event.processing.failure.handling.mode=warn or skip "
        f"(now {mode})."
    )


def fill_unavailable(
    images: list[list[Any]],
    update: bool,
    check: ImageCheck,
    positions: Sequence[int | None],
    binary: Sequence[bool],
    placeholder: str,
) -> int:
    """Put the placeholder in every missing (BLOB/TEXT) value of ``images`` (rows in the streamer's column
    order; ``positions`` maps a table map index to that order, None for an excluded column). Returns the
    number of values replaced."""
    text, raw = placeholder, placeholder.encode()
    replaced = 0
    for i, image in enumerate(images):
        # Updates alternate before, after; writes have only after images, deletes only before images.
        missing = (check.after if i % 2 else check.before) if update else (check.before or check.after)
        for index in missing:
            at = positions[index]
            if at is not None:
                image[at] = raw if binary[index] else text
                replaced += 1
    return replaced
