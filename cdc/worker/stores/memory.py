"""In-memory stores: standalone mode (configs, statuses) and unit tests (all three).

They follow Kafka's ``Memory*BackingStore`` classes, with two deliberate differences: status ``put_safe``
applies the same safe-write rule as the Kafka store (so herder tests see the real behaviour), and the
config snapshot's ``offset`` counts the writes (so a herder comparing offsets sees them move).
The config store calls its listener synchronously, on the writing thread, after its lock is released.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from cdc.api.errors import DataError, NotFoundError
from cdc.api.offsets import parse_offset_key, partition_key
from cdc.worker.stores.base import (
    ClusterConfigState,
    ConfigBackingStore,
    ConfigUpdateListener,
    ConnectorStatus,
    OffsetBackingStore,
    RestartRequest,
    SessionKey,
    State,
    StatusBackingStore,
    TargetState,
    TaskId,
    TaskStatus,
    TopicStatus,
)
from cdc.worker.stores.records import can_write_safely

__all__ = [
    "MemoryConfigBackingStore",
    "MemoryOffsetBackingStore",
    "MemoryStatusBackingStore",
    "RecordingConfigListener",
]


class MemoryOffsetBackingStore(OffsetBackingStore):
    """Offsets in a dict of raw key/value bytes; ``set`` with a None value deletes the key."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._data: dict[bytes, bytes] = {}

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            return {key: self._data.get(key) for key in keys}

    def set(self, values: Mapping[bytes, bytes | None], timeout: float = 30.0) -> None:
        with self._lock:
            merged = _apply(self._data, values)
            self._persist(merged)  # raises before the store changes if the values cannot be kept
            self._data = merged

    def _persist(self, data: Mapping[bytes, bytes]) -> None:
        """Make ``data`` durable (nothing to do in memory; the file store writes its file)."""

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        with self._lock:
            return partitions_of(connector, self._data)

    def snapshot(self) -> dict[bytes, bytes]:
        """Every stored key and value (for tools and tests)."""
        with self._lock:
            return dict(self._data)


def _apply(data: Mapping[bytes, bytes], values: Mapping[bytes, bytes | None]) -> dict[bytes, bytes]:
    merged = dict(data)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def partitions_of(connector: str, keys: Mapping[bytes, object]) -> list[dict[str, Any]]:
    """The source partitions of ``connector`` among offset keys (other keys are skipped)."""
    found: dict[str, dict[str, Any]] = {}
    for key in keys:
        try:
            name, partition = parse_offset_key(key)
        except DataError:
            continue
        if name == connector and partition is not None:
            found.setdefault(partition_key(partition), partition)
    return list(found.values())


