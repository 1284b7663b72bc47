"""``FileStreamSource``: each line of a file (or of standard input) becomes a record.

Compatible with ``org.apache.kafka.connect.file.FileStreamSourceConnector``: the keys ``file`` (empty
or absent = stdin), ``topic`` and ``batch.size``; one task; records with a STRING value, no key, source
partition ``{"filename": <file>}`` and source offset ``{"position": <offset just after the line>}``; lines
end at ``\\n``, ``\\r\\n`` or ``\\r`` as with Java's reader; a restarted task resumes at the stored
position and sends nothing twice.

Where we differ from Kafka, on purpose:

* ``position`` counts bytes. Kafka's task counts *characters* after decoding but seeks by bytes on
  restart, so a file with multi-byte UTF-8 text resumes at the wrong place there; for ASCII files the
  two agree, so stored offsets move between the two.
* Lines already read but not yet returned (beyond ``batch.size``) are returned on the next poll even if
  the file does not grow; Kafka's task only looks at them when new bytes arrive.
* ``topic`` is trimmed, and a comma in it is an error with Connect 2.x's message (3.x would pass the
  name through to the producer, which then refuses it).

The task tails the file: lines appended later are picked up, a last line without its line break is held
back until the break arrives, and a file that does not exist yet is waited for. ``poll`` never blocks
for longer than ``poll_wait_s`` (1 s), and ``stop`` from another thread wakes it at once.
"""

from __future__ import annotations

import json
import logging
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from cdc.api.connector import ExactlyOnceSupport, SourceConnector, SourceTask, Task
from cdc.api.errors import ConfigError, ConnectError
from cdc.api.records import SourceRecord
from cdc.api.schema import STRING_SCHEMA
from cdc.config import ConfigDef, ConfigType, ConfigValue, Importance

__all__ = [
    "BATCH_SIZE_CONFIG",
    "DEFAULT_BATCH_SIZE",
    "FILENAME_FIELD",
    "FILE_CONFIG",
    "POSITION_FIELD",
    "SOURCE_CONFIG_DEF",
    "TOPIC_CONFIG",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
]

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_BATCH_SIZE = 2000
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"

SINGLE_TOPIC_MESSAGE = (
    "'topic' in FileStreamSourceConnector configuration requires definition of a single topic"
)


def _non_empty_string(name: str, value: Any) -> None:
    """Kafka's ``ConfigDef.NonEmptyString``."""
    if value is not None and value == "":
        raise ConfigError("String must be non-empty", name, value)


SOURCE_CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        ConfigType.STRING,
        None,
        importance=Importance.HIGH,
        documentation="Source filename. If not specified, the standard input will be used",
    )
    .define(
        TOPIC_CONFIG,
        ConfigType.STRING,
        validator=_non_empty_string,
        importance=Importance.HIGH,
        documentation="The topic to publish data to",
    )
    .define(
        BATCH_SIZE_CONFIG,
        ConfigType.INT,
        DEFAULT_BATCH_SIZE,
        importance=Importance.LOW,
        documentation=(
            "The maximum number of records the source task can read from the file each time it is polled"
        ),
    )
)


def _single_topic(topic: str) -> str:
    topic = topic.strip()
    if "," in topic or not topic:
        raise ConfigError(SINGLE_TOPIC_MESSAGE)
    return topic


class FileStreamSourceConnector(SourceConnector):
    """Reads one file (or stdin) with a single task."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def start(self, props: dict[str, str]) -> None:
        parsed = SOURCE_CONFIG_DEF.parse(props)
        _single_topic(parsed[TOPIC_CONFIG])
        self._props = dict(props)
        log.info("Starting file source connector reading from %s", parsed[FILE_CONFIG] or "standard input")

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # only one input stream makes sense

    def stop(self) -> None:
        """Nothing to do: the connector has no background work."""

    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        results = super().validate(props)
        for result in results:
            if result.name == TOPIC_CONFIG and not result.errors and isinstance(result.value, str):
                try:
                    _single_topic(result.value)
                except ConfigError as exc:
                    result.add_error(str(exc))
        return results

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        # Offsets identify the place in a real file (as long as it is only appended to); stdin has none.
        filename = props.get(FILE_CONFIG)
        return ExactlyOnceSupport.SUPPORTED if filename else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[Any, Any]) -> bool:
        """Check offsets given over REST (KIP-875) with Kafka's rules and messages."""
        if not props.get(FILE_CONFIG):
            raise ConnectError(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. "
                "This is because stdin is used for input and offsets are not tracked."
            )
        for raw_partition, offset in offsets.items():
            if offset is None:
                continue  # tombstones may clean up anything
            if POSITION_FIELD not in offset:
                raise ConnectError(
                    f"Offset objects should either be null or contain the key '{POSITION_FIELD}'"
                )
            position = offset[POSITION_FIELD]
            if not isinstance(position, int) or isinstance(position, bool):
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
                )
            if position < 0:
                raise ConnectError(
                    f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
                )
            partition = json.loads(raw_partition) if isinstance(raw_partition, str) else raw_partition
            if partition is None:
                raise ConnectError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


