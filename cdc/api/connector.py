"""Connectors and tasks: the plugin API a source or sink implements.

A connector splits its job into task configs; the runtime runs one task per config, each in its own
thread. ``SourceTask.poll`` returns a batch (or None when there is nothing yet, so pausing and stopping
stay responsive); ``stop`` is called from another thread and must make ``poll`` return soon.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from cdc.api.records import SinkRecord, SourceRecord

if TYPE_CHECKING:
    from cdc.config.definition import ConfigDef, ConfigValue

__all__ = [
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "ErrantRecordReporter",
    "ExactlyOnceSupport",
    "FileUse",
    "OffsetStorageReader",
    "SinkConnector",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceTask",
    "SourceTaskContext",
    "Task",
    "TopicPartition",
    "TransactionContext",
]


Partition = Mapping[str, Any]
Offset = Mapping[str, Any]


class OffsetStorageReader(ABC):
    """Reads the committed source offsets of the connector the task belongs to."""

    @abstractmethod
    def offsets(self, partitions: Sequence[Partition]) -> dict[str, dict[str, Any]]:
        """Offsets by the canonical JSON of each partition (missing partitions are left out)."""

    def offset(self, partition: Partition) -> dict[str, Any] | None:
        from cdc.api.offsets import partition_key

        return self.offsets([partition]).get(partition_key(partition))


class ConnectorContext(ABC):
    """What a connector may ask of the runtime."""

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call ``task_configs`` again (e.g. a new table appeared)."""

    @abstractmethod
    def raise_error(self, error: BaseException) -> None:
        """Fail the connector from a background thread of its own."""

    def offset_storage_reader(self) -> OffsetStorageReader | None:
        return None


