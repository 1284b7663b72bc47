"""Java's ``org.apache.kafka.common.utils.Utils.murmur2``: the hash behind Kafka's default partitioner.

A keyed record goes to ``(murmur2(key) & 0x7fffffff) % partitions`` in every Java producer, so Kafka
Connect's internal topics place each key on a partition fixed by this function. A compatible worker
must put the same key on the same partition (readers keep the last value per key *within a
partition*; the same key on two partitions has no defined winner). librdkafka computes the same hash
when the producer sets ``partitioner=murmur2_random``; this module lets us check and predict it.

The hash is kafka-python's (already our group-protocol client): ``tests/unit/test_murmur2.py`` checks it
against Java's own vectors and the partitions users saw Connect choose.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["murmur2", "partition_for", "to_positive"]

_hash: Callable[[bytes], int] | None = None


def _kafka_python_murmur2() -> Callable[[bytes], int]:
    # imported at the first hash: importing kafka-python takes ~250 modules, which the worker loads on its
    # group membership's thread (cdc.worker.distributed.membership), not on the way to its REST answer
    global _hash
    if _hash is None:
        from kafka.partitioner.default import murmur2 as impl

        _hash = impl
    return _hash


def murmur2(data: bytes) -> int:
    """The 32-bit murmur2 hash of ``data`` as Java computes it (a signed int): kafka-python's (the hash of
    its ``DefaultPartitioner``, unsigned) read as Java's signed int."""
    h: int = _kafka_python_murmur2()(data)
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(n: int) -> int:
    """Java's ``Utils.toPositive``: clear the sign bit (not ``abs``: ``Integer.MIN_VALUE`` maps to 0)."""
    return n & 0x7FFFFFFF


def partition_for(key: bytes, partitions: int) -> int:
    """The partition Java's default partitioner picks for a keyed record."""
    if partitions <= 0:
        raise ValueError(f"partition count must be positive, not {partitions}")
    return to_positive(murmur2(key)) % partitions
