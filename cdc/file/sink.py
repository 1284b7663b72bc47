"""``FileStreamSink``: writes each record's value as a line to a file (or to standard output).

Compatible with ``org.apache.kafka.connect.file.FileStreamSinkConnector``: its one key is ``file``
(empty or absent = stdout); ``topics`` / ``topics.regex`` are the runtime's sink keys. Each value is
written as Java's ``PrintStream.println(value)`` writes it (see :mod:`cdc.file._java_text`), in UTF-8,
followed by ``\\n``; the file is opened for appending and created if missing.

Lines reach the operating system at the end of every ``put`` (Java's ``PrintStream`` hands each line to
the file at once, so ``tail -f`` users see them promptly); ``flush``, called before offsets are
committed, also ``fsync``s, so committed offsets never run ahead of what is on disk.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from cdc.api.connector import SinkConnector, SinkTask, Task, TopicPartition
from cdc.api.errors import ConnectError
from cdc.api.records import SinkRecord
from cdc.config import ConfigDef, ConfigType, Importance
from cdc.file._java_text import java_to_string

__all__ = ["FILE_CONFIG", "SINK_CONFIG_DEF", "FileStreamSinkConnector", "FileStreamSinkTask"]

log = logging.getLogger(__name__)

FILE_CONFIG = "file"

SINK_CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    ConfigType.STRING,
    None,
    importance=Importance.HIGH,
    documentation="Destination filename. If not specified, the standard output will be used",
)


class FileStreamSinkConnector(SinkConnector):
    """Hands its config to ``tasks.max`` tasks (all append to the same file, as in Kafka)."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def start(self, props: dict[str, str]) -> None:
        SINK_CONFIG_DEF.parse(props)
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to do: the connector has no background work."""

    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[Any, Any]) -> bool:
        return True  # sink offsets are consumer offsets; the runtime checks them


class FileStreamSinkTask(SinkTask):
    """Appends values as lines. ``output`` (tests, embedding) replaces the file and stdout."""

    # The ``task.class`` Connect writes into the task configs (GET /connectors/{n}/tasks, config topic).
    JAVA_NAME = "org.apache.kafka.connect.file.FileStreamSinkTask"

    def __init__(self, output: IO[bytes] | None = None) -> None:
        self._given_output = output
        self._out: IO[bytes] | None = output
        self._owns_out = False
        self._filename: str | None = None

    def start(self, props: dict[str, str]) -> None:
        parsed = SINK_CONFIG_DEF.parse(props)
        self._filename = parsed[FILE_CONFIG] or None
        if self._given_output is not None:
            self._out, self._owns_out = self._given_output, False
        elif self._filename is None:
            self._out, self._owns_out = sys.stdout.buffer, False
        else:
            try:
                self._out = open(self._filename, "ab")  # noqa: SIM115 - closed in stop()
            except OSError as exc:
                raise ConnectError(
                    f"Couldn't find or create file '{self._filename}' for FileStreamSinkTask"
                ) from exc
            self._owns_out = True

    def put(self, records: list[SinkRecord]) -> None:
        out = self._require_output()
        for record in records:
            log.log(5, "Writing line to %s: %s", self._log_name(), record.value)
            out.write(java_to_string(record.value, record.value_schema).encode("utf-8") + b"\n")
        out.flush()

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        out = self._require_output()
        log.debug("Flushing output stream for %s", self._log_name())
        out.flush()
        if self._owns_out:
            os.fsync(out.fileno())

    def stop(self) -> None:
        if self._out is not None and self._owns_out:
            self._out.close()
        self._out = None

    def _require_output(self) -> IO[bytes]:
        if self._out is None:
            raise ConnectError("FileStreamSinkTask is not started")
        return self._out

    def _log_name(self) -> str:
        return self._filename or "stdout"
