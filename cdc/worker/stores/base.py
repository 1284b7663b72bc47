"""The three storage concerns of a Connect worker, each behind a narrow interface.

* :class:`OffsetBackingStore` — source offsets as raw key/value bytes (keys ``["conn",{partition}]``).
* :class:`ConfigBackingStore` — connector configs, task configs, target states, restart requests,
  the session key; read as a :class:`ClusterConfigState` snapshot, changes announced to a listener.
* :class:`StatusBackingStore` — connector/task states and the topics each connector used; each status
  the store takes in (read back from the status topic, or written, in memory) is announced to a listener.

Each has a memory implementation (``memory.py``, standalone mode and unit tests), and Kafka
implementations over the internal topics in Connect's exact formats (``kafka.py``); offsets also have a
file implementation (``file.py``) that reads and writes the Java-serialized map Kafka Connect's
standalone worker keeps.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, TypedDict

__all__ = [
    "ClusterConfigState",
    "ConfigBackingStore",
    "ConfigUpdateListener",
    "ConnectorStatus",
    "OffsetBackingStore",
    "RestartRequest",
    "SessionKey",
    "State",
    "StatusBackingStore",
    "StatusListener",
    "TargetState",
    "TaskId",
    "TaskStatus",
    "TopicStatus",
]

_log = logging.getLogger(__name__)


class TargetState(str, Enum):
    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


class State(str, Enum):
    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    STOPPED = "STOPPED"
    DESTROYED = "DESTROYED"


class TaskIdJson(TypedDict):
    """A task's id in the REST API and the config topic's task records: ``{"connector", "task"}``."""

    connector: str
    task: int


@dataclass(frozen=True, order=True)
class TaskId:
    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"

    def to_json(self) -> TaskIdJson:
        return {"connector": self.connector, "task": self.task}


@dataclass(frozen=True)
class RestartRequest:
    connector: str
    only_failed: bool = False
    include_tasks: bool = False

    def restart_connector(self, state: State | None) -> bool:
        return not self.only_failed or state is State.FAILED

    def restart_task(self, state: State | None) -> bool:
        return self.include_tasks and (not self.only_failed or state is State.FAILED)


@dataclass(frozen=True)
class SessionKey:
    key: bytes
    algorithm: str
    creation_timestamp: int


@dataclass
class ClusterConfigState:
    """A consistent snapshot of the config topic, as of ``offset`` (the last record read)."""

    offset: int = -1
    session_key: SessionKey | None = None
    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    target_states: dict[str, TargetState] = field(default_factory=dict)
    task_configs: dict[TaskId, dict[str, str]] = field(default_factory=dict)
    task_counts: dict[str, int] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)
    task_config_generations: dict[str, int] = field(default_factory=dict)
    # Stored connectors whose names break :func:`cdc.worker.names.name_error`: alias -> name; never run.
    rejected: dict[str, str] = field(default_factory=dict)

    def connectors(self) -> list[str]:
        return sorted(self.connector_configs)

    def contains(self, connector: str) -> bool:
        return connector in self.connector_configs

    def rejected_name(self, connector: str) -> str | None:
        """The stored name a set-aside connector is addressed by (its own name or its alias), or None."""
        if connector in self.rejected.values():
            return connector
        return self.rejected.get(connector)

    def target_state(self, connector: str) -> TargetState | None:
        if connector not in self.connector_configs:
            return None
        return self.target_states.get(connector, TargetState.STARTED)

    def tasks(self, connector: str) -> list[TaskId]:
        if connector in self.inconsistent:
            return []
        return [TaskId(connector, i) for i in range(self.task_counts.get(connector, 0))]

    def task_config(self, task: TaskId) -> dict[str, str] | None:
        return self.task_configs.get(task)


class ConfigUpdateListener(Protocol):
    def on_connector_config_update(self, connector: str) -> None: ...
    def on_connector_config_remove(self, connector: str) -> None: ...
    def on_task_config_update(self, tasks: list[TaskId]) -> None: ...
    def on_connector_target_state_change(self, connector: str) -> None: ...
    def on_session_key_update(self, key: SessionKey) -> None: ...
    def on_restart_request(self, request: RestartRequest) -> None: ...
    def on_logging_level_update(self, namespace: str, level: str) -> None: ...


class OffsetBackingStore(ABC):
    """Raw offsets: ``get`` and ``set`` in bulk; ``set`` returns once the values are durable."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    @abstractmethod
    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]: ...

    @abstractmethod
    def set(self, values: Mapping[bytes, bytes | None], timeout: float = 30.0) -> None:
        """Store ``values`` (None deletes a key); raise if they could not be made durable in time."""

    @abstractmethod
    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        """Every source partition stored for ``connector`` (from the keys' JSON)."""

    def placement(self) -> Callable[[bytes], tuple[str, int]] | None:
        """Where the store writes a key, ``key -> (topic, partition)``, when it is a Kafka topic (an
        exactly-once task's transactional producer writes its offsets there itself); None otherwise."""
        return None


