"""The peers at their best documented settings: Debezium's queue knobs and Kafka Connect's producer overrides.

Issue #30 takes every ratio against a peer at its best, not only at its defaults, so each binlog and
snapshot scenario (B1, B3, B4, B5, B8) runs Debezium twice: ``debezium`` (what a user gets) and
``debezium-best`` (what its documentation lets a user tune). The settings, and where they are documented:

Debezium's MariaDB and MySQL connectors, "Advanced connector configuration properties"
(``documentation/modules/ROOT/partials/modules/all-connectors/ref-mariadb-mysql-adv-connector-cfg-props.adoc``
in debezium/debezium, the page https://debezium.io/documentation/reference/stable/connectors/mariadb.html):

- ``max.batch.size`` (default 2048): "the maximum size of each batch of events that should be processed
  during each iteration of this connector". 8192 here: four times fewer ``poll()`` calls per event.
- ``max.queue.size`` (default 8192): the blocking queue between the binlog reader and ``poll()``;
  "always set ``max.queue.size`` to a value that is larger than ... ``max.batch.size``". 32768 here (four
  batches, as the defaults' ratio).
- ``poll.interval.ms`` (default 500): how long each ``poll()`` waits for events to appear. Debezium's
  ``ChangeEventQueue.poll`` returns early only when a whole batch is there, so below ``max.batch.size``
  events a change waits up to this long: 100 ms for the throughput scenarios (only the tail of a replay
  waits), 25 ms for B5 (a latency budget the size of issue #30's 50 ms aim, so that CPU is compared at
  equal latency).
- ``snapshot.fetch.size`` (default unset) is left unset: the MySQL page says "to maintain connector
  performance, it's best to preserve the unset default", which streams the result set row by row;
  ``min.row.count.to.stream.results`` (1000) keeps 1 M rows streamed.
- ``snapshot.max.threads`` (default 1) is left at 1: it "processes multiple tables concurrently", and B1
  snapshots one table.

Kafka Connect's per-connector producer overrides (KIP-458, ``producer.override.*``), allowed by the
worker's ``connector.client.config.override.policy``, whose default has been ``All`` since Kafka 3.0
(KIP-722); the worker sets it explicitly anyway. A producer of Connect 4.3.1's worker at its defaults
(its log's ``ProducerConfig values``) has ``max.in.flight.requests.per.connection=1``,
``enable.idempotence=false``, ``acks=all``, ``linger.ms=5``, ``batch.size=16384`` and no compression; the
overrides, from the producer's documented throughput settings
(https://kafka.apache.org/documentation/#producerconfigs):

- ``enable.idempotence=true`` with ``max.in.flight.requests.per.connection=5``: five requests in flight
  with ordering kept, as cdc's librdkafka producer runs;
- ``linger.ms`` 20 and ``batch.size`` 1048576 (librdkafka's own ``batch.size`` default, what cdc's producer
  batches up to) for the replays and the snapshot; B5 keeps ``linger.ms`` 5 (the default) for its latency;
- ``compression.type=lz4``: fewer bytes for the broker to write; where it costs more CPU than it saves, the
  report's ratio "against the best" takes the default contender's figure for that metric.

Each value can be changed for a run with ``--set debezium_<name>=`` (``debezium_max_batch_size``,
``debezium_max_queue_size``, ``debezium_poll_interval_ms``, ``debezium_linger_ms``,
``debezium_batch_size``, ``debezium_compression_type``); the connector config each run used is in the
result's notes.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "OVERRIDE_POLICY",
    "latency_settings",
    "throughput_settings",
    "with_options",
]

# the worker property that lets a connector config carry producer.override.* (KIP-458; default All since 3.0)
OVERRIDE_POLICY = {"connector.client.config.override.policy": "All"}

_QUEUE = {"max.batch.size": "8192", "max.queue.size": "32768"}
_PRODUCER = {
    "producer.override.enable.idempotence": "true",
    "producer.override.max.in.flight.requests.per.connection": "5",
    "producer.override.acks": "all",
    "producer.override.batch.size": "1048576",
    "producer.override.compression.type": "lz4",
}


def throughput_settings() -> dict[str, str]:
    """Debezium's best documented settings for a replay or a snapshot (B1, B3, B4, B8)."""
    return {**_QUEUE, "poll.interval.ms": "100", **_PRODUCER, "producer.override.linger.ms": "20"}


def latency_settings() -> dict[str, str]:
    """Debezium's best documented settings for steady rates at a latency budget (B5)."""
    return {**_QUEUE, "poll.interval.ms": "25", **_PRODUCER, "producer.override.linger.ms": "5"}


_OPTIONS = {
    "debezium_max_batch_size": "max.batch.size",
    "debezium_max_queue_size": "max.queue.size",
    "debezium_poll_interval_ms": "poll.interval.ms",
    "debezium_linger_ms": "producer.override.linger.ms",
    "debezium_batch_size": "producer.override.batch.size",
    "debezium_compression_type": "producer.override.compression.type",
}


def with_options(settings: Mapping[str, str], options: Mapping[str, str]) -> dict[str, str]:
    """``settings`` with the ``--set debezium_<name>=`` values of this run applied."""
    out = dict(settings)
    for option, key in _OPTIONS.items():
        if options.get(option):
            out[key] = options[option]
    return out
