"""MirrorCheckpointConnector and MirrorCheckpointTask: consumer group offsets translated to the target.

The connector lists the source's consumer groups the filter selects (``groups``/``groups.exclude``), creates
``<source>.checkpoints.internal`` on the target (one partition, compacted), gives the groups to tasks
round-robin (``task.assigned.groups``) and looks for new groups every ``refresh.groups.interval.seconds``.

Every ``emit.checkpoints.interval.seconds`` a task reads each group's committed offsets on the source,
keeps the topics the topic filter selects, translates them through the offset syncs
(:mod:`cdc.mirror.offset_syncs`: never ahead, with the documented bound) and writes a ``Checkpoint`` for each
partition whose translation moved (Kafka's ``checkpointIsMoreRecent``). With ``sync.group.offsets.enabled``,
every ``sync.group.offsets.interval.seconds`` it commits the translated offsets to the same group on the
target when the group has no member there (empty or unknown), and only where the target's offset is behind
(a group that moved on the target is never rewound) — as Kafka's ``syncGroupOffset``.

At start a task reads back the checkpoints already in the checkpoints topic for its groups (Kafka's
``CheckpointStore``, 3.8+), so that after a restart it writes no checkpoint older than one already there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from cdc.api.connector import SourceConnector, SourceTask, Task
from cdc.api.errors import DataError
from cdc.api.records import SourceRecord
from cdc.api.schema import BYTES_SCHEMA
from cdc.config import ConfigDef, ConfigValue
from cdc.mirror import admin as adm
from cdc.mirror.config import (
    CHECKPOINT,
    TASK_CONSUMER_GROUPS,
    TASK_INDEX,
    MirrorSettings,
    connector_def,
)
from cdc.mirror.offset_syncs import OffsetSyncIndex, OffsetSyncReader
from cdc.mirror.protocol import Checkpoint, check_connect_offset, source_offset
from cdc.mirror.validation import validate_mirror

__all__ = ["MirrorCheckpointConnector", "MirrorCheckpointTask"]

log = logging.getLogger(__name__)


def _list_groups(admin: AdminClient, timeout: float) -> list[str]:
    result = admin.list_consumer_groups(request_timeout=timeout).result(timeout)
    return sorted(g.group_id for g in result.valid)


class MirrorCheckpointConnector(SourceConnector):
    def __init__(self) -> None:
        self.props: dict[str, str] = {}
        self.settings: MirrorSettings | None = None
        self.groups: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def config(self) -> ConfigDef:
        return connector_def(CHECKPOINT)

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        return validate_mirror(props, CHECKPOINT)

    def task_class(self) -> type[Task]:
        return MirrorCheckpointTask

    def validate_offset(
        self, props: Mapping[str, str], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> bool:
        check_connect_offset(partition, offset, ("group", "topic"), with_partition=True, only_zero=True)
        return True

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)
        s = self.settings = MirrorSettings.parse(props)
        if not s.enabled:
            return
        timeout = s.admin_timeout_ms / 1000
        self.source_admin = AdminClient(
            s.client("source", "admin", f"{s.connector_name}-checkpoint-source-admin")
        )
        target_admin = AdminClient(s.client("target", "admin", f"{s.connector_name}-checkpoint-target-admin"))
        adm.create_compacted_topic(
            target_admin, s.checkpoints_topic, s.checkpoints_rf, s.target_alias, timeout
        )
        self.groups = self.find_groups()
        if s.refresh_groups:
            self._thread = threading.Thread(
                target=self._refresh, name=f"{s.connector_name}-groups", daemon=True
            )
            self._thread.start()

    def find_groups(self) -> list[str]:
        """MirrorCheckpointConnector.findConsumerGroups: the groups the filter selects that have offsets for
        at least one topic the topic filter selects."""
        s = self.settings
        assert s is not None
        timeout = s.admin_timeout_ms / 1000
        selected, topics = s.group_filter, s.topic_filter
        groups = [g for g in _list_groups(self.source_admin, timeout) if selected(g)]
        if not groups:
            return []
        out = []
        for group in groups:  # librdkafka lists one group's offsets per request
            try:
                listed = self.source_admin.list_consumer_group_offsets(
                    [_group_request(group)], request_timeout=timeout
                )
                offsets = listed[group].result(timeout).topic_partitions
            except KafkaException as exc:
                log.warning("Could not list the offsets of consumer group %s: %s", group, exc)
                continue
            if any(topics(tp.topic) for tp in offsets):
                out.append(group)
        return out

    def _refresh(self) -> None:
        s = self.settings
        assert s is not None
        while not self._stop.wait(max(1, s.refresh_groups_s)):
            try:
                groups = self.find_groups()
            except Exception:
                log.exception("%s failed while refreshing consumer groups; will retry", s.connector_name)
                continue
            if groups != self.groups:
                log.info(
                    "Found %d consumer groups on %s (was %d)", len(groups), s.source_alias, len(self.groups)
                )
                self.groups = groups
                self.context.request_task_reconfiguration()

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        s = self.settings
        if s is None or not s.enabled or not s.emit_checkpoints or not self.groups:
            return []
        n = min(max_tasks, len(self.groups))
        return [
            {**self.props, TASK_CONSUMER_GROUPS: ",".join(self.groups[i::n]), TASK_INDEX: str(i)}
            for i in range(n)
        ]

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)


class MirrorCheckpointTask(SourceTask):
    def __init__(self) -> None:
        self._stopping = threading.Event()
        self.reader: OffsetSyncReader | None = None
        self.index = OffsetSyncIndex()
        # group → renamed (topic, partition) → last checkpoint written
        self.checkpoints: dict[str, dict[tuple[str, int], Checkpoint]] = {}

    def start(self, props: dict[str, str]) -> None:
        s = self.settings = MirrorSettings.parse(props)
        self.policy = s.policy
        self.groups = [g.strip() for g in s.task_groups if g.strip()]
        self.timeout = s.admin_timeout_ms / 1000
        name = s.connector_name
        self.source_admin = AdminClient(
            s.client("source", "admin", f"{name}-checkpoint-source-admin-{s.task_index}")
        )
        self.target_admin = AdminClient(
            s.client("target", "admin", f"{name}-checkpoint-target-admin-{s.task_index}")
        )
        cluster = s.offset_syncs_location
        consumer = s.client(cluster, "consumer", f"{name}-offset-syncs-{cluster}-consumer-{s.task_index}")
        self.reader = OffsetSyncReader(consumer, s.offset_syncs_topic, self.index)
        self.reader.start()
        self.interval = float(s.emit_checkpoints_s)
        self.sync_interval = float(s.sync_group_offsets_s)
        self._next_sync = time.monotonic() + self.sync_interval
        self.load_checkpoints()

    def load_checkpoints(self) -> None:
        """Kafka's CheckpointStore: the checkpoints already written for this task's groups, read back from
        the checkpoints topic, so that a restarted task neither writes an older checkpoint nor forgets what
        to sync to the target's groups. An unreadable topic leaves the store empty (logged)."""
        s = self.settings
        wanted = set(self.groups)
        config = s.client(
            "target", "consumer", f"{s.connector_name}-checkpoints-target-consumer-{s.task_index}"
        )
        config.setdefault("group.id", "cdc-mm2-checkpoints-no-commit")
        consumer = Consumer(config)
        topic = s.checkpoints_topic
        loaded = 0
        try:
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=self.timeout)
            if high <= 0:
                return
            consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
            deadline = time.monotonic() + self.timeout
            position = 0
            while position < high and time.monotonic() < deadline and not self._stopping.is_set():
                for msg in consumer.consume(1000, 0.5):
                    if msg.error() is not None:
                        continue
                    position = (msg.offset() or 0) + 1
                    try:
                        cp = Checkpoint.decode(msg.key() or b"", msg.value() or b"")
                    except DataError as exc:
                        log.warning("Skipping an unreadable checkpoint in %s: %s", topic, exc)
                        continue
                    if cp.group in wanted:
                        self.checkpoints.setdefault(cp.group, {})[(cp.topic, cp.partition)] = cp
                        loaded += 1
        except KafkaException as exc:
            log.warning("Could not read the checkpoints already in %s: %s", topic, exc)
        finally:
            consumer.close()
        log.info("Loaded %d checkpoints of %d consumer groups from %s", loaded, len(self.checkpoints), topic)

    def stop(self) -> None:
        self._stopping.set()
        if self.reader is not None:
            self.reader.stop()

    # -- checkpoints ----------------------------------------------------------------------------------
    def rename(self, topic: str) -> str:
        """MirrorCheckpointTask.renameTopicPartition: back to the original name for a topic that came from
        the target, else the remote name."""
        s = self.settings
        if s.target_alias == self.policy.topic_source(topic):
            return self.policy.original_topic(topic)
        return self.policy.format_remote_topic(s.source_alias, topic)

    def checkpoints_for_group(self, group: str) -> list[Checkpoint]:
        result = self.source_admin.list_consumer_group_offsets(
            [_group_request(group)], request_timeout=self.timeout
        )
        offsets = result[group].result(self.timeout).topic_partitions
        topic_filter = self.settings.topic_filter
        last = self.checkpoints.setdefault(group, {})
        out: list[Checkpoint] = []
        for tp in offsets:
            if tp.offset < 0 or tp.error is not None or not topic_filter(tp.topic):
                continue
            downstream = self.index.translate(tp.topic, tp.partition, tp.offset)
            if downstream is None or downstream < 0:
                continue
            renamed = (self.rename(tp.topic), tp.partition)
            checkpoint = Checkpoint(group, renamed[0], tp.partition, tp.offset, downstream, tp.metadata or "")
            previous = last.get(renamed)
            if previous is not None and not (
                checkpoint.upstream_offset < previous.upstream_offset
                or checkpoint.downstream_offset > previous.downstream_offset
            ):
                continue
            last[renamed] = checkpoint
            out.append(checkpoint)
        return out

    def poll(self) -> list[SourceRecord] | None:
        deadline = time.monotonic() + self.interval
        while not self._stopping.is_set() and time.monotonic() < deadline:
            self._stopping.wait(min(1.0, max(0.0, deadline - time.monotonic())))
            self._maybe_sync_group_offsets()
        if self._stopping.is_set() or self.reader is None or not self.reader.ready.is_set():
            return None
        now = int(time.time() * 1000)
        topic = self.settings.checkpoints_topic
        records: list[SourceRecord] = []
        for group in self.groups:
            try:
                checkpoints = self.checkpoints_for_group(group)
            except KafkaException as exc:
                log.error(
                    "Error querying offsets for consumer group %s on cluster %s: %s",
                    group,
                    self.settings.source_alias,
                    exc,
                )
                continue
            for c in checkpoints:
                records.append(
                    SourceRecord(
                        topic,
                        0,
                        BYTES_SCHEMA,
                        c.record_key(),
                        BYTES_SCHEMA,
                        c.record_value(),
                        now,
                        source_partition=c.connect_partition(),
                        source_offset=source_offset(0),
                    )
                )
        self._maybe_sync_group_offsets()
        return records or None

    # -- group offsets on the target ------------------------------------------------------------------
    def _maybe_sync_group_offsets(self) -> None:
        if not self.settings.sync_group_offsets or time.monotonic() < self._next_sync:
            return
        self._next_sync = time.monotonic() + self.sync_interval
        try:
            self.sync_group_offsets()
        except Exception:
            log.exception(
                "Failed to sync consumer group offsets to %s; will retry", self.settings.target_alias
            )

    def sync_group_offsets(self) -> dict[str, dict[tuple[str, int], int]]:
        """Commit translated offsets to groups idle on the target; what was committed, by group."""
        groups = [g for g, cps in self.checkpoints.items() if cps]
        if not groups:
            return {}
        described = self.target_admin.describe_consumer_groups(groups, request_timeout=self.timeout)
        synced: dict[str, dict[tuple[str, int], int]] = {}
        for group in groups:
            try:
                state = described[group].result(self.timeout).state
            except KafkaException:
                state = ConsumerGroupState.DEAD
            if state not in (ConsumerGroupState.EMPTY, ConsumerGroupState.DEAD, ConsumerGroupState.UNKNOWN):
                continue  # members are active on the target: their commits win
            current: dict[tuple[str, int], int] = {}
            if state == ConsumerGroupState.EMPTY:
                listed = self.target_admin.list_consumer_group_offsets(
                    [_group_request(group)], request_timeout=self.timeout
                )
                for tp in listed[group].result(self.timeout).topic_partitions:
                    if tp.offset >= 0:
                        current[(tp.topic, tp.partition)] = tp.offset
            to_commit = [
                _tp(t, p, c.downstream_offset, c.metadata)
                for (t, p), c in self.checkpoints[group].items()
                if current.get((t, p), -1) < c.downstream_offset
            ]
            if not to_commit:
                continue
            futures = self.target_admin.alter_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group, to_commit)], request_timeout=self.timeout
            )
            try:
                futures[group].result(self.timeout)
            except KafkaException as exc:
                log.warning(
                    "Unable to sync offsets for consumer group %s (likely consumers now active on %s): %s",
                    group,
                    self.settings.target_alias,
                    exc,
                )
                continue
            synced[group] = {(tp.topic, tp.partition): tp.offset for tp in to_commit}
        return synced


def _tp(topic: str, partition: int, offset: int, metadata: str) -> TopicPartition:
    if metadata:
        return TopicPartition(topic, partition, offset, metadata=metadata)
    return TopicPartition(topic, partition, offset)


def _group_request(group: str) -> Any:
    return ConsumerGroupTopicPartitions(group)
