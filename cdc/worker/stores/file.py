"""Standalone offsets in ``offset.storage.file.filename``, in Kafka Connect's standalone file format.

The file holds a Java-serialized ``java.util.HashMap<byte[], byte[]>`` whose keys and values are the same
JSON bytes as the offsets topic's (see :mod:`cdc.worker.stores.javaser`), so a worker can switch between
Kafka Connect and cdc without losing its offsets, in either direction.

Two deliberate differences from Kafka's ``FileOffsetBackingStore``:

* Writes are atomic: a temporary file in the same directory, fsync, rename over the old file, fsync of
  the directory. A crash or a full disk leaves either the old or the new offsets, never a torn file.
* A file that cannot be read (truncated, corrupt, empty, another object) is an error naming the file.
  Kafka treats an unreadable file as empty and silently re-reads every source from the beginning; we
  would rather stop and let the operator decide (restore the file, or delete it to start over).
  A *missing* file is an empty store, as in Kafka.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from cdc.api.errors import FatalError
from cdc.worker.stores.javaser import JavaSerializationError, dump_byte_map, load_byte_map
from cdc.worker.stores.memory import MemoryOffsetBackingStore

__all__ = ["FileOffsetBackingStore", "OffsetFileError", "read_offset_file", "write_offset_file"]

log = logging.getLogger(__name__)


class OffsetFileError(FatalError):
    """The standalone offsets file cannot be read or written."""


def read_offset_file(path: Path) -> dict[bytes, bytes]:
    """The offsets in ``path``; empty if it does not exist; :class:`OffsetFileError` if it is unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise OffsetFileError(f"Cannot read the offsets file {path}: {exc}") from exc
    if not data:
        raise OffsetFileError(
            f"The offsets file {path} is empty (0 bytes), so it is not a Java-serialized map: it was "
            "probably truncated. Restore it from a backup, or delete it to start every source over."
        )
    try:
        raw = load_byte_map(data)
    except JavaSerializationError as exc:
        raise OffsetFileError(
            f"The offsets file {path} is corrupt or truncated ({exc}). It must hold a Java-serialized "
            "java.util.HashMap<byte[],byte[]> as Kafka Connect writes it. Restore it from a backup, or "
            "delete it to start every source from the beginning."
        ) from exc
    offsets: dict[bytes, bytes] = {}
    for key, value in raw.items():
        if key is None:
            log.warning("Ignoring an entry with a null key in the offsets file %s", path)
        elif value is not None:  # a null value is a deleted offset
            offsets[key] = value
    return offsets


def write_offset_file(path: Path, offsets: Mapping[bytes, bytes]) -> None:
    """Replace ``path`` atomically with ``offsets`` serialized as Kafka Connect does."""
    data = dump_byte_map(offsets)
    directory = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OffsetFileError(f"Cannot write the offsets file {path}: {exc}") from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, path.stat().st_mode & 0o777)  # keep the old file's permissions
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OffsetFileError(f"Cannot write the offsets file {path}: {exc}") from exc
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry is; not every platform can open a directory.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class FileOffsetBackingStore(MemoryOffsetBackingStore):
    """Offsets kept in memory and saved to ``filename`` on every ``set``.

    ``start`` loads the file (raising :class:`OffsetFileError` if it is unreadable); ``set`` returns once
    the new file is on disk, and leaves the store unchanged if it could not be written.
    """

    def __init__(self, filename: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(filename)
        self._started = False
        self._start_lock = threading.Lock()

    def start(self) -> None:
        with self._start_lock:
            if self._started:
                return
            offsets = read_offset_file(self.path)
            with self._lock:
                self._data = offsets
            self._started = True
            log.info("Loaded %d offsets from %s", len(offsets), self.path)

    def stop(self) -> None:
        with self._start_lock:
            self._started = False

    def set(self, values: Mapping[bytes, bytes | None], timeout: float = 30.0) -> None:
        if not self._started:
            self.start()  # never overwrite a file we have not read
        super().set(values, timeout)

    def _persist(self, data: Mapping[bytes, bytes]) -> None:
        write_offset_file(self.path, data)
