"""The records of the config and status topics, as pure functions of their keys and values.

Keys are UTF-8 strings and values the compact JSON of Connect's worker-internal ``JsonConverter`` with
``schemas.enable=false``: struct fields in the order of Connect's schemas (``CONNECTOR_CONFIGURATION_V0``,
``TARGET_STATE_V1``, ``STATUS_SCHEMA_V0``, ...), no spaces, non-ASCII written as UTF-8, absent optional
fields written as ``null``. Kafka's own readers parse these bytes, so they must match exactly.

Nothing here touches Kafka: the stores (memory and Kafka) and the unit tests share these functions.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from cdc.api.errors import DataError
from cdc.worker.stores.base import (
    ConnectorStatus,
    RestartRequest,
    SessionKey,
    State,
    TargetState,
    TaskId,
    TaskStatus,
    TopicStatus,
)

__all__ = [
    "COMMIT_TASKS_PREFIX",
    "CONNECTOR_PREFIX",
    "CONNECTOR_STATUS_PREFIX",
    "LOGGER_CLUSTER_PREFIX",
    "RESTART_PREFIX",
    "SESSION_KEY_KEY",
    "TARGET_STATE_PREFIX",
    "TASK_COUNT_RECORD_PREFIX",
    "TASK_PREFIX",
    "TASK_STATUS_PREFIX",
    "TOPIC_STATUS_PREFIX",
    "TOPIC_STATUS_SEPARATOR",
    "can_write_safely",
    "commit_key",
    "connector_key",
    "connector_status_key",
    "decode_connector_status",
    "decode_json",
    "decode_logger_level",
    "decode_properties",
    "decode_restart_request",
    "decode_session_key",
    "decode_target_state",
    "decode_task_count",
    "decode_task_status",
    "decode_topic_status",
    "dumps",
    "encode_commit",
    "encode_config",
    "encode_logger_level",
    "encode_restart_request",
    "encode_session_key",
    "encode_status",
    "encode_target_state",
    "encode_task_count",
    "encode_topic_status",
    "logger_key",
    "parse_connector_status_key",
    "parse_task_key",
    "parse_task_status_key",
    "parse_topic_status_key",
    "restart_key",
    "target_state_key",
    "task_key",
    "task_status_key",
    "topic_status_key",
]

# ----------------------------------------------------------------------------------------- config topic
TARGET_STATE_PREFIX = "target-state-"
CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
RESTART_PREFIX = "restart-connector-"
TASK_COUNT_RECORD_PREFIX = "tasks-fencing-"
LOGGER_CLUSTER_PREFIX = "logger-cluster-"
SESSION_KEY_KEY = "session-key"

# ----------------------------------------------------------------------------------------- status topic
CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"


def dumps(value: Any) -> bytes:
    """Compact JSON as Jackson writes it: no spaces, UTF-8, insertion order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode_json(raw: bytes | None) -> Any:
    """The JSON value of a record (None for a tombstone); DataError if it is not JSON."""
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise DataError(f"Record value is not JSON: {raw[:200]!r}") from exc


def _as_map(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


# ---------------------------------------------------------------------------------------------- keys


def connector_key(connector: str) -> str:
    return CONNECTOR_PREFIX + connector


def task_key(task: TaskId) -> str:
    return f"{TASK_PREFIX}{task.connector}-{task.task}"


def commit_key(connector: str) -> str:
    return COMMIT_TASKS_PREFIX + connector


def target_state_key(connector: str) -> str:
    return TARGET_STATE_PREFIX + connector


def restart_key(connector: str) -> str:
    return RESTART_PREFIX + connector


def _parse_trailing_task(rest: str) -> TaskId | None:
    # Connect splits on "-" and takes the last part as the task number, so connector names may hold dashes.
    connector, sep, number = rest.rpartition("-")
    if not sep:
        return None
    try:
        return TaskId(connector, int(number))
    except ValueError:
        return None


def parse_task_key(key: str) -> TaskId | None:
    """``task-<connector>-<n>`` → TaskId, or None when the key is malformed."""
    if not key.startswith(TASK_PREFIX):
        return None
    return _parse_trailing_task(key[len(TASK_PREFIX) :])


def connector_status_key(connector: str) -> str:
    return CONNECTOR_STATUS_PREFIX + connector


def task_status_key(task: TaskId) -> str:
    return f"{TASK_STATUS_PREFIX}{task.connector}-{task.task}"


def topic_status_key(topic: str, connector: str) -> str:
    return f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}"


