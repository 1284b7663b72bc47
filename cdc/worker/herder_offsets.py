"""The offsets API of the herder: ``GET``, ``PATCH`` and ``DELETE /connectors/{name}/offsets`` (KIP-875).

A source connector's offsets are read from and written to the offset store under Connect's keys; a sink
connector's are its consumer group's. Changing them needs a STOPPED connector, the leader, and the
connector's consent (``SourceConnector.alterOffsets``), whose answer picks the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc.api.errors import ConnectError, DataError
from cdc.api.offsets import check_offset_map, offset_key, partition_key
from cdc.worker.config import CONNECTOR_CLASS_CONFIG
from cdc.worker.errors import (
    BadRequestError,
)
from cdc.worker.herder import ConnectorOffsets, OffsetEntry
from cdc.worker.herder_core import HerderCore
from cdc.worker.offsets import decode_offset, encode_offset
from cdc.worker.stores.base import (
    ClusterConfigState,
    TargetState,
)
from cdc.worker.worker import connector_kind

__all__ = ["OffsetsApi"]

JSON = dict[str, Any]


class OffsetsApi(HerderCore):
    """The offsets endpoints (a mixin of :class:`~cdc.worker.connect_herder.ConnectHerder`)."""

    def connector_offsets(self, name: str) -> ConnectorOffsets:
        snapshot = self._require(name)
        kind = connector_kind(snapshot.connector_configs[name].get(CONNECTOR_CLASS_CONFIG))
        if kind == "sink":
            return {"offsets": self._sink_offsets(name)}
        partitions = self.offset_store.connector_partitions(name)
        keys = [offset_key(name, p) for p in partitions]
        values = self.offset_store.get(keys)
        offsets: list[OffsetEntry] = []
        for partition, key in zip(partitions, keys, strict=True):
            value = decode_offset(values.get(key))
            if value is not None:
                offsets.append({"partition": partition, "offset": value})
        return {"offsets": offsets}

    def _sink_offsets(self, name: str) -> list[OffsetEntry]:
        from confluent_kafka import ConsumerGroupTopicPartitions
        from confluent_kafka.admin import AdminClient

        from cdc.kafka.clients import client_config, to_librdkafka

        admin = AdminClient(to_librdkafka(client_config(self.settings.client_props(), "admin.")))
        futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(f"connect-{name}")])
        result = next(iter(futures.values())).result(30)
        return [
            {
                "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                "offset": {"kafka_offset": tp.offset},
            }
            for tp in result.topic_partitions
            if tp.offset >= 0
        ]

    def _require_stopped(self, name: str) -> ClusterConfigState:
        snapshot = self._require(name)
        if snapshot.target_state(name) is not TargetState.STOPPED or self._tasks_still_running(name):
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be "
                "done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return snapshot

    def _tasks_still_running(self, name: str) -> bool:
        return any(t.connector == name for t in self.worker.task_ids())

    def alter_connector_offsets(self, name: str, offsets: list[OffsetEntry]) -> str:
        snapshot = self._require_stopped(name)
        self._require_leader()
        kind = connector_kind(snapshot.connector_configs[name].get(CONNECTOR_CLASS_CONFIG))
        if kind == "sink":
            raise BadRequestError(
                "Altering the offsets of sink connectors is not supported yet by this worker"
            )
        values: dict[bytes, bytes | None] = {}
        by_partition: dict[str, Any] = {}
        for entry in offsets:
            partition = entry.get("partition")
            if not isinstance(partition, dict):
                raise BadRequestError("Source partitions may not be null")
            offset = entry.get("offset")
            if offset is not None and not isinstance(offset, dict):
                raise BadRequestError("Source offsets must be maps")
            try:
                check_offset_map("Source partition", partition)
                check_offset_map("Source offset", offset)
            except DataError as exc:
                raise BadRequestError(str(exc)) from exc
            values[offset_key(name, partition)] = encode_offset(offset)
            by_partition[partition_key(partition)] = offset
        checked = self._connector_alter_offsets(name, snapshot.connector_configs[name], by_partition)
        self.offset_store.set(values)
        return _offsets_message(checked, "altered")

    def reset_connector_offsets(self, name: str) -> str:
        snapshot = self._require_stopped(name)
        self._require_leader()
        kind = connector_kind(snapshot.connector_configs[name].get(CONNECTOR_CLASS_CONFIG))
        if kind == "sink":
            raise BadRequestError(
                "Resetting the offsets of sink connectors is not supported yet by this worker"
            )
        partitions = self.offset_store.connector_partitions(name)
        checked = self._connector_alter_offsets(
            name, snapshot.connector_configs[name], {partition_key(p): None for p in partitions}
        )
        self.offset_store.set({offset_key(name, p): None for p in partitions})
        return _offsets_message(checked, "reset")

    def _connector_alter_offsets(self, name: str, config: Mapping[str, str], offsets: dict[str, Any]) -> bool:
        """Connect's ``SourceConnector.alterOffsets`` hook on a fresh instance: the connector may refuse the
        offsets (answered 400 with its message: Connect answers 500, but the fault is the request's) and
        says whether it checked them, which picks the message of the answer."""
        from cdc.plugins import registry

        try:
            connector = registry.load(config[CONNECTOR_CLASS_CONFIG])()
            return bool(connector.alter_offsets(self.settings.resolve(dict(config)), offsets))
        except NotImplementedError as exc:
            raise BadRequestError(
                f"Failed to modify offsets for connector {name} because it doesn't support "
                "external modification of offsets"
            ) from exc
        except ConnectError as exc:
            raise BadRequestError(str(exc)) from exc


def _offsets_message(checked: bool, done: str) -> str:
    """Connect's answer to an offsets change: definite when the connector checked the offsets."""
    if checked:
        return f"The offsets for this connector have been {done} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {done} successfully. "
        f"However, if this connector manages offsets externally, they will need to be manually {done} in "
        "the system that the connector uses."
    )
