"""MirrorSourceConnector and MirrorSourceTask: records copied from the source cluster to the target.

The connector (as Kafka's) lists the source topics the filter selects (``topics``/``topics.exclude``, the
heartbeats topics, never internal topics nor cycles), creates their remote topics on the target with the
same partition count and the synced configs, grows them when the source grows, and re-checks every
``refresh.topics.interval.seconds``; configs are synced every ``sync.topic.configs.interval.seconds``. Tasks
get the topic-partitions round-robin (``task.assigned.partitions``, ``<topic>-<partition>`` as Kafka writes
them).

The task assigns its partitions (no consumer group), resumes after the offset Connect stored for each
(``{"cluster","partition","topic"}`` → ``{"offset"}``, as Kafka's MM2, so a flow moves between the two), and
hands each record over with its key, value, headers, timestamp and partition unchanged, as bytes (run it with
``ByteArrayConverter`` for keys, values and headers, as MirrorMaker's dedicated mode configures the worker).
Offset syncs follow Kafka's ``OffsetSyncWriter``: a sync when a partition is first copied, when the
downstream offset moved ``offset.lag.max`` past the last sync, when upstream offsets skip (compaction,
transaction markers) or the target was truncated; otherwise the newest position is kept and written at the
next offset commit. Kafka throttles syncs to 10 in flight and drops the rest (its index gets sparse under
load); here every sync the rule asks for is written, at most one per ``offset.lag.max`` records per
partition plus one per commit, which is what makes the checkpoint's translation bound hold.

Cost, measured (2026-11-28, this 2-core machine under a load average of ~8-15 from other work, so the
figures are rough): a worker process copying 200,000 records of 1 KB (6 partitions, lz4 both sides, one
task) spends ~16-25 µs of CPU per record in total (its start included), ~8-13 µs of it in the source task's
thread (poll, send, delivery callbacks; ``bench/mirror/source_profile.py`` measures both), ~3 µs in
librdkafka's threads (fetch, decompression, compression, produce); peak RSS ~210-340 MB. The task thread's
Python is what bounds records/s (more tasks in one process share one GIL: ``tasks.max=3`` was not faster in
two runs here). Without Kafka (``bench/mirror/send_loop_bench.py``: ``poll``, the worker's ``_send`` and the
delivery callbacks over ready-made messages) it is ~9 µs per record, down from ~13 µs once the worker's
send loop passes bytes through without the (identity) chain and the ByteArrayConverter calls, records one
offset per run of a source partition rather than per record, and makes a ``partial`` per delivery instead
of a closure. What is left, in order: building the ``SourceRecord`` (a frozen dataclass, ~2.5 µs) and its
``Headers``; the delivery callback per record that Kafka's ``commitRecord`` contract implies (the
downstream offset of every record feeds the offset-sync rule); ``produce``. A batch-level forward (a record
batch copied without unpacking it) is not possible through librdkafka, whose producer takes messages, not
batches, so there is no decode/encode of the payload bytes to avoid beyond what is done here (keys, values
and headers stay ``bytes`` throughout).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, cast

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from cdc.api.connector import SourceConnector, SourceTask, Task
from cdc.api.errors import ConnectError, RetriableError
from cdc.api.offsets import partition_key
from cdc.api.records import OFFSET_ONLY_TOPIC, Header, Headers, SourceRecord
from cdc.api.schema import BYTES_SCHEMA, OPTIONAL_BYTES_SCHEMA
from cdc.config import ConfigDef, ConfigValue
from cdc.mirror import admin as adm
from cdc.mirror.config import (
    SOURCE,
    TASK_INDEX,
    TASK_TOPIC_PARTITIONS,
    MirrorSettings,
    connector_def,
)
from cdc.mirror.policy import PROVENANCE_HEADER
from cdc.mirror.protocol import (
    check_connect_offset,
    source_partition,
    unwrap_source_offset,
)
from cdc.mirror.sync_writer import OffsetSyncWriter
from cdc.mirror.validation import validate_mirror

__all__ = ["MirrorSourceConnector", "MirrorSourceTask", "OffsetSyncWriter", "decode_topic_partition"]

log = logging.getLogger(__name__)


def decode_topic_partition(text: str) -> tuple[str, int]:
    """MirrorUtils.decodeTopicPartition: ``<topic>-<partition>``, split at the last ``-``."""
    topic, _, partition = text.strip().rpartition("-")
    return topic, int(partition)


class MirrorSourceConnector(SourceConnector):
    def __init__(self) -> None:
        self.settings: MirrorSettings | None = None
        self.props: dict[str, str] = {}
        self.known: dict[str, int] = {}  # source topic → partition count
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._no_authorizer = False

    def config(self) -> ConfigDef:
        return connector_def(SOURCE)

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        return validate_mirror(props, SOURCE)

    def task_class(self) -> type[Task]:
        return MirrorSourceTask

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)
        s = self.settings = MirrorSettings.parse(props)
        if not s.enabled:
            return
        self.source_admin = AdminClient(
            s.client("source", "admin", f"{s.connector_name}-replication-source-admin")
        )
        self.target_admin = AdminClient(
            s.client("target", "admin", f"{s.connector_name}-replication-target-admin")
        )
        timeout = s.admin_timeout_ms / 1000
        if s.emit_offset_syncs:
            cluster = s.offset_syncs_location
            offsets_admin = self.source_admin if cluster == "source" else self.target_admin
            adm.create_compacted_topic(
                offsets_admin, s.offset_syncs_topic, s.offset_syncs_rf, self._alias(cluster), timeout
            )
        self.known = self.find_source_topics()
        self.compute_and_create(self.known)
        self._thread = threading.Thread(
            target=self._schedule, name=f"{s.connector_name}-mirror-scheduler", daemon=True
        )
        self._thread.start()
        log.info("Started %s with %d topic-partitions.", s.connector_name, sum(self.known.values()))

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        s = self.settings
        if s is None or not s.enabled or not self.known:
            return []
        partitions = [f"{t}-{p}" for t in sorted(self.known) for p in range(self.known[t])]
        n = min(max_tasks, len(partitions))
        return [
            {**self.props, TASK_TOPIC_PARTITIONS: ",".join(partitions[i::n]), TASK_INDEX: str(i)}
            for i in range(n)
        ]

    def validate_offset(
        self, props: Mapping[str, str], partition: Mapping[str, Any], offset: Mapping[str, Any]
    ) -> bool:
        check_connect_offset(partition, offset, ("cluster", "topic"), with_partition=True, only_zero=False)
        return True

    # -- topics ---------------------------------------------------------------------------------------
    def _alias(self, cluster: str) -> str:
        assert self.settings is not None
        return self.settings.source_alias if cluster == "source" else self.settings.target_alias

    def should_replicate_topic(self, topic: str) -> bool:
        s = self.settings
        assert s is not None
        policy = s.policy
        selected = s.topic_filter(topic) or (s.heartbeats_replication and policy.is_heartbeats_topic(topic))
        return selected and not policy.is_internal_topic(topic) and not policy.is_cycle(topic, s.target_alias)

    def find_source_topics(self) -> dict[str, int]:
        s = self.settings
        assert s is not None
        counts = adm.partition_counts(
            self.source_admin, s.admin_timeout_ms / 1000, f"source '{s.source_alias}'"
        )
        return {t: n for t, n in counts.items() if self.should_replicate_topic(t)}

    def compute_and_create(self, source: Mapping[str, int]) -> None:
        """MirrorSourceConnector.computeAndCreateTopicPartitions: create missing remote topics, grow the
        smaller ones."""
        s = self.settings
        assert s is not None
        timeout = s.admin_timeout_ms / 1000
        target = adm.partition_counts(self.target_admin, timeout, f"target '{s.target_alias}'")
        remote = {t: s.policy.format_remote_topic(s.source_alias, t) for t in source}
        new = [t for t in source if remote[t] not in target]
        if new:
            configs = adm.describe_topic_configs(self.source_admin, new, timeout)
            topics = {}
            for t in new:
                entries = adm.target_config(configs.get(t, {}), s.config_filter, incremental=False)
                topics[remote[t]] = (
                    source[t],
                    {k: e.value for k, e in entries.items() if e.value is not None},
                )
            adm.create_topics(self.target_admin, topics, s.replication_factor, s.target_alias, timeout)
        grow = {remote[t]: n for t, n in source.items() if remote[t] in target and n > target[remote[t]]}
        adm.create_partitions(self.target_admin, grow, s.target_alias, timeout)

    def refresh_topics(self) -> None:
        found = self.find_source_topics()
        s = self.settings
        assert s is not None
        target = adm.partition_counts(
            self.target_admin, s.admin_timeout_ms / 1000, f"target '{s.target_alias}'"
        )
        missing = [
            t for t, n in found.items() if target.get(s.policy.format_remote_topic(s.source_alias, t), 0) < n
        ]
        if found != self.known or missing:
            log.info(
                "Found %d new or grown topics on %s, %d topics missing or short on %s",
                len(set(found.items()) - set(self.known.items())),
                s.source_alias,
                len(missing),
                s.target_alias,
            )
            self.compute_and_create(found)
            self.known = found
            self.context.request_task_reconfiguration()

    def sync_configs(self) -> None:
        s = self.settings
        assert s is not None
        timeout = s.admin_timeout_ms / 1000
        target = adm.partition_counts(self.target_admin, timeout, f"target '{s.target_alias}'")
        topics = [t for t in self.known if s.policy.format_remote_topic(s.source_alias, t) in target]
        configs = adm.describe_topic_configs(self.source_admin, topics, timeout)
        remote = {
            s.policy.format_remote_topic(s.source_alias, t): adm.target_config(
                c, s.config_filter, incremental=True
            )
            for t, c in configs.items()
        }
        adm.incremental_alter_configs(self.target_admin, remote, s.config_filter, timeout)

    def sync_acls(self) -> None:
        """MirrorSourceConnector.syncTopicAcls: literal topic ACLs copied to remote topics (ALLOW ALL as
        READ, ALLOW WRITE never); with no authorizer on the source, logged once and skipped, as Kafka does."""
        s = self.settings
        assert s is not None
        if self._no_authorizer:
            return
        anything = cast(str, None)  # any name, principal and host (the stubs say str; librdkafka takes NULL)
        any_topic = AclBindingFilter(
            ResourceType.TOPIC,
            anything,
            ResourcePatternType.ANY,
            anything,
            anything,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        try:
            bindings = self.source_admin.describe_acls(
                any_topic, request_timeout=s.admin_timeout_ms / 1000
            ).result()
        except KafkaException as exc:
            if (
                exc.args
                and isinstance(exc.args[0], KafkaError)
                and exc.args[0].code() == KafkaError.SECURITY_DISABLED
            ):
                self._no_authorizer = True
                log.info(
                    "No ACL authorizer is configured on the source Kafka cluster, so no topic ACL syncing "
                    "will take place. Consider disabling topic ACL syncing by setting "
                    "sync.topic.acls.enabled to 'false'."
                )
                return
            raise
        out = []
        for b in bindings:
            if b.resource_pattern_type != ResourcePatternType.LITERAL:
                continue
            if b.permission_type == AclPermissionType.ALLOW and b.operation == AclOperation.WRITE:
                continue
            if not self.should_replicate_topic(b.name):
                continue
            op = (
                AclOperation.READ
                if (b.permission_type == AclPermissionType.ALLOW and b.operation == AclOperation.ALL)
                else b.operation
            )
            remote = s.policy.format_remote_topic(s.source_alias, b.name)
            out.append(
                AclBinding(
                    ResourceType.TOPIC,
                    remote,
                    ResourcePatternType.LITERAL,
                    b.principal,
                    b.host,
                    op,
                    b.permission_type,
                )
            )
        if out:
            for binding, future in self.target_admin.create_acls(out).items():
                try:
                    future.result()
                except KafkaException as exc:
                    log.warning("Could not sync ACL of topic %s: %s", binding.name, exc)

    def _schedule(self) -> None:
        s = self.settings
        assert s is not None
        jobs: list[tuple[str, Any, float]] = []
        if s.refresh_topics:
            jobs.append(("refreshing topics", self.refresh_topics, max(1, s.refresh_topics_s)))
        if s.sync_configs:
            jobs.append(("syncing topic configs", self.sync_configs, max(1, s.sync_configs_s)))
        if s.sync_acls:
            jobs.append(("syncing topic ACLs", self.sync_acls, max(1, s.sync_acls_s)))
        now = time.monotonic()
        # configs and ACLs are synced at start (as Kafka's scheduleRepeating), topics first after an interval
        due = [now + interval if name == "refreshing topics" else now for name, _, interval in jobs]
        while jobs and not self._stop.wait(max(0.0, min(due) - time.monotonic())):
            for i, (name, job, interval) in enumerate(jobs):
                if time.monotonic() < due[i]:
                    continue
                due[i] = time.monotonic() + interval
                try:
                    job()
                except RetriableError as exc:  # a cluster away for a while: the next round retries
                    log.warning("%s failed while %s; will retry: %s", s.connector_name, name, exc)
                except ConnectError as exc:
                    log.error("%s failed while %s: %s", s.connector_name, name, exc)
                    self.context.raise_error(exc)
                    return
                except Exception:
                    log.exception("%s failed while %s; will retry", s.connector_name, name)


class MirrorSourceTask(SourceTask):
    def __init__(self) -> None:
        self.consumer: Consumer | None = None
        self.syncs: OffsetSyncWriter | None = None
        self._stopping = threading.Event()
        self._consumer_lock = threading.Lock()
        self._partitions: dict[tuple[str, int], dict[str, Any]] = {}
        self._remote: dict[str, str] = {}

    def start(self, props: dict[str, str]) -> None:
        s = self.settings = MirrorSettings.parse(props)
        self.policy = s.policy
        self.batch = 2000
        self.poll_timeout = s.poll_timeout_ms / 1000
        self._provenance = s.policy.identity and s.provenance_headers
        self._source_tag = s.source_alias.encode()
        self._target_tag = s.target_alias.encode()
        assigned = [decode_topic_partition(t) for t in s.task_partitions if t.strip()]
        if s.emit_offset_syncs:
            cluster = s.offset_syncs_location
            producer = Producer(
                s.client(cluster, "producer", f"{s.connector_name}-offset-syncs-{cluster}-producer")
            )
            self.syncs = OffsetSyncWriter(producer, s.offset_syncs_topic, s.offset_lag_max)
        client_id = f"{s.connector_name}-replication-consumer-{s.task_index}"
        config = s.client("source", "consumer", client_id)
        # librdkafka wants a group.id even for assign(): offsets are never committed to it (Connect's are)
        config.setdefault("group.id", f"cdc-mm2-{s.source_alias}-{s.target_alias}-no-commit")
        self.consumer = Consumer(config)
        keys = [source_partition(s.source_alias, t, p) for t, p in assigned]
        stored = self.context.offset_storage_reader().offsets(keys) if keys else {}
        # a partition never copied starts where auto.offset.reset says (earliest unless set), read here rather
        # than through the consumer group, which never holds offsets (Connect's offsets are the truth)
        reset = str(config.get("auto.offset.reset", "earliest")).lower()
        start = OFFSET_END if reset in ("latest", "largest", "end") else OFFSET_BEGINNING
        tps = []
        for (topic, partition), key in zip(assigned, keys, strict=True):
            self._partitions[(topic, partition)] = key
            offset = unwrap_source_offset(stored.get(partition_key(key)))
            tps.append(
                TopicPartition(topic, partition, start if offset is None or offset < 0 else offset + 1)
            )
        self.consumer.assign(tps)
        log.info("Replicating %d topic-partitions %s->%s", len(tps), s.source_alias, s.target_alias)

    def _remote_topic(self, topic: str) -> str:
        remote = self._remote.get(topic)
        if remote is None:
            remote = self._remote[topic] = self.policy.format_remote_topic(self.settings.source_alias, topic)
        return remote

    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set() or self.consumer is None:
            return None
        with self._consumer_lock:
            try:
                messages = self.consumer.consume(self.batch, self.poll_timeout)
            except KafkaException as exc:
                log.warning("Failure during poll: %s", exc)
                return None
        if self.syncs is not None and self.syncs.failed is not None:
            raise ConnectError(
                f"Could not write offset syncs to {self.syncs.topic}: {self.syncs.failed.str()}"
            )
        out: list[SourceRecord] = []
        append = out.append
        partitions, remote_topic, provenance = self._partitions, self._remote_topic, self._provenance
        for msg in messages:
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    continue
                if err.fatal():
                    raise ConnectError(f"Could not read from the source cluster ({msg.topic()}): {err.str()}")
                log.warning("Failure during poll: %s", err)  # as Kafka's task: logged, polled again
                continue
            topic: str = msg.topic()  # type: ignore[assignment]  # a message without error has them
            partition: int = msg.partition()  # type: ignore[assignment]
            raw_headers: list[tuple[str, bytes | None]] | None = msg.headers()  # type: ignore[assignment]
            headers = (
                Headers([Header(k, OPTIONAL_BYTES_SCHEMA, val) for k, val in raw_headers])
                if raw_headers
                else Headers()
            )
            target_topic = remote_topic(topic)
            if provenance:
                if raw_headers and any(
                    k == PROVENANCE_HEADER and val == self._target_tag for k, val in raw_headers
                ):
                    target_topic = OFFSET_ONLY_TOPIC  # came from the target: commit its offset, copy nothing
                else:
                    headers.add(PROVENANCE_HEADER, self._source_tag, OPTIONAL_BYTES_SCHEMA)
            ts_type, ts = msg.timestamp()
            append(
                SourceRecord(
                    target_topic,
                    partition,
                    OPTIONAL_BYTES_SCHEMA,
                    msg.key(),
                    BYTES_SCHEMA,
                    msg.value(),
                    ts if ts_type else None,
                    headers,
                    partitions[(topic, partition)],
                    {"offset": msg.offset()},  # source_offset() inlined: once per record
                )
            )
        return out or None

    def commit_record(self, record: SourceRecord, metadata: Any | None) -> None:
        syncs = self.syncs
        if syncs is None or metadata is None or self._stopping.is_set():
            return
        partition = record.source_partition
        offset = record.source_offset
        if partition is None or offset is None:
            return
        if syncs.maybe_queue(partition["topic"], partition["partition"], offset["offset"], metadata.offset()):
            syncs.fire_pending()  # when this record made a sync (commit() writes the others')

    def commit(self) -> None:
        if self.syncs is not None:
            self.syncs.promote_delayed()
            self.syncs.fire_pending()

    def stop(self) -> None:
        self._stopping.set()
        with self._consumer_lock:
            if self.consumer is not None:
                self.consumer.close()
                self.consumer = None
        if self.syncs is not None:
            self.syncs.close()