class _LineBuffer:
    """Bytes in, complete lines out, with the byte position just after each line's break.

    A ``\\r`` at the very end of the buffered bytes is held back: the next byte may be the ``\\n`` of a
    ``\\r\\n``. ``position`` is None for stdin, whose offsets are not tracked.
    """

    def __init__(self, position: int | None) -> None:
        self._buf = bytearray()
        self._start = 0
        self.position = position

    def feed(self, data: bytes) -> None:
        if self._start and self._start * 2 >= len(self._buf):
            del self._buf[: self._start]
            self._start = 0
        self._buf += data

    def next_line(self) -> tuple[str, int | None] | None:
        buf = self._buf
        lf = buf.find(b"\n", self._start)
        cr = buf.find(b"\r", self._start, lf if lf >= 0 else len(buf))
        if cr >= 0:
            if cr + 1 >= len(buf):
                return None  # cannot tell "\r" from "\r\n" yet
            end, next_start = cr, cr + 2 if buf[cr + 1] == 0x0A else cr + 1
        elif lf >= 0:
            end, next_start = lf, lf + 1
        else:
            return None
        line = bytes(buf[self._start : end]).decode("utf-8", errors="replace")
        if self.position is not None:
            self.position += next_start - self._start
        self._start = next_start
        return line, self.position


class FileStreamSourceTask(SourceTask):
    """Tails one file (or reads stdin), returning up to ``batch.size`` lines per poll."""

    # The ``task.class`` Connect writes into the task configs (GET /connectors/{n}/tasks, config topic).
    JAVA_NAME = "org.apache.kafka.connect.file.FileStreamSourceTask"
    READ_CHUNK = 64 * 1024

    def __init__(self, poll_wait_s: float = 1.0, clock: Callable[[], float] = time.time) -> None:
        self.poll_wait_s = poll_wait_s
        self._clock = clock
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # guards the stream between poll and stop
        self._filename: str | None = None
        self._topic = ""
        self._batch_size = DEFAULT_BATCH_SIZE
        self._stream: Any = None  # a raw binary file, or None (not open yet / stdin)
        self._stdin_fd: int | None = None
        self._stdin_eof = False
        self._lines: _LineBuffer | None = None
        self._warned_missing = False

    def start(self, props: dict[str, str]) -> None:
        parsed = SOURCE_CONFIG_DEF.parse(props)
        self._filename = parsed[FILE_CONFIG] or None
        self._topic = _single_topic(parsed[TOPIC_CONFIG])
        self._batch_size = max(1, int(parsed[BATCH_SIZE_CONFIG]))
        self._stopping.clear()
        self._warned_missing = False
        if self._filename is None:
            try:
                self._stdin_fd = sys.stdin.fileno()
                self._stdin_eof = False
            except (AttributeError, OSError, ValueError):  # no usable stdin (daemonised, captured)
                log.warning("Standard input is not available; FileStreamSourceTask will produce nothing")
                self._stdin_fd, self._stdin_eof = -1, True
            self._lines = _LineBuffer(None)  # tracking an offset in stdin makes no sense

    def poll(self) -> list[SourceRecord] | None:
        records: list[SourceRecord] = []
        with self._lock:
            if self._stopping.is_set():
                return None
            if self._lines is None:
                self._open()
            if self._lines is not None:
                records = self._read_batch(self._lines)
        if records:
            return records
        self._stopping.wait(self.poll_wait_s)
        return None

    def stop(self) -> None:
        log.debug("Stopping file source task for %s", self._log_name())
        self._stopping.set()
        with self._lock:
            if self._stream is not None:
                try:
                    self._stream.close()
                except OSError as exc:
                    log.error("Failed to close FileStreamSourceTask stream: %s", exc)
                self._stream = None
            self._lines = None

    # -- internals --------------------------------------------------------------------------------
    def _open(self) -> None:
        assert self._filename is not None
        try:
            stream = open(self._filename, "rb", buffering=0)  # noqa: SIM115 - closed in stop()
        except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as exc:
            level = logging.DEBUG if self._warned_missing else logging.WARNING
            log.log(
                level,
                "Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created (%s)",
                self._filename,
                exc.strerror,
            )
            self._warned_missing = True
            return
        try:
            position = self._stored_position()
            if position:
                log.debug("Found previous offset, trying to skip to file offset %d", position)
                stream.seek(position)
        except BaseException:
            stream.close()
            raise
        self._stream = stream
        self._lines = _LineBuffer(position or 0)
        log.debug("Opened %s for reading at byte %d", self._filename, position or 0)

    def _stored_position(self) -> int | None:
        reader = self.context.offset_storage_reader()
        offset = reader.offset({FILENAME_FIELD: self._filename}) if reader is not None else None
        if not offset:
            return None
        position = offset.get(POSITION_FIELD)
        if position is None:
            return None
        if not isinstance(position, int) or isinstance(position, bool):
            raise ConnectError("Offset position is the incorrect type")
        return position

    def _read_some(self) -> bytes:
        if self._stdin_fd is not None:
            if self._stdin_eof:
                return b""
            ready, _, _ = select.select([self._stdin_fd], [], [], 0)
            if not ready:
                return b""
            data = os.read(self._stdin_fd, self.READ_CHUNK)
            self._stdin_eof = not data
            return data
        chunk: bytes | None = self._stream.read(self.READ_CHUNK)
        return chunk or b""

    def _read_batch(self, lines: _LineBuffer) -> list[SourceRecord]:
        records: list[SourceRecord] = []
        partition = {FILENAME_FIELD: self._filename} if self._filename is not None else None
        while len(records) < self._batch_size:
            item = lines.next_line()
            if item is None:
                data = self._read_some()
                if not data:
                    break
                lines.feed(data)
                continue
            line, position = item
            records.append(
                SourceRecord(
                    topic=self._topic,
                    kafka_partition=None,
                    key_schema=None,
                    key=None,
                    value_schema=STRING_SCHEMA,
                    value=line,
                    timestamp=int(self._clock() * 1000),
                    source_partition=partition,
                    source_offset={POSITION_FIELD: position} if position is not None else None,
                )
            )
        return records

    def _log_name(self) -> str:
        return self._filename or "stdin"
