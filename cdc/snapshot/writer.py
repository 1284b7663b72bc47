"""From ``op=r`` records to Kafka, exactly as a worker's source task turns them into bytes.

:class:`WriterSpec` is what the driver resolves once and ships to every Spark task (plain data, so it
pickles): the connector's converters and producer settings from the recipe the worker uses too
(:mod:`cdc.kafka.recipe`) and its transformation chain. :class:`RecordWriter` then runs the same stages
as :class:`cdc.worker.source_task.WorkerSourceTask` (transform → key/value/header converters → produce),
so the bytes are the connector's.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cdc.api.records import Header, Headers, SourceRecord
from cdc.converters.header_bytes import HeaderBytes
from cdc.kafka.produce import FirstFailure, flush_and_check, produce
from cdc.kafka.recipe import ConverterSpec, converter_spec, source_producer_settings

__all__ = ["RecordWriter", "WriterSpec", "writer_for"]


@dataclass(frozen=True)
class WriterSpec:
    """Everything a Spark task needs to write records the way the connector's worker would."""

    connector_config: dict[str, str]
    key: ConverterSpec
    value: ConverterSpec
    header: ConverterSpec
    producer: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def resolve(
        cls, connector_config: Mapping[str, str], worker_props: Mapping[str, str], client_id: str
    ) -> WriterSpec:
        worker = dict(worker_props)
        producer: dict[str, Any] = {
            **source_producer_settings(worker, connector_config, client_id),
            # only failed deliveries call back into Python (all _on_delivery looks at): a callback a
            # record costs as much as producing it
            "delivery.report.only.error": True,
        }
        return cls(
            dict(connector_config),
            converter_spec("key.converter", connector_config, worker),
            converter_spec("value.converter", connector_config, worker),
            converter_spec("header.converter", connector_config, worker),
            producer,
        )

    def cache_key(self) -> str:
        import json

        return json.dumps(
            [
                self.connector_config,
                self.key.__dict__,
                self.value.__dict__,
                self.header.__dict__,
                self.producer,
            ],
            sort_keys=True,
            default=str,
        )


class _Identity:
    def apply(self, record: Any) -> Any:
        return record


class RecordWriter:
    """Transform, convert and produce records; :meth:`flush` raises the first delivery error."""

    def __init__(self, spec: WriterSpec, producer: Mapping[str, Any] | None = None) -> None:
        """``producer``: other producer settings than the spec's (a chunk transaction's)."""
        from confluent_kafka import Producer

        self.spec = spec
        self.key_conv = spec.key.build()
        self.value_conv = spec.value.build()
        self.header_conv = spec.header.build()
        self._header_bytes = HeaderBytes(self.header_conv)
        if spec.connector_config.get("transforms", "").strip():
            from cdc.transforms.chain import build_chain

            self.chain: Any = build_chain(spec.connector_config)
        else:
            self.chain = _Identity()
        self.producer = Producer(dict(producer if producer is not None else spec.producer))
        self._failure = FirstFailure()
        self.sent = 0

    def send(self, original: SourceRecord) -> None:
        record = self.route(original)
        if record is not None:
            self.produce(record)

    def route(self, original: SourceRecord) -> SourceRecord | None:
        """The record after the connector's transformations (None: dropped)."""
        routed: SourceRecord | None = self.chain.apply(original)
        return routed

    def produce(self, record: SourceRecord) -> None:
        """Convert and produce a record the transformations already saw."""
        topic = record.topic
        key = self.key_conv.from_connect_data(topic, record.key_schema, record.key, record.headers)
        value = self.value_conv.from_connect_data(topic, record.value_schema, record.value, record.headers)
        kwargs: dict[str, Any] = {"key": key, "value": value, "on_delivery": self._failure}
        if record.headers:
            kwargs["headers"] = self._header_bytes.encode(topic, record.headers)
        if record.timestamp is not None:
            kwargs["timestamp"] = record.timestamp
        if record.kafka_partition is not None:
            kwargs["partition"] = record.kafka_partition
        produce(self.producer, topic, **kwargs)
        self._sent_one()

    def send_raw(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, str | bytes | None]] | None = None,
    ) -> None:
        """Produce bytes already converted (the JVM path's records): no transform, no converter;
        ``headers`` already converted too (:meth:`header_bytes`)."""
        if headers:
            produce(self.producer, topic, value=value, key=key, on_delivery=self._failure, headers=headers)
        else:
            produce(self.producer, topic, value=value, key=key, on_delivery=self._failure)
        self._sent_one()

    def _sent_one(self) -> None:
        # every thousand records, serve the delivery reports: a failure shows while the chunk is written
        self.sent += 1
        if self.sent % 1000 == 0:
            self.producer.poll(0)
            self._check()

    def header_bytes(self, topic: str, headers: Sequence[Header]) -> list[tuple[str, str | bytes | None]]:
        """``headers`` as the connector's header converter writes them to ``topic``."""
        return [(k, v) for k, v in self._header_bytes.encode(topic, Headers(list(headers)))]

    def _check(self) -> None:
        err = self._failure.take()
        if err is not None:
            from confluent_kafka import KafkaException

            raise KafkaException(err)

    def flush(self, timeout: float = 300.0) -> None:
        remaining = flush_and_check(self.producer, timeout, self._check)
        if remaining:
            raise TimeoutError(f"{remaining} records not acknowledged by Kafka after {timeout:.0f} s")


_writers: dict[str, RecordWriter] = {}
_writers_lock = threading.Lock()


def writer_for(spec: WriterSpec) -> RecordWriter:
    """One writer (and one producer) per Python worker process and spec, reused across chunks."""
    key = spec.cache_key()
    with _writers_lock:
        writer = _writers.get(key)
        if writer is None:
            writer = _writers[key] = RecordWriter(spec)
        return writer