def parse_connector_status_key(key: str) -> str | None:
    name = key[len(CONNECTOR_STATUS_PREFIX) :] if key.startswith(CONNECTOR_STATUS_PREFIX) else ""
    return name or None


def parse_task_status_key(key: str) -> TaskId | None:
    if not key.startswith(TASK_STATUS_PREFIX):
        return None
    return _parse_trailing_task(key[len(TASK_STATUS_PREFIX) :])


def parse_topic_status_key(key: str) -> tuple[str, str] | None:
    """``status-topic-<topic>:connector-<connector>`` → (topic, connector); topic names cannot hold ':'."""
    if not key.startswith(TOPIC_STATUS_PREFIX):
        return None
    topic, sep, connector = key[len(TOPIC_STATUS_PREFIX) :].partition(TOPIC_STATUS_SEPARATOR)
    if not sep or not topic or not connector:
        return None
    return topic, connector


# ------------------------------------------------------------------------------------- config values


def encode_config(properties: Mapping[str, str]) -> bytes:
    """A ``connector-<n>`` or ``task-<n>-<i>`` value: ``{"properties":{..}}``."""
    return dumps({"properties": dict(properties)})


def encode_commit(task_count: int) -> bytes:
    return dumps({"tasks": task_count})


def encode_target_state(state: TargetState) -> bytes:
    # Workers before Kafka 3.5 know only STARTED and PAUSED in "state": a STOPPED connector pauses there.
    legacy = TargetState.PAUSED if state is TargetState.STOPPED else state
    return dumps({"state": legacy.value, "state.v2": state.value})


def encode_session_key(key: SessionKey) -> bytes:
    return dumps(
        {
            "key": base64.b64encode(key.key).decode("ascii"),
            "algorithm": key.algorithm,
            "creation-timestamp": key.creation_timestamp,
        }
    )


def encode_restart_request(request: RestartRequest) -> bytes:
    return dumps({"include-tasks": request.include_tasks, "only-failed": request.only_failed})


def logger_key(namespace: str) -> str:
    return LOGGER_CLUSTER_PREFIX + namespace


def encode_logger_level(level: str) -> bytes:
    """KIP-976's ``logger-cluster-<namespace>`` value."""
    return dumps({"level": level})


def decode_logger_level(value: Any) -> str:
    level = _as_map(value, "logger level").get("level")
    if not isinstance(level, str):
        raise DataError(f"logger level: 'level' must be a string, not {type(level).__name__}")
    return level


def encode_task_count(task_count: int) -> bytes:
    return dumps({"task-count": task_count})


def decode_properties(value: Any, what: str) -> dict[str, str]:
    """The ``properties`` map of a connector or task record (values as strings; nulls dropped)."""
    props = _as_map(value, what).get("properties")
    if not isinstance(props, dict):
        raise DataError(f"{what}: 'properties' must be a JSON object, not {type(props).__name__}")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in props.items() if v is not None}


def decode_task_count(value: Any, field: str, what: str) -> int:
    count = _as_map(value, what).get(field)
    if isinstance(count, bool) or not isinstance(count, int):
        raise DataError(f"{what}: '{field}' must be an integer, not {count!r}")
    return count


def decode_target_state(value: Any) -> TargetState:
    """``state.v2`` when a newer worker wrote it, else the older ``state`` field."""
    data = _as_map(value, "target state")
    state = data.get("state.v2")
    if not isinstance(state, str):
        state = data.get("state")
    if not isinstance(state, str):
        raise DataError(f"target state has no 'state' string: {data!r}")
    try:
        return TargetState(state)
    except ValueError as exc:
        raise DataError(f"unknown target state {state!r}") from exc