class ConfigBackingStore(ABC):
    def start(self) -> None: ...

    def stop(self) -> None: ...

    @abstractmethod
    def set_update_listener(self, listener: ConfigUpdateListener) -> None: ...

    @abstractmethod
    def snapshot(self) -> ClusterConfigState: ...

    @abstractmethod
    def put_connector_config(
        self, connector: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None: ...

    @abstractmethod
    def remove_connector_config(self, connector: str) -> None: ...

    @abstractmethod
    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None: ...

    @abstractmethod
    def put_target_state(self, connector: str, state: TargetState) -> None: ...

    def put_restart_request(self, request: RestartRequest) -> None:
        """Record a restart request (the distributed herder's way to reach every worker)."""

    def put_session_key(self, key: SessionKey) -> None: ...

    @abstractmethod
    def put_logger_level(self, namespace: str, level: str) -> None:
        """A log level for every worker sharing this store (``PUT /admin/loggers/{ns}?scope=cluster``)."""

    def refresh(self, timeout: float = 30.0) -> None:
        """Read to the end of the log (Kafka); nothing to do for memory."""


@dataclass(frozen=True)
class ConnectorStatus:
    connector: str
    state: State
    worker_id: str
    generation: int = 0
    trace: str | None = None


@dataclass(frozen=True)
class TaskStatus:
    id: TaskId
    state: State
    worker_id: str
    generation: int = 0
    trace: str | None = None


@dataclass(frozen=True)
class TopicStatus:
    topic: str
    connector: str
    task: int
    discover_timestamp: int = field(default_factory=lambda: int(time.time() * 1000))


StatusListener = Callable[[ConnectorStatus | TaskStatus], None]
"""Told of each connector or task status a :class:`StatusBackingStore` takes in (not of tombstones)."""


class StatusBackingStore(ABC):
    _status_listener: StatusListener | None = None

    def start(self) -> None: ...

    def stop(self) -> None: ...

    @abstractmethod
    def put(self, status: ConnectorStatus | TaskStatus) -> None: ...

    @abstractmethod
    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        """Write only if no other worker has written a newer generation (Connect's safe write)."""

    @abstractmethod
    def get(self, connector: str) -> ConnectorStatus | None: ...

    @abstractmethod
    def get_task(self, task: TaskId) -> TaskStatus | None: ...

    @abstractmethod
    def get_all(self, connector: str) -> list[TaskStatus]: ...

    @abstractmethod
    def connectors(self) -> set[str]: ...

    @abstractmethod
    def put_topic(self, status: TopicStatus) -> None: ...

    @abstractmethod
    def get_topic(self, connector: str, topic: str) -> TopicStatus | None: ...

    @abstractmethod
    def get_all_topics(self, connector: str) -> list[TopicStatus]: ...

    @abstractmethod
    def delete_topic(self, connector: str, topic: str) -> None: ...

    def flush(self) -> None: ...

    def set_update_listener(self, listener: StatusListener) -> None:
        """Tell ``listener`` of every connector or task status this store takes in from now on: each one
        read from the status topic (any worker's, this one's included, on the store's reader thread, so
        the listener must be quick and must not block), or each one written (memory). Call before
        :meth:`start` to be told of the statuses already stored as well."""
        self._status_listener = listener

    def _announce(self, status: ConnectorStatus | TaskStatus) -> None:
        listener = self._status_listener
        if listener is None:
            return
        try:
            listener(status)
        except Exception:  # a listener's bug must not stop the store from reading
            _log.exception("Status listener failed on %s", status)