class ExactlyOnceSupport(str, Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(str, Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


@dataclass(frozen=True)
class FileUse:
    """A file or directory a connector config makes the worker open, create or write: ``path`` as the
    config gives it (relative paths are the worker's working directory's), named by ``key``."""

    key: str
    path: str


class Task(ABC):
    """Common to source and sink tasks."""

    def version(self) -> str:
        from cdc import __version__

        return __version__

    @abstractmethod
    def start(self, props: dict[str, str]) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    def progress(self) -> Mapping[str, Any]:
        """Hook: long-running work beyond the task's state (a MySQL task's incremental snapshot), added to
        the task's entry in the REST status while it lasts. JSON values under keys of the task's own, never
        Connect's (``id``, ``state``, ``worker_id``, ``trace``: the worker drops those). Called from the
        REST threads, so it only reads. Nothing by default."""
        return {}


class Connector(ABC):
    """A connector instance: configures itself and splits its work into task configs."""

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    def version(self) -> str:
        from cdc import __version__

        return __version__

    @abstractmethod
    def start(self, props: dict[str, str]) -> None: ...

    @abstractmethod
    def task_class(self) -> type[Task]: ...

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def config(self) -> ConfigDef: ...

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        """Per-key validation; connectors add cross-key checks by extending the result."""
        return self.config().validate(props)

    def files(self, props: Mapping[str, str]) -> list[FileUse]:
        """The files and directories ``props`` make the connector or its tasks open, create or write on the
        worker's file system (a signal file, a file-based schema history, an SQLite database). The worker
        confines them to ``connector.file.allowed.paths`` at validate, create and start
        (:mod:`cdc.worker.file_paths`), so a connector that names none here must open none. Called on
        configs that may not validate: never raises for a bad value, leaves such a key out."""
        return []

    def validate_in_group(
        self, props: Mapping[str, str], others: Mapping[str, Mapping[str, str]]
    ) -> dict[str, list[str]]:
        """Errors by key that only the worker group can see: ``others`` holds the configs of the group's
        other connectors by name (the one validated excluded). Called by validate and create after
        :meth:`validate` found no error; none by default (Connect has no such check)."""
        return {}


class SourceConnector(Connector):
    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        return None

    def can_define_transaction_boundaries(self, props: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def validate_offset(
        self, props: Mapping[str, str], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> bool:
        """Hook: refuse an offset given over REST that the connector could not resume from, raising
        :class:`~cdc.api.errors.InvalidOffsetError` naming the field; True when it was checked. The
        default checks nothing."""
        return False

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[str, Any]) -> bool:
        """Called before offsets are altered over REST (keys: partitions as JSON text); False means "not
        checked by the connector". The default runs :meth:`validate_offset` on each offset that is not
        a tombstone."""
        checked = False
        for raw, offset in offsets.items():
            if offset is None:
                continue
            partition = json.loads(raw) if isinstance(raw, str) else raw
            checked = self.validate_offset(props, partition or {}, offset) or checked
        return checked


class SinkConnector(Connector):
    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[str, Any]) -> bool:
        return False


class TransactionContext(ABC):
    """Lets a connector-defined transaction boundary be drawn (KIP-618)."""

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None: ...

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None: ...


class SourceTaskContext(ABC):
    @abstractmethod
    def configs(self) -> dict[str, str]: ...

    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader: ...

    def transaction_context(self) -> TransactionContext | None:
        return None

    def task_index(self) -> int:
        """Which of its connector's tasks this is (0, 1, …): what Connect's task metrics are labelled with.
        0 outside a worker."""
        return 0

    def worker_client_config(self) -> dict[str, str]:
        """The worker's settings for a task that writes to Kafka itself as the worker would (the MySQL
        snapshot on Spark): its converters for a connector that names none (class and ``<role>.``
        sub-settings), ``bootstrap.servers``, the settings all its clients share (security, SASL, SSL …)
        and ``producer.*``. Empty outside a worker. Never part of the task's config, so never stored nor
        shown."""
        return {}

    def file_refusal(self, path: str) -> str | None:
        """Why the worker's ``connector.file.allowed.paths`` forbids opening ``path``, or None when it
        allows it: for a file a task learns of only at run time (one named inside a file its config names,
        such as the OpenLineage client's log). None outside a worker."""
        return None


class SourceTask(Task):
    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """The next batch of records, or None when there is nothing yet (wait a little inside)."""

    def commit(self) -> None:
        """Offsets of everything returned so far have been committed."""

    def commit_record(self, record: SourceRecord, metadata: Any | None) -> None:
        """``record`` has been acknowledged by Kafka (``metadata`` None if a transform dropped it)."""


TopicPartition = tuple[str, int]


class ErrantRecordReporter(ABC):
    """KIP-610's reporter: a sink task hands it a record it could not write, with the reason.

    The runtime applies the connector's ``errors.tolerance``: with ``all`` the record goes to the dead
    letter queue (when one is configured) and ``report`` returns, so the task goes on without it; with
    ``none`` ``report`` raises, and the task fails naming the record. Synchronous: when it returns, the
    record is in the dead letter queue, so the task may commit past it."""

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> None: ...


class SinkTaskContext(ABC):
    @abstractmethod
    def configs(self) -> dict[str, str]: ...

    def offset(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Ask the runtime to rewind consumption to these offsets."""

    def request_commit(self) -> None:
        """Ask the runtime to commit offsets soon."""

    def assignment(self) -> set[TopicPartition]:
        return set()

    def pause(self, *partitions: TopicPartition) -> None: ...

    def resume(self, *partitions: TopicPartition) -> None: ...

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for records ``put`` cannot write (None outside a worker: the task then fails)."""
        return None


class SinkTask(Task):
    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    @abstractmethod
    def put(self, records: list[SinkRecord]) -> None: ...

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Make everything ``put`` so far durable."""

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> Mapping[TopicPartition, int]:
        self.flush(offsets)
        return offsets

    def open(self, partitions: list[TopicPartition]) -> None: ...

    def close(self, partitions: list[TopicPartition]) -> None: ...