def decode_session_key(value: Any) -> SessionKey:
    data = _as_map(value, "session key")
    key, algorithm, created = data.get("key"), data.get("algorithm"), data.get("creation-timestamp")
    if not isinstance(key, str) or not isinstance(algorithm, str):
        raise DataError("session key needs string 'key' and 'algorithm' fields")
    if isinstance(created, bool) or not isinstance(created, int):
        raise DataError(f"session key 'creation-timestamp' must be an integer, not {created!r}")
    try:
        raw = base64.b64decode(key, validate=True)
    except ValueError as exc:
        raise DataError("session key 'key' is not base64") from exc
    return SessionKey(raw, algorithm, created)


def decode_restart_request(connector: str, value: Any) -> RestartRequest:
    data = _as_map(value, "restart request")
    # Connect defaults a missing or non-boolean flag to false rather than dropping the request.
    only_failed = data.get("only-failed")
    include_tasks = data.get("include-tasks")
    return RestartRequest(
        connector,
        only_failed=only_failed if isinstance(only_failed, bool) else False,
        include_tasks=include_tasks if isinstance(include_tasks, bool) else False,
    )


# ------------------------------------------------------------------------------------- status values


def encode_status(status: ConnectorStatus | TaskStatus) -> bytes | None:
    """The status record value; DESTROYED is a tombstone (None)."""
    if status.state is State.DESTROYED:
        return None
    return dumps(
        {
            "state": status.state.value,
            "trace": status.trace,
            "worker_id": status.worker_id,
            "generation": status.generation,
        }
    )


def encode_topic_status(status: TopicStatus) -> bytes:
    return dumps(
        {
            "topic": {
                "name": status.topic,
                "connector": status.connector,
                "task": status.task,
                "discoverTimestamp": status.discover_timestamp,
            }
        }
    )


def _status_fields(value: Any) -> tuple[State, str | None, str, int]:
    data = _as_map(value, "status")
    try:
        state = State(data.get("state"))
    except ValueError as exc:
        raise DataError(f"unknown status state {data.get('state')!r}") from exc
    trace = data.get("trace")
    worker_id = data.get("worker_id")
    generation = data.get("generation")
    if not isinstance(worker_id, str):
        raise DataError(f"status 'worker_id' must be a string, not {worker_id!r}")
    if isinstance(generation, bool) or not isinstance(generation, int):
        raise DataError(f"status 'generation' must be an integer, not {generation!r}")
    return state, trace if isinstance(trace, str) else None, worker_id, generation


def decode_connector_status(connector: str, value: Any) -> ConnectorStatus:
    state, trace, worker_id, generation = _status_fields(value)
    return ConnectorStatus(connector, state, worker_id, generation, trace)


def decode_task_status(task: TaskId, value: Any) -> TaskStatus:
    state, trace, worker_id, generation = _status_fields(value)
    return TaskStatus(task, state, worker_id, generation, trace)


def decode_topic_status(value: Any) -> TopicStatus:
    inner = _as_map(value, "topic status").get("topic")
    data = _as_map(inner, "topic status 'topic'")
    name, connector, task, ts = (data.get(k) for k in ("name", "connector", "task", "discoverTimestamp"))
    if not isinstance(name, str) or not isinstance(connector, str):
        raise DataError(f"topic status needs string 'name' and 'connector': {data!r}")
    if isinstance(task, bool) or not isinstance(task, int) or isinstance(ts, bool) or not isinstance(ts, int):
        raise DataError(f"topic status needs integer 'task' and 'discoverTimestamp': {data!r}")
    return TopicStatus(name, connector, task, ts)


def can_write_safely(
    previous: ConnectorStatus | TaskStatus | None, new: ConnectorStatus | TaskStatus
) -> bool:
    """Connect's safe-write rule: no previous status, the same worker wrote it, or ours is not older.

    Kafka's ``KafkaStatusBackingStore.CacheEntry.canWriteSafely`` compares ``previous.generation <=
    new.generation``: a worker of the same generation may overwrite another's status (both saw the same
    assignment), only an older generation is refused.
    """
    return previous is None or previous.worker_id == new.worker_id or previous.generation <= new.generation
