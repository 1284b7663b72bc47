"""The schema history interface, its memory and file stores, and recovery up to an offset.

Backends implement only ``_store`` and ``_records`` (plus storage checks); :meth:`SchemaHistory.recover`
is written once (reference §8.4): every valid record whose ``source`` is the connector's partition and
whose ``position`` is at or before the offset is applied — its ``tableChanges`` when it has any (unless
``prefer.ddl``), else its ``ddl`` re-parsed in its ``databaseName``. A DDL that cannot be parsed fails
recovery unless ``skip.unparseable.ddl`` is set.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from cdc.history.config import HistorySettings
from cdc.history.errors import SchemaHistoryError, UnparseableDdlError
from cdc.history.model import Tables
from cdc.history.records import HistoryRecord, TableChange, apply_table_changes

__all__ = [
    "DdlApplier",
    "FileSchemaHistory",
    "MemorySchemaHistory",
    "PositionComparator",
    "SchemaHistory",
    "recover_tables",
]

log = logging.getLogger(__name__)


class DdlApplier(Protocol):
    """What recovery needs of a DDL parser: apply one statement to the model (``cdc.mysql.ddl.DdlParser``)."""

    def apply(self, tables: Tables, ddl: str, database: str | None = None) -> list[TableChange]: ...


class PositionComparator(Protocol):
    def is_at_or_before(self, recorded: Mapping[str, Any], desired: Mapping[str, Any]) -> bool: ...


def recover_tables(
    records: Iterable[HistoryRecord],
    offset_position: Mapping[str, Any],
    tables: Tables,
    parser: DdlApplier,
    comparator: PositionComparator,
    *,
    source: Mapping[str, Any] | None = None,
    skip_unparseable_ddl: bool = False,
    prefer_ddl: bool = False,
) -> Tables:
    """Rebuild ``tables`` from ``records`` up to ``offset_position``; returns ``tables``."""
    for rec in records:
        if not rec.is_valid():
            log.warning("Skipping invalid schema history record: %s", rec.to_text())
            continue
        if source is not None and rec.source != dict(source):
            continue
        if not comparator.is_at_or_before(rec.position, offset_position):
            continue
        if rec.table_changes and not prefer_ddl:
            apply_table_changes(tables, rec.table_changes)
        elif rec.ddl:
            try:
                parser.apply(tables, rec.ddl, rec.database_name)
            except UnparseableDdlError as e:
                if not skip_unparseable_ddl:
                    raise
                log.warning("Ignoring unparseable DDL in the schema history: %s", e)
    return tables


class SchemaHistory(ABC):
    """Where the connector's DDL history lives (Debezium's ``SchemaHistory``)."""

    def __init__(self, settings: HistorySettings | None = None) -> None:
        self.settings = settings or HistorySettings()

    def initialize_storage(self) -> None:
        """Create the storage (topic, file) if it does not exist."""

    @abstractmethod
    def storage_exists(self) -> bool:
        """Whether the storage (topic, file) exists, records or not."""

    def exists(self) -> bool:
        """Whether the history holds at least one record."""
        return self.storage_exists() and next(iter(self._records()), None) is not None

    def start(self) -> None:
        """Check the storage before use (Kafka: topic settings)."""

    def record(self, record: HistoryRecord) -> None:
        """Append one record durably."""
        self._store(record)

    def recover(
        self,
        offset_position: Mapping[str, Any],
        tables: Tables,
        parser: DdlApplier,
        comparator: PositionComparator,
        *,
        source: Mapping[str, Any] | None = None,
    ) -> Tables:
        """The model at ``offset_position``, built from the records of ``source`` (any when None)."""
        return recover_tables(
            self._records(),
            offset_position,
            tables,
            parser,
            comparator,
            source=source,
            skip_unparseable_ddl=self.settings.skip_unparseable_ddl,
            prefer_ddl=self.settings.prefer_ddl,
        )

    def stop(self) -> None:
        """Release clients and files."""

    @abstractmethod
    def _store(self, record: HistoryRecord) -> None: ...

    @abstractmethod
    def _records(self) -> Iterable[HistoryRecord]: ...


class MemorySchemaHistory(SchemaHistory):
    """History in memory (tests; Debezium's ``MemorySchemaHistory``)."""

    def __init__(self, settings: HistorySettings | None = None) -> None:
        super().__init__(settings)
        self._lines: list[str] = []
        self._lock = threading.Lock()

    def storage_exists(self) -> bool:
        return True

    def _store(self, record: HistoryRecord) -> None:
        with self._lock:
            self._lines.append(record.to_text())

    def _records(self) -> Iterator[HistoryRecord]:
        with self._lock:
            lines = list(self._lines)
        return (HistoryRecord.from_text(line) for line in lines)


class FileSchemaHistory(SchemaHistory):
    """One JSON document per line, appended and flushed per record (Debezium's ``FileSchemaHistory``).

    The path comes from a connector config, so the file may be anything the worker can write (the REST
    credentials file, say). Before it is read or appended to, an existing file must be a schema history:
    every non-blank line a JSON object with ``source`` and ``position`` objects (what this store writes).
    Anything else is refused without a byte of it written or shown. Checked once per file (device, inode,
    size and modification time), again when another writer changed it.
    """

    def __init__(self, path: str | os.PathLike[str], settings: HistorySettings | None = None) -> None:
        super().__init__(settings)
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._checked: tuple[int, int, int, int] | None = None

    def initialize_storage(self) -> None:
        with self._lock:
            if not os.path.exists(self.path):
                # as Debezium's: the directories too (connector.file.allowed.paths bounds where)
                parent = os.path.dirname(self.path)
                if parent:
                    os.makedirs(parent, exist_ok=True)
                try:
                    fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                except FileExistsError:
                    pass
                else:
                    os.close(fd)
            self._check()

    def storage_exists(self) -> bool:
        return os.path.exists(self.path)

    def exists(self) -> bool:
        with self._lock:
            if not os.path.exists(self.path):
                return False
            self._check()
        return os.path.getsize(self.path) > 0

    def _check(self) -> None:
        """SchemaHistoryError unless the file is missing, empty or a schema history (lock held)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(st.st_mode):
            raise SchemaHistoryError(f"The schema history file {self.path} is not a regular file")
        seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if seen == self._checked:
            return
        with open(self.path, "rb") as f:
            for number, line in enumerate(f, 1):
                if line.strip() and not _is_history_line(line):
                    raise SchemaHistoryError(
                        f"The file {self.path} is not a schema history (line {number} is not a history "
                        "record); refusing to read or write it: choose another "
                        "schema.history.internal.file.filename"
                    )
            seen = _stamp(os.fstat(f.fileno()))
        self._checked = seen

    def _store(self, record: HistoryRecord) -> None:
        line = record.to_text() + "\n"
        with self._lock:
            try:
                self._check()
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(line)
                    f.flush()
                    os.fsync(f.fileno())
                    fresh = _stamp(os.fstat(f.fileno()))
            except OSError as e:
                raise SchemaHistoryError(f"Unable to write the schema history file {self.path}: {e}") from e
            if self._checked is not None and fresh[:2] == self._checked[:2]:
                self._checked = fresh  # our own line: no need to read the file again

    def _records(self) -> Iterator[HistoryRecord]:
        with self._lock:
            if not os.path.exists(self.path):
                return iter(())
            self._check()
            with open(self.path, encoding="utf-8") as f:
                lines = [line for line in f.read().splitlines() if line.strip()]
        return (HistoryRecord.from_text(line) for line in lines)


def _stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _is_history_line(line: bytes) -> bool:
    try:
        doc = json.loads(line)
    except ValueError:
        return False
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("source"), dict)
        and isinstance(doc.get("position"), dict)
    )
