"""The config topic read as a log: each record applied in order to a :class:`ConfigLog`.

This is the reading half of Kafka's ``KafkaConfigBackingStore`` without Kafka: the Kafka store feeds it
records from its reader thread, unit tests feed it records directly. Rules (as Kafka 3.9 applies them):

* ``connector-<n>``: the config, or a tombstone that forgets the connector with its task configs.
* ``task-<n>-<i>``: buffered ("deferred") until a ``commit-<n>`` arrives.
* ``commit-<n>`` ``{"tasks":N}``: applies the buffered task configs when ``task-<n>-0..N-1`` are all there,
  else marks the connector *inconsistent* (compaction removed some; the leader must regenerate them).
  A commit for a connector without a config is ignored (its config and tombstone were compacted away).
* ``target-state-<n>``: ``state.v2`` if present, else ``state``; a tombstone reverts to STARTED if the
  connector still exists.
* ``session-key``, ``restart-connector-<n>``, ``tasks-fencing-<n>``;
* ``logger-cluster-<ns>`` ``{"level":L}`` (KIP-976): a level for every worker, applied when read after
  start-up.

Listener callbacks are returned, not made, so the store can call them outside its lock; none are
returned before :attr:`ConfigLog.started` is set (the first read to the end of the topic), as in Connect.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from cdc.api.errors import DataError
from cdc.worker.names import alias, name_error, printable
from cdc.worker.stores import records as r
from cdc.worker.stores.base import (
    ClusterConfigState,
    ConfigUpdateListener,
    SessionKey,
    TargetState,
    TaskId,
)

__all__ = ["ConfigLog", "Notification"]

log = logging.getLogger(__name__)

Notification = Callable[[ConfigUpdateListener], None]


class ConfigLog:
    """The state built from the config topic's records; not thread-safe (the store locks around it)."""

    def __init__(self) -> None:
        self.started = False
        self.offset = -1
        self.session_key: SessionKey | None = None
        self.connector_configs: dict[str, dict[str, str]] = {}
        self.target_states: dict[str, TargetState] = {}
        self.task_configs: dict[TaskId, dict[str, str]] = {}
        self.task_counts: dict[str, int] = {}
        self.inconsistent: set[str] = set()
        self.task_config_generations: dict[str, int] = {}
        self.task_count_records: dict[str, int] = {}
        self.deferred: dict[str, dict[TaskId, dict[str, str]]] = {}
        self.rejected: dict[str, str] = {}

    def snapshot(self) -> ClusterConfigState:
        return ClusterConfigState(
            offset=self.offset,
            session_key=self.session_key,
            connector_configs={k: dict(v) for k, v in self.connector_configs.items()},
            target_states=dict(self.target_states),
            task_configs={k: dict(v) for k, v in self.task_configs.items()},
            task_counts=dict(self.task_counts),
            inconsistent=set(self.inconsistent),
            task_config_generations=dict(self.task_config_generations),
            rejected=dict(self.rejected),
        )

    def apply(self, key: str, raw: bytes | None, offset: int) -> list[Notification]:
        """Apply one record; return the listener calls it causes. Bad records are logged and skipped."""
        try:
            value = r.decode_json(raw)
        except DataError as exc:
            log.error("Skipping config record %r at offset %d: %s", key, offset, exc)
            return []
        # Connect's config offset is the position after the last record read (record offset + 1).
        self.offset = offset + 1
        try:
            return self._dispatch(key, value)
        except DataError as exc:
            log.error("Skipping config record %r at offset %d: %s", key, offset, exc)
            return []

    def _dispatch(self, key: str, value: object) -> list[Notification]:
        if key.startswith(r.TARGET_STATE_PREFIX):
            return self._target_state(key[len(r.TARGET_STATE_PREFIX) :], value)
        if key.startswith(r.CONNECTOR_PREFIX):
            return self._connector(key[len(r.CONNECTOR_PREFIX) :], value)
        if key.startswith(r.TASK_PREFIX):
            task = r.parse_task_key(key)
            if task is None:
                log.error("Ignoring task configuration with malformed key %r", key)
            elif value is None:
                log.error("Ignoring task configuration for %s because it is unexpectedly null", task)
            else:
                self.deferred.setdefault(task.connector, {})[task] = r.decode_properties(value, key)
            return []
        if key.startswith(r.COMMIT_TASKS_PREFIX):
            return self._commit(key[len(r.COMMIT_TASKS_PREFIX) :], value)
        if key.startswith(r.RESTART_PREFIX):
            if value is None:
                return []
            request = r.decode_restart_request(key[len(r.RESTART_PREFIX) :], value)
            return self._notify(lambda listener: listener.on_restart_request(request))
        if key.startswith(r.TASK_COUNT_RECORD_PREFIX):
            if value is not None:
                connector = key[len(r.TASK_COUNT_RECORD_PREFIX) :]
                self.task_count_records[connector] = r.decode_task_count(value, "task-count", key)
            return []
        if key == r.SESSION_KEY_KEY:
            if value is None:
                log.error("Ignoring session key because it is unexpectedly null")
                return []
            session_key = r.decode_session_key(value)
            self.session_key = session_key
            return self._notify(lambda listener: listener.on_session_key_update(session_key))
        if key.startswith(r.LOGGER_CLUSTER_PREFIX):
            # KIP-976: applied when read after start-up; older records are history (Connect ignores them too).
            if value is None or not self.started:
                return []
            namespace, level = key[len(r.LOGGER_CLUSTER_PREFIX) :], r.decode_logger_level(value)
            return [lambda listener: listener.on_logging_level_update(namespace, level)]
        log.error("Discarding config record with unknown key %r", key)
        return []

    def _notify(self, call: Notification) -> list[Notification]:
        return [call] if self.started else []

    def _target_state(self, connector: str, value: object) -> list[Notification]:
        if value is None:
            # Deletes write this tombstone after the connector's; the connector removal notifies.
            self.target_states.pop(connector, None)
            if connector in self.connector_configs:
                self.target_states[connector] = TargetState.STARTED
            return []
        state = r.decode_target_state(value)
        previous = self.target_states.get(connector)
        self.target_states[connector] = state
        # A target state written with a new connector's config arrives before the config: no notice then.
        if state is previous or connector not in self.connector_configs:
            return []
        return self._notify(lambda listener: listener.on_connector_target_state_change(connector))

    def _connector(self, connector: str, value: object) -> list[Notification]:
        if value is None:
            self.rejected.pop(alias(connector), None)
            self._remove_connector(connector)
            return self._notify(lambda listener: listener.on_connector_config_remove(connector))
        problem = name_error(connector)
        if problem is not None:
            # Written by an older version: running it could break the group protocol (a name too long for
            # its int16 strings) or the REST paths. Set it aside, deletable by name or alias.
            self.rejected[alias(connector)] = connector
            log.error(
                "Connector %s is not run: its name is invalid (%s). Delete it with DELETE /connectors/%s",
                printable(connector),
                problem,
                alias(connector),
            )
            return []
        self.connector_configs[connector] = r.decode_properties(value, r.connector_key(connector))
        self.target_states.setdefault(connector, TargetState.STARTED)
        return self._notify(lambda listener: listener.on_connector_config_update(connector))

    def _remove_connector(self, connector: str) -> None:
        self.connector_configs.pop(connector, None)
        self.task_counts.pop(connector, None)
        self.deferred.pop(connector, None)
        for task in [t for t in self.task_configs if t.connector == connector]:
            del self.task_configs[task]

    def _commit(self, connector: str, value: object) -> list[Notification]:
        if value is None:
            return []
        if connector not in self.connector_configs:
            # The connector was deleted and compaction removed its config and tombstone.
            self._remove_connector(connector)
            return []
        count = r.decode_task_count(value, "tasks", r.commit_key(connector))
        deferred = self.deferred.pop(connector, {})
        present = {task.task for task in deferred}
        updated: list[TaskId] = []
        if not all(i in present for i in range(count)):
            log.debug("Incomplete task configs for connector %s (compaction?): inconsistent", connector)
            self.inconsistent.add(connector)
        else:
            if deferred:
                self.task_configs.update(deferred)
                updated = sorted(deferred)
                generation = self.task_config_generations.get(connector)
                self.task_config_generations[connector] = 0 if generation is None else generation + 1
            self.inconsistent.discard(connector)
        self.task_counts[connector] = count
        return self._notify(lambda listener: listener.on_task_config_update(updated))