class MemoryConfigBackingStore(ConfigBackingStore):
    """Connector configs, task configs and target states in memory (standalone mode)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._state = ClusterConfigState(offset=-1)
        self._writes = 0
        self._listener: ConfigUpdateListener | None = None

    def set_update_listener(self, listener: ConfigUpdateListener) -> None:
        self._listener = listener

    def put_logger_level(self, namespace: str, level: str) -> None:
        # One worker shares this store: the level is applied here, as the Kafka store's readers apply it.
        if self._listener is not None:
            self._listener.on_logging_level_update(namespace, level)

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            s = self._state
            return ClusterConfigState(
                offset=s.offset,
                session_key=s.session_key,
                connector_configs={k: dict(v) for k, v in s.connector_configs.items()},
                target_states=dict(s.target_states),
                task_configs={k: dict(v) for k, v in s.task_configs.items()},
                task_counts=dict(s.task_counts),
                inconsistent=set(s.inconsistent),
                task_config_generations=dict(s.task_config_generations),
            )

    def _bump(self) -> None:
        self._writes += 1
        self._state.offset = self._writes

    def put_connector_config(
        self, connector: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        with self._lock:
            s = self._state
            s.connector_configs[connector] = dict(config)
            if target_state is not None:
                s.target_states[connector] = target_state
            else:
                s.target_states.setdefault(connector, TargetState.STARTED)
            self._bump()
        if self._listener is not None:
            self._listener.on_connector_config_update(connector)

    def remove_connector_config(self, connector: str) -> None:
        with self._lock:
            s = self._state
            existed = s.connector_configs.pop(connector, None) is not None
            s.target_states.pop(connector, None)
            s.task_counts.pop(connector, None)
            s.inconsistent.discard(connector)
            for task in [t for t in s.task_configs if t.connector == connector]:
                del s.task_configs[task]
            self._bump()
        if existed and self._listener is not None:
            self._listener.on_connector_config_remove(connector)

    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        with self._lock:
            s = self._state
            if connector not in s.connector_configs:
                raise NotFoundError(f"Cannot put task configs for connector {connector}: it does not exist")
            for task in [t for t in s.task_configs if t.connector == connector]:
                del s.task_configs[task]
            tasks = [TaskId(connector, i) for i in range(len(configs))]
            for task, config in zip(tasks, configs, strict=True):
                s.task_configs[task] = dict(config)
            s.task_counts[connector] = len(configs)
            s.inconsistent.discard(connector)
            generation = s.task_config_generations.get(connector)
            s.task_config_generations[connector] = 0 if generation is None else generation + 1
            self._bump()
        if self._listener is not None:
            self._listener.on_task_config_update(tasks)

    def put_target_state(self, connector: str, state: TargetState) -> None:
        with self._lock:
            if connector not in self._state.connector_configs:
                raise NotFoundError(f"Cannot set the target state of {connector}: no such connector")
            self._state.target_states[connector] = state
            self._bump()
        if self._listener is not None:
            self._listener.on_connector_target_state_change(connector)

    def put_restart_request(self, request: RestartRequest) -> None:
        """Nothing to record: a standalone herder restarts directly (as Kafka's memory store does)."""

    def put_session_key(self, key: SessionKey) -> None:
        with self._lock:
            self._state.session_key = key
            self._bump()
        if self._listener is not None:
            self._listener.on_session_key_update(key)


class MemoryStatusBackingStore(StatusBackingStore):
    """Connector, task and topic statuses in memory; DESTROYED removes a status, as a tombstone would."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._connectors: dict[str, ConnectorStatus] = {}
        self._tasks: dict[str, dict[int, TaskStatus]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}

    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        self._write(status, safe=False)

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        self._write(status, safe=True)

    def _write(self, status: ConnectorStatus | TaskStatus, safe: bool) -> None:
        if self._store(status, safe) and status.state is not State.DESTROYED:
            self._announce(status)

    def _store(self, status: ConnectorStatus | TaskStatus, safe: bool) -> bool:
        """Keep ``status``; False if a safe write lost to a newer one."""
        with self._lock:
            if isinstance(status, ConnectorStatus):
                if safe and not can_write_safely(self._connectors.get(status.connector), status):
                    return False
                if status.state is State.DESTROYED:
                    # As the Kafka store reads a connector tombstone: the connector's tasks go too.
                    self._connectors.pop(status.connector, None)
                    self._tasks.pop(status.connector, None)
                else:
                    self._connectors[status.connector] = status
            else:
                tasks = self._tasks.setdefault(status.id.connector, {})
                if safe and not can_write_safely(tasks.get(status.id.task), status):
                    return False
                if status.state is State.DESTROYED:
                    tasks.pop(status.id.task, None)
                else:
                    tasks[status.id.task] = status
        return True

    def get(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            return self._connectors.get(connector)

    def get_task(self, task: TaskId) -> TaskStatus | None:
        with self._lock:
            return self._tasks.get(task.connector, {}).get(task.task)

    def get_all(self, connector: str) -> list[TaskStatus]:
        with self._lock:
            tasks = self._tasks.get(connector, {})
            return [tasks[i] for i in sorted(tasks)]

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self._connectors)

    def put_topic(self, status: TopicStatus) -> None:
        with self._lock:
            self._topics.setdefault(status.connector, {})[status.topic] = status

    def get_topic(self, connector: str, topic: str) -> TopicStatus | None:
        with self._lock:
            return self._topics.get(connector, {}).get(topic)

    def get_all_topics(self, connector: str) -> list[TopicStatus]:
        with self._lock:
            return list(self._topics.get(connector, {}).values())

    def delete_topic(self, connector: str, topic: str) -> None:
        with self._lock:
            self._topics.get(connector, {}).pop(topic, None)


class RecordingConfigListener:
    """A :class:`ConfigUpdateListener` that records each call as ``(kind, argument)``: the in-memory twin
    the config stores' tests listen with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def on_connector_config_update(self, connector: str) -> None:
        self.calls.append(("update", connector))

    def on_connector_config_remove(self, connector: str) -> None:
        self.calls.append(("remove", connector))

    def on_task_config_update(self, tasks: list[TaskId]) -> None:
        self.calls.append(("tasks", tasks))

    def on_connector_target_state_change(self, connector: str) -> None:
        self.calls.append(("target", connector))

    def on_session_key_update(self, key: SessionKey) -> None:
        self.calls.append(("session", key))

    def on_restart_request(self, request: RestartRequest) -> None:
        self.calls.append(("restart", request))

    def on_logging_level_update(self, namespace: str, level: str) -> None:
        self.calls.append(("logger", (namespace, level)))
